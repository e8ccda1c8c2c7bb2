"""Words: glosses of conditions, names in kebab case, and the documentation paragraph."""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from extractor.analysis.facts import Site
from extractor.prose.constraints import AtomView, Constraint
from extractor.prose.reads import Reads
from extractor.prose.why import doc_sentences, reason_comments
from extractor.reach.guard_atoms import SPECULATIVE_MODES

_OP_WORDS = {
    "not-multiple": "is no multiple of",
    "multiple": "is a multiple of",
    "eq": "equals",
    "ne": "differs from",
    "lt": "is below",
    "le": "is at most",
    "gt": "is above",
    "ge": "is at least",
    "in": "is one of",
    "not-in": "is none of",
}


def fmt_values(values: Sequence[str]) -> str:
    return "/".join(values)


def or_list(words: Sequence[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    return ", ".join(words[:-1]) + f" or {words[-1]}" if len(words) > 1 else words[0]


def constraint_words(c: Constraint) -> str:
    who = f"`{c.name}`" if c.kind == "flag" else f"the environment variable `{c.name}`"
    off = c.info.off_flag if c.kind == "flag" and c.info is not None else ""
    if c.op == "truthy":
        if off and c.info is not None and c.info.detected:
            return f"{who} is on (given, or turned on when sglang detects that the data needs it)"
        if off:
            return f"{who} is on (given, or turned on at launch unless `{off}` is given)"
        if c.kind == "flag":
            return f"{who} is given" if (c.info and c.info.is_bool) else f"{who} is set to a non-empty value"
        return f"{who} is on (its default)" if c.on_by_default else f"{who} is set to a true value"
    if c.op == "falsy":
        if off:
            return f"`{off}` is given (or `{c.name}` is left out and not turned on at launch)"
        if c.kind == "flag":
            return f"{who} is not given"
        return (
            f"{who} is set to 0 or false (it is on by default)"
            if c.on_by_default
            else f"{who} is unset or false"
        )
    if c.op == "is-none":
        return (
            f"{who} is left unset and the launch does not fill it in"
            if filled_at_launch(c)
            else f"{who} is left unset"
        )
    if c.op == "not-none":
        return f"{who} is given a value"
    return f"{who} {_OP_WORDS.get(c.op, c.op)} {fmt_values(c.values)}"


def filled_at_launch(c: Constraint) -> bool:
    """Whether the launch code fills flag ``c`` in when it is not given (for some setups): a valued
    flag that the knowledge reads as set though it declares no default."""
    info = c.info
    return (
        c.kind == "flag"
        and c.op == "is-none"
        and info is not None
        and not info.optional
        and not info.default
        and not info.is_bool
    )


def _atom_words(v: AtomView) -> str:
    """A short gloss of one atom, naming the flags/env vars it reads."""
    if v.atom.kind == "except":
        caught = v.text.removeprefix("except").split(" as ", 1)[0].strip()
        return f"the `try` block above it raised {f'`{caught}`' if caught else 'an exception'} (`{v.text}`)"
    bits: list[str] = []
    if v.constraints:
        bits.extend(constraint_words(c) for c in v.constraints)
        return "; ".join(bits)
    if v.isinstance_ is not None:
        subj, types, positive = v.isinstance_
        t = " or ".join(types)
        bits.append(f"{subj} is {'a' if positive else 'not a'} {t}")
    if v.reads.flags:
        bits.append("reads " + ", ".join(f"`{f.flag}`" for f in v.reads.flags))
    if v.reads.envs:
        bits.append("reads " + ", ".join(f"`{e}`" for e in v.reads.envs))
    mode = _SPECULATIVE_PASS_RE.fullmatch(v.simple.strip())
    if mode is not None:
        # The batch's forward mode: a verify or draft-extend pass exists only in a speculative run.
        what = f"a {mode.group(2).replace('_', '-')} pass of speculative decoding"
        bits.append(
            f"the batch is not {what}"
            if mode.group(1)
            else f"the batch is {what}, which runs only with `--speculative-algorithm`"
        )
    return "; ".join(bits)


_SPECULATIVE_PASS_RE = re.compile(
    r"(not )?[\w.]*\bforward_mode\.is_("
    + "|".join(sorted(SPECULATIVE_MODES, key=lambda m: (-len(m), m)))
    + r")\(\)"
)


def _scope_words(site: Site) -> str:
    if site.qualname == "<module>" or not site.qualname:
        return f"At module level of `{site.path}`"
    kind = "method" if site.in_class else "function"
    if "<locals>" in site.qualname:
        kind = "nested function"
    if site.is_async:
        kind = "async " + kind
    return f"In the {kind} `{site.qualname}` ({site.path})"


def short_path(path: str) -> str:
    p = path
    for prefix in ("python/sglang/", "python/"):
        if p.startswith(prefix):
            p = p[len(prefix) :]
            break
    return p


def _message_words(site: Site) -> str:
    if site.message is None or not site.message.template:
        return "with no message"
    t = " ".join(site.message.template.split())
    if len(t) > 300:
        t = t[:297] + "..."
    return f'with "{t}"'


def _bare_assert_sentence(site: Site) -> str:
    # A bare assert prints nothing after "AssertionError": the asserted test is all the user sees.
    test = next((a.test for a in site.guard.atoms if a.kind == "assert" and a.test is not None), None)
    shown = ast.unparse(test) if test is not None else site.statement.removeprefix("assert ")
    return (
        f"Python prints no message: the traceback ends in `assert {shown}`, "
        f"which means the asserted condition `{shown}` was false."
    )


_MAX_DOC_ATOMS = 40


def loop_end_words(site: Site) -> str:
    """``when the loop at line N ends with no pass succeeding``, for a raise that follows a loop
    failing on every pass (see :attr:`Site.after_loop`)."""
    if not site.after_loop:
        return ""
    if site.loop_over:
        return (
            f"when the loop at line {site.after_loop} ends with none of what it goes through "
            f"(`{site.loop_over}`) matching or working"
        )
    return f"when the loop at line {site.after_loop} ends with no pass succeeding: every try of it failed"


def _condition_sentence(views: list[AtomView], site: Site) -> str:
    conds = [v for v in views]
    if not conds and site.after_loop:
        return loop_end_words(site)
    if not conds:
        return "unconditionally: every call that reaches this line raises"
    parts = []
    for v in conds[:_MAX_DOC_ATOMS]:
        gloss = _atom_words(v)
        if v.atom.kind == "except":
            parts.append(gloss)
        else:
            parts.append(f"`{v.simple}`" + (f" ({gloss})" if gloss else ""))
    more = len(conds) - _MAX_DOC_ATOMS
    tail = (
        f", and {more} further condition{'s' if more > 1 else ''} listed in validationCode"
        if more > 0
        else ""
    )
    if len(parts) == 1:
        return "when " + parts[0] + tail
    return "when all of these hold: " + "; ".join(parts) + tail


def documentation_of(
    site: Site,
    deciding: list[AtomView],
    gates: list[AtomView],
    total: Reads,
    cause_sentence: str,
    context: Sequence[str] = (),
    survivors: Sequence[AtomView] = (),
    constants: Sequence[tuple[str, str]] = (),
) -> str:
    """Leads with the deciding condition; gates (and ``context`` sentences from outside the
    function) say when the check runs at all; then the cause and the code's own words: the
    comment above the check, the docstrings of its function and class, and the values of the
    module constants the condition compares with (``constants``)."""
    what = "fails the assertion" if site.kind == "assert" else f"raises `{site.error_class}`"
    if site.kind == "response":
        status = site.http_status if site.http_status is not None else "an error"
        what = f"returns an HTTP {status} error response of type `{site.error_class}`"
    if site.kind == "assert":
        what += f" (`AssertionError` {_message_words(site)})"
    else:
        what += f" {_message_words(site)}"
    cond = _condition_sentence(deciding, site) if deciding or not gates else "on this code path"
    out = [f"{_scope_words(site)}, line {site.line} {what} {cond}."]
    if constants:
        out.append("Here " + "; ".join(f"`{n}` is `{v}`" for n, v in constants) + ".")
    if site.kind == "assert" and (site.message is None or not site.message.template):
        out.append(_bare_assert_sentence(site))
    plain_gates = [v for v in gates if v.atom.kind != "except"]
    if plain_gates:
        words = "; ".join(
            f"`{v.simple}`" + (f" ({g})" if (g := _atom_words(v)) else "") for v in plain_gates[:40]
        )
        out.append(f"This check runs only when {words}.")
    if survivors:
        passed = "; ".join(f"`{v.simple}`" for v in survivors[:40])
        out.append(
            f"It is reached after earlier checks of the function passed ({passed}); those are not the cause."
        )
    out.extend(context)
    if site.http_status is not None:
        out.append(f"The error maps to HTTP status {site.http_status}.")
    out.append(cause_sentence)
    if total.flags:
        flag_bits = []
        for f in total.flags:
            bit = f"`{f.flag}`"
            if f.help:
                bit += f" ({f.help.rstrip('.')})"
            flag_bits.append(bit)
        out.append("Command-line flags involved: " + "; ".join(flag_bits) + ".")
    if total.envs:
        out.append("Environment variables involved: " + ", ".join(f"`{e}`" for e in total.envs) + ".")
    if site.guard.handlers:
        out.append("It is raised while handling " + ", ".join(f"`{h}`" for h in site.guard.handlers) + ".")
    if site.comments:
        c = " ".join(" ".join(x.split()) for x in reason_comments(site))
        if c:
            if len(c) > 400:
                c = c[:397] + "..."
            out.append(f'The code above the check says: "{c}"')
    out.extend(doc_sentences(site))
    raw = [v.text for v in [*survivors, *gates, *deciding] if v.atom.kind != "except" and v.simple != v.text]
    if raw:
        # The sentences above push each ``not`` inwards; a reader matching the record to the source
        # (or to a guard written the way the code's tests read) finds the literal forms here.
        shown = "; ".join(f"`{t}`" for t in dict.fromkeys(raw[:_MAX_DOC_ATOMS]))
        out.append(f"As the tests on the path read, negated where it takes the other branch: {shown}.")
    return " ".join(out)


def kebab(name: str) -> str:
    # Split before a capitalised word only, so acronyms stay whole: ViTNpuRunner -> vit-npu-runner,
    # OpenAIServing -> openai-serving, KVCacheConfigurator -> kv-cache-configurator.
    s = re.sub(r"(?<=[a-z0-9])(?=[A-Z][a-z])|(?<=[A-Z])(?=[A-Z][a-z])", "-", name)
    s = re.sub(r"[^A-Za-z0-9]+", "-", s).strip("-").lower()
    return s


def snake(name: str) -> str:
    return kebab(name).replace("-", "_")
