"""A raise that hands on the error its ``except`` caught: the error to fix is the caught one.

``except requests.RequestException as e: raise RuntimeError(f"Failed to reach {url}: {e}")`` is no
check of its own: what failed is whatever the ``try`` block ran, and its text is in the message
(or chained as the cause, ``raise ... from e``). Calling such a raise an internal invariant sends
the user to file a bug for a server that is down or a file that is missing; the record instead
says where the passed-on error is printed, and what the caught class points at (the network, a
file, a deadline).

This cause is taken only where no rule of :mod:`.cause` names the user's part (a flag the message
names, a model key, a package): those say more than "read the error underneath".
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass

from extractor.analysis.facts import Placeholder, Site
from extractor.prose.cause import Cause, message_flags
from extractor.prose.reads import ReadContext, env_of_node, flag_of_node

__all__ = [
    "PASSED_ON_RULE",
    "PassedOn",
    "cause_sentence",
    "example_fix",
    "passed_on_cause",
    "passed_on_from",
    "passed_on_of",
    "solutions",
    "trigger",
]

PASSED_ON_RULE = "passed-on"

# What the caught class says failed underneath, by its last name or its module.
_NETWORK_RE = re.compile(
    r"^(?:requests|aiohttp|httpx|urllib3?|grpc|websockets?|socket)\.|"
    r"(?:^|\.)(?:Connection\w*Error|HTTPError|URLError|RequestException|ClientError|gaierror|"
    r"ProtocolError|HfHubHTTPError)$"
)
_FILE_RE = re.compile(
    r"(?:^|\.)(?:OSError|IOError|EnvironmentError|FileNotFoundError|PermissionError|"
    r"IsADirectoryError|NotADirectoryError|EOFError|UnpicklingError|SafetensorError)$"
)
_TIMEOUT_RE = re.compile(r"(?:^|\.)(?:TimeoutError|TimeoutExpired|Timeout|ReadTimeout|ConnectTimeout)$")
_CATEGORIES = (("timeout", _TIMEOUT_RE), ("network", _NETWORK_RE), ("file", _FILE_RE))
_API_ERROR_RE = re.compile(r"^(?:builtins\.)?(?:TypeError|AttributeError|ImportError|ModuleNotFoundError)$")
_CONVERSION_RE = re.compile(r"(?:![rsa])?(?::[^{}]*)?$")


def caught_types(site: Site) -> list[str]:
    """The classes the enclosing handlers catch, innermost last, tuples split (``(A, B)``)."""
    out: list[str] = []
    for h in site.guard.handlers:
        out.extend(p.strip() for p in h.strip("()").split(",") if p.strip())
    return list(dict.fromkeys(out))


def _category(types: Sequence[str]) -> str:
    for word, pattern in _CATEGORIES:
        if types and all(pattern.search(t) for t in types):
            return word
    return "error"


def _placeholder_node(ph: Placeholder) -> ast.expr | None:
    source = _CONVERSION_RE.sub("", ph.source, count=1) if "[" not in ph.source else ph.source
    try:
        return ast.parse(source, mode="eval").body
    except SyntaxError:
        return None


def _mentions(node: ast.expr | None, name: str) -> bool:
    return node is not None and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


@dataclass(frozen=True)
class PassedOn:
    """Where the caught error shows: ``lead`` is the message text printed before it ("" when it
    opens the message), ``in_message`` whether the message prints it at all (else it is only the
    traceback's chained cause)."""

    category: str
    types: tuple[str, ...]
    lead: str
    in_message: bool
    flags: tuple[str, ...]
    suggested: tuple[str, ...] = ()
    """Flags the message's own text names (its advice: "set --mem-fraction-static lower")."""
    library: tuple[str, ...] = ()
    """The functions of other packages the ``try`` block calls (``simm.kv.register_mr``), when the
    caught class says no more than that something failed: that package is what failed."""
    value: tuple[str, ...] = ()
    """``(setting, format)`` when the ``try`` block parses what a flag or variable gives
    (``json.loads(server_args.extra_config)``) and the caught class is a parse error: the value
    given is not valid in that format."""


def passed_on_of(site: Site, ctx: ReadContext | None = None) -> PassedOn | None:
    """How ``site`` hands on its caught error, or None when it does not."""
    name = site.passes_on
    if name is None:
        return None
    types = tuple(caught_types(site))
    lead: list[str] = []
    in_message = False
    flags: list[str] = []
    for part in site.message.parts if site.message is not None else ():
        if isinstance(part, str):
            if not in_message:
                lead.append(part)
            continue
        node = _placeholder_node(part)
        if _mentions(node, name):
            in_message = True
        elif ctx is not None and node is not None:
            for sub in ast.walk(node):
                info = flag_of_node(sub, ctx)
                if info is not None:
                    flags.append(info.flag)
                    break
        if not in_message:
            lead.append("{" + part.source + "}")
    category = _category(types)
    library: tuple[str, ...] = ()
    if category == "error" and site.library_calls:
        # A client library's failure is the network it talks to, whatever class was caught.
        network = [c for c in site.library_calls if _NETWORK_RE.match(c.split(".", 1)[0] + ".")]
        if network:
            category = "network"
        elif types and all(_API_ERROR_RE.search(t) for t in types):
            # A call into another package that fails on its own interface (a signature, a
            # missing name) is that package's install or version; a data error it raises
            # (``JSONDecodeError``) is about what it was handed, and its own text says so.
            category, library = "library", site.library_calls
    value = _parsed_setting(site, types, ctx) if ctx is not None else None
    if value is not None:
        category = "value"
    if not in_message and category == "error" and site.message is not None and site.message.template.strip():
        # ``except KeyError as e: raise ValueError(f"unknown role {role}") from e``: the message says
        # what is wrong in its own words, and the lookup error chained under it adds nothing.
        return None
    text = "".join(lead).strip() if in_message else ""
    return PassedOn(
        category, types, text, in_message, tuple(dict.fromkeys(flags)), library=library, value=value or ()
    )


# What a parser raises on text it cannot read.
_PARSE_ERROR_RE = re.compile(
    r"(?:^|\.)(?:JSONDecodeError|ValueError|YAMLError|ScannerError|ParserError|TOMLDecodeError|SyntaxError)$"
)


def _parsed_setting(site: Site, types: Sequence[str], ctx: ReadContext) -> tuple[str, ...] | None:
    """``(setting, format)`` of the flag or variable whose text the ``try`` block parses, when every
    caught class is a parse error."""
    if not types or not all(_PARSE_ERROR_RE.search(t) for t in types):
        return None
    for fmt, arg in site.parsed:
        for node in ast.walk(arg):
            info = flag_of_node(node, ctx)
            if info is not None:
                return info.flag, fmt
            env = env_of_node(node, ctx)
            if env is not None:
                return env, fmt
    return None


def passed_on_from(site: Site, cause: Cause) -> PassedOn | None:
    """:func:`passed_on_of` for a ``passed-on`` cause, with the flags the cause names."""
    passed = passed_on_of(site)
    if passed is None or cause.rule != PASSED_ON_RULE:
        return None
    value = (cause.names[1], cause.names[2]) if cause.names[:1] == ("value",) and len(cause.names) > 2 else ()
    category = "value" if value else passed.category
    named = set(message_flags(site))
    flags = tuple(n for n in cause.names[1 + len(value) :] if n.startswith("--") and n not in named)
    suggested = tuple(n for n in cause.names if n in named)
    return PassedOn(
        category, passed.types, passed.lead, passed.in_message, flags, suggested, passed.library, value
    )


def passed_on_cause(site: Site, ctx: ReadContext) -> Cause | None:
    """``passed-on`` with the category word first, then the flags the message prints (an address,
    a path), then the flags its text names, then the caught classes."""
    passed = passed_on_of(site, ctx)
    if passed is None:
        return None
    named = tuple(f for f in message_flags(site) if f not in passed.flags)
    # A parse of a setting's text names the setting and the format right after the category.
    return Cause(
        "passed-on", (passed.category, *passed.value, *passed.flags, *named, *passed.types), PASSED_ON_RULE
    )


_CATEGORY_WORDS = {
    "network": "a network call inside the `try` block failed: the service it calls is down, unreachable from this host or refused the call",
    "timeout": "an operation inside the `try` block ran out of time: the peer or service it waits for is slow, stuck or gone",
    "file": "a file operation inside the `try` block failed: a missing path, no permission, a full disk or a truncated file",
    "error": "whatever the `try` block ran failed",
    "library": "a call into another package inside the `try` block failed",
}


# Network failures whose class alone says what failed: a name that does not resolve, a port that
# nothing listens on. Their advice names that step instead of a service that is down.
_RESOLVE_RE = re.compile(r"(?:^|\.)(?:gaierror|herror)$")
_REFUSED_RE = re.compile(r"(?:^|\.)ConnectionRefusedError$")
_NETWORK_WORDS = {
    "resolve": "a host name inside the `try` block did not resolve to an address: a typo in the name, "
    "or no DNS or `/etc/hosts` entry for it on this host",
    "refused": "a connection inside the `try` block was refused: nothing listens at that address and "
    "port, or a firewall rejects it",
}


def _network_kind(passed: PassedOn) -> str:
    """``resolve`` or ``refused`` when every caught class is that one failure, else ``""``."""
    for kind, pattern in (("resolve", _RESOLVE_RE), ("refused", _REFUSED_RE)):
        if passed.category == "network" and passed.types and all(pattern.search(t) for t in passed.types):
            return kind
    return ""


def _package(call: str) -> str:
    return call.split(".", 1)[0]


def _what_failed(passed: PassedOn) -> str:
    if passed.category == "value" and passed.value:
        setting, fmt = passed.value
        return f"the text given with `{setting}` is not valid {fmt}"
    if passed.category == "library" and passed.library:
        calls = " or ".join(f"`{c}`" for c in passed.library)
        return (
            f"the call into the `{_package(passed.library[0])}` package inside the `try` block ({calls}) "
            "failed: that package's install or version, or what it was handed"
        )
    return _NETWORK_WORDS.get(_network_kind(passed)) or _CATEGORY_WORDS[passed.category]


def _types(passed: PassedOn) -> str:
    return " or ".join(f"`{t}`" for t in passed.types[:3]) or "an error"


def _shown(passed: PassedOn) -> str:
    if passed.in_message and passed.lead:
        return f'its text follows "{passed.lead}" in this message'
    if passed.in_message:
        return "its text is this message"
    return 'the traceback prints it first, above "The above exception was the direct cause of the following exception"'


# An example of each format that parses, as it is typed on a command line.
_SAMPLES = {"JSON": """'{"key": "value"}'""", "YAML": "'key: value'", "TOML": """'key = "value"'"""}


def _is_flag(setting: str) -> bool:
    return setting.startswith("-")


def cause_sentence(passed: PassedOn) -> str:
    if passed.category == "value" and passed.value:
        setting, fmt = passed.value[0], passed.value[1]
        who = f"`{setting}`" if _is_flag(setting) else f"the environment variable `{setting}`"
        return (
            f"Cause: the value given with {who} does not parse as {fmt}: the `try` block above reads it "
            f"with a {fmt} parser, and this raise hands on the parser's {_types(passed)} ({_shown(passed)}, "
            "with the line and column where the text stops being valid)."
        )
    said = (
        f"Cause: the {_types(passed)} that the `try` block above raised, which this raise hands on "
        f"({_shown(passed)}): {_what_failed(passed)}. That error, not this check, says what to fix."
    )
    if passed.suggested:
        said += f" The message itself suggests changing {', '.join(f'`{f}`' for f in passed.suggested)}."
    return said


def trigger(passed: PassedOn, where: str, error_class: str) -> str:
    return (
        f"Something inside the `try` block of {where} fails with {_types(passed)}, and {where} hands it on "
        f"as `{error_class}`: {_what_failed(passed)}."
    )


def solutions(passed: PassedOn) -> list[str]:
    if passed.category == "value" and passed.value:
        setting, fmt = passed.value[0], passed.value[1]
        sample = _SAMPLES.get(fmt)
        eg = f", e.g. `{setting} {sample}`" if sample and _is_flag(setting) else ""
        quote = " (quote it in the shell, so its quotes and braces reach sglang)" if fmt in _SAMPLES else ""
        return [
            f"Give `{setting}` a valid {fmt} value{quote}{eg}: the parser's message above says where the "
            "text stops being valid"
        ]
    kind = _network_kind(passed)
    sols = [
        f"Fix the error this one hands on: {_shown(passed)}. "
        + (
            "It is the operating system's own: it names the host or address that failed"
            if kind
            else f"It is the `{_package(passed.library[0])}` package's own: its text says what it refused"
            if passed.category == "library" and passed.library
            else "Look that error up by its own text (its record names its cause and fix)"
        )
    ]
    via = f" (its address is given with {', '.join(f'`{f}`' for f in passed.flags)})" if passed.flags else ""
    where = f" ({', '.join(f'`{f}`' for f in passed.flags)})" if passed.flags else ""
    if kind == "resolve":
        given = f" in {', '.join(f'`{f}`' for f in passed.flags)}" if passed.flags else ""
        sols.append(
            f"Give an IP address{given}, or a host name that resolves on this host and on every other "
            "node (`getent hosts <name>` prints its address; add a DNS or `/etc/hosts` entry if it prints nothing)"
        )
    elif kind == "refused":
        sols.append(
            f"Check that the process meant to listen there is up and listening on that port{via} "
            "(`ss -ltnp` on its host), and that no firewall rejects the connection, then retry"
        )
    elif passed.category == "network":
        sols.append(
            f"Check that the service it calls is running and reachable from this host{via}, then retry"
        )
    elif passed.category == "timeout":
        sols.append(
            "Check that the process or service it waits for is alive (its own log says why it is slow or gone), then retry"
        )
    elif passed.category == "library" and passed.library:
        pkg = _package(passed.library[0])
        sols.append(
            f"Check the `{pkg}` package this code calls: that it is installed, in a version sglang "
            "supports (`pip list` shows the installed version; sglang's own requirements pin what it "
            "was tested with), and built for this platform"
        )
    elif passed.category == "file":
        sols.append(
            f"Check the file or folder it reads or writes{where}: that it exists on this host, is readable and complete"
        )
    return sols


def example_fix(passed: PassedOn, call: str, launch: str = "") -> str:
    if passed.category == "value" and passed.value and _is_flag(passed.value[0]) and launch:
        setting, fmt = passed.value[0], passed.value[1]
        good = _SAMPLES.get(fmt, "<a valid value>")
        return f"# before\n{launch} {setting} '<text that is not valid {fmt}>'\n# after\n{launch} {setting} {good}"
    seen = (
        f'"{passed.lead} <the error underneath>"'
        if passed.in_message and passed.lead
        else "the error underneath"
    )
    text = f'"<the text after {passed.lead}>"' if passed.in_message and passed.lead else '"<its message>"'
    kind = _network_kind(passed)
    if kind == "resolve":
        name = (
            f"<the host given with {passed.flags[0]}>" if passed.flags else "<the host name in the message>"
        )
        return "\n".join(
            [
                f"# before: {call} fails with {seen}",
                "# after: check that the name resolves here",
                f"getent hosts {name}",
            ]
        )
    if kind == "refused":
        lines = [f"# before: {call} fails with {seen}", "# after: check that something listens there"]
    else:
        lines = [
            f"# before: {call} fails with {seen}",
            "# after: look up the error it hands on, by its own text",
        ]
        lines.append(f"sglang-errors match {text}")
    if passed.category == "network":
        target = f"<the address given with {passed.flags[0]}>" if passed.flags else "<the address it calls>"
        lines.append(f"curl -sS {target}   # does the service answer from this host?")
    return "\n".join(lines)
