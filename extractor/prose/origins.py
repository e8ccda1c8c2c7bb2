"""Where the values a check tests come from, when it is not a flag or an env var: the
checkpoint's config (a parameter its callers fill from ``hf_config.x``, a ``getattr(config,
"x")``), the caller's data (a parser handed text or bytes, an id that must be unique), and the
module's own string constants (``dsml_token = "｜DSML｜"``), so the cause can name them.

:func:`refine` takes the cause :mod:`.cause` found and, for the kinds this module knows (model,
input), names what the user controls more precisely; flag and env causes pass through unchanged.
Each rule of :data:`ORIGIN_RULES` carries the code it is written for.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from extractor.analysis.config_read import CONFIG_METHODS
from extractor.analysis.facts import Param, Site
from extractor.analysis.walk import key_read, read_path
from extractor.prose.cause import Cause, Roles, message_text, names_read
from extractor.prose.constraints import AtomView, unparse
from extractor.prose.knowledge import is_knowledge_path
from extractor.prose.platforms import required_packages

__all__ = [
    "ORIGIN_RULES",
    "accepted_types",
    "config_key_of",
    "constant_values",
    "data_param",
    "keys_checked",
    "refine",
]

# Config objects the checkpoint's config.json is read into; a key is named from below them.
_CONFIG_ROOTS = frozenset({"config", "hf_config", "model_config", "hf_text_config", "text_config", "self"})
_LOADER_RE = re.compile(r"^(parse|load|decode|read|normali[sz]e|deseriali[sz]e|from|convert)(_|$)", re.I)
_DATA_TYPES_RE = re.compile(r"\b(str|bytes|bytearray)\b")
_DUPLICATE_RE = re.compile(
    r"\bduplicate|\balready (exists|registered|in use|tracked|submitted|added|present)", re.I
)
_BINDING_DEPTH = 3


def _names_in(expr: ast.AST | None) -> set[str]:
    if expr is None:
        return set()
    return {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}


def _targets(source: str) -> set[str]:
    """Every name a binding statement assigns (``a, _, b = f()`` binds ``a``, ``_`` and ``b``)."""
    try:
        stmt = ast.parse(source).body[0]
    except (SyntaxError, IndexError):
        return set()
    targets = stmt.targets if isinstance(stmt, ast.Assign) else []
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


_NEAR = 2
_TEXT_METHODS = frozenset(
    {"strip", "lstrip", "rstrip", "split", "rsplit", "partition", "rpartition", "lower", "upper"}
    | {"replace", "removeprefix", "removesuffix", "splitlines"}
)


def _text_step(value: ast.expr) -> bool:
    """``int(s)``, ``s.rsplit(":", 1)``, ``str(v).strip()``, ``s[len(p):]``: one step of taking
    text apart."""
    if isinstance(value, ast.Subscript):
        return isinstance(value.value, ast.Name)
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if isinstance(func, ast.Name):
        return func.id in ("int", "float", "str")
    return isinstance(func, ast.Attribute) and func.attr in _TEXT_METHODS


def _read_names(site: Site, views: Sequence[AtomView]) -> set[str]:
    """The names the atoms read, followed through the function's local bindings."""
    names = names_read(views)
    by_name: dict[str, list[ast.expr]] = {}
    for b in site.guard.bindings:
        # Far from the test, only text taken apart leads back to the data (``port =
        # int(port_str)`` after ``host, port_str = addr.rsplit(":", 1)``); a layout computed
        # from an argument is the code's own.
        if b.value is not None and (b.depth <= _NEAR or _text_step(b.value)):
            for target in {b.name, *_targets(b.source)}:
                by_name.setdefault(target, []).append(b.value)
    frontier = set(names)
    for _ in range(_BINDING_DEPTH):
        new: set[str] = set()
        for n in frontier:
            for value in by_name.get(n, ()):
                new |= _names_in(value)
        frontier = new - names
        names |= new
        if not frontier:
            break
    return names


def config_path(text: str) -> str:
    """The config key a caller's argument reads (``getattr(self.vision_config, "model_type")``
    gives ``vision_config.model_type``; ``hf_config.head_dim`` gives ``head_dim``), or ``""``."""
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return ""
    key = _mapping_key(node)
    if key:
        return key
    root, parts = read_path(node)
    chain = [root, *parts] if root is not None else parts
    if not any("config" in part for part in chain[:-1]):
        return ""
    while len(chain) > 1 and chain[0] in _CONFIG_ROOTS:
        chain = chain[1:]
    return ".".join(chain)


_KEY_READERS = frozenset({"get_from_keys", "get_from_keys_or", "get"})


def _mapping_key(node: ast.expr) -> str:
    """The key a read of a config mapping names: ``config["bits"]``, ``config.get("bits", 4)``,
    ``cls.get_from_keys(config, ["bits"])`` (the first key of a list of spellings); else ``""``."""
    mapping: ast.expr | None
    key: ast.expr | None
    if isinstance(node, ast.Subscript):
        mapping, key = node.value, node.slice
    elif (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _KEY_READERS
    ):
        if node.func.attr == "get":
            mapping, key = node.func.value, node.args[0] if node.args else None
        else:
            mapping, key = (node.args[0], node.args[1]) if len(node.args) >= 2 else (None, None)
    else:
        return ""
    if isinstance(key, ast.List | ast.Tuple) and key.elts:
        key = key.elts[0]
    if not (isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.isidentifier()):
        return ""
    if mapping is None or "config" not in unparse(mapping).lower():
        return ""
    return key.value


def config_key_of(site: Site, subject: str) -> str:
    """The config key a parameter stands for, when its callers fill it from the config."""
    for p in site.params:
        if p.name == subject:
            return next((k for t in p.passed if (k := config_path(t))), "")
    return ""


def _getattr_keys(views: Sequence[AtomView]) -> list[str]:
    keys: list[str] = []
    for v in views:
        if v.expr is None:
            continue
        for node in ast.walk(v.expr):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get"
                and "config" in unparse(node.func.value)
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
                and node.args[0].value not in keys
            ):
                # ``quant_config.get("bias")`` reads the key ``bias`` of a config mapping.
                keys.append(node.args[0].value)
            if isinstance(node, ast.Call) and unparse(node.func) in ("getattr", "hasattr"):
                key = config_path(unparse(node)) if unparse(node.func) == "getattr" else ""
                arg = node.args[1] if len(node.args) >= 2 else None
                if (
                    not key
                    and isinstance(arg, ast.Constant)
                    and isinstance(arg.value, str)
                    and "config" in unparse(node.args[0])
                ):
                    key = arg.value
                if key and key not in keys and key not in CONFIG_METHODS:
                    keys.append(key)
    return keys


def _params_read(site: Site, views: Sequence[AtomView]) -> list[Param]:
    names = _read_names(site, views)
    return [p for p in site.params if p.name in names]


def _caller_config(site: Site, roles: Roles, cause: Cause) -> Cause | None:
    if cause.kind not in ("internal", "model"):
        return None
    keys = [k for p in _params_read(site, roles.deciding) for t in p.passed if (k := config_path(t))]
    keys += _getattr_keys(roles.deciding) if cause.kind == "model" or not keys else []
    text = " ".join(v.text for v in roles.deciding)
    # A method the condition calls (``quant_config.get_name()``, ``cfg.get("x")``) is no key.
    called = {n for n in cause.names if re.search(rf"\.{re.escape(n)}\(", text)}
    if not keys and not called:
        return None
    kept = [
        n
        for n in cause.names
        if n != "checkpoint" and n not in called and not any(n in k.split(".") for k in keys)
    ]
    names = tuple(dict.fromkeys([*keys, *kept])) or ("checkpoint",)
    # A message that says what the checkpoint lacks keeps its own fix; the keys join its names.
    keep = not keys or cause.rule == "message-checkpoint"
    return Cause("model", names, cause.rule if keep else "caller-config")


def _duplicate_id(site: Site, roles: Roles, cause: Cause) -> Cause | None:
    if cause.kind != "internal" or not _DUPLICATE_RE.search(_literal_text(site)):
        return None
    params = {p.name for p in site.params}
    for v in roles.deciding:
        e = v.expr
        if (
            isinstance(e, ast.Compare)
            and len(e.ops) == 1
            and isinstance(e.ops[0], ast.In)
            and isinstance(e.left, ast.Name)
            and e.left.id in params
        ):
            return Cause("input", (e.left.id,), "duplicate-id")
    return None


def _data_annotation(annotation: str) -> bool:
    """Whether the annotation admits text or bytes itself (``str``, ``Union[str, bytes, X]``,
    ``Optional[str]``), not inside a container (``Dict[str, Any]`` is a mapping)."""
    try:
        node = ast.parse(annotation, mode="eval").body
    except SyntaxError:
        return False
    members: list[ast.expr] = [node]
    while members:
        m = members.pop()
        if isinstance(m, ast.Name) and _DATA_TYPES_RE.fullmatch(m.id):
            return True
        if isinstance(m, ast.BinOp) and isinstance(m.op, ast.BitOr):
            members += [m.left, m.right]
        elif isinstance(m, ast.Subscript) and unparse(m.value).rsplit(".", 1)[-1] in ("Union", "Optional"):
            members += list(m.slice.elts) if isinstance(m.slice, ast.Tuple) else [m.slice]
    return False


def _choice_test(views: Sequence[AtomView], param: str) -> bool:
    """Every atom compares the parameter itself with literals (``mode not in ("K", "V")``): a
    mode argument the code passes, not data from outside."""
    for v in views:
        e = v.expr
        while isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
            e = e.operand
        if not (
            isinstance(e, ast.Compare)
            and isinstance(e.left, ast.Name)
            and e.left.id == param
            and all(isinstance(c, ast.Constant | ast.Tuple | ast.List | ast.Set) for c in e.comparators)
        ):
            return False
    return True


def data_param(site: Site, views: Sequence[AtomView], *, private: bool = False) -> Param | None:
    """The text/bytes parameter of a public parser or loader that the atoms read (through
    bindings), unless the atoms only test it against literal choices. With ``private``, of a
    private one (``_parse_port``) instead: its callers decide whether that text is the user's."""
    name = site.qualname.rsplit(".", 1)[-1]
    if (
        name.startswith("_") != private
        or not _LOADER_RE.match(name.lstrip("_"))
        or is_knowledge_path(site.path)
    ):
        return None
    p = next((p for p in _params_read(site, views) if _data_annotation(p.annotation)), None)
    return None if p is None or _choice_test(views, p.name) else p


def _packages(site: Site, roles: Roles, cause: Cause) -> Cause | None:
    if cause.kind != "dependency":
        return None
    names = tuple(required_packages(site, cause.names))
    return Cause("dependency", names, cause.rule) if names != cause.names else None


_SM_CALL_RE = re.compile(r"\bis_sm(\d{2,3})\w*\(")
_SM_CMP_RE = re.compile(
    r"(?:get_device_sm\(\)|sm_version|(?:device|compute)_capability(?:\(\))?(?:\[0\])?|"
    r"get_device_capability\(\)\[0\])\s*(?:<=?|>=?|==|!=|not in|in)\s*[\[(]?([\d, ]+)"
)
_AVAILABLE_RE = re.compile(r"^(?:not )?_?is_([a-z][a-z0-9_]*?)_available\(\)$")


def _sm_words(text: str) -> list[str]:
    out = [f"SM{n}" for n in _SM_CALL_RE.findall(text)]
    for group in _SM_CMP_RE.findall(text):
        for v in re.findall(r"\d+", group):
            n = int(v)
            out.append(f"SM{n * 10 if n < 20 else n}")
    return list(dict.fromkeys(out))


def _device_capability(site: Site, roles: Roles, cause: Cause) -> Cause | None:
    """A hardware cause read off a compute-capability test names the SM versions it compares
    with; one that only asks whether a package is available is a dependency."""
    if cause.kind not in ("hardware", "internal"):
        return None
    texts = [v.simple for v in roles.deciding if v.expr is not None]
    avail = [m.group(1) for t in texts if (m := _AVAILABLE_RE.match(t))]
    if avail and len(avail) == len(texts) and all(t.startswith("not ") for t in texts):
        return Cause("dependency", tuple(dict.fromkeys(avail)), "package-available")
    if cause.kind != "hardware":
        return None
    words = _sm_words(" ".join(texts))
    if not words:
        return None
    kept = [n for n in cause.names if n != "GPU" and not any(w in n for w in words)]
    return Cause("hardware", (*words, *kept), cause.rule)


_KEYED_VALUE_RE = re.compile(r"^[A-Za-z_][\w.]*\[\s*['\"]([A-Za-z_][\w-]*)['\"]\s*\]")
_UNKNOWN_WORD_RE = re.compile(r"\b(unknown|unsupported|unrecognized|invalid|not a valid|no such)\b", re.I)


def _unknown_entry(site: Site, roles: Roles, cause: Cause) -> Cause | None:
    # ``except KeyError: raise ValueError(f"Unknown style: {data['style']}")``: a value read by key
    # from data (a parsed JSON or YAML file, a request body) is not a name the code knows. The
    # data is the caller's, so is the fix; the key names the entry to correct.
    if cause.kind != "internal" or not any(h.rsplit(".", 1)[-1] == "KeyError" for h in site.guard.handlers):
        return None
    if site.message is None or not _UNKNOWN_WORD_RE.search(_literal_text(site)):
        return None
    keys = [
        m.group(1)
        for p in site.message.parts
        if not isinstance(p, str) and (m := _KEYED_VALUE_RE.match(p.source)) is not None
    ]
    return Cause("input", tuple(dict.fromkeys(keys)), "unknown-entry") if keys else None


_PARSERS = frozenset(
    {
        "json.loads",
        "json.load",
        "orjson.loads",
        "yaml.safe_load",
        "yaml.load",
        "tomllib.load",
        "tomllib.loads",
    }
)


def _parsed_config(site: Site, roles: Roles, cause: Cause) -> Cause | None:
    # ``cfg = json.loads(extra_config)`` then ``x = cfg.pop("timeout", 5)`` and a check on ``x``:
    # the entry of configuration text the caller hands in (a flag's JSON, a config file), not
    # sglang's own state. The cause names the key, then the parameter the text came in by.
    if cause.kind != "internal" or not roles.deciding:
        return None
    values: dict[str, list[ast.expr]] = {}
    for b in site.guard.bindings:
        if b.value is not None:
            values.setdefault(b.name, []).append(b.value)
    read = names_read(roles.deciding)
    keys: list[str] = []
    sources: list[str] = []
    for name in sorted(read):
        for value in values.get(name, []):
            found = key_read(value)
            if found is None:
                continue
            holder, _how, key = found
            # ``json.loads(text) if text else {}``: either branch may be the parse.
            options = [
                o
                for v in values.get(holder, [])
                for o in ((v.body, v.orelse) if isinstance(v, ast.IfExp) else (v,))
            ]
            parsed = [v for v in options if isinstance(v, ast.Call) and unparse(v.func) in _PARSERS]
            if not parsed:
                continue
            if key not in keys:
                keys.append(key)
            source = _data_source(parsed[0], values, {p.name for p in site.params})
            if source and source not in sources:
                sources.append(source)
    return Cause("input", (*keys, *sources), "parsed-config") if keys else None


def _data_source(parse: ast.Call, values: Mapping[str, list[ast.expr]], params: set[str]) -> str:
    """The parameter a parser's input came in by: ``json.loads(text)``, or ``yaml.safe_load(f)``
    with ``f`` opened from it (``with open(path) as f``); ``""`` when it is none."""
    arg = parse.args[0] if parse.args else None
    if not isinstance(arg, ast.Name):
        return ""
    if arg.id in params:
        return arg.id
    for value in values.get(arg.id, []):
        if (
            isinstance(value, ast.Call)
            and unparse(value.func) == "open"
            and value.args
            and isinstance(value.args[0], ast.Name)
            and value.args[0].id in params
        ):
            return value.args[0].id
    return ""


_UNKNOWN_KEYS_RE = re.compile(
    r"\b(?:unknown|unexpected|unrecognized|unsupported|invalid|extra)\b[^.:]{0,30}?"
    r"\b(?:keys?|fields?|entr(?:y|ies)|options?)\b|\bdid you mean\b",
    re.I,
)
# Names that hold a call's own keyword arguments: an unknown one is the calling code's, not data.
_CALL_KEYWORDS = frozenset({"kwargs", "kw", "kwds", "extra_kwargs", "options_kwargs"})


def keys_checked(value: ast.expr) -> tuple[str, ast.expr | None] | None:
    """``(mapping, known)`` of ``set(cfg) - KNOWN`` (through ``sorted``/``list``, ``cfg.keys()``):
    the mapping whose keys are checked, as code, and the expression of the keys it accepts."""
    while isinstance(value, ast.Call) and unparse(value.func) in ("sorted", "list", "tuple") and value.args:
        value = value.args[0]
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Sub)):
        return None
    left = value.left
    if isinstance(left, ast.Call) and unparse(left.func) == "set" and len(left.args) == 1:
        left = left.args[0]
    if isinstance(left, ast.Call) and isinstance(left.func, ast.Attribute) and left.func.attr == "keys":
        left = left.func.value
    if not isinstance(left, ast.Name | ast.Attribute):
        return None
    return unparse(left), value.right


def _unknown_keys(site: Site, roles: Roles, cause: Cause) -> Cause | None:
    # ``unknown = set(cfg) - ALLOWED; if unknown: raise ValueError(f"unknown key(s): {unknown}")``:
    # the keys of a mapping handed in (a config file, a JSON flag, a payload) that the code does not
    # accept. The fix is in that data, and the message lists what to remove.
    if cause.kind != "internal" or site.message is None or not _UNKNOWN_KEYS_RE.search(_literal_text(site)):
        return None
    read = names_read(roles.deciding)
    for b in site.guard.bindings:
        if b.name not in read or b.value is None:
            continue
        found = keys_checked(b.value)
        if found is not None and found[0].rpartition(".")[2] not in _CALL_KEYWORDS:
            return Cause("input", (found[0],), "unknown-keys")
    return None


def _caller_data(site: Site, roles: Roles, cause: Cause) -> Cause | None:
    if cause.kind != "internal" or not roles.deciding:
        return None
    p = data_param(site, roles.deciding)
    return Cause("input", (p.name,), "caller-data") if p is not None else None


@dataclass(frozen=True)
class OriginRule:
    """``refine`` gives a better cause or ``None``; ``example`` is the code it is written for."""

    name: str
    example: str
    refine: Callable[[Site, Roles, Cause], Cause | None]


ORIGIN_RULES: tuple[OriginRule, ...] = (
    OriginRule(
        "device-capability",
        'if get_device_sm() < 90: raise RuntimeError("needs Hopper")',
        _device_capability,
    ),
    OriginRule(
        "required-package",
        'raise ImportError("aiter is required when SGLANG_USE_AITER is set")',
        _packages,
    ),
    OriginRule(
        "caller-config",
        'def _pick(self, model_type): if model_type != "clip": raise ...  # self._pick(self.vision_config.model_type)',
        _caller_config,
    ),
    OriginRule(
        "duplicate-id",
        'def submit(self, request_id): if request_id in self._requests: raise ValueError("Duplicate ...")',
        _duplicate_id,
    ),
    OriginRule(
        "unknown-entry",
        'try: style = Style[data["style"]] except KeyError: raise ValueError(f"Unknown style: {data[\'style\']}")',
        _unknown_entry,
    ),
    OriginRule(
        "unknown-keys",
        'unknown = set(cfg) - ALLOWED; if unknown: raise ValueError(f"unknown key(s): {unknown}")',
        _unknown_keys,
    ),
    OriginRule(
        "parsed-config",
        'cfg = json.loads(extra); x = cfg.pop("timeout", 5); if not isinstance(x, int): raise ValueError',
        _parsed_config,
    ),
    OriginRule(
        "caller-data",
        "def parse_calls(text: str): ... if stop is None: raise ValueError(...)",
        _caller_data,
    ),
)


def refine(site: Site, roles: Roles, cause: Cause) -> Cause:
    """The first rule of :data:`ORIGIN_RULES` that names the cause better, else ``cause``."""
    for rule in ORIGIN_RULES:
        better = rule.refine(site, roles, cause)
        if better is not None:
            return replace(better, with_model=cause.with_model)
    return cause


def _literal_text(site: Site) -> str:
    if site.message is None:
        return ""
    return "".join(p for p in site.message.parts if isinstance(p, str)) or message_text(site)


def accepted_types(param: Param, gates: Iterable[AtomView]) -> list[str]:
    """The types a parameter's annotation admits, then those an earlier ``isinstance`` branch
    already handled (a gate ``not isinstance(x, (list, tuple))`` means lists were accepted)."""
    out: list[str] = []
    for t in re.findall(r"[A-Za-z_][\w.]*", param.annotation):
        if (
            t not in ("Union", "Optional", "None", "typing", "List", "Dict", "Tuple", "Sequence")
            and t not in out
        ):
            out.append(t)
    for v in gates:
        typed = v.isinstance_
        if typed is not None and not typed[2] and typed[0] == param.name:
            out.extend(t for t in typed[1] if t not in out)
    return out


def constant_values(
    site: Site, views: Sequence[AtomView], constants: Mapping[str, str]
) -> list[tuple[str, str]]:
    """``(name, value)`` for the module string constants the atoms read, and for the local
    bindings on every path that only join such constants (``end = f"</{tok}{block}>"``)."""
    if not constants:
        return []
    names = _read_names(site, views)
    out: list[tuple[str, str]] = []
    for name in sorted(names):
        if name in constants:
            out.append((name, constants[name]))
    for b in site.guard.bindings:
        if not b.always or b.name not in names or b.value is None:
            continue
        value = _render(b.value, constants)
        if value is not None:
            out.append((b.name, value))
    return [(n, v) for n, v in dict.fromkeys(out) if 0 < len(v) <= 120][:6]


def _render(node: ast.expr, constants: Mapping[str, str]) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return None  # a literal is already in the shown code
    if isinstance(node, ast.JoinedStr):
        parts: list[str] = []
        for v in node.values:
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                parts.append(v.value)
            elif (
                isinstance(v, ast.FormattedValue)
                and isinstance(v.value, ast.Name)
                and v.value.id in constants
                and v.format_spec is None
                and v.conversion == -1
            ):
                parts.append(constants[v.value.id])
            else:
                return None
        return "".join(parts)
    return None
