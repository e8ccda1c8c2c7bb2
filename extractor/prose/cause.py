"""The cause of a site, in the user's terms.

The guard's atoms are split by role (:data:`extractor.analysis.facts.AtomRole`): the *deciding*
condition (the test of the ``if`` holding the raise, an assert's test), the *gates* that only
select the code path, and the *survivors* of earlier checks. The cause is read from the deciding
condition first, then from the message, and only then from the gates: a gate that reads a flag
makes the flag the way to reach the path, not the reason the check fails.

Each rule of :data:`RULES` carries an example of the code it recognises; the first rule that
matches gives the kind (``flag``, ``env``, ``model``, ``hardware``, ``dependency``, ``input``,
``resource``, ``internal``).
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from extractor.analysis.config_read import config_read
from extractor.analysis.facts import Site
from extractor.analysis.walk import called_name, key_read, none_test, read_path
from extractor.prose.constraints import (
    REQUEST_WORD_RE,
    AtomView,
    Constraint,
    simplify,
    splits_batch_rows,
    unparse,
)
from extractor.prose.declarations import subcommand_of
from extractor.prose.flag_spelling import declared_flag, find_flag
from extractor.prose.knowledge import FlagInfo

__all__ = [
    "CHECKPOINT_THING_RE",
    "LIMIT_RE",
    "RULES",
    "Cause",
    "CauseRule",
    "bound_config_key",
    "cause_of",
    "is_limit",
    "message_envs",
    "message_flags",
    "missing_keys",
    "names_read",
    "split_roles",
]

# A flag the message names, whole: not the head of ``--component_paths.vae`` (a dict option the
# parser expands) or of ``--foo-bar_baz``.
FLAG_RE = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*(?![\w-])(?!\.[a-z_])")
_DEP_MSG_RE = re.compile(
    r"pip install|not installed|is required but|please install|no module named|"
    r"requires? (the )?[\w.-]+ (package|library)|failed to import|cannot import|"
    r"version of [\w.-]+ (is|must)|[\w.-]+ ?>= ?\d+\.\d+",
    re.I,
)
# A sentence that tells the reader to install or upgrade something ("... Install flashinfer."):
# about a package when it names one.
_INSTALL_SENTENCE_RE = re.compile(r"(?:^|[.!;:]\s)\s*(?:install|upgrade|reinstall) [\w.-]", re.I)
# A message that states what the code can do, not a state it should never be in: the case is one
# the path leaves out, and what selected the path (a backend, a method) is the way around it.
LIMIT_RE = re.compile(
    r"\b(?:only supports?|supports? only|currently supports?|(?:is|are) (?:currently )?only "
    r"(?:supported|available|implemented)|can only be used|only (?:works|applies|implemented|available) "
    r"(?:for|with|on|when)|(?:is|are) not (?:yet )?(?:supported|implemented)|not (?:yet )?supported "
    r"(?:for|with|by|on|in|when)|(?:does not|doesn't|do not|don't|cannot) (?:yet )?support|"
    r"requires? (?:the )?[\w.-]+ (?:backend|kernel|mode|format|dtype)|"
    # A choice that was taken away: the same way out (another choice) as one never made.
    r"(?:has been|is|was) (?:deprecated|removed)|no longer (?:supported|available))\b",
    re.I,
)


def is_limit(site: Site) -> bool:
    """Whether the message states what the path supports ("only supports", "is not supported")."""
    return site.message is not None and bool(LIMIT_RE.search(site.message.template[:400]))


def names_read(views: Sequence[AtomView]) -> set[str]:
    """The bare names the atoms' expressions read."""
    return {n.id for v in views if v.expr is not None for n in ast.walk(v.expr) if isinstance(n, ast.Name)}


_PKG_RES = (
    re.compile(r"pip install (?:-U |--upgrade )?['\"]?([A-Za-z0-9_.\-\[\]]+(?:[<>=!~]=?[\w.]+)?)"),
    re.compile(r"no module named ['\"]?([A-Za-z0-9_.\-]+)", re.I),
    re.compile(r"(?:please )?install ([A-Za-z0-9_.\-]+(?:[<>=!~]=?[\w.]+)?)", re.I),
    re.compile(r"\b([a-z][a-z0-9_\-]+) ?(>=|==) ?(\d+(?:\.\d+)+)", re.I),
    re.compile(r"requires? (?:the )?([A-Za-z0-9_.\-]+) (?:package|library)", re.I),
)
# English words that follow "install" in a message ("Install with: pip install x", "install it
# from source") and name no package.
_NOT_PACKAGES = frozenset(
    {
        "it", "the", "a", "an", "them", "this", "that", "these", "those", "version", "python", "sglang",
        "with", "from", "using", "via", "by", "and", "or", "to", "for", "manually", "instructions",
        "dependencies", "requirements", "one", "all", "any", "your", "its", "their",
    }
)  # fmt: skip
_RESOURCE_MSG_RE = re.compile(
    r"out of memory|\boom\b|not enough (memory|space|blocks|slots|pages)|insufficient (memory|space)|"
    r"no (free|available) (port|memory|blocks|slots|pages)|address already in use|disk|memory pool(?: size)? is (?:too small|full|exhausted)|run out",
    re.I,
)
_HW_WORDS = (
    (re.compile(r"\b_?is_(hip|rocm)\b|\bhip\b|rocm", re.I), "ROCm"),
    (re.compile(r"\b_?is_npu\b|\bnpu\b|ascend", re.I), "NPU"),
    (re.compile(r"\b_?is_xpu\b|\bxpu\b", re.I), "XPU"),
    (re.compile(r"amx", re.I), "CPU with AMX"),
    (re.compile(r"\b_?is_cpu\b", re.I), "CPU"),
    (re.compile(r"\b_?is_musa\b", re.I), "MUSA"),
    (
        re.compile(r"\bis_blackwell\b|blackwell|sm ?10\d|sm_major\s*(?:[!=]=|>=?)\s*10\b", re.I),
        "SM100 (Blackwell)",
    ),
    (re.compile(r"\bis_hopper\b|hopper|sm ?90|sm_major\s*[!=]=\s*9\b", re.I), "SM90 (Hopper)"),
    (re.compile(r"\b_?is_cuda\w*\b|\.is_cuda\b|\bcuda\b", re.I), "CUDA"),
)
_CONFIG_RECV_RE = re.compile(r"(?:^|[\s(.])((?:hf_|text_|vision_|model_|self\.)?config)\.([a-z_][a-z0-9_]*)")
_ARCH_RE = re.compile(r"\b[A-Z][A-Za-z0-9]+For(?:CausalLM|ConditionalGeneration|Generation)\w*\b")


def _field_re(objects: str) -> re.Pattern[str]:
    """A field read of one of ``objects`` (``a|b``): ``request.n``, ``payload.get("cmd")`` (the key,
    not ``get``); a method call reads no field."""
    return re.compile(
        rf"\b(?:{objects})\."
        r"(?:get\(\s*['\"]([a-z_][a-z0-9_]*)['\"]|([a-z_][a-z0-9_]*)(?![a-z0-9_]|\s*\())"
    )


_PAYLOADS = "request|sampling_params|body|payload|obj|recv_req"
_REQUEST_FIELD_RE = _field_re(f"{_PAYLOADS}|req")


@dataclass(frozen=True)
class Cause:
    """What the user controls that makes the deciding condition true."""

    kind: str
    """``flag`` ``env`` ``model`` ``hardware`` ``dependency`` ``input`` ``resource`` ``internal``."""
    names: tuple[str, ...]
    """Flags, env vars, config keys, packages, hardware words, request fields, as written."""
    rule: str
    """The name of the rule in :data:`RULES` that decided."""
    with_model: bool = False
    """A deciding atom is also about the model (a flag combination this model does not support)."""


@dataclass(frozen=True)
class Roles:
    deciding: list[AtomView]
    gates: list[AtomView]
    survivors: list[AtomView]


def split_roles(views: list[AtomView]) -> Roles:
    deciding = [v for v in views if v.atom.role == "deciding"]
    gates = [v for v in views if v.atom.role == "gate"]
    survivors = [v for v in views if v.atom.role == "survivor"]
    return Roles(deciding, gates, survivors)


# What of a message the rules read: flags, packages and advice sit near its start, and a cap keeps
# every pattern linear on a generated giant.
MESSAGE_SCAN = 4000


def message_text(site: Site) -> str:
    if site.message is None:
        return ""
    text = site.message.template
    for name, value in site.message_constants:
        # What the user reads: an imported hint (``{CAPTURE_HINT}``) printed in full.
        text = text.replace("{" + name + "}", value)
    return text[:MESSAGE_SCAN]


# "requires --x", "--x is required", "please set --x", "must specify --x": the message asks for a flag.
_ASKS_RE = re.compile(
    r"\b(?:requires?|needs?|(?:please|must)\s+(?:set|specify|provide|pass|give|add))\s+`?(--[a-z][a-z0-9-]*)"
    r"|`?(--[a-z][a-z0-9-]*)`?\s+(?:is|must be)\s+(?:required|set|specified|provided|given)\b",
    re.I,
)


def asked_flag(msg: str, named: Sequence[str], roles: Roles) -> str:
    """The flag the message asks for, when every deciding test is that a value is missing (``not
    path``, ``path is None``); ``""`` otherwise."""
    asked: list[str] = [str(m.group(1) or m.group(2)) for m in _ASKS_RE.finditer(msg)]
    if not asked or asked[0] not in named or not roles.deciding:
        return ""
    for v in roles.deciding:
        node = simplify(v.expr) if v.expr is not None else None
        missing = (
            isinstance(node, ast.UnaryOp)
            and isinstance(node.op, ast.Not)
            and isinstance(node.operand, ast.Name | ast.Attribute)
        ) or (
            isinstance(node, ast.Compare)
            and len(node.ops) == 1
            and isinstance(node.ops[0], ast.Is)
            and isinstance(node.comparators[0], ast.Constant)
            and node.comparators[0].value is None
        )
        if not missing:
            return ""
    return asked[0]


def message_flags(site: Site) -> list[str]:
    """Flags the message itself names (``--x``), in order."""
    return list(dict.fromkeys(FLAG_RE.findall(message_text(site))))


def deciding_flags(views: list[AtomView]) -> list[FlagInfo]:
    out: list[FlagInfo] = []
    for v in views:
        for f in v.reads.flags:
            if f not in out:
                out.append(f)
    return out


def deciding_envs(views: list[AtomView]) -> list[str]:
    return list(dict.fromkeys(e for v in views for e in v.reads.envs))


def packages(site: Site) -> list[str]:
    """Package names (with a version bound when the message states one) the message asks for."""
    msg = message_text(site)
    out: list[str] = []
    versioned = re.search(r"install|upgrade|version|package", msg, re.I)
    for rx in _PKG_RES:
        if rx is _PKG_RES[3] and not versioned:
            continue
        for m in rx.finditer(msg):
            if m.lastindex and m.lastindex >= 3:
                name = f"{m.group(1)}>={m.group(3)}"
            else:
                name = m.group(1).rstrip(".,;:")
            base = re.split(r"[<>=!~\[]", name, maxsplit=1)[0].lower()
            # ``sglang[ray]`` is an extra to install, though sglang itself is not missing.
            wanted = base not in _NOT_PACKAGES or "[" in name
            # ``pip install --upgrade x``: an option of pip, not a package.
            if base and wanted and not base.startswith(("{", "-")) and len(base) > 1:
                out.append(name)
    if not out and site.error_class.rsplit(".", 1)[-1] in ("ImportError", "ModuleNotFoundError"):
        tried = imported_package(site)
        imported = re.search(r"import ([A-Za-z0-9_]+)", site.statement)
        if tried:
            out.append(tried)
        elif imported:
            out.append(imported.group(1))
    return list(dict.fromkeys(out))


_IMPORT_LINE_RE = re.compile(r"^\s*(?:from\s+([A-Za-z_][\w.]*)\s+import\b|import\s+([A-Za-z_][\w.]*))")


def imported_package(site: Site) -> str | None:
    """The top-level package of the nearest absolute import above the raise in its window: the
    ``try`` body an ``except ImportError`` re-raises for (``from aiter.ops.x import f`` -> ``aiter``).
    The target's own modules and the standard library are no package to install."""
    start = site.window[0]
    in_try = False
    for number in range(site.line - 1, start - 1, -1):
        index = number - start
        if not 0 <= index < len(site.source_lines):
            continue
        line = site.source_lines[index]
        if _TRY_RE.match(line):
            # Above the ``try`` the imports are the module's own, not what failed.
            break
        m = _IMPORT_LINE_RE.match(line)
        if m is None:
            continue
        top = (m.group(1) or m.group(2)).split(".", 1)[0]
        if top == "sglang" or top in sys.stdlib_module_names:
            # Inside a ``try`` that imports the target's own backend beside a package, the
            # package is what can be missing; elsewhere the target's module names none.
            in_try = in_try or _inside_try(site, index)
            if in_try:
                continue
            return None
        return top
    return None


_TRY_RE = re.compile(r"^\s*try\s*:\s*$")


def _inside_try(site: Site, index: int) -> bool:
    """Whether line ``index`` of the window sits below a ``try:`` of the window."""
    return any(_TRY_RE.match(line) for line in site.source_lines[:index])


def hardware_words(text: str) -> list[str]:
    out = []
    for rx, word in _HW_WORDS:
        if rx.search(text):
            out.append(word)
    return out


# What a config object holds that no config.json spells: the wrapped config itself, a flag the
# config class works out (``is_checkpoint_int8_serialized``), a method.
_NOT_KEY_RE = re.compile(r"^hf_(?:text_)?config$|^is_checkpoint_|_serialized$|^(?:get|items|keys|values)$")
# Objects of sglang's own that are named like a config but are no checkpoint's (an adapter's
# settings, the server's, a cache's).
_OWN_CONFIG_RE = re.compile(r"(?:lora|server|cache|load|device|parallel|sampling|runner)_?config$")


def config_keys(views: list[AtomView]) -> list[str]:
    """Config attributes the deciding atoms read (``hf_config.head_dim`` gives ``head_dim``)."""
    out: list[str] = []
    for v in views:
        for m in _CONFIG_RECV_RE.finditer(" " + v.text):
            key = m.group(2)
            if not _NOT_KEY_RE.search(key) and key not in out:
                out.append(key)
        if not out and v.expr is not None:
            for node in ast.walk(v.expr):
                if not isinstance(node, ast.Attribute) or node.attr in out or _NOT_KEY_RE.search(node.attr):
                    continue
                recv = unparse(node.value)
                if re.search(r"config|arch|model_type", recv) and not _OWN_CONFIG_RE.search(recv):
                    out.append(node.attr)
    return out


def _bound_config_keys(site: Site, views: list[AtomView]) -> list[str]:
    """Config keys a local name the atoms test was read from: ``x = getattr(config.text_config,
    "hidden_size", None)`` gives ``text_config.hidden_size``."""
    read = names_read(views)
    out: list[str] = _config_attrs_read(site, views)
    for b in site.guard.bindings:
        if b.name not in read or b.value is None:
            continue
        value = b.value
        entries: list[str] = []
        while isinstance(value, ast.Subscript):
            # ``config.layer_types[:first]``: an item or a slice of the key is still the key's;
            # ``config.rope_parameters["rope_theta"]`` names an entry below it.
            index = value.slice
            if isinstance(index, ast.Constant) and isinstance(index.value, str):
                entries.insert(0, index.value)
            value = value.value
        root, parts = read_path(value)
        if root is None:
            continue
        # From the config object down: ``self.config.text_config`` -> ``text_config``. A
        # ``getattr`` key is never the config object itself.
        names = [root, *parts, *entries]
        # A call with a root is a ``getattr``: its key is the last name.
        searched = names[: len(names) - len(entries)]
        searched = searched[:-1] if isinstance(value, ast.Call) else searched
        roots = [i for i, n in enumerate(searched) if "config" in n.lower()]
        if not roots:
            continue
        key = ".".join(names[roots[0] + 1 :])
        if key and key not in out:
            out.append(key)
    return out


def request_fields(views: list[AtomView]) -> list[str]:
    return list(
        dict.fromkeys(m.group(1) or m.group(2) for v in views for m in _REQUEST_FIELD_RE.finditer(v.text))
    )


@dataclass(frozen=True)
class CauseRule:
    """One rule: ``example`` is a site it recognises, ``test`` gives the names or ``None``."""

    name: str
    kind: str
    example: str
    test: Callable[[Site, Roles, Constraints], tuple[str, ...] | None]


@dataclass(frozen=True)
class Constraints:
    deciding: list[Constraint]
    flags: Mapping[str, FlagInfo] = field(default_factory=dict)
    """The flags of the site's package, by dest."""
    own: AbstractSet[str] = frozenset()
    """The flags the site's file declares itself (a tool script's own parser)."""

    def knows_flags(self) -> bool:
        """Whether any flag of the launch is known (asked of one flag, not the whole table, so
        the answer keeps a cache entry that a change to other flags leaves alone)."""
        return find_flag("first", "", self.flags) is not None

    def declares(self, flag: str) -> bool:
        """Whether a parser of the launch or of the site's own script declares ``flag``, or a
        flag it abbreviates (argparse takes ``--dp`` for ``--dp-size``, and a deprecated
        spelling is often the start of its replacement's)."""
        if flag in self.own or declared_flag(flag, self.flags) is not None:
            return True
        return find_flag("abbreviated", flag, self.flags) is not None


def _dependency(site: Site, roles: Roles, cs: Constraints) -> tuple[str, ...] | None:
    short = site.error_class.rsplit(".", 1)[-1]
    msg = message_text(site)
    # A version bound alone ("compute capability >= 10.0") is not about a package.
    packaged = re.search(r"install|no module|package|librar|import|version of|upgrade", msg, re.I)
    # Under an ``except``, the error handed on (a binary not found, a failed import) is the cause.
    told = packaged and not site.guard.handlers and _INSTALL_SENTENCE_RE.search(msg) and packages(site)
    if short in ("ImportError", "ModuleNotFoundError") or (packaged and _DEP_MSG_RE.search(msg)) or told:
        pkgs = packages(site)
        if not pkgs and not packaged and LIMIT_RE.search(msg):
            # ``raise ImportError("CompressedTensors24 is not supported now")``: the class is the
            # code's choice; the message names a case it leaves out, which no package installs.
            return None
        if pkgs or short in ("ImportError", "ModuleNotFoundError"):
            return tuple(pkgs)
        if _DEP_MSG_RE.search(msg) and any(
            h.rsplit(".", 1)[-1] in _MISSING_PACKAGE for h in site.guard.handlers
        ):
            # ``except PackageNotFoundError: raise Exception(f"{pkg} ... is not installed")``: the
            # package is a parameter, named in the message the user reads.
            return ()
    return None


_MISSING_PACKAGE = frozenset({"PackageNotFoundError", "ImportError", "ModuleNotFoundError"})


def str_tested(views: list[AtomView]) -> set[str]:
    """What the atoms require to be a ``str`` (``isinstance(x, str)`` on the path to the site)."""
    return {
        t[0]
        for v in views
        if (t := v.isinstance_) is not None and t[2] and any(n.rsplit(".", 1)[-1] == "str" for n in t[1])
    }


def _list_read_as_str(views: list[AtomView], info: FlagInfo) -> bool:
    # A flag declared with nargs always arrives as a list: a value that must be a str to reach
    # the site came from elsewhere (an adapter's own config), whatever its name.
    return info.is_list and any(
        info in v.reads.flags and v.isinstance_ is not None and str_tested([v]) for v in views
    )


def _flag(site: Site, roles: Roles, cs: Constraints) -> tuple[str, ...] | None:
    views = [v for v in roles.deciding if not splits_batch_rows(v)]
    flags = [f.flag for f in deciding_flags(views) if not _list_read_as_str(views, f)]
    if flags:
        envs = deciding_envs(roles.deciding)
        return (*flags, *[f for f in message_flags(site) if f not in flags], *envs)
    return None


def _env(site: Site, roles: Roles, cs: Constraints) -> tuple[str, ...] | None:
    envs = deciding_envs(roles.deciding)
    return tuple(envs) if envs else None


def _message_flag(site: Site, roles: Roles, cs: Constraints) -> tuple[str, ...] | None:
    # The message names the flag the check is about ("--x requires --y"): the guard reads it
    # through a helper or a value computed from it. A switch named by its dest counts too
    # ("enable_hisparse is not supported on the NPU pool"): the check refuses what it turns on.
    # A flag no parser of the launch declares (``--image-path`` of a generate command, a tool's
    # own option) is no launch flag: :func:`_message_option` reads it.
    flags = [
        f
        for f in message_flags(site)
        if cs.declares(f) or subcommand_of(site.path) is not None or not cs.knows_flags()
    ]
    msg = message_text(site)
    for word in dict.fromkeys(a or b for a, b in _DEST_WORD_RE.findall(msg)):
        info = cs.flags.get(word)
        if info is not None and info.is_bool and info.flag not in flags:
            flags.append(info.flag)
    return tuple(flags) if flags else None


def _message_option(site: Site, roles: Roles, cs: Constraints) -> tuple[str, ...] | None:
    # "accepts either --image-path or --video-path": options of a command or a request that the
    # server's launch does not declare; what the caller gave is the input to change.
    flags = message_flags(site)
    if not flags or subcommand_of(site.path) is not None:
        return None  # a subcommand's own parser reads what its module names
    named = [f for f in flags if not cs.declares(f)]
    if len(named) != len(flags) or not cs.knows_flags():
        return None
    return tuple(named)


# A switch's dest as a message spells it: ``enable_hisparse``, ``disable_radix_cache``.
_DEST_WORD_RE = re.compile(
    r"(?<![\w-])((?:enable|disable|use)_[a-z0-9_]*[a-z0-9])(?![\w-])"
    # ``skip_tokenizer_init=True``: any switch's dest, spelled with the value it was given.
    r"|(?<![\w-])([a-z][a-z0-9_]*[a-z0-9])=(?:True|False)\b"
)


def _hardware(site: Site, roles: Roles, cs: Constraints) -> tuple[str, ...] | None:
    if any(v.hardware for v in roles.deciding) and capability_minimum(site, roles) is None:
        words = hardware_words(" ".join(v.text for v in roles.deciding))
        return tuple(words or ["GPU"])
    # ``ok = self._check_scheme_supported(Scheme.get_min_capability(), error=False)``, then ``if
    # not ok: raise``: a local that holds the GPU's compute capability measured against a minimum.
    if capability_minimum(site, roles) is not None:
        return (CAPABILITY,)
    return None


def missing_keys(roles: Roles) -> list[str]:
    """The config keys the deciding atoms find absent, when each atom is such a test
    (``not hasattr(config, "head_dim")``, ``getattr(config, "k", None) is None``, ``config.k is
    None``): the raise is that the checkpoint's config leaves them all out. Empty otherwise."""
    out: list[str] = []
    for v in roles.deciding:
        key = _absent_key(v.expr) if v.expr is not None else None
        if key is None:
            return []
        out.append(key)
    return list(dict.fromkeys(out))


def _absent_key(expr: ast.expr) -> str | None:
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        call = expr.operand
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id == "hasattr"
            and len(call.args) == 2
            and isinstance(call.args[1], ast.Constant)
            and isinstance(call.args[1].value, str)
        ):
            root, parts = read_path(call.args[0])
            return _below_config([root, *parts, call.args[1].value]) if root is not None else None
        return None
    tested = none_test(expr)
    if tested is not None and not tested[1]:
        root, parts = read_path(tested[0])
        if root is not None and parts:
            return _below_config([root, *parts])
    return None


def _below_config(names: list[str]) -> str | None:
    """``llm_config.num_attention_heads`` of ``config.llm_config.num_attention_heads``: the key
    path below the first config object, if one is read."""
    for i, name in enumerate(names[:-1]):
        if name.endswith("config"):
            return ".".join(names[i + 1 :])
    return None


def capability_minimum(site: Site, roles: Roles) -> str | None:
    """The minimum a local the deciding atoms read measures the GPU's compute capability against
    (``PackedScheme.get_min_capability()``), or ``""`` when the call names none; None when no
    such local is read."""
    read = names_read(roles.deciding)
    measured: set[str] = set()
    for b in site.guard.bindings:
        if b.name not in read or b.value is None:
            continue
        value = b.source.partition("=")[2]
        if _CAPABILITY_CALL_RE.search(value):
            call = b.value
            return unparse(call.args[0]) if isinstance(call, ast.Call) and call.args else ""
        if "get_device_capability" in value:
            measured.add(b.name)
    # ``major, minor = torch.cuda.get_device_capability()``, then ``if major < 10: raise``: only
    # a test that the capability is below a bound (none that it is above one, which a newer GPU
    # would fail) asks for a newer GPU.
    # ``torch.cuda.get_device_capability()[0] < 8`` in the test itself measures it too.
    inline = any(_measures(n, set()) for v in roles.deciding if v.expr is not None for n in ast.walk(v.expr))
    if (measured or inline) and all(_below(v.expr, measured) for v in roles.deciding if v.expr is not None):
        return ""
    return None


def _measures(node: ast.AST, names: set[str]) -> bool:
    """A local holding the GPU's compute capability, or a call that reads it."""
    if isinstance(node, ast.Name):
        return node.id in names
    return isinstance(node, ast.Call) and called_name(node) == "get_device_capability"


def _below(expr: ast.expr, names: set[str]) -> bool:
    """Whether every comparison of ``names`` in ``expr`` is that they are below a bound (and one is).
    An assert's failing test (``not capability >= 9``) reads as the comparison it negates."""
    found = False
    for node in ast.walk(simplify(expr)):
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return False
        if not isinstance(node, ast.Compare):
            continue
        if len(node.ops) != 1:
            return False
        left = any(_measures(n, names) for n in ast.walk(node.left))
        right = any(_measures(n, names) for n in ast.walk(node.comparators[0]))
        op = node.ops[0]
        below = isinstance(op, ast.Lt | ast.LtE) if left else isinstance(op, ast.Gt | ast.GtE)
        if left != right and below:
            found = True
        elif left or right:
            return False
    return found


CAPABILITY = "GPU compute capability"
"""The hardware a check of the GPU's compute capability against a minimum names."""
# Calls that answer whether the GPU reaches a minimum capability (true or false).
_CAPABILITY_CALL_RE = re.compile(r"\b(?:get_min_capability|has_device_capability|_check_scheme_supported)\b")


# What makes an atom about the checkpoint wherever it sits; a bare ``head_dim`` or ``hidden_size``
# is one only in model code: in a kernel or a layer it is the shape of a tensor the caller built.
_CHECKPOINT_WORDS_RE = re.compile(r"config|architectures?|model_type|checkpoint")


# ``sched_meta.config``, ``self.mori_op.config``: the settings object of a kernel or a library,
# not a checkpoint's (that one is ``config``, ``self.config``, ``hf_config``, ``model.config``).
_FOREIGN_CONFIG_RE = re.compile(r"\b(?!self\b)(?!\w*(?:model|hf|config)\w*\b)\w+\.config\b")
_CONFIG_OWNER_RE = re.compile(r"config|model|checkpoint", re.IGNORECASE)


def _one_key_twice(view: AtomView) -> bool:
    """``a.quant_config.block != b.quant_config.block``, ``q_norm.eps != k_norm.eps``: one key
    of one model read on both sides, which a config.json cannot make differ. Two config objects
    (``self.head_dim != config.head_dim``, a draft's against a target's) can."""
    e = view.expr
    while isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
        e = e.operand
    if not (isinstance(e, ast.Compare) and len(e.comparators) == 1):
        return False
    (lroot, lpath), (rroot, rpath) = read_path(e.left), read_path(e.comparators[0])
    if lroot is None or rroot is None or not lpath or not rpath or lpath[-1] != rpath[-1]:
        return False
    if lroot == rroot:
        return True
    return not any(_CONFIG_OWNER_RE.search(n) for n in [lroot, *lpath[:-1], rroot, *rpath[:-1]])


# ``config.projection_layers`` of a model's own ``config`` parameter: in model code, what the
# checkpoint's config.json gives the layer being built.
_BARE_CONFIG_RE = re.compile(r"(?<![\w.])config\.[a-z_]")


def _model(site: Site, roles: Roles, cs: Constraints) -> tuple[str, ...] | None:
    model_code = "/models/" in site.path or "/configs/" in site.path
    given_config = model_code and any(p.name == "config" for p in site.params)
    about = [
        v
        for v in roles.deciding
        if (
            v.model
            or (given_config and not v.reads.flags and _BARE_CONFIG_RE.search(v.text))
            or (model_code and not v.reads.flags and _bound_to_config(site, v))
        )
        and not _one_key_twice(v)
    ]
    if not model_code:
        about = [v for v in about if _CHECKPOINT_WORDS_RE.search(_FOREIGN_CONFIG_RE.sub("", v.text))]
    if about:
        keys = config_keys(roles.deciding) or _bound_config_keys(site, roles.deciding)
        archs = _ARCH_RE.findall(message_text(site))
        return tuple(dict.fromkeys([*keys, *archs])) or ("checkpoint",)
    return None


def bound_config_key(site: Site, name: str) -> str | None:
    """The model config key local ``name`` is read straight from (``n =
    self.config.num_nextn_predict_layers``), or attribute ``self.x`` of a model class is kept
    from (:attr:`Site.config_attrs`), if it is."""
    if name.startswith("self.") and site.config_attrs:
        keys = _kept(site).get(name[5:])
        return keys[0] if keys else None
    return next(
        (
            key
            for b in site.guard.bindings
            if b.name == name and b.value is not None and (key := config_read(b.value)) is not None
        ),
        None,
    )


def _bound_to_config(site: Site, v: AtomView) -> bool:
    """Whether the atom tests a local read straight from the model's config (``n != 1``), or an
    attribute its class keeps from the config (``self.visual is None``)."""
    return bool(_config_attrs_read(site, [v])) or any(
        bound_config_key(site, n) is not None for n in names_read([v])
    )


def _config_attrs_read(site: Site, views: list[AtomView]) -> list[str]:
    """The config keys of the class attributes the atoms read (:attr:`Site.config_attrs`)."""
    if not site.config_attrs:
        return []
    kept = _kept(site)
    out: list[str] = []
    for v in views:
        if v.expr is None:
            continue
        nodes = list(ast.walk(v.expr))
        if any(isinstance(n, ast.Attribute) and n.attr in _TENSOR_PROPERTIES for n in nodes):
            continue  # a tensor the code built, measured against the config: not the config alone
        called = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
        if any(
            isinstance(n, ast.Name)
            and n.id not in ("self", *_BUILTINS)
            and id(n) not in called
            and bound_config_key(site, n.id) is None
            for n in nodes
        ):
            continue  # compared with what the caller handed in: not the checkpoint alone
        # ``self.shared_experts.gate_up_proj``: a part of what the config built, not its value.
        within = {id(n.value) for n in nodes if isinstance(n, ast.Attribute)}
        for n in nodes:
            if (
                isinstance(n, ast.Attribute)
                and isinstance(n.value, ast.Name)
                and n.value.id == "self"
                and id(n) not in within
            ):
                out.extend(kept.get(n.attr, ()))
    return list(dict.fromkeys(out))


def _kept(site: Site) -> dict[str, tuple[str, ...]]:
    return {attr: tuple(keys) for attr, *keys in site.config_attrs}


_TENSOR_PROPERTIES = frozenset({"shape", "dtype", "device", "size", "stride", "ndim", "numel", "dim"})


# A parameter that holds part of the model's config (``sparse_cfg``, ``rope_config``), not a
# launch setting or a request handed in as a mapping.
_CONFIG_PARAM_RE = re.compile(r"(?:^|_)(?:config|cfg)(?:$|_)")
_NOT_CONFIG_PARAM_RE = re.compile(r"args|server|extra|request|req\b|kwargs|process|storage|backend")
_MODEL_CODE_RE = re.compile(r"/(?:models|configs|layers|model_loader|model_executor)/")


def _config_entry(site: Site, roles: Roles, cs: Constraints) -> tuple[str, ...] | None:
    # ``def score_type(sparse_cfg): t = sparse_cfg.get("sparse_score_type", "max"); assert t in
    # (...)``: model code checks an entry of the config mapping it is handed.
    if not _MODEL_CODE_RE.search(site.path):
        return None
    params = {p.name for p in site.params}
    read = names_read(roles.deciding)
    keys: list[str] = []
    for b in site.guard.bindings:
        found = key_read(b.value) if b.name in read and b.value is not None else None
        if found is None:
            continue
        mapping, _how, key = found
        if (
            mapping in params
            and _CONFIG_PARAM_RE.search(mapping)
            and not _NOT_CONFIG_PARAM_RE.search(mapping)
        ):
            keys.append(key)
    return tuple(dict.fromkeys(keys)) or None


# A parameter holding a checkpoint's whole config object (``hf_config``, ``draft_hf_config``); a
# bare ``config`` is one only in model code.
_HF_CONFIG_PARAM_RE = re.compile(r"(?:^|_)hf_(?:text_)?config$")
_MODEL_CONFIG_PARAM_RE = re.compile(r"^config$")


def _parsed_config(site: Site, roles: Roles, cs: Constraints) -> tuple[str, ...] | None:
    # ``cfg = parse_draft_config(draft_hf_config=draft_hf_config)`` then a test of what it parsed
    # (``cfg.require_markov()``): values the parser read from the checkpoint's config object.
    params = {p.name for p in site.params}
    read = names_read(roles.deciding)
    if not read or any(v.reads.flags or v.reads.envs for v in roles.deciding):
        return None
    model_code = _MODEL_CODE_RE.search(site.path) is not None
    for b in site.guard.bindings:
        value = b.value
        if b.name not in read or not isinstance(value, ast.Call):
            continue
        given = [*value.args, *(k.value for k in value.keywords)]
        if not given or not all(
            isinstance(a, ast.Name)
            and a.id in params
            and (_HF_CONFIG_PARAM_RE.search(a.id) or (model_code and _MODEL_CONFIG_PARAM_RE.match(a.id)))
            for a in given
        ):
            continue
        # The keys the message shows of what was parsed (``{cfg.markov_rank}``); a draft model's
        # config (``draft_hf_config``) is that model's, not the served checkpoint's.
        shown = re.findall(rf"\{{{re.escape(b.name)}\.([a-z][a-z0-9_]*)", message_text(site))
        whose = (
            ["draft model"]
            if any(isinstance(a, ast.Name) and a.id.startswith("draft") for a in given)
            else []
        )
        return tuple(dict.fromkeys([*whose, *shown])) or ("checkpoint",)
    return None


def _reads_checkpoint(site: Site, roles: Roles) -> bool:
    """Whether what the deciding tests read comes from a checkpoint's config: a local bound from
    one (``nkvh = {... self.hf_config.block_configs ...}``, ``arch = cfg.architectures[0]``)."""
    read = names_read(roles.deciding)
    return any(
        b.name in read and _CHECKPOINT_WORDS_RE.search(b.source.partition("=")[2]) is not None
        for b in site.guard.bindings
    )


def _config_class(site: Site, roles: Roles, cs: Constraints) -> tuple[str, ...] | None:
    # A model config class (``NemotronHConfig(PretrainedConfig).__init__``) checks the checkpoint's
    # config.json. A settings object of the server's own (``DeviceConfig``, built from launch
    # flags) derives from no config class, and is no checkpoint's.
    cls = (site.in_class or "").rsplit(".", 1)[-1]
    if not (
        cls.endswith("Config") and ("/configs/" in site.path or "config" in site.path.rsplit("/", 1)[-1])
    ):
        return None
    if not any(b.endswith("Config") for b in site.class_bases) and not _reads_checkpoint(site, roles):
        return None
    names: list[str] = []
    for v in [*roles.deciding, *roles.gates]:
        if v.expr is None:
            continue
        for node in ast.walk(v.expr):
            name = (
                node.attr
                if isinstance(node, ast.Attribute) and unparse(node.value) == "self"
                else (
                    node.id
                    if isinstance(node, ast.Name) and node.id not in ("self", "None", "True", "False")
                    else ""
                )
            )
            # A module constant (``DLLM_PARAMS``) or the launch's arguments are no key of it.
            if (
                name
                and "_" in name
                and name not in names
                and not name.isupper()
                and not name.endswith("args")
            ):
                names.append(name)
    return tuple(names) or ("config.json",)


def _built_from_config(site: Site, roles: Roles, cs: Constraints) -> tuple[str, ...] | None:
    # A model's layer checks what it is built with in its constructor: the sizes and options the
    # checkpoint's config gives it (no request, tensor or launch setting exists yet).
    if "/models/" not in site.path or not site.in_class or site.qualname.rsplit(".", 1)[-1] != "__init__":
        return None
    if not roles.deciding or any(_one_key_twice(v) for v in roles.deciding):
        return None
    names: list[str] = []
    for v in roles.deciding:
        if v.expr is None:
            return None
        # A comprehension's own variable (``a`` of ``all(a % 2 == 0 for a in axes)``) is no setting.
        looped = {
            n.id
            for g in ast.walk(v.expr)
            if isinstance(g, ast.comprehension)
            for n in ast.walk(g.target)
            if isinstance(n, ast.Name)
        }
        for node in ast.walk(v.expr):
            if isinstance(node, ast.Name) and node.id in looped:
                continue
            if isinstance(node, ast.Attribute) and node.attr in ("shape", "dtype", "device", "data"):
                return None  # a tensor's own property: the weights or a buffer, not the config
            name = (
                node.attr
                if isinstance(node, ast.Attribute) and unparse(node.value) in ("self", "config")
                else (node.id if isinstance(node, ast.Name) and node.id not in ("self", "config") else "")
            )
            if _PARALLEL_SIZE_RE.search(name):
                return None  # the launch's parallel sizes meet the config here: not the config alone
            if _LAYER_INDEX_RE.match(name):
                return None  # the model numbers its own layers as it builds them: not the config
            if (
                name
                and name.islower()
                and name.isidentifier()
                and name not in names
                and name not in _BUILTINS
            ):
                names.append(name)
    bound = _bound_config_keys(site, roles.deciding)
    return tuple(bound[:3]) if bound else ("checkpoint", *names[:3])


_PARALLEL_SIZE_RE = re.compile(r"(?:^|_)(?:tp|pp|ep|dp|cp)_(?:size|rank)$|world_size")
# ``layer_id`` of ``for layer_id in range(config.num_hidden_layers)``: the index the model's own
# construction gives each layer.
_LAYER_INDEX_RE = re.compile(r"^(?:layer_(?:id|idx|index|no|number|num)|idx)$")


_BUILTINS = frozenset(
    {"len", "isinstance", "hasattr", "getattr", "int", "float", "str", "None", "tuple", "list"}
    | {"all", "any", "sum", "min", "max", "range", "sorted", "zip", "enumerate", "set", "dict"}
)


def _weights(site: Site, roles: Roles, cs: Constraints) -> tuple[str, ...] | None:
    # A model class's ``load_weights`` checks the checkpoint's tensors against its parameters.
    if site.qualname.rsplit(".", 1)[-1] in ("load_weights", "load_weight") and site.in_class:
        return ("checkpoint", site.in_class.rsplit(".", 1)[-1])
    return None


# An assert guards the server's own state: its ``req`` is the scheduler's request object, not the
# user's payload, so only these words make an asserted test about the request.
_ASSERTED_REQUEST_RE = re.compile(r"\b(request|sampling_params|body|payload|messages|prompt)\b")


# The scheduler's own ``req`` carries its state as much as the user's fields: a local read from it
# does not make a check the user's.
_BOUND_REQUEST_RE = _field_re(_PAYLOADS)


def _request_bindings(site: Site, views: list[AtomView]) -> list[str]:
    """The request fields the atoms' locals were read from (``token_ids = obj.token_ids_logprob``,
    ``kinds = payload.get("input_types")``): those atoms test the request too."""
    read = names_read(views)
    return [
        m.group(1) or m.group(2)
        for b in site.guard.bindings
        if b.name in read and b.value is not None
        for m in _BOUND_REQUEST_RE.finditer(b.source.partition("=")[2])
    ]


# A request body's type, as sglang names them (``GenerateReqInput``, ``ChatCompletionRequest``),
# and the sampling parameters a request carries: what their own methods check is what the client
# sent.
_REQUEST_CLASS_RE = re.compile(r"(?:Request|ReqInput|SamplingParams)$")
_SELF_FIELD_RE = re.compile(r"\bself\.([a-z_][a-z0-9_]*)\b(?!\s*\()")


def _request_object(site: Site, roles: Roles, cs: Constraints) -> tuple[str, ...] | None:
    """The fields a raise checks of the data an object is built from: in a pydantic validator (the
    fields it validates), or in a method of a request body's class (the ``self`` fields its
    deciding test reads). An assert states the object's own invariant, and is left out."""
    if site.kind == "assert" or not roles.deciding:
        return None
    read = [m.group(1) for v in roles.deciding for m in _SELF_FIELD_RE.finditer(v.text)]
    if site.validates is not None:
        return tuple(dict.fromkeys(site.validates or read)) or ("request",)
    if site.in_class and _REQUEST_CLASS_RE.search(site.in_class) and read:
        return tuple(dict.fromkeys(read))
    return None


# A parameter typed as a request the user sends (``obj: GenerateReqInput``, ``request:
# ChatCompletionRequest``); the scheduler's own ``Req`` is no such type.
_REQUEST_TYPE_RE = re.compile(r"(?:ReqInput|Request)\b")


def _input(site: Site, roles: Roles, cs: Constraints) -> tuple[str, ...] | None:
    asks = [v for v in roles.deciding if v.request and not _from_peer(site, v)]
    # An assert guards the server's own state: a local read from the request does not make it the user's.
    bound = _request_bindings(site, roles.deciding) if site.kind != "assert" else []
    if site.kind == "assert":
        asks = [v for v in asks if _ASSERTED_REQUEST_RE.search(v.text)]
    # A field of a parameter typed as the user's request is the user's; a bare assert on one
    # (no message for the user) still states what the callers keep true.
    typed = (
        [p.name for p in site.params if _REQUEST_TYPE_RE.search(p.annotation)]
        if site.kind != "assert" or site.message is not None
        else []
    )
    asks += [
        v
        for v in roles.deciding
        if v not in asks and any(re.search(rf"\b{re.escape(n)}\.", v.text) for n in typed)
    ]
    if (site.http_status is not None and 400 <= site.http_status < 500) or asks or bound:
        return tuple(dict.fromkeys([*request_fields(roles.deciding), *bound])) or ("request",)
    return None


def _from_peer(site: Site, v: AtomView) -> bool:
    """Whether every name the atom reads that sounds like a request (``payload``) holds what
    another rank sent (``payload = self._sync_ctx.scatter_pp(None)``): sglang's own protocol
    between its processes, not the client's request."""
    read = names_read([v])
    peers = {
        b.name
        for b in site.guard.bindings
        if b.name in read and _COLLECTIVE_RE.search(b.source.partition("=")[2])
    }
    return bool(peers) and not any(m.group(1) not in peers for m in REQUEST_WORD_RE.finditer(v.text))


# Calls that hand data between sglang's own ranks or processes.
_COLLECTIVE_RE = re.compile(
    r"\b(?:\w*scatter\w*|\w*broadcast\w*|all_gather\w*|gather_object|all_reduce|recv_object\w*)\s*\("
)


def _resource(site: Site, roles: Roles, cs: Constraints) -> tuple[str, ...] | None:
    short = site.error_class.rsplit(".", 1)[-1]
    if short in ("MemoryError", "OutOfMemoryError") or _RESOURCE_MSG_RE.search(message_text(site)):
        return ("memory",) if re.search(r"memor|oom", message_text(site) + short, re.I) else ("resource",)
    return None


_ENV_WORD_RE = re.compile(r"(?<![A-Za-z0-9_])(SGLANG?_[A-Z0-9_]*[A-Z0-9])(?![A-Za-z0-9_])")


def message_envs(site: Site) -> list[str]:
    """Environment variables the message itself names (``SGLANG_X``), in order."""
    return list(dict.fromkeys(_ENV_WORD_RE.findall(message_text(site))))


def _message_env(site: Site, roles: Roles, cs: Constraints) -> tuple[str, ...] | None:
    # The message names the variable whose setting put the run here ("SGLANG_A is incompatible
    # with SGLANG_B") while the test reads a value derived from it; one the path reads comes first.
    named = message_envs(site)
    if not named:
        return None
    read = [e for v in [*roles.deciding, *roles.gates] for e in v.reads.envs]
    return tuple(dict.fromkeys([*(e for e in read if e in named), *named]))


# Model config keys a message may name as what is unsupported ("unsupported hidden_size=...").
_MESSAGE_MODEL_KEY_RE = re.compile(
    r"\b(hidden_size|head_dim|num_attention_heads|num_key_value_heads|num_experts|vocab_size|"
    r"intermediate_size|moe_intermediate_size|num_hidden_layers|kv_lora_rank|qk_rope_head_dim|"
    r"[a-z_]*head_dim)\b"
)
_MESSAGE_LIMIT_RE = re.compile(r"unsupported|not supported|must be|should be|only support|expected", re.I)


def _message_model(site: Site, roles: Roles, cs: Constraints) -> tuple[str, ...] | None:
    # The message says which of the checkpoint's dimensions the code cannot take
    # ("unsupported hidden_size={hidden_size} (must be a multiple of 256)"), while the test
    # calls a helper on it.
    msg = message_text(site)
    if not _MESSAGE_LIMIT_RE.search(msg):
        return None
    keys = list(dict.fromkeys(_MESSAGE_MODEL_KEY_RE.findall(msg)))
    # "Unsupported layout for models with head_dim != v_head_dim: {self.layout}": a test of a
    # value against words (``self.layout != 'page_first'``) that reads none of the dimensions is
    # about that setting; the model only picked the class.
    if keys and roles.deciding and all(_tests_words(v) for v in roles.deciding):
        read = names_read(roles.deciding)
        tested = " ".join(
            [*(v.text for v in roles.deciding), *(b.source for b in site.guard.bindings if b.name in read)]
        )
        if not any(re.search(rf"(?<![A-Za-z0-9]){re.escape(k)}(?![A-Za-z0-9])", tested) for k in keys):
            return None
    return tuple(keys) if keys else None


def _tests_words(view: AtomView) -> bool:
    """Whether an atom compares something with string literals (``x != 'page_first'``)."""
    return view.expr is not None and any(
        isinstance(n, ast.Compare)
        and any(isinstance(c, ast.Constant) and isinstance(c.value, str) for c in (n.left, *n.comparators))
        for n in ast.walk(view.expr)
    )


# What a message may say the checkpoint lacks or mismatches, and how it says so.
CHECKPOINT_THING_RE = re.compile(
    r"\b(draft model|target model|checkpoint|tokenizer|vocab(?:ulary)?|config\.json|"
    r"model(?:'s)? (?:config|architecture|type)|quantization config)\b",
    re.I,
)
_CHECKPOINT_NEED_RE = re.compile(
    r"requires?\b|must\b|mismatch|does not match|doesn't match|conflicts?\b|missing\b|lacks?\b|"
    r"not supported|unsupported|only supports?|incompatible|cannot find|could not find|not found",
    re.I,
)
_MESSAGE_CONFIG_KEY_RE = re.compile(r"\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b")


def _message_checkpoint(site: Site, roles: Roles, cs: Constraints) -> tuple[str, ...] | None:
    # The message says what the checkpoint (or the draft model, its tokenizer, its config) lacks
    # or mismatches ("requires mask_token_id to be set in the draft model config"): whatever the
    # test reads, the way out is another checkpoint or a fixed config.
    msg = message_text(site)
    things = [t.lower() for t in CHECKPOINT_THING_RE.findall(msg)]
    # "must be initialized" is about the server's own state, not about what the checkpoint holds.
    if not things or not _CHECKPOINT_NEED_RE.search(msg) or re.search(r"initiali[sz]", msg, re.I):
        return None
    # Keys the message spells out, not the names of the values it interpolates.
    keys = [k for k in _MESSAGE_CONFIG_KEY_RE.findall(re.sub(r"\{[^}]*\}", "", msg)) if len(k) <= 40]
    return tuple(dict.fromkeys([*keys[:3], *_ARCH_RE.findall(msg), *things]))


# Right after the limit: "adapters that add tokens", "DoRA adapters" (a kind of adapter), not a
# count of them ("only one adapter per target").
_ADAPTER_KIND_RE = re.compile(r"\s+(?!(?:one|two|multiple|more|many)\b)(?:[\w-]+\s+){0,2}?adapters\b", re.I)


def _adapter_limit(site: Site, roles: Roles, cs: Constraints) -> tuple[str, ...] | None:
    # "LoRA serving currently doesn't support adapters that add tokens to the vocabulary": the
    # adapter the user loads is of a kind the path leaves out; another adapter is the way out.
    msg = message_text(site)
    if "/lora/" not in site.path and "lora" not in msg.lower():
        return None
    limit = LIMIT_RE.search(msg)
    if limit is None or not _ADAPTER_KIND_RE.match(msg[limit.end() :]):
        return None
    return ("LoRA adapter",)


_NO_WEIGHTS_RE = re.compile(
    r"\bno (?:model )?(?:weights?|weight files|safetensors|checkpoint files)\b.{0,40}\bfound\b|"
    r"\b(?:cannot|could not|couldn't) find (?:any )?(?:model )?(?:weights?|weight files)\b",
    re.I,
)


def _no_weights(site: Site, roles: Roles, cs: Constraints) -> tuple[str, ...] | None:
    # "No model weights found in: `{path}`": the model path holds no weight files in a format the
    # loader reads (a wrong path, an unfinished download, another format).
    return ("--model-path",) if _NO_WEIGHTS_RE.search(message_text(site)) else None


def _hardware_message(site: Site, roles: Roles, cs: Constraints) -> tuple[str, ...] | None:
    if not roles.deciding and any(v.hardware for v in roles.gates):
        return None
    msg = message_text(site)
    if re.search(
        r"(not |un)supported on|requires? (an? )?(nvidia |amd )?(gpu|cuda|rocm|npu|sm ?\d)|"
        r"compute capability|only (supported|available) on|"
        r"only supports? (?:the )?[a-z0-9]+ (?:arch|architecture|gpus?|devices?)\b",
        msg,
        re.I,
    ):
        words = hardware_words(msg)
        return tuple(words) if words else None
    return None


_NOT_FOUND_RE = re.compile(
    r"not found|does not exist|doesn't exist|no such file|could not (?:find|open|read|locate)|"
    r"couldn't (?:find|open|read)|cannot (?:find|open|read|locate)",
    re.I,
)
_PATH_WORD_RE = re.compile(
    r"\b(?:file|path|dir|directory|folder|image|mask|video|audio|dataset|checkpoint)s?\b", re.I
)
_PLACEHOLDER_RE = re.compile(r"\{(?:self\.)?([a-z_][a-z0-9_]*)(?:[!:][^}]*)?\}")
_TIMEOUT_RE = re.compile(
    r"timed? ?out\b|\btimeout(?:[!.]|$| while| waiting| after| period| expired| reached| error| exceeded)|"
    r"did not (?:start|respond|finish)|within \{?[\w.]*\}? ?(?:s|secs?|seconds)\b",
    re.I,
)
_DOWNLOAD_RE = re.compile(r"fail(?:ed)? to download|download failed|download error", re.I)
_SETTING_WORD_RE = re.compile(r"(--[a-z][a-z0-9-]*timeout[a-z0-9-]*|SGLANG_[A-Z0-9_]*TIMEOUT[A-Z0-9_]*)")


def _missing_path(site: Site, roles: Roles, cs: Constraints) -> tuple[str, ...] | None:
    # A file or folder the caller named is not there: the path is theirs, not the code's.
    short = site.error_class.rsplit(".", 1)[-1]
    msg = message_text(site)
    if short in ("FileNotFoundError", "NotADirectoryError", "IsADirectoryError") or (
        _NOT_FOUND_RE.search(msg) and _PATH_WORD_RE.search(msg) and ".h" not in msg
    ):
        named = [n for n in _PLACEHOLDER_RE.findall(msg) if "path" in n or "file" in n or "dir" in n]
        return tuple(dict.fromkeys(named)) or ("path",)
    return None


# "{field_name} must be formatted as tcp://host:port or host:port", "Expected format: `data:...`":
# the message states the form a value must take, so the value handed in is what to correct.
FORMAT_RE = re.compile(
    r"(?:must be formatted as|must be (?:given )?in the (?:format|form)(?: of)?|must be of the form|"
    r"\bexpected format(?: is)?:?|should be in the (?:format|form)(?: of)?|must follow the format)\s*(?P<form>.+)$",
    re.I,
)


def _format(site: Site, roles: Roles, cs: Constraints) -> tuple[str, ...] | None:
    # A value that does not parse into the form the message states: the caller's to correct.
    m = FORMAT_RE.search(message_text(site))
    return ("value",) if m is not None and m.group("form").strip(" .:") else None


def _timeout(site: Site, roles: Roles, cs: Constraints) -> tuple[str, ...] | None:
    # A peer, a service or a lock did not answer in time: a resource of the deployment.
    short = site.error_class.rsplit(".", 1)[-1]
    msg = message_text(site)
    if short == "TimeoutError" or (_TIMEOUT_RE.search(msg) and not re.search(r"must be|should be", msg)):
        read = [
            *(f.flag for v in [*roles.deciding, *roles.gates] for f in v.reads.flags),
            *(e for v in [*roles.deciding, *roles.gates] for e in v.reads.envs),
        ]
        settings = [
            n for n in dict.fromkeys([*_SETTING_WORD_RE.findall(msg), *read]) if "timeout" in n.lower()
        ]
        return ("timeout", *settings)
    if _DOWNLOAD_RE.search(msg):
        return ("network",)
    return None


# A GPU driver library's error: ``NVMLError(ret)`` raised from a return code of the NVML C API,
# ``RuntimeError(f"NCCL error: {...}")`` from NCCL's. The message is the library's own error string.
_DRIVER_CLASS_RE = re.compile(
    r"^(NVML|NCCL|Nccl|Nvml|CUDA|Cuda|CU|cuda)(?:Library(?:Mismatch)?|Runtime|Driver|RT)?Error(?:_\w+)?$"
)
_DRIVER_MESSAGE_RE = re.compile(r"\b(NCCL|CUDA|NVML|cuBLAS|CUBLAS|cuDNN|CUDNN|NVRTC) (?:error|failure)\b")


def _driver_error(site: Site, roles: Roles, cs: Constraints) -> tuple[str, ...] | None:
    short = site.error_class.rsplit(".", 1)[-1]
    m = _DRIVER_CLASS_RE.match(short)
    if m is not None:
        # ``raise NVMLError(NVML_ERROR_UNINITIALIZED)``: the wrapper's own code for a library no
        # one loaded yet (a call made before the init), not an answer of the driver.
        if site.statement and "_UNINITIALIZED" in site.statement:
            return None
        return (m.group(1).upper(),)
    found = _DRIVER_MESSAGE_RE.search(message_text(site)[:200])
    return (found.group(1).upper(),) if found is not None else None


# A message that says its own line is never reached ("Unreachable code path", "this should not
# happen"): whatever the test around it reads, the code's author holds it to be a broken state.
_UNREACHABLE_RE = re.compile(
    r"\bunreachable (?:code|path|branch|state|case|line)|\b(?:code path|branch|line|state) "
    r"(?:is|should be) unreachable|\bshould (?:never|not) (?:be reached|happen)\b",
    re.I,
)


def _unreachable(site: Site, roles: Roles, cs: Constraints) -> tuple[str, ...] | None:
    return () if _UNREACHABLE_RE.search(message_text(site)[:400]) else None


RULES: tuple[CauseRule, ...] = (
    CauseRule(
        "driver-error", "hardware", "raise NVMLError(ret)  # a return code of the NVML C API", _driver_error
    ),
    CauseRule("unreachable", "internal", 'else: raise ValueError("Unreachable code path")', _unreachable),
    CauseRule("dependency", "dependency", 'raise ImportError("please install flashinfer>=0.2")', _dependency),
    CauseRule("deciding-flag", "flag", 'if server_args.tp_size > 8: raise ValueError("...")', _flag),
    CauseRule("deciding-env", "env", 'if envs.SGLANG_X.get(): raise ValueError("...")', _env),
    CauseRule("deciding-hardware", "hardware", 'if not is_cuda(): raise RuntimeError("...")', _hardware),
    CauseRule(
        "missing-path",
        "input",
        'if not os.path.exists(p): raise FileNotFoundError(f"no file {p}")',
        _missing_path,
    ),
    CauseRule("deciding-model", "model", 'if hf_config.head_dim != 128: raise ValueError("...")', _model),
    CauseRule(
        "config-class", "model", "class FooConfig: ... if mtp_layers is None: raise ValueError", _config_class
    ),
    CauseRule(
        "config-entry",
        "model",
        'def score(sparse_cfg): t = sparse_cfg.get("score_type", "max"); assert t in ("max", "lse")',
        _config_entry,
    ),
    CauseRule(
        "parsed-checkpoint-config",
        "model",
        "cfg = parse_draft(draft_hf_config=draft_hf_config); if not cfg.rank: raise ValueError",
        _parsed_config,
    ),
    CauseRule("weights", "model", "def load_weights(self, weights): ... raise KeyError(name)", _weights),
    CauseRule(
        "adapter-limit",
        "input",
        'if cfg.added_tokens: raise ValueError("LoRA does not support adapters that add tokens")',
        _adapter_limit,
    ),
    CauseRule("timeout", "resource", 'raise TimeoutError("the scheduler did not respond in time")', _timeout),
    CauseRule(
        "format", "input", 'raise ValueError(f"{name} must be formatted as host:port") from exc', _format
    ),
    CauseRule("message-flag", "flag", 'if self._n > 1: raise ValueError("--x needs --y")', _message_flag),
    CauseRule(
        "message-option",
        "input",
        'if image and video: raise ValueError("give --image-path or --video-path, not both")',
        _message_option,
    ),
    CauseRule(
        "message-env", "env", 'if self._fast: raise ValueError("SGLANG_X needs SGLANG_Y")', _message_env
    ),
    CauseRule(
        "message-model",
        "model",
        'if not supported(hidden_size): raise ValueError("unsupported hidden_size")',
        _message_model,
    ),
    CauseRule("no-weights", "model", 'raise RuntimeError(f"No model weights found in: {path}")', _no_weights),
    CauseRule(
        "message-checkpoint",
        "model",
        'raise ValueError("the draft model config must set mask_token_id")',
        _message_checkpoint,
    ),
    CauseRule(
        "message-hardware", "hardware", 'raise RuntimeError("only supported on CUDA")', _hardware_message
    ),
    CauseRule(
        "request-object",
        "input",
        'class GenerateReqInput: def check(self): if self.text is None: raise ValueError("...")',
        _request_object,
    ),
    CauseRule("request", "input", 'if request.n > 1: raise ValueError("...")', _input),
    CauseRule("resource", "resource", 'raise RuntimeError("Not enough memory ...")', _resource),
    CauseRule(
        "built-from-config",
        "model",
        "class FooMoE: def __init__(self, config): assert self.n_experts % self.groups == 0",
        _built_from_config,
    ),
)


def cause_of(
    site: Site,
    roles: Roles,
    constraints: list[Constraint],
    flags: Mapping[str, FlagInfo] | None = None,
    own: AbstractSet[str] = frozenset(),
) -> Cause:
    """The first rule of :data:`RULES` that matches; ``internal`` when none does. ``flags``: the
    flags of the site's package, by dest; ``own``: the flags the site's file declares itself (a
    tool script's own parser)."""
    cs = Constraints(constraints, flags if flags is not None else {}, own)
    for rule in RULES:
        names = rule.test(site, roles, cs)
        if names is not None:
            with_model = rule.kind in ("flag", "env") and any(
                v.model and not v.reads.flags for v in roles.deciding
            )
            return Cause(rule.kind, names, rule.name, with_model)
    return Cause("internal", (), "internal")
