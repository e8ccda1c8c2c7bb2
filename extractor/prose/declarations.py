"""Reading the target's declarations in one file: its command-line flags (dataclass fields and
``add_argument`` calls), its environment registry, and its module-level string constants.

Only syntax trees are read; nothing of the target is imported or run. :mod:`.knowledge` gathers
these per-file readings into one :class:`~extractor.prose.knowledge.Knowledge`.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from extractor.analysis.walk import last_name, none_test
from extractor.prose.argv import argv_flags
from extractor.prose.config_fields import config_attributes, config_fields
from extractor.prose.imports import guarded_imports
from extractor.prose.sentences import split_sentences

__all__ = [
    "ENV_NAME_RE",
    "SUBCOMMAND_RE",
    "EnvInfo",
    "FlagInfo",
    "ModuleConstants",
    "module_constants",
    "namespace_of_file",
    "read_env_registry",
    "read_flags",
    "subcommand_of",
]

ENV_NAME_RE = re.compile(r"^[A-Z][A-Z0-9_]*[A-Z0-9]$")
"""What an environment variable name looks like (``SGLANG_X``, ``CUDA_VISIBLE_DEVICES``)."""

_DEPRECATED_RE = re.compile(r"deprecat", re.IGNORECASE)
# How long a flag's help text may grow in the knowledge base: the first sentence is what the
# prose quotes, and a short cap keeps the fingerprint input small.
_HELP_CAP = 240


@dataclass(frozen=True)
class FlagInfo:
    """One command-line flag as the target declares it."""

    flag: str
    """The primary spelling, ``--enable-foo``."""
    dest: str
    """The attribute the parsed value lands in, ``enable_foo``."""
    namespace: str
    """The package prefix whose parser owns it, ``python/sglang/srt/``."""
    help: str = ""
    """First sentence of the help text (possibly empty)."""
    choices: tuple[str, ...] = ()
    """Literal choices when the declaration lists them."""
    is_bool: bool = False
    """A switch (``store_true`` or a ``bool`` field): given or not, it takes no value."""
    aliases: tuple[str, ...] = ()
    is_list: bool = False
    """Declared with ``nargs`` (``"*"``, ``"+"``, a count) or ``action="append"``: the value
    always arrives as a list, never as one string."""
    optional: bool = False
    """A valued flag whose default is ``None``: given at all, it turns on what it names (a
    speculative algorithm, a storage backend), so leaving it out is a way off that path."""
    via_group: bool = False
    """Found as the size of a process group the flag sizes (``get_tp_world_size()``), not as the
    flag's own value (see :mod:`extractor.prose.world_size`)."""
    replaced_by: str = ""
    """The flag a deprecated spelling stands in for (``new_flag="--x"`` of its deprecation
    action), when the declaration names one: what the user is told to give today."""
    off_flag: str = ""
    """The spelling that turns a switch off (``--no-x`` of ``argparse.BooleanOptionalAction``)
    when leaving the switch out does not: its default is on, or ``None`` for the launch to decide
    (detected from the model or the adapters). Empty when leaving it out turns it off."""
    default: str = ""
    """A literal default as the command line would spell it (``"triton"``, ``"8"``); empty for
    ``None`` (or no literal), which for a valued flag that is not ``optional`` means the launch
    code picks the value itself when the flag is left out."""
    detected: bool = False
    """Its help says that, left out, the value is detected from the data loaded ("auto-detected
    from adapter weights"): forcing it either way makes sglang read that data wrongly."""


@dataclass(frozen=True)
class EnvInfo:
    """One environment variable the target's registry declares."""

    name: str
    kind: str = ""
    """``bool``, ``int``, ``float``, ``str`` ... from ``EnvBool(...)`` or the annotation; may be empty."""
    default: str = ""
    """The default as source text; may be empty."""

    @property
    def on_by_default(self) -> bool:
        """A boolean that is true unless turned off: unsetting it leaves it on."""
        return self.kind == "bool" and self.default.lower() in ("true", "1")


SUBCOMMAND_RE = re.compile(r"/entrypoints/cli/([a-z]+)\.py$")
"""A module of one of the ``sglang`` command's subcommands (``.../entrypoints/cli/generate.py``)."""
_NOT_SUBCOMMANDS = frozenset({"main", "utils", "types", "common"})


def subcommand_of(path: str) -> str | None:
    """The ``sglang`` command's subcommand (``generate``) whose module ``path`` is, if it is one:
    that subcommand's own parser reads the flags its code names."""
    sub = SUBCOMMAND_RE.search(path)
    return sub.group(1) if sub is not None and sub.group(1) not in _NOT_SUBCOMMANDS else None


def namespace_of_file(path: str) -> str:
    """``python/sglang/<pkg>/`` for files below a top-level sglang package, else the file's folder."""
    parts = path.split("/")
    if len(parts) >= 4 and parts[0] == "python" and parts[1] == "sglang":
        return "/".join(parts[:3]) + "/"
    return "/".join(parts[:-1]) + "/" if len(parts) > 1 else ""


def _const_str(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _text_of(node: ast.expr | None) -> str:
    """The literal text of a help string: constants, implicit joins, f-string literal parts, ``+``."""
    if node is None:
        return ""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        out = []
        for v in node.values:
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                out.append(v.value)
            else:
                out.append("...")
        return "".join(out)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _text_of(node.left) + _text_of(node.right)
    if isinstance(node, ast.Tuple | ast.List):
        return " ".join(_text_of(e) for e in node.elts)
    return ""


def _first_sentence(text: str) -> str:
    text = split_sentences(" ".join(text.split()))[0]
    if len(text) > _HELP_CAP:
        text = text[: _HELP_CAP - 3].rstrip() + "..."
    return text


def _literal_choices(node: ast.expr | None) -> tuple[str, ...]:
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        out = []
        for e in node.elts:
            if (
                isinstance(e, ast.Constant)
                and isinstance(e.value, str | int | float)
                and not isinstance(e.value, bool)
            ):
                out.append(str(e.value))
            else:
                return ()
        return tuple(out)
    return ()


def _choices_of(node: ast.expr, lists: Mapping[str, tuple[str, ...]]) -> tuple[str, ...]:
    """A ``choices=`` value: a literal list, a module constant bound to one
    (``choices=BACKEND_CHOICES``), or ``A + B`` of those."""
    if isinstance(node, ast.Name):
        return lists.get(node.id, ())
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _choices_of(node.left, lists), _choices_of(node.right, lists)
        return left + right if left and right else ()
    if (
        isinstance(node, ast.Call)
        and last_name(node.func) in ("list", "tuple", "sorted")
        and len(node.args) == 1
    ):
        return _choices_of(node.args[0], lists)
    return _literal_choices(node)


def _module_lists(tree: ast.Module) -> dict[str, tuple[str, ...]]:
    """Module-level names bound once to a literal list of strings or numbers."""
    out: dict[str, tuple[str, ...]] = {}
    seen: set[str] = set()
    for stmt in tree.body:
        target: ast.expr | None = None
        value: ast.expr | None = None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign):
            target, value = stmt.target, stmt.value
        if not isinstance(target, ast.Name) or value is None:
            continue
        if target.id in seen:
            out.pop(target.id, None)
            continue
        seen.add(target.id)
        choices = _choices_of(value, out)
        if choices:
            out[target.id] = choices
    return out


@dataclass
class _FileFlags:
    flags: list[FlagInfo] = field(default_factory=list)
    deprecated: set[str] = field(default_factory=set)  # flags declared through a deprecation path
    classes: set[str] = field(default_factory=set)
    bases: dict[str, list[str]] = field(default_factory=dict)
    fields: set[str] = field(default_factory=set)  # attribute names declared in class bodies
    field_defaults: dict[str, str] = field(default_factory=dict)
    """Class-body attribute -> its literal default (``role: RoleType = RoleType.MONOLITHIC``)."""


def _annotated_parts(ann: ast.expr) -> list[ast.expr] | None:
    """The metadata of ``A[T, meta...]`` / ``Annotated[T, meta...]`` (``None`` if not that shape)."""
    if not isinstance(ann, ast.Subscript) or last_name(ann.value) not in ("A", "Annotated"):
        return None
    sl = ann.slice
    if not isinstance(sl, ast.Tuple) or len(sl.elts) < 2:
        return None
    return list(sl.elts)


def _list_nargs(node: ast.expr) -> bool:
    """``nargs`` that makes a list: ``"*"``, ``"+"`` or a count (``"?"`` gives one value)."""
    if isinstance(node, ast.Constant):
        return node.value in ("*", "+") or (isinstance(node.value, int) and not isinstance(node.value, bool))
    return False


def _is_none(value: ast.expr | None) -> bool:
    return isinstance(value, ast.Constant) and value.value is None


def unset_subject(test: ast.expr) -> ast.Attribute | None:
    """``x.dest`` of a test ``x.dest is None``: the code asks whether a setting was left unset."""
    tested = none_test(test)
    return (
        tested[0] if tested is not None and not tested[1] and isinstance(tested[0], ast.Attribute) else None
    )


def _is_bool_type(t: ast.expr) -> bool:
    # ``Optional[bool]`` and ``bool | None`` are switches too: the parser unwraps the Optional
    # before it picks ``store_true``.
    if isinstance(t, ast.Subscript) and last_name(t.value) == "Optional":
        return _is_bool_type(t.slice)
    if isinstance(t, ast.BinOp) and isinstance(t.op, ast.BitOr):
        sides = [t.left, t.right]
        nones = [x for x in sides if isinstance(x, ast.Constant) and x.value is None]
        return len(nones) == 1 and _is_bool_type(next(x for x in sides if x not in nones))
    return isinstance(t, ast.Name) and t.id == "bool"


def _literal_type_choices(t: ast.expr) -> tuple[str, ...]:
    # Literal["a", "b"] or Optional[Literal[...]]: the field's choices when Arg lists none.
    if isinstance(t, ast.Subscript):
        name = last_name(t.value)
        if name == "Literal":
            sl = t.slice
            elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
            return _literal_choices(ast.Tuple(elts=elts, ctx=ast.Load()))
        if name == "Optional":
            return _literal_type_choices(t.slice)
    return ()


def _dataclass_field_flags(
    cls: ast.ClassDef, ns: str, out: _FileFlags, lists: Mapping[str, tuple[str, ...]]
) -> bool:
    found = False
    for stmt in cls.body:
        if not isinstance(stmt, ast.AnnAssign) or not isinstance(stmt.target, ast.Name):
            continue
        parts = _annotated_parts(stmt.annotation)
        if parts is None:
            continue
        inner, metas = parts[0], parts[1:]
        help_text = ""
        cli_name: str | None = None
        aliases: tuple[str, ...] = ()
        choices: tuple[str, ...] = ()
        no_cli = False
        # ``None`` of a resolvable flag means "pick automatically", not "off".
        resolvable = False
        action_bool = False
        negatable = False
        is_list = False
        meta_seen = False
        for meta in metas:
            if isinstance(meta, ast.Constant) and isinstance(meta.value, str):
                help_text, meta_seen = meta.value, True
            elif isinstance(meta, ast.Call) and last_name(meta.func) == "Arg":
                meta_seen = True
                for kw in meta.keywords:
                    if kw.arg == "help":
                        help_text = _text_of(kw.value)
                    elif kw.arg == "cli_name":
                        cli_name = _const_str(kw.value)
                    elif kw.arg == "aliases":
                        aliases = tuple(a for a in _literal_choices(kw.value) if a.startswith("-"))
                    elif kw.arg == "choices":
                        choices = _choices_of(kw.value, lists)
                    elif kw.arg == "resolvable":
                        resolvable = not (isinstance(kw.value, ast.Constant) and kw.value.value is False)
                    elif kw.arg == "no_cli":
                        no_cli = isinstance(kw.value, ast.Constant) and kw.value.value is True
                    elif kw.arg == "action":
                        action_bool = _const_str(kw.value) in ("store_true", "store_false")
                        negatable = _negatable(kw.value)
                        action_bool = action_bool or negatable
                        is_list = is_list or _const_str(kw.value) == "append"
                    elif kw.arg == "nargs":
                        is_list = _list_nargs(kw.value)
                    elif kw.arg == "action_kwargs" and isinstance(kw.value, ast.Dict):
                        is_list = is_list or any(
                            _const_str(k) == "nargs" and _list_nargs(v)
                            for k, v in zip(kw.value.keys, kw.value.values, strict=True)
                            if k is not None
                        )
            elif isinstance(meta, ast.JoinedStr | ast.BinOp):
                help_text, meta_seen = _text_of(meta), True
        if not meta_seen or no_cli:
            continue
        dest = stmt.target.id
        flag = cli_name if cli_name and cli_name.startswith("--") else "--" + dest.replace("_", "-")
        out.flags.append(
            FlagInfo(
                flag=flag,
                dest=dest,
                namespace=ns,
                help=_first_sentence(help_text),
                choices=choices or _literal_type_choices(inner),
                is_bool=_is_bool_type(inner) or action_bool,
                aliases=aliases,
                is_list=is_list,
                optional=_is_none(stmt.value) and not (resolvable or _is_bool_type(inner) or action_bool),
                default=_literal_default(stmt.value, lists),
                off_flag=_off_flag(flag, stmt.value) if negatable else "",
                detected=bool(_DETECTED_RE.search(help_text)),
            )
        )
        found = True
    return found


def _add_argument_flag(
    call: ast.Call, ns: str, lists: Mapping[str, tuple[str, ...]]
) -> tuple[FlagInfo, bool] | None:
    opts = [s for s in (_const_str(a) for a in call.args) if s is not None]
    longs = [o for o in opts if o.startswith("--") and len(o) > 2]
    dest: str | None = None
    help_text = ""
    choices: tuple[str, ...] = ()
    is_bool = False
    is_list = False
    deprecated = False
    replaced_by = ""
    # argparse's own default is None.
    optional = True
    default = ""
    negatable = False
    default_node: ast.expr | None = None
    for kw in call.keywords:
        if kw.arg == "new_flag":
            replaced_by = _const_str(kw.value) or ""
        if kw.arg == "default":
            optional = _is_none(kw.value)
            default = _literal_default(kw.value, lists)
            default_node = kw.value
        if kw.arg == "nargs":
            is_list = _list_nargs(kw.value)
        if kw.arg == "dest":
            dest = _const_str(kw.value)
        elif kw.arg == "help":
            help_text = _text_of(kw.value)
        elif kw.arg == "choices":
            choices = _choices_of(kw.value, lists)
        elif kw.arg == "action":
            act = _const_str(kw.value)
            name = act or last_name(kw.value)
            # store_true/false, argparse.BooleanOptionalAction, sglang's StoreBoolean...
            squashed = (name or "").lower().replace("_", "")
            # Actions that store a constant take no value: argparse's own and the project's
            # classes named after them (``DeprecatedStoreTrueAction``, ``StoreConstAlias``).
            if act in ("store_true", "store_false", "store_const") or (
                not act and any(w in squashed for w in ("bool", "storetrue", "storefalse", "storeconst"))
            ):
                is_bool = True
            is_list = is_list or act == "append"
            negatable = _negatable(kw.value)
            if _DEPRECATED_RE.search(name or ""):
                deprecated = True
    if not longs:
        return None
    if dest is None:
        dest = longs[0][2:].replace("-", "_")
    if not dest.isidentifier():
        return None
    if _DEPRECATED_RE.search(help_text[:40]):
        deprecated = True
    info = FlagInfo(
        flag=longs[0],
        dest=dest,
        namespace=ns,
        help=_first_sentence(help_text),
        choices=choices,
        is_bool=is_bool,
        aliases=tuple(longs[1:]),
        is_list=is_list,
        optional=optional and not is_bool,
        default=default,
        replaced_by=replaced_by if deprecated and replaced_by.startswith("--") else "",
        off_flag=_off_flag(longs[0], default_node) if negatable else "",
        detected=bool(_DETECTED_RE.search(help_text)),
    )
    return info, deprecated


_DETECTED_RE = re.compile(r"\b(?:auto-?)?detected from\b", re.I)


def _negatable(action: ast.expr) -> bool:
    """``action=argparse.BooleanOptionalAction``: the parser also takes ``--no-x``."""
    return (last_name(action) or "").rpartition(".")[2] == "BooleanOptionalAction"


def _off_flag(flag: str, default: ast.expr | None) -> str:
    """``--no-x`` for a negatable switch whose default is not plainly off (``True``, or a ``None``
    written out for the launch to decide); empty when leaving it out turns it off (``False``, or
    argparse's own ``None`` where no default is written)."""
    if default is None or (isinstance(default, ast.Constant) and default.value is False):
        return ""
    return "--no-" + flag.removeprefix("--")


def _literal_default(node: ast.expr | None, lists: Mapping[str, tuple[str, ...]] | None = None) -> str:
    """A string or number default as written on a command line; empty for anything else."""
    if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "field":
        node = next((k.value for k in node.keywords if k.arg == "default"), None)
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        # ``= BACKEND_CHOICES[0]``: an entry of a module-level list of literals.
        items = (lists or {}).get(node.value.id, ())
        index = _literal_default(node.slice)
        if index.lstrip("-").isdigit() and -len(items) <= int(index) < len(items):
            return items[int(index)]
        return ""
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str | int | float)
        and not isinstance(node.value, bool)
    ):
        return str(node.value)
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and isinstance(node.operand.value, int | float)
        and not isinstance(node.operand.value, bool)
    ):
        return f"-{node.operand.value}"  # ``= -1``: "off" for many sizes, no value the launch picks
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and _MEMBER_RE.match(node.attr):
        # ``RoleType.MONOLITHIC``: an enum member, whose value is its name in lower case in the
        # target's enums of choices. It is a fixed default, not one the launch code picks.
        return node.attr.lower()
    return ""


_MEMBER_RE = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$")


class _ArgCallFinder(ast.NodeVisitor):
    """Every ``*.add_argument(...)`` call, with the class it sits in."""

    def __init__(self, ns: str, out: _FileFlags, lists: Mapping[str, tuple[str, ...]]) -> None:
        self.ns = ns
        self.out = out
        self.lists = lists
        self.class_stack: list[str] = []

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.class_stack.append(node.name)
        self.generic_visit(node)
        self.class_stack.pop()

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            got = _add_argument_flag(node, self.ns, self.lists)
            if got is not None:
                info, deprecated = got
                self.out.flags.append(info)
                if deprecated:
                    self.out.deprecated.add(info.flag)
                if self.class_stack:
                    self.out.classes.add(self.class_stack[0])
        self.generic_visit(node)


def read_flags(path: str, tree: ast.Module) -> _FileFlags:
    ns = namespace_of_file(path)
    out = _FileFlags()
    lists = _module_lists(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            out.bases[node.name] = [last_name(b) for b in node.bases if last_name(b)]
            for stmt in node.body:
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    out.fields.add(stmt.target.id)
                    if default := _literal_default(stmt.value, lists):
                        out.field_defaults.setdefault(stmt.target.id, default)
                elif isinstance(stmt, ast.Assign):
                    out.fields.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
            if _dataclass_field_flags(node, ns, out, lists):
                out.classes.add(node.name)
    _ArgCallFinder(ns, out, lists).visit(tree)
    return out


# ``EnvBool``, ``EnvJSON``; a variant (``EnvBoolWithAlias``) keeps its base type's name.
_ENV_CLASS_RE = re.compile(r"^Env([A-Z][a-z]+|[A-Z]+(?![a-z]))[A-Za-z]*$")


def _env_kind_from_call(value: ast.expr | None) -> tuple[str, str] | None:
    if isinstance(value, ast.Call):
        m = _ENV_CLASS_RE.match(last_name(value.func))
        if m:
            default = ast.unparse(value.args[0]) if value.args else ""
            return m.group(1).lower(), default
    return None


def read_env_registry(tree: ast.Module) -> dict[str, EnvInfo]:
    """Names a registry module declares: class attributes built by ``EnvBool(...)`` and friends,
    module-level (also ``if TYPE_CHECKING:``) annotated names, and string keys of dict literals
    (the ``environment_variables = {"X": ...}`` style)."""
    found: dict[str, EnvInfo] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for stmt in node.body:
                if (
                    isinstance(stmt, ast.Assign)
                    and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Name)
                ):
                    name = stmt.targets[0].id
                    made = _env_kind_from_call(stmt.value)
                    if made and ENV_NAME_RE.match(name):
                        found.setdefault(name, EnvInfo(name, made[0], made[1]))
        elif isinstance(node, ast.Dict):
            for k in node.keys:
                s = _const_str(k)
                if s and ENV_NAME_RE.match(s):
                    found.setdefault(s, EnvInfo(s))
    for stmt in _module_level_statements(tree):
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            name = stmt.target.id
            if ENV_NAME_RE.match(name) and "_" in name:
                kind = ast.unparse(stmt.annotation)
                default = ast.unparse(stmt.value) if stmt.value is not None else ""
                if not found.get(name, EnvInfo(name)).kind:
                    # The annotation carries the type a dict entry lacks.
                    found[name] = EnvInfo(name, kind, default)
    return found


def _module_level_statements(tree: ast.Module) -> Iterable[ast.stmt]:
    # Module body plus the bodies of top-level ``if``/``try`` blocks (TYPE_CHECKING, import guards).
    stack = list(reversed(tree.body))
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, ast.If):
            stack.extend(reversed(stmt.body + stmt.orelse))
        elif isinstance(stmt, ast.Try):
            stack.extend(reversed(stmt.body + stmt.orelse + stmt.finalbody))


class ModuleConstants(dict[str, str]):
    """Module-level names bound once to a string literal (``_ENV = "SGLANG_X"``), plus in
    ``exprs`` the expression of every module-level name bound exactly once (any value), so
    enrichment can see that ``FLA_CI_ENV = os.getenv("FLA_CI_ENV") == "1"`` reads an env var."""

    exprs: dict[str, ast.expr]
    argv: dict[str, tuple[str, ...]]
    script_flags: dict[str, FlagInfo]
    """dest -> flag of a tool script's own ``add_argument`` declarations (namespace: the file)."""
    runnable: bool
    """Whether the file runs as a program (an ``if __name__ == "__main__":`` block): a fix on a
    flag of its own is written against running it, not the server."""
    guarded: dict[str, str]
    """Names bound by a module-level optional import -> its package
    (:func:`extractor.prose.imports.guarded_imports`)."""
    config_fields: Mapping[str, Mapping[str, tuple[str, ...]]]
    """Class -> parameter or ``self.`` attribute -> the config keys its ``from_config`` fills it
    from (:func:`extractor.prose.config_fields.config_fields`)."""
    config_attrs: Mapping[str, Mapping[str, str]]
    """Class -> ``self.`` attribute -> the model config key its constructor copies into it
    (:func:`extractor.prose.config_fields.config_attributes`)."""
    """Top-level class or function -> the flags it looks up in a raw argument list
    (:func:`extractor.prose.argv.argv_flags`)."""

    def __init__(
        self,
        strings: Mapping[str, str] | None = None,
        values: Mapping[str, ast.expr] | None = None,
        argv: Mapping[str, tuple[str, ...]] | None = None,
        guarded: Mapping[str, str] | None = None,
        script_flags: Mapping[str, FlagInfo] | None = None,
        config_fields: Mapping[str, Mapping[str, tuple[str, ...]]] | None = None,
        config_attrs: Mapping[str, Mapping[str, str]] | None = None,
        runnable: bool = False,
    ):
        super().__init__(strings or {})
        self.exprs = dict(values or {})
        self.argv = dict(argv or {})
        self.guarded = dict(guarded or {})
        self.script_flags = dict(script_flags or {})
        self.config_fields = dict(config_fields or {})
        self.config_attrs = dict(config_attrs or {})
        self.runnable = runnable


def module_constants(module: ast.Module, path: str = "", text: str | None = None) -> ModuleConstants:
    """The module-level constants of one parsed file (see :class:`ModuleConstants`).

    Enrichment uses them to resolve ``os.getenv(_ENV)``. A name bound more than once is left out
    so a guess never replaces the real value. ``path`` (a tool script's, not a server-args
    module's) and the file's ``text`` (when given, a file that cannot hold a flag literal or an
    ``add_argument`` is not walked for them) add the flags a tool script declares for itself.
    Never raises.
    """
    seen: dict[str, ast.expr | None] = {}
    try:
        for stmt in _module_level_statements(module):
            targets: list[ast.expr] = []
            value: ast.expr | None = None
            if isinstance(stmt, ast.Assign):
                targets, value = list(stmt.targets), stmt.value
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                targets, value = [stmt.target], stmt.value
            elif isinstance(stmt, ast.AugAssign | ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                seen[stmt.target.id] = None
                continue
            elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                seen[stmt.name] = None
                continue
            for t in targets:
                if isinstance(t, ast.Name):
                    seen[t.id] = None if t.id in seen else value
                elif isinstance(t, ast.Tuple | ast.List):
                    for e in t.elts:
                        if isinstance(e, ast.Name):
                            seen[e.id] = None
    except (AttributeError, TypeError, RecursionError):
        pass
    values = {k: v for k, v in seen.items() if v is not None}
    strings = {k: s for k, v in values.items() if (s := _const_str(v)) is not None}
    argv = argv_flags(module) if text is None or "--" in text else {}
    own: dict[str, FlagInfo] = {}
    if path and (text is None or "add_argument" in text):
        try:
            for info in read_flags(path, module).flags:
                own.setdefault(info.dest, dataclasses.replace(info, namespace=path))
        except (RecursionError, AttributeError, TypeError, ValueError):
            own = {}
    fields = config_fields(module) if text is None or "from_" in text else {}
    attrs = config_attributes(module) if text is None or "config" in text else {}
    runnable = any(isinstance(s, ast.If) and "__main__" in ast.unparse(s.test) for s in module.body)
    return ModuleConstants(strings, values, argv, guarded_imports(module), own, fields, attrs, runnable)
