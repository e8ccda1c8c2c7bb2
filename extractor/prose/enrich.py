"""sglang-aware prose for one site: flags, environment variables, and the human-facing fields.

Everything here is derived from the site's own facts (:class:`extractor.analysis.facts.Site`) and from what
the target declares about its command line (:class:`extractor.prose.knowledge.Knowledge`); no network and
no language model. :func:`enrich` is pure and deterministic and never raises: an odd site gets
plainer prose, not an exception.

Which reads count as a *flag* (the value of a command-line flag): an attribute ``x`` for which the
site's namespace declares a flag with destination ``x``, read from

* a server-args object: a name ``args`` / ``cli_args`` / ``parsed_args`` / ``cmd_args`` or any name
  or attribute containing ``server_args`` (``server_args.x``, ``self.server_args.x``,
  ``model_runner.server_args.x``, ``global_server_args_dict["x"]``, ``getattr(server_args, "x")``);
* a call ``get_server_args()`` / ``get_global_server_args()`` or any zero-argument ``get_*()``
  accessor followed by at most two group attributes (``get_exec().mamba.x``,
  ``get_spec().speculative_algorithm``, ``get_flags().capture.enable_torch_compile``): sglang's
  runtime config groups are seeded from the server args;
* ``self.x`` only inside a class that declares flags (``ServerArgs`` and its mixins);
* a name ``server_args_x`` (a parameter that carries field ``x``);
* a zero-argument getter named after a multi-word destination, ``get_moe_runner_backend()``
  (sglang's module-level accessors for values initialised from the server args).

A bare ``self.x`` or ``config.x`` elsewhere is *not* a flag even when ``x`` happens to be a flag
destination: model and layer objects reuse names such as ``tp_size`` and ``dtype`` for their own
state, and calling those flags would send users to the command line for an internal invariant.
A local name bound (``LocalBinding``) to an expression that reads a flag reads that flag too.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from extractor.analysis.conditions import split_and
from extractor.analysis.facts import GuardAtom, Site
from extractor.prose.knowledge import ENV_NAME_RE, FlagInfo, Knowledge
from extractor.records.message_pattern import WILDCARD

__all__ = ["Prose", "enrich", "guard_env_vars", "guard_flags"]


@dataclass(frozen=True)
class Prose:
    """The prose fields of one record (names as in the schema)."""

    errorType: str
    severity: str
    documentation: str
    triggerScenarios: str
    commonSituations: str
    solutions: list[str]
    exampleFix: str
    handlingStrategy: str
    validationCode: str
    typeGuard: str | None
    tryCatchPattern: str | None
    preventionTips: list[str]
    tags: list[str]
    backgroundTag: str
    errorCode: str | None


# ---------------------------------------------------------------------------------------------
# Finding flag and environment reads
# ---------------------------------------------------------------------------------------------

_ARGS_NAMES = frozenset({"args", "cli_args", "parsed_args", "cmd_args"})
_SERVER_ARGS_CALL_RE = re.compile(r"^get_(global_)?server_args$")
_ACCESSOR_RE = re.compile(r"^get_[a-z][a-z0-9_]*$")
_ENV_RECEIVER_RE = re.compile(r"(^|_)envs$")
_ENV_HELPER_SKIP_RE = re.compile(
    r"^_?(set|del|update|temp|mock|init|destroy|cleanup|override|scoped|patch|unset|inject)"
)
# The deepest binding chain followed (``a = f(b)``, ``b = server_args.x``): enough for sglang's
# helpers, small enough that a self-referencing chain cannot loop.
_BINDING_DEPTH = 3


def _is_server_args_name(name: str) -> bool:
    return name in _ARGS_NAMES or "server_args" in name


def _call_name(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Name):
            return f.id
        if isinstance(f, ast.Attribute):
            return f.attr
    return ""


def _is_args_receiver(node: ast.expr, ctx: _Ctx | None = None, depth: int = 0) -> bool:
    """Whether ``node.x`` reads a server-args value."""
    if isinstance(node, ast.Name):
        if _is_server_args_name(node.id):
            return True
        if node.id == "self":
            return bool(ctx and ctx.self_is_args)
        # ``view = resolved_view(server_args)`` / ``sa = self.server_args``: the local is the args.
        if ctx is not None and depth < _BINDING_DEPTH:
            values = ctx.bindings.get(node.id, ())
            return len(values) == 1 and _is_args_receiver(values[0], ctx, depth + 1)
        return False
    if isinstance(node, ast.Attribute):
        if _is_server_args_name(node.attr):
            return True
        # get_exec().mamba / get_flags().capture: one or two group hops above an accessor call.
        inner: ast.expr = node
        for _ in range(2):
            if not isinstance(inner, ast.Attribute):
                break
            inner = inner.value
            if isinstance(inner, ast.Call):
                return _is_accessor_call(inner)
        return False
    if isinstance(node, ast.Call):
        if _is_accessor_call(node) or _SERVER_ARGS_CALL_RE.match(_call_name(node)):
            return True
        # A resolved view of the args: ``resolved_view(server_args)``, ``self._resolved()``.
        name = _call_name(node)
        if "resolved" in name or name.endswith("_view"):
            if len(node.args) == 1 and not node.keywords:
                return _is_args_receiver(node.args[0], ctx, depth + 1)
            if not node.args and isinstance(node.func, ast.Attribute):
                return _is_args_receiver(node.func.value, ctx, depth + 1)
        return False
    return False


def _is_accessor_call(node: ast.Call) -> bool:
    name = _call_name(node)
    if _SERVER_ARGS_CALL_RE.match(name):
        return True
    return not node.args and not node.keywords and bool(_ACCESSOR_RE.match(name))


def _is_os_environ(node: ast.expr) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr == "environ" and isinstance(node.value, ast.Name) and node.value.id == "os"
    return isinstance(node, ast.Name) and node.id == "environ"


@dataclass
class _Ctx:
    """What a read lookup needs about the site."""

    flags: Mapping[str, FlagInfo]
    self_is_args: bool
    bindings: Mapping[str, Sequence[ast.expr]]
    """Local name -> the values assigned to it."""
    attr_bindings: Mapping[str, Sequence[ast.expr]]
    """Dotted target (``self.tp_size``) -> the values assigned to it."""
    constants: Mapping[str, str]
    attr_roots: frozenset[str]
    """First names of the dotted ``attr_bindings`` targets (``self``)."""
    module_values: Mapping[str, ast.expr]
    """Module-level name -> its value (``FLA_CI_ENV = os.getenv("FLA_CI_ENV") == "1"``)."""


def _str_value(node: ast.expr | None, ctx: _Ctx) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        # A local ``key = "SGLANG_X"`` first, then a module-level constant.
        local = ctx.bindings.get(node.id, ())
        if len(local) == 1:
            v = local[0]
            return v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else None
        return ctx.constants.get(node.id)
    return None


def _env_name(node: ast.expr | None, ctx: _Ctx) -> str | None:
    s = _str_value(node, ctx)
    if s and ENV_NAME_RE.match(s):
        return s
    return None


def _flag_of_node(node: ast.AST, ctx: _Ctx) -> FlagInfo | None:
    """The flag whose value ``node`` itself is (not a sub-expression of it)."""
    if isinstance(node, ast.Name):
        # A parameter named after the field it carries: ``server_args_kv_cache_dtype``.
        if node.id.startswith("server_args_"):
            return ctx.flags.get(node.id[len("server_args_") :])
        return None
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
        info = ctx.flags.get(node.attr)
        if info is None:
            return None
        return info if _is_args_receiver(node.value, ctx) else None
    if isinstance(node, ast.Subscript):
        recv = node.value
        if isinstance(recv, ast.Name | ast.Attribute) and "server_args" in (
            recv.id if isinstance(recv, ast.Name) else recv.attr
        ):
            key = _str_value(node.slice, ctx)
            if key is not None:
                return ctx.flags.get(key)
        return None
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and node.args
        and "server_args" in (_dotted(node.func.value) or "")
    ):
        # global_server_args_dict.get("x", default)
        key = _str_value(node.args[0], ctx)
        return ctx.flags.get(key) if key is not None else None
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        # ``get_moe_runner_backend()``: a getter named after a multi-word flag destination
        # returns that flag's (parsed) value.
        name = _call_name(node)
        if name.startswith("get_") and "_" in name[4:]:
            return ctx.flags.get(name[4:])
        return None
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("getattr", "hasattr")
        and len(node.args) >= 2
    ):
        recv = node.args[0]
        key = _str_value(node.args[1], ctx)
        if key is not None and _is_args_receiver(recv, ctx):
            return ctx.flags.get(key)
    return None


def _env_of_node(node: ast.AST, ctx: _Ctx) -> str | None:
    """The environment variable whose value ``node`` itself reads."""
    if isinstance(node, ast.Attribute):
        recv = node.value
        recv_name = (
            recv.id if isinstance(recv, ast.Name) else recv.attr if isinstance(recv, ast.Attribute) else ""
        )
        if _ENV_RECEIVER_RE.search(recv_name) and ENV_NAME_RE.match(node.attr):
            return node.attr
        return None
    if isinstance(node, ast.Subscript) and _is_os_environ(node.value):
        return _env_name(node.slice, ctx)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In | ast.NotIn):
        if _is_os_environ(node.comparators[0]):
            return _env_name(node.left, ctx)
        return None
    if isinstance(node, ast.Call):
        f = node.func
        first = node.args[0] if node.args else None
        if first is None:
            for kw in node.keywords:
                if kw.arg in ("name", "key", "env", "var", "env_var", "envvar"):
                    first = kw.value
        if (
            isinstance(f, ast.Attribute)
            and f.attr in ("get", "pop", "setdefault")
            and _is_os_environ(f.value)
        ):
            return _env_name(first, ctx)
        name = _call_name(node)
        if name in ("getenv", "environ_get") or (
            "env" in name.lower() and not _ENV_HELPER_SKIP_RE.match(name) and name not in ("Env", "envs")
        ):
            return _env_name(first, ctx)
    return None


@dataclass
class _Reads:
    flags: list[FlagInfo] = field(default_factory=list)
    envs: list[str] = field(default_factory=list)

    def add_flag(self, info: FlagInfo) -> None:
        if info not in self.flags:
            self.flags.append(info)

    def add_env(self, name: str) -> None:
        if name not in self.envs:
            self.envs.append(name)


def _dotted(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


# Builtins whose result is computed from their arguments alone: ``min(server_args.x, 8)`` still
# carries the flag's value.
_PURE_BUILTINS = frozenset(
    {
        "min",
        "max",
        "abs",
        "int",
        "float",
        "str",
        "bool",
        "len",
        "round",
        "sum",
        "any",
        "all",
        "tuple",
        "list",
        "set",
        "frozenset",
        "sorted",
        "getattr",
        "divmod",
        "pow",
    }
)


def _children(node: ast.AST, strict: bool) -> list[ast.AST]:
    """Sub-nodes to search. In ``strict`` mode (a binding's value) the arguments of a call that
    takes several are skipped: ``result = run(batch, server_args.model_path)`` does not make a
    guard on ``result`` a guard on ``--model-path``, while ``algo = from_string(server_args.x)``
    does."""
    if strict and isinstance(node, ast.Call):
        n_args = len(node.args) + len(node.keywords)
        transparent = isinstance(node.func, ast.Name) and node.func.id in _PURE_BUILTINS
        if not transparent and (n_args != 1 or any(isinstance(a, ast.Starred) for a in node.args)):
            return [node.func]
    return list(ast.iter_child_nodes(node))


# The only node types that can themselves be a flag or env read (or a name bound to one).
_READ_NODES = (ast.Attribute, ast.Subscript, ast.Call, ast.Compare, ast.Name)


def _collect(
    expr: ast.AST,
    ctx: _Ctx,
    out: _Reads,
    depth: int = 0,
    seen: frozenset[str] = frozenset(),
    strict: bool = False,
) -> None:
    stack: list[ast.AST] = [expr]
    while stack:
        node = stack.pop()
        if not isinstance(node, _READ_NODES):
            stack.extend(reversed(_children(node, strict)))
            continue
        info = _flag_of_node(node, ctx)
        if info is not None:
            out.add_flag(info)
            continue
        env = _env_of_node(node, ctx)
        if env is not None:
            out.add_env(env)
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if depth < _BINDING_DEPTH and node.id in ctx.bindings and node.id not in seen:
                for value in ctx.bindings[node.id]:
                    _collect(value, ctx, out, depth + 1, seen | {node.id}, strict=True)
            elif depth < _BINDING_DEPTH and node.id in ctx.module_values and node.id not in seen:
                _collect(ctx.module_values[node.id], ctx, out, depth + 1, seen | {node.id}, strict=True)
            continue
        if isinstance(node, ast.Attribute) and ctx.attr_bindings and depth < _BINDING_DEPTH:
            key = _dotted(node)
            if key is not None and key in ctx.attr_bindings and key not in seen:
                for value in ctx.attr_bindings[key]:
                    _collect(value, ctx, out, depth + 1, seen | {key}, strict=True)
                continue
        # Reverse so the stack pops children in source order (flags are listed in reading order).
        stack.extend(reversed(_children(node, strict)))


_TARGET_RE = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*(?::[^=]*)?=(?!=)")


def _context(site: Site, knowledge: Knowledge, constants: Mapping[str, str] | None) -> _Ctx:
    bindings: dict[str, list[ast.expr]] = {}
    attr_bindings: dict[str, list[ast.expr]] = {}
    for b in site.guard.bindings:
        if b.value is None:
            continue
        m = _TARGET_RE.match(b.source)
        target = m.group(1) if m else b.name
        if "." in target:
            # ``self.tp_size = ...`` binds the attribute, not ``self``.
            attr_bindings.setdefault(target, []).append(b.value)
        else:
            bindings.setdefault(b.name, []).append(b.value)
    # Not ``constants or {}``: a ModuleConstants without string entries is falsy but may
    # still carry module-level expressions.
    consts: Mapping[str, str] = constants if constants is not None else {}
    return _Ctx(
        flags=knowledge.flags_for(site.path),
        self_is_args=knowledge.is_arg_class(site.path, site.in_class),
        bindings=bindings,
        attr_bindings=attr_bindings,
        constants=consts,
        attr_roots=frozenset(k.split(".", 1)[0] for k in attr_bindings),
        module_values=getattr(consts, "exprs", {}),
    )


_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _may_read(text: str, ctx: _Ctx) -> bool:
    """A cheap test on the atom's text: can it read a flag or env var at all? Every read goes
    through an identifier that names args/env/an accessor, ``self`` in an args class, or a
    local/module name bound to something (most atoms mention none of these)."""
    for ident in _IDENT_RE.findall(text):
        if "args" in ident or "env" in ident or ident.startswith("get_"):
            return True
        if ident in ctx.bindings or ident in ctx.module_values or ident in ctx.attr_roots:
            return True
        if ident == "self" and ctx.self_is_args:
            return True
    return False


def _atom_reads(atom: GuardAtom, ctx: _Ctx) -> _Reads:
    out = _Reads()
    if atom.test is not None and _may_read(atom.text, ctx):
        with contextlib.suppress(RecursionError):
            _collect(atom.test, ctx, out)
    return out


def _site_reads(site: Site, ctx: _Ctx) -> tuple[list[_Reads], _Reads]:
    per_atom = [_atom_reads(a, ctx) for a in site.guard.atoms]
    total = _Reads()
    for r in per_atom:
        for f in r.flags:
            total.add_flag(f)
        for e in r.envs:
            total.add_env(e)
    return per_atom, total


def guard_flags(site: Site, knowledge: Knowledge, constants: Mapping[str, str] | None = None) -> list[str]:
    """The flags (``--like-this``) whose values the site's guard reads, in reading order."""
    try:
        _, total = _site_reads(site, _context(site, knowledge, constants))
    except Exception:
        return []
    return [f.flag for f in total.flags]


def guard_env_vars(site: Site, knowledge: Knowledge, constants: Mapping[str, str] | None = None) -> list[str]:
    """The environment variables the site's guard reads, in reading order."""
    try:
        _, total = _site_reads(site, _context(site, knowledge, constants))
    except Exception:
        return []
    return list(total.envs)


# ---------------------------------------------------------------------------------------------
# Reading the shape of one atom
# ---------------------------------------------------------------------------------------------

# How a condition constrains one value, in the direction that leads to the site.
_FLIP = {
    "truthy": "falsy",
    "falsy": "truthy",
    "is-none": "not-none",
    "not-none": "is-none",
    "in": "not-in",
    "not-in": "in",
    "eq": "ne",
    "ne": "eq",
    "lt": "ge",
    "ge": "lt",
    "le": "gt",
    "gt": "le",
}
_CMP_OPS: dict[type[ast.cmpop], str] = {
    ast.Eq: "eq",
    ast.NotEq: "ne",
    ast.Lt: "lt",
    ast.LtE: "le",
    ast.Gt: "gt",
    ast.GtE: "ge",
    ast.In: "in",
    ast.NotIn: "not-in",
    ast.Is: "eq",
    ast.IsNot: "ne",
}
_MIRROR = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "eq": "eq", "ne": "ne"}
_WRAPPER_CALLS = frozenset({"int", "float", "str", "bool", "len", "abs"})
_WRAPPER_METHODS = frozenset({"upper", "lower", "strip", "casefold", "value", "get"})


@dataclass(frozen=True)
class _Constraint:
    """``subject`` (a flag or env var) must satisfy ``op`` with ``values`` for the site to run."""

    kind: str  # "flag" | "env"
    name: str  # "--flag" or "ENV"
    op: str
    values: tuple[str, ...] = ()
    info: FlagInfo | None = None


def _subject(node: ast.expr, ctx: _Ctx, depth: int = 0) -> tuple[str, str, FlagInfo | None] | None:
    """The flag or env var whose value ``node`` is, seeing through casts, ``.upper()``,
    ``x or ""`` and local bindings."""
    info = _flag_of_node(node, ctx)
    if info is not None:
        return "flag", info.flag, info
    env = _env_of_node(node, ctx)
    if env is not None:
        return "env", env, None
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id in _WRAPPER_CALLS and len(node.args) == 1:
            return _subject(node.args[0], ctx, depth)
        if isinstance(node.func, ast.Attribute) and node.func.attr in _WRAPPER_METHODS:
            return _subject(node.func.value, ctx, depth)
    if isinstance(node, ast.Attribute) and node.attr in _WRAPPER_METHODS:
        return _subject(node.value, ctx, depth)
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and node.values:
        return _subject(node.values[0], ctx, depth)
    if isinstance(node, ast.Name) and depth < _BINDING_DEPTH:
        values = ctx.bindings.get(node.id, ())
        if len(values) == 1:
            return _subject(values[0], ctx, depth + 1)
    return None


def _literal(node: ast.expr) -> tuple[str, ...] | None:
    if isinstance(node, ast.Constant):
        v = node.value
        if v is None:
            return ("None",)
        if isinstance(v, bool):
            return (str(v),)
        if isinstance(v, str | int | float):
            return (str(v),)
        return None
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
    ):
        inner = _literal(node.operand)
        return (f"-{inner[0]}",) if inner else None
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        out: list[str] = []
        for e in node.elts:
            lit = _literal(e)
            if lit is None or len(lit) != 1:
                return None
            out.append(lit[0])
        return tuple(out)
    return None


def _constraint(expr: ast.expr, negated: bool, ctx: _Ctx) -> _Constraint | None:
    """The constraint one atom puts on a single flag or env value, if it is that simple."""
    while isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        expr, negated = expr.operand, not negated
    op: str | None = None
    values: tuple[str, ...] = ()
    subj = None
    if isinstance(expr, ast.Compare) and len(expr.ops) == 1:
        raw = _CMP_OPS.get(type(expr.ops[0]))
        left, right = expr.left, expr.comparators[0]
        if raw is None:
            return None
        subj = _subject(left, ctx)
        other = right
        if subj is None and raw in _MIRROR:
            subj = _subject(right, ctx)
            other = left
            raw = _MIRROR[raw]
        if subj is None:
            return None
        lit = _literal(other)
        if lit is None:
            return None
        if (isinstance(expr.ops[0], ast.Is | ast.IsNot) and lit == ("None",)) or (
            raw in ("eq", "ne") and lit == ("None",)
        ):
            op = "is-none" if raw == "eq" else "not-none"
        else:
            op, values = raw, lit
    else:
        subj = _subject(expr, ctx)
        if subj is None:
            return None
        op = "truthy"
    if negated:
        op = _FLIP[op]
    kind, name, info = subj
    return _Constraint(kind, name, op, values, info)


def _effective(atom: GuardAtom) -> ast.expr | None:
    """The atom as one expression in the direction that leads to the site."""
    if atom.test is None:
        return None
    if atom.negated:
        return ast.UnaryOp(op=ast.Not(), operand=atom.test)
    return atom.test


_INVERT_CMP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}


def _simplify(expr: ast.expr, depth: int = 0) -> ast.expr:
    """Push ``not`` inwards so a condition reads the way a person would write it:
    ``not not x`` -> ``x``, ``not x != 1`` -> ``x == 1``, ``not (a or b)`` -> ``not a and not b``."""
    if depth > 20:
        return expr
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        inner = expr.operand
        if isinstance(inner, ast.UnaryOp) and isinstance(inner.op, ast.Not):
            return _simplify(inner.operand, depth + 1)
        if isinstance(inner, ast.Compare) and len(inner.ops) == 1:
            inv = _INVERT_CMP.get(type(inner.ops[0]))
            if inv is not None:
                return ast.Compare(left=inner.left, ops=[inv()], comparators=list(inner.comparators))
        if isinstance(inner, ast.BoolOp):
            new_op: ast.boolop = ast.And() if isinstance(inner.op, ast.Or) else ast.Or()
            parts = [_simplify(ast.UnaryOp(op=ast.Not(), operand=v), depth + 1) for v in inner.values]
            return ast.BoolOp(op=new_op, values=parts)
        return expr
    if isinstance(expr, ast.BoolOp):
        values = [_simplify(v, depth + 1) for v in expr.values]
        if all(a is b for a, b in zip(values, expr.values, strict=True)):
            return expr
        return ast.BoolOp(op=expr.op, values=values)
    return expr


def _unparse(expr: ast.AST) -> str:
    try:
        return ast.unparse(expr)
    except Exception:
        return ""


_MODEL_RE = re.compile(
    r"model_config|hf_config|hf_text_config|architectures?\b|model_type|\.config\b|_config\(|is_multimodal|"
    r"num_attention_heads|num_key_value_heads|head_dim|hidden_size|num_experts|quant_config|checkpoint"
)
_HW_RE = re.compile(
    r"\bis_(cuda|hip|npu|xpu|cpu|mps|musa|hpu|blackwell|hopper|sm\d+\w*|cuda_alike|flashinfer_available)\b|"
    r"_is_(cuda|hip|npu|xpu|cpu|musa|hpu)\b|get_device_capability|device_capability|torch\.cuda\.is_available|"
    r"is_sm\d+|sm_version|compute_capability|get_device_sm|is_fp8_fnuz|supports_fp8|_is_sm"
)
# Cheap substring pre-checks: most atoms mention none of these, and a substring test is far
# cheaper than the full pattern.
_MODEL_HINTS = ("config", "arch", "model", "head", "hidden", "expert", "checkpoint")
_HW_HINTS = ("is_", "capab", "sm", "cuda", "device", "supports")
_REQUEST_HINTS = ("req", "sampling", "body", "payload", "messages", "prompt")


def _has(text: str, hints: tuple[str, ...], rx: re.Pattern[str]) -> bool:
    return any(h in text for h in hints) and rx.search(text) is not None


_REQUEST_RE = re.compile(r"\b(request|req|sampling_params|body|payload|messages|prompt)\b")


def _is_instance_atom(expr: ast.expr) -> tuple[str, list[str], bool] | None:
    """(subject source, type names, site runs when it *is* an instance) for isinstance atoms."""
    positive = True
    while isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        expr, positive = expr.operand, not positive
    if (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Name)
        and expr.func.id == "isinstance"
        and len(expr.args) == 2
    ):
        subj = _unparse(expr.args[0])
        t = expr.args[1]
        types = [_unparse(e) for e in t.elts] if isinstance(t, ast.Tuple) else [_unparse(t)]
        if subj and all(types):
            return subj, types, positive
    return None


@dataclass
class _AtomView:
    atom: GuardAtom
    text: str
    expr: ast.expr | None
    reads: _Reads
    constraints: list[_Constraint]
    simple: str
    """The atom with ``not`` pushed inwards (equal to ``text`` when nothing changes)."""
    model: bool
    hardware: bool
    request: bool
    isinstance_: tuple[str, list[str], bool] | None

    @functools.cached_property
    def neg(self) -> str:
        """The condition that avoids the site, as code (``x > 0`` for the atom ``x <= 0``)."""
        if self.expr is None:
            return ""
        return _unparse(_simplify(ast.UnaryOp(op=ast.Not(), operand=self.expr))) or f"not ({self.text})"


def _view(atom: GuardAtom, reads: _Reads, ctx: _Ctx) -> _AtomView:
    expr = _effective(atom)
    text = atom.text
    simple_expr = _simplify(expr) if expr is not None else None
    simple = text
    if simple_expr is not None and simple_expr is not expr:
        simple = _unparse(simple_expr) or text
    constraints: list[_Constraint] = []
    if simple_expr is not None and (reads.flags or reads.envs):
        # Each conjunct of the simplified atom may constrain one flag or env var on its own:
        # ``not (a or server_args.x != 1)`` is ``not a and server_args.x == 1``.
        try:
            for part in split_and(simple_expr):
                c = _constraint(part, False, ctx)
                if c is not None:
                    constraints.append(c)
        except RecursionError:
            constraints = []
    return _AtomView(
        atom=atom,
        text=text,
        expr=expr,
        reads=reads,
        constraints=constraints,
        simple=simple,
        model=_has(text, _MODEL_HINTS, _MODEL_RE),
        hardware=_has(text, _HW_HINTS, _HW_RE),
        request=_has(text, _REQUEST_HINTS, _REQUEST_RE),
        isinstance_=_is_instance_atom(expr) if expr is not None else None,
    )


# ---------------------------------------------------------------------------------------------
# Classification: errorType, backgroundTag, severity, handlingStrategy
# ---------------------------------------------------------------------------------------------

_DEP_RE = re.compile(
    r"pip install|not installed|is required but|please install|install (it|the)|no module named|"
    r"requires? (the )?[\w.-]+ (package|library)|failed to import|cannot import|import error|"
    r"version of [\w.-]+ (is|must)|>= ?\d+\.\d+",
    re.I,
)
# Phrases that say the device is the problem; a bare "cuda" in "cuda-graph mode" does not.
_HW_MSG_RE = re.compile(
    r"\b((not |un)supported (on|by|for) (this |the |your )?(gpu|device|platform|hardware|arch)|"
    r"requires? (an? )?(nvidia |amd )?(gpu|cuda|rocm|hip|npu|xpu|sm ?\d{2,3}|hopper|blackwell|ampere)|"
    r"only (supported|available|works) on|compute capability|\bsm ?\d{2,3}\b|"
    r"(hopper|blackwell|ampere|ada)( gpus?| or newer| architecture)|device does not support|"
    r"unsupported (gpu|device|platform|hardware)|no (cuda|gpu|npu) (device|available))",
    re.I,
)
_RESOURCE_RE = re.compile(
    r"out of memory|\boom\b|not enough (memory|space|blocks|slots|tokens|pages)|insufficient|exceed|"
    r"too (large|many|long)|capacity|no (free|available) |exhausted|memory pool|run out",
    re.I,
)
_TIMEOUT_RE = re.compile(r"time(d)? ?out|deadline|did not (respond|finish|start) within", re.I)
_NET_RE = re.compile(
    r"connect|socket|\bport\b|\bhttp\b|\burl\b|unreachable|network|\bzmq\b|rpc|handshake", re.I
)
_IO_RE = re.compile(
    r"\bfile\b|director(y|ies)|\bpath\b|not found on disk|no such|cannot (open|read|write)|\.json|\.yaml|safetensors",
    re.I,
)
_CONFLICT_RE = re.compile(
    r"not (supported|compatible) (with|when|together)|cannot be (used|combined|enabled) (with|together)|"
    r"incompatible|mutually exclusive|only one of|conflicts? with|together with|requires? --|"
    r"only (supported|valid|available) (with|when)|must (also )?be (set|enabled) (when|with)|at the same time",
    re.I,
)
_MODEL_MSG_RE = re.compile(
    r"\bmodels?\b|architecture|checkpoint|hf_config|model_type|config\.json|does not support|not support(ed)? for",
    re.I,
)
_FLAG_IN_MSG_RE = re.compile(r"--[a-z][a-z0-9-]+")

_NOT_IMPL = {"NotImplementedError"}
_DEP_CLASSES = {"ImportError", "ModuleNotFoundError"}
_TIMEOUT_CLASSES = {"TimeoutError", "asyncio.TimeoutError", "Timeout", "ReadTimeout"}
_NET_CLASSES = {
    "ConnectionError",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "BrokenPipeError",
    "socket.error",
}
_IO_CLASSES = {
    "FileNotFoundError",
    "OSError",
    "IOError",
    "IsADirectoryError",
    "PermissionError",
    "FileExistsError",
}
_RES_CLASSES = {"MemoryError", "OutOfMemoryError", "torch.cuda.OutOfMemoryError"}


@dataclass(frozen=True)
class _Kind:
    error_type: str
    background: str
    handling: str
    severity: str


def _classify(site: Site, views: list[_AtomView], total: _Reads) -> _Kind:
    cls = site.error_class
    short = cls.rsplit(".", 1)[-1]
    msg = site.message.template if site.message else ""
    flags_in_msg = _FLAG_IN_MSG_RE.findall(msg)
    n_flags = len(total.flags) + len({f for f in flags_in_msg if f not in {x.flag for x in total.flags}})
    has_model = any(v.model for v in views) or bool(_MODEL_MSG_RE.search(msg))
    has_hw = any(v.hardware for v in views) or bool(_HW_MSG_RE.search(msg))
    severity = "error"
    if short.endswith("Warning"):
        severity = "warning"
    elif short in ("StopIteration", "StopAsyncIteration", "GeneratorExit", "KeyboardInterrupt"):
        severity = "info"
    elif short in _RES_CLASSES or re.search(r"out of memory|corrupt|deadlock|data loss", msg, re.I):
        severity = "critical"

    if site.http_status is not None and 400 <= site.http_status < 500:
        return _Kind("bad-request", "bad-request", "validation", severity)
    if short in _NOT_IMPL or cls in _NOT_IMPL:
        return _Kind("not-implemented", "not-implemented", "fallback", severity)
    if short in _DEP_CLASSES or _DEP_RE.search(msg):
        return _Kind("dependency", "missing-dependency", "configuration", severity)
    if cls in _TIMEOUT_CLASSES or short in _TIMEOUT_CLASSES or _TIMEOUT_RE.search(msg):
        return _Kind("timeout", "timeout", "retry", severity)
    if cls in _RES_CLASSES or short in _RES_CLASSES or (_RESOURCE_RE.search(msg) and not total.flags):
        return _Kind(
            "resource", "resource-exhausted", "configuration" if total.flags else "fail-fast", severity
        )
    guard_reads_config = bool(total.flags or total.envs)
    if short in _NET_CLASSES or (
        short not in ("ValueError", "TypeError", "AssertionError")
        and not guard_reads_config
        and _NET_RE.search(msg)
    ):
        return _Kind("network", "network-error", "retry", severity)
    if short in _IO_CLASSES or (
        short not in ("ValueError", "TypeError", "AssertionError")
        and not guard_reads_config
        and _IO_RE.search(msg)
    ):
        return _Kind("io", "io-error", "fail-fast", severity)
    if has_hw and (any(v.hardware for v in views) or not total.flags):
        return _Kind("hardware", "hardware-unsupported", "fallback", severity)
    if total.flags or flags_in_msg or total.envs:
        if n_flags >= 2 or _CONFLICT_RE.search(msg):
            if has_model and any(v.model for v in views):
                return _Kind("validation", "model-feature-mismatch", "validation", severity)
            return _Kind("configuration", "flag-conflict", "configuration", severity)
        if has_model and any(v.model for v in views):
            return _Kind("validation", "model-feature-mismatch", "validation", severity)
        return _Kind("configuration", "invalid-value", "configuration", severity)
    if any(v.model for v in views) and _MODEL_MSG_RE.search(msg):
        return _Kind("validation", "model-feature-mismatch", "validation", severity)
    if any(v.request for v in views) and short in ("ValueError", "TypeError", "KeyError"):
        return _Kind("bad-request", "bad-request", "validation", severity)
    if site.guard.handlers and short not in ("ValueError", "TypeError"):
        return _Kind("runtime", "internal-invariant", "propagate", severity)
    if short == "AssertionError":
        return _Kind("internal-invariant", "internal-invariant", "fail-fast", severity)
    if short in ("ValueError", "TypeError", "KeyError", "IndexError", "LookupError"):
        return _Kind("validation", "invalid-value", "validation", severity)
    return _Kind("runtime", "internal-invariant", "fail-fast", severity)


# ---------------------------------------------------------------------------------------------
# Words
# ---------------------------------------------------------------------------------------------

_OP_WORDS = {
    "eq": "equals",
    "ne": "differs from",
    "lt": "is below",
    "le": "is at most",
    "gt": "is above",
    "ge": "is at least",
    "in": "is one of",
    "not-in": "is none of",
}


def _fmt_values(values: Sequence[str]) -> str:
    return "/".join(values)


def _constraint_words(c: _Constraint) -> str:
    who = f"`{c.name}`" if c.kind == "flag" else f"the environment variable `{c.name}`"
    if c.op == "truthy":
        if c.kind == "flag":
            return f"{who} is given" if (c.info and c.info.is_bool) else f"{who} is set to a non-empty value"
        return f"{who} is set to a true value"
    if c.op == "falsy":
        return f"{who} is not given" if c.kind == "flag" else f"{who} is unset or false"
    if c.op == "is-none":
        return f"{who} is left unset"
    if c.op == "not-none":
        return f"{who} is given a value"
    return f"{who} {_OP_WORDS.get(c.op, c.op)} {_fmt_values(c.values)}"


def _atom_words(v: _AtomView) -> str:
    """A short gloss of one atom, naming the flags/env vars it reads."""
    if v.atom.kind == "except":
        return f"inside the handler `{v.text}`"
    bits: list[str] = []
    if v.simple != v.text:
        bits.append(f"that is, `{v.simple}`")
    if v.constraints:
        bits.extend(_constraint_words(c) for c in v.constraints)
        return "; ".join(bits)
    if v.isinstance_ is not None:
        subj, types, positive = v.isinstance_
        t = " or ".join(types)
        bits.append(f"{subj} is {'a' if positive else 'not a'} {t}")
    if v.reads.flags:
        bits.append("reads " + ", ".join(f"`{f.flag}`" for f in v.reads.flags))
    if v.reads.envs:
        bits.append("reads " + ", ".join(f"`{e}`" for e in v.reads.envs))
    return "; ".join(bits)


def _scope_words(site: Site) -> str:
    if site.qualname == "<module>" or not site.qualname:
        return f"At module level of `{site.path}`"
    kind = "method" if site.in_class else "function"
    if "<locals>" in site.qualname:
        kind = "nested function"
    if site.is_async:
        kind = "async " + kind
    return f"In the {kind} `{site.qualname}` ({site.path})"


def _short_path(path: str) -> str:
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


_MAX_DOC_ATOMS = 8


def _condition_sentence(views: list[_AtomView]) -> str:
    conds = [v for v in views]
    if not conds:
        return "unconditionally: every call that reaches this line raises"
    parts = []
    for v in conds[:_MAX_DOC_ATOMS]:
        gloss = _atom_words(v)
        if v.atom.kind == "except":
            parts.append(gloss)
        else:
            parts.append(f"`{v.text}`" + (f" ({gloss})" if gloss else ""))
    more = len(conds) - _MAX_DOC_ATOMS
    tail = (
        f", and {more} further condition{'s' if more > 1 else ''} listed in validationCode"
        if more > 0
        else ""
    )
    if len(parts) == 1:
        return "when " + parts[0] + tail
    return "when all of these hold: " + "; ".join(parts) + tail


def _documentation(site: Site, views: list[_AtomView], total: _Reads, kind: _Kind) -> str:
    what = "fails the assertion" if site.kind == "assert" else f"raises `{site.error_class}`"
    if site.kind == "response":
        status = site.http_status if site.http_status is not None else "an error"
        what = f"returns an HTTP {status} error response of type `{site.error_class}`"
    if site.kind == "assert":
        what += f" (`AssertionError` {_message_words(site)})"
    else:
        what += f" {_message_words(site)}"
    out = [f"{_scope_words(site)}, line {site.line} {what} {_condition_sentence(views)}."]
    if site.http_status is not None:
        out.append(f"The error maps to HTTP status {site.http_status}.")
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
        c = " ".join(" ".join(x.split()) for x in site.comments if x.strip())
        if c:
            if len(c) > 400:
                c = c[:397] + "..."
            out.append(f'The code above the check says: "{c}"')
    out.append(_BACKGROUND_SENTENCE[kind.background])
    return " ".join(out)


_BACKGROUND_SENTENCE = {
    "model-feature-mismatch": "The requested feature depends on a property of the loaded model that this model lacks.",
    "flag-conflict": "The launch configuration combines options that this code path does not accept together.",
    "invalid-value": "A configured or passed value lies outside what this code accepts.",
    "missing-dependency": "An optional package or a compatible version of it is missing from the environment.",
    "hardware-unsupported": "The current device or platform lacks support for this path.",
    "not-implemented": "This path is not implemented for the given combination.",
    "resource-exhausted": "A capacity or memory limit was reached.",
    "internal-invariant": "It guards an internal invariant; reaching it points to a bug or an unexpected state upstream.",
    "io-error": "A file or path this code reads or writes is missing or unreadable.",
    "network-error": "A connection or endpoint this code talks to failed.",
    "timeout": "An operation did not finish within its time limit.",
    "bad-request": "The request sent by a client is malformed or asks for something unsupported.",
}


# ---------------------------------------------------------------------------------------------
# Command lines
# ---------------------------------------------------------------------------------------------


def _launcher(site: Site, knowledge: Knowledge) -> str:
    ns = knowledge.namespace_of(site.path) or site.path
    if "multimodal_gen" in ns:
        return "sglang serve --model-path <model>"
    return "python -m sglang.launch_server --model-path <model>"


def _other_choice(info: FlagInfo | None, rejected: Sequence[str]) -> str | None:
    if info is None:
        return None
    low = {r.lower() for r in rejected}
    for c in info.choices:
        if c.lower() not in low:
            return c
    return None


def _num(s: str) -> float | None:
    try:
        return float(s)
    except ValueError:
        return None


def _fmt_num(x: float, like: str) -> str:
    if "." in like or "e" in like.lower():
        return repr(x)
    return str(int(x))


def _flag_args(c: _Constraint, before: bool) -> list[str] | None:
    """Command-line words for flag ``c`` in the failing (``before``) or fixed command; ``[]``
    drops the flag, ``None`` means "no concrete words known"."""
    info = c.info
    is_bool = bool(info and info.is_bool)
    flag = c.name
    op = c.op if before else _FLIP[c.op]
    if op == "truthy":
        return [flag] if is_bool else [flag, "<value>"]
    if op in ("falsy", "is-none"):
        return []
    if op == "not-none":
        return [flag] if is_bool else [flag, "<value>"]
    if op == "in":
        return [flag, c.values[0]] if c.values else None
    if op == "not-in":
        other = _other_choice(info, c.values)
        return [flag, other] if other else [flag, "<other-value>"]
    if op == "eq":
        v = c.values[0] if c.values else None
        if v in ("True",):
            return [flag] if is_bool else [flag, "true"]
        if v in ("False", "None"):
            return []
        return [flag, v] if v is not None else None
    if op == "ne":
        v = c.values[0] if c.values else ""
        if v in ("True",):
            return []
        if v in ("False", "None"):
            return [flag] if is_bool else [flag, "<value>"]
        other = _other_choice(info, c.values)
        return [flag, other] if other else [flag, "<other-value>"]
    if op in ("lt", "le", "gt", "ge") and c.values:
        n = _num(c.values[0])
        if n is None:
            return None
        pick = {"lt": n - 1, "le": n, "gt": n + 1, "ge": n}[op]
        return [flag, _fmt_num(pick, c.values[0])]
    return None


def _env_assign(c: _Constraint, before: bool) -> str | None:
    op = c.op if before else _FLIP[c.op]
    if op == "truthy":
        return f"{c.name}=1"
    if op in ("falsy", "is-none"):
        return ""
    if op == "not-none":
        return f"{c.name}=<value>"
    if op in ("in", "eq") and c.values and c.values[0] not in ("None", "False"):
        return f"{c.name}={c.values[0]}"
    if op in ("in", "eq"):
        return ""
    if op in ("not-in", "ne"):
        return f"{c.name}=<other-value>"
    if op in ("lt", "le", "gt", "ge") and c.values:
        n = _num(c.values[0])
        if n is None:
            return None
        pick = {"lt": n - 1, "le": n, "gt": n + 1, "ge": n}[op]
        return f"{c.name}={_fmt_num(pick, c.values[0])}"
    return None


def _command_fix(site: Site, knowledge: Knowledge, views: list[_AtomView], total: _Reads) -> str | None:
    """Before/after command lines, changing one user-controlled value (the first one whose
    change is known) and keeping the others that trigger the error."""
    all_constraints = [c for v in views for c in v.constraints]
    if not all_constraints:
        return None
    constraints = _best_constraints(views)
    base = _launcher(site, knowledge)
    before_flags: list[str] = []
    before_env: list[str] = []
    after_flags: list[str] = []
    after_env: list[str] = []
    changed = False
    # Change a boolean switch first (dropping a switch is the least invasive fix, as in the
    # reference record); otherwise the first constraint.
    order = sorted(
        range(len(constraints)),
        key=lambda i: (0 if constraints[i].kind == "flag" and constraints[i].op == "truthy" else 1, i),
    )
    fix_index = None
    for i in order:
        c = constraints[i]
        if c.kind == "flag":
            b, a = _flag_args(c, True), _flag_args(c, False)
        else:
            eb, ea = _env_assign(c, True), _env_assign(c, False)
            b = [eb] if eb else ([] if eb == "" else None)
            a = [ea] if ea else ([] if ea == "" else None)
        if b is not None and a is not None and b != a:
            fix_index = i
            break
    if fix_index is None:
        return None
    for i, c in enumerate(constraints):
        if c.kind == "flag":
            b = _flag_args(c, True) or []
            a = (_flag_args(c, False) or []) if i == fix_index else b
            before_flags += b
            after_flags += a
        else:
            eb = _env_assign(c, True) or ""
            ea = (_env_assign(c, False) or "") if i == fix_index else eb
            if eb:
                before_env.append(eb)
            if ea:
                after_env.append(ea)
        changed = changed or i == fix_index

    def line(env: list[str], flags: list[str]) -> str:
        return " ".join([*env, base, *flags])

    before = line(before_env, before_flags)
    after = line(after_env, after_flags)
    if not changed or before == after:
        return None
    needs = "; ".join(_constraint_words(c).replace("`", "") for c in all_constraints)
    others = [v.simple for v in views if not v.constraints and v.atom.kind != "except"]
    if others:
        needs += "; and " + "; ".join(others[:2])
    return f"# fails when {needs}\n# before\n{before}\n# after\n{after}"


def _call_of(site: Site) -> str:
    """How a caller reaches the site, as one line of code."""
    if site.qualname in ("", "<module>"):
        return f"import {_module_name(site.path)}"
    name = site.qualname.replace(".<locals>.", ".")
    if site.in_class and "." in name:
        cls, _, meth = name.rpartition(".")
        cls = cls.rsplit(".", 1)[-1]
        if meth == "__init__":
            return f"{cls}(...)"
        return f"{_snake(cls) or 'obj'}.{meth}(...)"
    return f"{name}(...)"


def _module_name(path: str) -> str:
    """The import name of a file: ``python/sglang/srt/x.py`` -> ``sglang.srt.x``,
    ``sgl-kernel/python/sgl_kernel/y.py`` -> ``sgl_kernel.y``."""
    rel = path.rsplit("python/", 1)[-1] if "python/" in path else path
    rel = rel.removesuffix(".py").removesuffix("/__init__")
    parts = [p for p in rel.split("/") if p]
    if parts and all(p.isidentifier() for p in parts):
        return ".".join(parts)
    return "_".join(re.sub(r"\W", "_", p) for p in parts) or "module"


def _snake(name: str) -> str:
    return _kebab(name).replace("-", "_")


def _code_fix(site: Site, views: list[_AtomView]) -> str:
    call = _call_of(site)
    plain = [v for v in views if v.expr is not None and v.atom.kind != "except"]
    if not plain:
        if site.guard.handlers:
            h = ", ".join(site.guard.handlers)
            short = site.error_class.rsplit(".", 1)[-1]
            return (
                f"# before: a {h} inside {site.qualname} surfaces as {short}\n{call}\n"
                f"# after: catch it and look at the original error, chained as __cause__\n"
                f"try:\n    {call}\nexcept {short} as e:\n"
                f"    cause = e.__cause__  # the original {h}\n"
                f"    ...  # fix what `cause` points at (input, file or config), then retry"
            )
        if site.error_class.endswith("NotImplementedError") and site.in_class:
            meth = site.qualname.rsplit(".", 1)[-1]
            return (
                f"# before: {site.qualname} is not implemented here\n{call}\n"
                f"# after: use a subclass that overrides {meth}\n"
                f"class My{site.in_class.split('.')[-1]}({site.in_class.split('.')[-1]}):\n"
                f"    def {meth}(self, *args, **kwargs):\n        ..."
            )
        return f"# before: {call} always raises {site.error_class} here\n{call}\n# after: avoid this call path (see solutions)"
    # The site needs every atom; making the innermost one false is enough, and it is usually
    # the actual check (the outer ones select the branch it sits in).
    last = plain[-1]
    context = " and ".join(f"`{v.simple}`" for v in plain[:-1][:3])
    when = f" (with {context})" if context else ""
    short = site.error_class.rsplit(".", 1)[-1]
    return (
        f"# before: {call} raises {short} when `{last.simple}`{when}\n{call}\n"
        f"# after: make sure `{last.neg}` holds first\n"
        f"if {last.neg}:\n    {call}\nelse:\n    ...  # handle the rejected input here"
    )


def _paren(text: str) -> str:
    if " or " in text or " and " in text or text.startswith("lambda"):
        return f"({text})"
    return text


# ---------------------------------------------------------------------------------------------
# Solutions, scenarios, tips
# ---------------------------------------------------------------------------------------------


def _flag_solution(c: _Constraint) -> str:
    f = f"`{c.name}`"
    info = c.info
    if c.op == "truthy":
        if info and info.is_bool:
            return f"Drop {f} from the launch command"
        return f"Leave {f} unset (remove it from the launch command)"
    if c.op == "falsy":
        return (
            f"Add {f} to the launch command" if info and info.is_bool else f"Pass {f} with a non-empty value"
        )
    if c.op == "is-none":
        return f"Pass {f} explicitly (it is unset when this error fires)"
    if c.op == "not-none":
        return f"Omit {f} so the default applies"
    vals = _fmt_values(c.values)
    if c.op == "in":
        other = _other_choice(info, c.values)
        hint = f", e.g. {c.name} {other}" if other else ""
        return f"Set {f} to a value other than {vals}{hint}"
    if c.op == "not-in":
        return f"Set {f} to one of {vals}"
    if c.op == "eq":
        if c.values and c.values[0] in ("True", "False", "None"):
            return f"Change {f} so it is not {c.values[0]}"
        return f"Use a {f} value other than {vals}"
    if c.op == "ne":
        return f"Set {f} to {vals}"
    bound = {"lt": "at least", "le": "above", "gt": "at most", "ge": "below"}.get(c.op)
    if bound:
        return f"Set {f} to a value {bound} {vals}"
    return f"Change {f}"


def _env_solution(c: _Constraint) -> str:
    e = f"`{c.name}`"
    if c.op == "truthy":
        return f"Unset the environment variable {e} (or set it to 0/false)"
    if c.op in ("falsy", "is-none"):
        return f"Export {e} with a suitable value before launching"
    if c.op == "not-none":
        return f"Unset the environment variable {e}"
    vals = _fmt_values(c.values)
    if c.op in ("in", "eq"):
        return f"Set {e} to something other than {vals}"
    if c.op in ("not-in", "ne"):
        return f"Set {e} to {vals}"
    bound = {"lt": "at least", "le": "above", "gt": "at most", "ge": "below"}.get(c.op)
    return f"Set {e} to a value {bound} {vals}" if bound else f"Change {e}"


def _model_subject(v: _AtomView) -> str:
    m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\((?:self\.)?(?:model_config|hf_config|config)", v.text)
    if m:
        return f"a checkpoint that `{m.group(1)}` recognises"
    return "a model whose configuration satisfies the check"


def _solutions(site: Site, views: list[_AtomView], kind: _Kind) -> list[str]:
    out: list[str] = []
    for v in views:
        if v.constraints:
            out.extend(_flag_solution(c) if c.kind == "flag" else _env_solution(c) for c in v.constraints)
            continue
        if v.reads.flags:
            names = ", ".join(f"`{f.flag}`" for f in v.reads.flags)
            out.append(f"Change {names} so that `{v.neg or 'not ' + v.text}` holds instead")
            continue
        if v.reads.envs:
            names = ", ".join(f"`{e}`" for e in v.reads.envs)
            out.append(
                f"Change the environment variable {names} so that `{v.neg or 'not ' + v.text}` holds instead"
            )
            continue
        if v.model:
            neg = v.neg
            out.append(f"Use {_model_subject(v)} (one where `{neg or 'not ' + v.text}`)")
            continue
        if v.hardware:
            out.append(
                f"Run on a device/platform where `{v.text}` is false, or pick a backend that supports this one"
            )
            continue
        # Type and request checks only matter for the innermost atom: the outer ones select the
        # branch the check sits in, and "fixing" them would just reach another branch.
        if v is not views[-1]:
            continue
        if v.isinstance_ is not None:
            subj, types, positive = v.isinstance_
            t = " or ".join(types)
            out.append(f"Pass `{subj}` as {'something other than' if positive else 'a'} {t}")
            continue
        if v.request:
            neg = v.neg
            out.append(f"Send requests for which `{neg or 'not ' + v.text}` holds")
    handled = _handled_values(views)
    if handled is not None:
        subject, values = handled
        out.insert(0, f"Use a `{subject}` this code handles: {', '.join(values)}")
    # Flags named only in the message (the guard reads them through a helper).
    if not any("`--" in s for s in out) and site.message is not None:
        for f in dict.fromkeys(_FLAG_IN_MSG_RE.findall(site.message.template)):
            out.append(f"Revisit `{f}` in the launch command (the message names it)")
            if len(out) >= 3:
                break
    if not out:
        out.extend(_fallback_solutions(site, views, kind))
    elif views and views[-1].expr is not None and views[-1].atom.kind != "except":
        last = views[-1]
        if not (
            last.reads.flags
            or last.reads.envs
            or last.model
            or last.hardware
            or last.request
            or last.isinstance_
        ):
            # The settings above only select the path; the check itself is on program state.
            where = f"`{site.qualname}`" if site.qualname not in ("", "<module>") else f"`{site.path}`"
            out.append(f"If the settings must stay, make sure `{last.neg}` holds when {where} runs")
    return list(dict.fromkeys(out))[:8]


def _handled_values(views: list[_AtomView]) -> tuple[str, list[str]] | None:
    """For an ``if/elif`` chain over one value (``x != 'a'``, ``x != 'b'``, ``x not in (...)``
    leading to the site): that value and the literals the chain accepts."""
    groups: dict[str, list[str]] = {}
    for v in views:
        if v.expr is None:
            continue
        for part in split_and(_simplify(v.expr)):
            if not (isinstance(part, ast.Compare) and len(part.ops) == 1):
                continue
            op = part.ops[0]
            if not isinstance(op, ast.NotEq | ast.NotIn | ast.IsNot):
                continue
            lit = _literal(part.comparators[0])
            if lit is None or lit == ("None",):
                continue
            subject = _unparse(part.left)
            if not subject:
                continue
            rendered = [
                repr(x) if isinstance(c, ast.Constant) and isinstance(c.value, str) else x
                for x, c in zip(lit, _literal_nodes(part.comparators[0]), strict=False)
            ]
            groups.setdefault(subject, []).extend(rendered)
    best = max(groups.items(), key=lambda kv: len(kv[1]), default=None)
    if best is None or len(best[1]) < 2:
        return None
    return best[0], list(dict.fromkeys(best[1]))[:12]


def _literal_nodes(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return list(node.elts)
    return [node]


def _fallback_solutions(site: Site, views: list[_AtomView], kind: _Kind) -> list[str]:
    where = f"`{site.qualname}`" if site.qualname not in ("", "<module>") else f"`{site.path}`"
    plain = [v for v in views if v.expr is not None and v.atom.kind != "except"]
    out = []
    if kind.background == "not-implemented":
        out.append(f"Use a configuration, backend or subclass that implements {where} instead of this path")
    elif kind.background == "missing-dependency":
        out.append(f"Install the package or version that {where} needs, then restart")
    elif kind.background == "io-error":
        out.append(f"Check that the files and paths {where} reads exist and are readable")
    elif kind.background == "network-error":
        out.append(f"Check that the endpoint {where} connects to is up and reachable, then retry")
    elif kind.background == "timeout":
        out.append(f"Retry, or raise the timeout that {where} waits on")
    elif kind.background == "resource-exhausted":
        out.append(f"Lower the load or raise the capacity {where} allocates from")
    if plain:
        neg = plain[-1].neg
        out.append(f"Make sure `{neg or 'not (' + plain[-1].text + ')'}` holds before {where} runs")
    for h in site.guard.handlers[:1]:
        out.append(f"Fix the underlying `{h}` raised inside {where}; it is chained as the cause")
    if kind.background == "internal-invariant":
        out.append(
            f"Report it upstream with the traceback and launch command: {where} should not reach this state"
        )
    if not out:
        out.append(f"Avoid calling {where} on this path, or catch `{site.error_class}` around it")
    return out


def _best_constraints(views: list[_AtomView]) -> list[_Constraint]:
    """One constraint per flag/env var: one with concrete values (``x > 0``) says more about
    the command line than a presence test on the same flag (``x is not None``)."""
    best: dict[str, _Constraint] = {}
    for v in views:
        for c in v.constraints:
            if c.name not in best or (c.values and not best[c.name].values):
                best[c.name] = c
    return list(best.values())


def _trigger(site: Site, views: list[_AtomView], total: _Reads, knowledge: Knowledge) -> str:
    acts: list[str] = []
    best = {c.name: c for c in _best_constraints(views)}
    for v in views:
        for c in v.constraints:
            if best.get(c.name) is not c:
                continue
            if c.kind == "flag":
                args = _flag_args(c, True)
                if args:
                    acts.append("launching with `" + " ".join(args) + "`")
                elif args == []:
                    acts.append(f"launching without `{c.name}`")
                else:
                    acts.append(f"launching with {_constraint_words(c)}")
            else:
                a = _env_assign(c, True)
                acts.append(f"exporting `{a}`" if a else f"leaving `{c.name}` unset")
        if v.constraints:
            continue
        if v.reads.flags:
            acts.append(
                "launching with "
                + ", ".join(f"`{f.flag}`" for f in v.reads.flags)
                + f" such that `{v.simple}`"
            )
        elif v.reads.envs:
            acts.append("setting " + ", ".join(f"`{e}`" for e in v.reads.envs) + f" such that `{v.simple}`")
        elif v.model:
            acts.append(f"loading a model for which `{v.simple}`")
        elif v.hardware:
            acts.append(f"running where `{v.simple}`")
        elif v.request:
            acts.append(f"sending a request for which `{v.simple}`")
    where = _scope_ref(site)
    if acts:
        return f"Triggered by {', together with '.join(acts[:5])}; the check is in {where}."
    if not views:
        return f"Any call that reaches {where} (line {site.line}) raises; there is no guard in front of it."
    if site.guard.handlers and all(v.atom.kind == "except" for v in views):
        return f"An exception of type {', '.join(site.guard.handlers)} inside {where} is converted into {site.error_class}."
    first = views[-1].simple
    return f"Code calls {where} in a state where `{first}` holds ({len(views)} condition{'s' if len(views) > 1 else ''} in all)."


def _scope_ref(site: Site) -> str:
    if site.qualname in ("", "<module>"):
        return f"module-level code of {_short_path(site.path)}"
    return f"{site.qualname} ({_short_path(site.path)}:{site.line})"


_SITUATIONS = {
    "model-feature-mismatch": "reusing a launch command or feature written for one model family with a checkpoint of another family",
    "flag-conflict": "copying a launch script that enables options this path cannot combine, or adding one flag without its companions",
    "invalid-value": "a caller passing a value outside the accepted range, often derived from the model config or a request",
    "missing-dependency": "a fresh environment without the optional extra, or a package version that drifted",
    "hardware-unsupported": "running on a GPU generation or accelerator this kernel/backend path was not built for",
    "not-implemented": "selecting a backend, mode or model variant whose implementation of this path is still missing",
    "resource-exhausted": "large batches, long contexts or a memory fraction set too tight for the device",
    "internal-invariant": "unusual scheduling, a state race or an upstream change that broke an assumption",
    "io-error": "a wrong path, a partially downloaded checkpoint or missing permissions",
    "network-error": "a peer process that died or has not started yet, a firewall, or a wrong host/port",
    "timeout": "a slow or overloaded peer, first-time compilation/warm-up, or a timeout set too low",
    "bad-request": "a client sending parameters the endpoint does not accept",
}
# With flags or env vars in the guard the user's launch settings are the usual cause.
_SITUATIONS_CONFIG = {
    "invalid-value": "a launch setting outside the accepted range, or a misspelled choice, in the command line or config file",
    "internal-invariant": "a combination of launch settings this code path does not expect",
}


def _situations(site: Site, views: list[_AtomView], total: _Reads, kind: _Kind, tags: list[str]) -> str:
    config = bool(total.flags or total.envs)
    base = (_SITUATIONS_CONFIG.get(kind.background) if config else None) or _SITUATIONS[kind.background]
    area = tags[0] if tags else "sglang"
    head = f"In the {area} code ({_short_path(site.path)}), typically {base}"
    bits = []
    if total.flags:
        bits.append(", ".join(f.flag for f in total.flags[:4]))
    if total.envs:
        bits.append(", ".join(total.envs[:3]))
    if bits:
        return f"{head}; the settings involved are {' and '.join(bits)}."
    plain = [v for v in views if v.atom.kind != "except"]
    if plain:
        return f"{head}; here it shows up as `{plain[-1].simple}`."
    if site.guard.handlers:
        return f"{head}; here it follows a caught {', '.join(site.guard.handlers)}."
    return f"{head}; reached through {_scope_ref(site)}."


def _prevention(site: Site, views: list[_AtomView], total: _Reads, kind: _Kind) -> list[str]:
    tips = []
    if total.flags:
        names = ", ".join(f.flag for f in total.flags[:4])
        tips.append(f"Check {names} together in your launch wrapper before starting the server")
    if total.envs:
        tips.append(
            "Set "
            + ", ".join(total.envs[:3])
            + " explicitly in the deployment environment instead of inheriting it"
        )
    if any(v.model for v in views):
        tips.append(f"Tie model-specific options to a model-family check before calling {_scope_ref(site)}")
    if kind.background == "missing-dependency":
        tips.append("Pin the optional dependencies in the image and import-test them at build time")
    if kind.background == "hardware-unsupported":
        tips.append("Select backends per device type in the launch script rather than hard-coding them")
    if kind.background == "bad-request":
        tips.append("Validate request parameters on the client side before sending")
    isin = [v.isinstance_ for v in views if v.isinstance_ is not None]
    if isin:
        subj, types, _positive = isin[0]
        tips.append(f"Type-annotate and check `{subj}` ({' or '.join(types)}) at the call boundary")
    plain = [v for v in views if v.expr is not None and v.atom.kind != "except"]
    if plain and not total.flags and not total.envs:
        neg = plain[-1].neg
        if neg:
            tips.append(
                f"Assert `{neg}` where the inputs of {site.qualname if site.qualname != '<module>' else 'this module'} are built"
            )
    if not tips:
        tips.append(f"Add a test that exercises {_scope_ref(site)} with the inputs your deployment uses")
    return list(dict.fromkeys(tips))


# ---------------------------------------------------------------------------------------------
# Tags, typeGuard, tryCatchPattern
# ---------------------------------------------------------------------------------------------

# Feature words, matched as substrings of the site's text with every run of non-alphanumerics
# turned into one space (so ``mm_`` reads `` mm `` and a leading/trailing space marks a word
# boundary). Plain substring tests: one regex alternation over all of them cost a millisecond a
# site.
_FEATURES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("speculative-decoding", ("specul", "eagle", "dflash", "dspark", "draft", " mtp ", "ngram", "lookahead")),
    ("lora", ("lora",)),
    (
        "quantization",
        ("quant", "fp8", "fp4", "int8", "int4", " awq", "gptq", "mxfp", "w8a8", " w4a", "marlin", "gguf"),
    ),
    ("multimodal", ("multimodal", " mm ", "vision", "image", "video", "audio", " vit", "processor")),
    ("disaggregation", ("disagg", "prefill only", "decode only", "kv transfer", "mooncake", "nixl")),
    ("moe", (" moe", "moe ", "expert", " ep ", "deepep", "eplb")),
    ("attention", ("attention", "attn", "flashinfer", " mla ")),
    (
        "distributed",
        (
            "tp size",
            "pp size",
            "dp size",
            "tensor parallel",
            "pipeline parallel",
            "nccl",
            "distributed",
            "world size",
            "all reduce",
            "allreduce",
        ),
    ),
    ("cuda-graph", ("cuda graph", "cudagraph", "graph runner", "npugraph")),
    ("kv-cache", ("kv cache", "kvcache", "token to kv", "req to token", "radix", "hicache", "mem cache")),
    ("tokenizer", ("tokeniz",)),
    ("diffusion", ("multimodal gen", "diffusion", "denois", " dit ", " vae")),
    ("structured-output", ("grammar", "outlines", "json schema", " regex")),
    ("openai-api", ("openai", "chat template", "serving ")),
    ("npu", (" npu", "npu ", "ascend")),
    ("rocm", (" hip ", " hip", "rocm", "aiter")),
    ("mamba", ("mamba", " ssm", "ssm ", "linear attn", " kda", " gdn")),
)
_NON_ALNUM_RE = re.compile(r"[^a-z0-9]+")


def _features(text: str) -> list[str]:
    words = " " + _NON_ALNUM_RE.sub(" ", text.lower()) + " "
    return [name for name, keys in _FEATURES if any(k in words for k in keys)]


def _kebab(name: str) -> str:
    # Split before a capitalised word only, so acronyms stay whole: ViTNpuRunner -> vit-npu-runner,
    # OpenAIServing -> openai-serving, KVCacheConfigurator -> kv-cache-configurator.
    s = re.sub(r"(?<=[a-z0-9])(?=[A-Z][a-z])|(?<=[A-Z])(?=[A-Z][a-z])", "-", name)
    s = re.sub(r"[^A-Za-z0-9]+", "-", s).strip("-").lower()
    return s


def _tags(site: Site, views: list[_AtomView], total: _Reads, kind: _Kind) -> list[str]:
    tags: list[str] = []
    rel = _short_path(site.path)
    parts = rel.split("/")[:-1]
    if parts:
        top = parts[0]
        if top == "srt" and len(parts) > 1:
            tags.append(_kebab(parts[1]))
        else:
            tags.append(_kebab(top))
            if len(parts) > 1 and top != "srt":
                tags.append(_kebab(parts[1]))
    else:
        tags.append(_kebab(rel.rsplit(".", 1)[0]) or "sglang")
    if site.in_class:
        tags.append(_kebab(site.in_class.split(".")[-1]))
    tags.extend(f.flag.lstrip("-") for f in total.flags[:4])
    tags.extend(_kebab(e) for e in total.envs[:2])
    hay = " ".join(
        [site.path, site.qualname, site.message.template if site.message else "", *(v.text for v in views)]
    )
    tags.extend(_features(hay))
    tags.append(kind.background)
    return [t for t in dict.fromkeys(tags) if t][:12]


def _type_guard(views: list[_AtomView]) -> str | None:
    code = _type_guard_code(views)
    if code is None:
        return None
    try:
        ast.parse(code)
    except SyntaxError:
        # e.g. ``isinstance(x, (A, *more))``: no type expression to name.
        return None
    return code


def _type_guard_code(views: list[_AtomView]) -> str | None:
    for v in views:
        if v.isinstance_ is None:
            continue
        subj, types, positive = v.isinstance_
        param = re.sub(r"\W+", "_", subj).strip("_") or "value"
        if param[0].isdigit():
            param = "v_" + param
        t = " | ".join(types)
        if not positive:
            # The site runs when the value is *not* one of the types: the guard that avoids it
            # narrows to them.
            return (
                "from typing import TypeGuard\n\n"
                f"def is_valid_{param}({param}: object) -> TypeGuard[{t}]:\n"
                f"    return isinstance({param}, {_isinstance_arg(types)})"
            )
        return (
            f"def is_valid_{param}({param}: object) -> bool:\n"
            f"    # {subj} must not be {' or '.join(types)} here\n"
            f"    return not isinstance({param}, {_isinstance_arg(types)})"
        )
    return None


def _isinstance_arg(types: list[str]) -> str:
    return types[0] if len(types) == 1 else "(" + ", ".join(types) + ")"


def _try_catch(site: Site) -> str:
    if site.kind == "response":
        # A returned error response reaches the client as an HTTP error body, not an exception.
        pattern = site.message.pattern if site.message is not None and site.message.pattern else WILDCARD
        return "\n".join(
            [
                "import re\n",
                "resp = client.post(url, json=request)",
                f"err = resp.json().get('error', resp.json()) if resp.status_code == {site.http_status or 400} else None",
                f"if err and err.get('type') == {site.error_class!r} and re.fullmatch({pattern!r}, err.get('message', '')):",
                "    ...  # this check fired: apply one of the solutions",
            ]
        )
    cls = site.error_class
    short = cls.rsplit(".", 1)[-1]
    call = _call_of(site)
    lines = []
    if site.message is not None and site.message.pattern:
        lines.append("import re\n")
        lines.append(f"try:\n    {call}\nexcept {short} as e:")
        lines.append(f"    if re.fullmatch({site.message.pattern!r}, str(e)):")
        lines.append("        ...  # this check fired: apply one of the solutions")
        lines.append("    else:\n        raise")
    else:
        lines.append(f"try:\n    {call}\nexcept {short}:")
        lines.append(
            f"    ...  # raised by {site.qualname if site.qualname != '<module>' else site.path} without a message"
        )
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# The whole record's prose
# ---------------------------------------------------------------------------------------------


def enrich(site: Site, knowledge: Knowledge, constants: Mapping[str, str] | None = None) -> Prose:
    """The prose fields for ``site``. ``constants`` are the module-level string constants of the
    site's file (:func:`extractor.prose.knowledge.module_constants`), used to resolve env names."""
    try:
        return _enrich(site, knowledge, constants)
    except Exception:
        return _minimal(site)


def _enrich(site: Site, knowledge: Knowledge, constants: Mapping[str, str] | None) -> Prose:
    ctx = _context(site, knowledge, constants)
    per_atom, total = _site_reads(site, ctx)
    views = [_view(a, r, ctx) for a, r in zip(site.guard.atoms, per_atom, strict=True)]
    kind = _classify(site, views, total)
    tags = _tags(site, views, total, kind)
    fix = _command_fix(site, knowledge, views, total) or _code_fix(site, views)
    return Prose(
        errorType=kind.error_type,
        severity=kind.severity,
        documentation=_documentation(site, views, total, kind),
        triggerScenarios=_trigger(site, views, total, knowledge),
        commonSituations=_situations(site, views, total, kind, tags),
        solutions=_solutions(site, views, kind),
        exampleFix=fix,
        handlingStrategy=kind.handling,
        validationCode=site.guard.validation_code(),
        typeGuard=_type_guard(views),
        tryCatchPattern=_try_catch(site),
        preventionTips=_prevention(site, views, total, kind),
        tags=tags,
        backgroundTag=kind.background,
        errorCode=site.error_code,
    )


def _minimal(site: Site) -> Prose:
    where = site.qualname or "<module>"
    try:
        validation = site.guard.validation_code()
    except Exception:
        validation = "True"
    return Prose(
        errorType="runtime",
        severity="error",
        documentation=f"In `{where}` ({site.path}, line {site.line}) the code raises `{site.error_class}`.",
        triggerScenarios=f"Reaching line {site.line} of {site.path}.",
        commonSituations=f"Calls into {where} with inputs it does not accept.",
        solutions=[f"Avoid the inputs that make {where} raise {site.error_class}"],
        exampleFix=f"# before\n{where}(...)\n# after\n# call {where} only with accepted inputs",
        handlingStrategy="fail-fast",
        validationCode=validation,
        typeGuard=None,
        tryCatchPattern=None,
        preventionTips=[f"Cover {where} with a test for the failing inputs"],
        tags=[_kebab(site.path.rsplit("/", 1)[-1].removesuffix(".py")) or "sglang"],
        backgroundTag="internal-invariant",
        errorCode=site.error_code,
    )
