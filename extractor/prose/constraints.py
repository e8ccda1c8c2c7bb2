"""Reading the shape of one guard atom: the constraint it puts on one flag or env value, its
simplified form, and what else it touches (the model, the device, a request)."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from extractor.analysis.conditions import split_and
from extractor.analysis.facts import GuardAtom
from extractor.prose.knowledge import FlagInfo
from extractor.prose.reads import BINDING_DEPTH, ReadContext, Reads, env_of_node, flag_of_node

# How a condition constrains one value, in the direction that leads to the site.
FLIP = {
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
    # ``x % size != 0``: the value does not divide ``x`` (``values`` holds ``x`` as code).
    "indivisible": "divides",
    "divides": "indivisible",
    # ``size % 16 != 0``: the value is no multiple of a literal (``values`` holds it).
    "not-multiple": "multiple",
    "multiple": "not-multiple",
    # ``max_world_size < len(ranks)``: a passed value ordered against what the code computes
    # (``values`` holds that as code): no one value to name, but the value decides.
    "lt-of": "ge-of",
    "ge-of": "lt-of",
    "le-of": "gt-of",
    "gt-of": "le-of",
}
CMP_OPS: dict[type[ast.cmpop], str] = {
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
MIRROR = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "eq": "eq", "ne": "ne"}
"""An operator read with its sides swapped (``a < b`` is ``b > a``)."""
_WRAPPER_CALLS = frozenset({"int", "float", "str", "bool", "len", "abs"})
_WRAPPER_METHODS = frozenset({"upper", "lower", "strip", "casefold", "value", "get"})


@dataclass(frozen=True)
class Constraint:
    """``subject`` (a flag or env var) must satisfy ``op`` with ``values`` for the site to run."""

    kind: str  # "flag" | "env"
    name: str  # "--flag" or "ENV"
    op: str
    values: tuple[str, ...] = ()
    info: FlagInfo | None = None
    on_by_default: bool = False
    """An environment variable that is on unless turned off: "unset" is not "off" for it."""


def _subject(
    node: ast.expr, ctx: ReadContext, depth: int = 0, passed: bool = False
) -> tuple[str, str, FlagInfo | None] | None:
    """The flag or env var whose value ``node`` is, seeing through casts, ``.upper()``,
    ``x or ""`` and local bindings. With ``passed``, a name the function does not bind (a
    parameter) or a ``self`` attribute is a subject too (``n:name``, ``s:attr``): its callers
    may fill it from a flag (:mod:`extractor.reach.arguments`)."""
    info = flag_of_node(node, ctx)
    if info is not None:
        return "flag", info.flag, info
    env = env_of_node(node, ctx)
    if env is not None:
        return "env", env, None
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id in _WRAPPER_CALLS and len(node.args) == 1:
            inner = _subject(node.args[0], ctx, depth, passed)
            # The length of a list flag counts its items: no value of the flag to pass.
            if node.func.id == "len" and inner is not None and inner[2] is not None and inner[2].is_list:
                return None
            return inner
        if isinstance(node.func, ast.Attribute) and node.func.attr in _WRAPPER_METHODS:
            return _subject(node.func.value, ctx, depth, passed)
    if isinstance(node, ast.Attribute) and node.attr in _WRAPPER_METHODS:
        return _subject(node.value, ctx, depth, passed)
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and node.values:
        return _subject(node.values[0], ctx, depth, passed)
    if isinstance(node, ast.Name) and depth < BINDING_DEPTH:
        values = ctx.bindings.get(node.id, ())
        if len(values) == 1:
            return _subject(values[0], ctx, depth + 1, passed)
        module = ctx.module_values.get(node.id) if not values else None
        if module is not None:
            # ``_FAST_ACT = get_bool_env_var("SGLANG_X")`` at module level, then ``if _FAST_ACT:``.
            found = _subject(module, ctx, depth + 1)
            if found is not None and found[0] == "env":
                return found
    if passed:
        if (
            isinstance(node, ast.Name)
            and node.id not in ctx.bindings
            and node.id not in ctx.module_values
            and node.id not in _NOT_PARAMS
        ):
            return "passed", f"n:{node.id}", None
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
            and f"self.{node.attr}" not in ctx.attr_bindings
        ):
            return "passed", f"s:{node.attr}", None
    return None


_NOT_PARAMS = frozenset({"self", "cls", "True", "False", "None"})


def literal(node: ast.expr) -> tuple[str, ...] | None:
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
        inner = literal(node.operand)
        return (f"-{inner[0]}",) if inner else None
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        out: list[str] = []
        for e in node.elts:
            lit = literal(e)
            if lit is None or len(lit) != 1:
                return None
            out.append(lit[0])
        return tuple(out)
    return None


def _constraint(expr: ast.expr, negated: bool, ctx: ReadContext, passed: bool = False) -> Constraint | None:
    """The constraint one atom puts on a single flag or env value, if it is that simple
    (with ``passed``, on a parameter or ``self`` attribute too: see :func:`_subject`)."""
    while isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        expr, negated = expr.operand, not negated
    if isinstance(expr, ast.Name) and not ctx.bindings.get(expr.id):
        held = ctx.module_values.get(expr.id)
        if isinstance(held, ast.Compare):
            # ``_VARLEN_ON = os.environ.get("SGLANG_VARLEN", "1") != "0"`` at module level, then
            # ``if _VARLEN_ON:``: the test of the variable it holds.
            found = _constraint(held, negated, ctx)
            if found is not None and found.kind == "env":
                return found
    op: str | None = None
    values: tuple[str, ...] = ()
    subj = None
    divided = divisor_test(expr)
    if divided is not None:
        dividend, divisor, raw_op = divided
        subj = _subject(divisor, ctx, passed=passed)
        if subj is not None:
            op, values = raw_op, (unparse(dividend),)
        elif (
            isinstance(divisor, ast.Constant)
            and type(divisor.value) is int
            and divisor.value > 1
            and (subj := _subject(dividend, ctx, passed=passed)) is not None
        ):
            op = "not-multiple" if raw_op == "indivisible" else "multiple"
            values = (str(divisor.value),)
        else:
            return None
    elif (
        isinstance(expr, ast.Compare)
        and len(expr.ops) == 1
        and isinstance(expr.ops[0], ast.In | ast.NotIn)
        and isinstance(expr.left, ast.Constant)
        and (env := env_of_node(expr, ctx)) is not None
    ):
        # ``"SGLANG_X" not in os.environ``: whether the variable is set at all, whatever its value.
        subj, op = ("env", env, None), "not-none" if isinstance(expr.ops[0], ast.In) else "is-none"
    elif isinstance(expr, ast.Compare) and len(expr.ops) == 1:
        raw = CMP_OPS.get(type(expr.ops[0]))
        left, right = expr.left, expr.comparators[0]
        if raw is None:
            return None
        subj = _subject(left, ctx, passed=passed)
        other = right
        if subj is None and raw in MIRROR:
            subj = _subject(right, ctx, passed=passed)
            other = left
            raw = MIRROR[raw]
        if subj is None:
            return None
        lit = literal(other)
        if lit is None and raw in ("in", "not-in"):
            lit = bound_collection(other, ctx)
        if (
            lit is None
            and passed
            and subj[0] == "passed"
            and raw in ("lt", "le", "gt", "ge")
            and not (isinstance(other, ast.Name | ast.Attribute) and _subject(other, ctx, passed=True))
        ):
            # Ordered against a value the code computes: the callers' flag still decides it.
            # (Against another passed value itself, either side may be the one to change.)
            op, values = f"{raw}-of", (unparse(other),)
            if negated:
                op = FLIP[op]
            return Constraint(subj[0], subj[1], op, values, subj[2])
        if lit is None:
            return None
        if (isinstance(expr.ops[0], ast.Is | ast.IsNot) and lit == ("None",)) or (
            raw in ("eq", "ne") and lit == ("None",)
        ):
            op = "is-none" if raw == "eq" else "not-none"
        else:
            op, values = raw, lit
    elif (test := _value_test(expr, ctx)) is not None:
        # ``get_moe_runner_backend().is_auto()``: the flag's value is that choice.
        subj, op, values = (test[0], test[1], test[2]), "eq", (test[3],)
    else:
        subj = _subject(expr, ctx, passed=passed)
        if subj is None:
            return None
        op = "truthy"
    if negated:
        op = FLIP[op]
    kind, name, info = subj
    return Constraint(kind, name, op, values, info, kind == "env" and ctx.env_on(name))


def _value_test(expr: ast.expr, ctx: ReadContext) -> tuple[str, str, FlagInfo | None, str] | None:
    """``get_x_backend().is_y()`` (or ``backend.is_y()`` on the flag's value) where ``y`` is one of
    the flag's declared choices: the flag, and that choice."""
    if not (
        isinstance(expr, ast.Call)
        and not expr.args
        and not expr.keywords
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr.startswith("is_")
    ):
        return None
    subj = _subject(expr.func.value, ctx)
    choice = expr.func.attr[3:]
    if subj is None or subj[2] is None or choice not in subj[2].choices:
        return None
    return (*subj, choice)


def bound_collection(node: ast.expr, ctx: ReadContext) -> tuple[str, ...] | None:
    """The members of the collection a name holds, when it is bound once (in the function or at
    module level) to a literal one: ``policies = {"fifo": Fifo, "lru": Lru}`` holds ``fifo``,
    ``lru`` (a dict's keys are what ``in`` tests)."""
    if not isinstance(node, ast.Name):
        return None
    local = ctx.bindings.get(node.id, ())
    value = local[0] if len(local) == 1 else None if local else ctx.module_values.get(node.id)
    if isinstance(value, ast.Dict):
        # ``{25015: PATCH_A, 26329: PATCH_B}``: whole-number keys are what ``in`` tests too.
        keys = [
            str(k.value) for k in value.keys if isinstance(k, ast.Constant) and type(k.value) in (str, int)
        ]
        return tuple(keys) if keys and len(keys) == len(value.keys) else None
    if isinstance(value, ast.Tuple | ast.List | ast.Set):
        return literal(value)
    return None


# The rows of a batch: how many tokens or requests it holds changes from one batch to the next.
_BATCH_ROWS_RE = re.compile(r"\.shape\[0\]|\.size\(0\)|\bnumel\(\)|^len\(")


def splits_batch_rows(v: AtomView) -> bool:
    """Whether ``v`` tests that a batch's row count (``x.shape[0]``, ``len(reqs)``) divides by a
    value: no setting passes it for every batch, so a flag there is no cause (padding upstream
    is what keeps it whole)."""
    found = divisor_test(simplify(v.expr)) if v.expr is not None else None
    return found is not None and _BATCH_ROWS_RE.search(unparse(found[0])) is not None


def divisor_test(expr: ast.expr) -> tuple[ast.expr, ast.expr, str] | None:
    """``x % d != 0`` -> ``(x, d, "indivisible")``; ``x % d == 0`` -> ``(x, d, "divides")``."""
    if not (isinstance(expr, ast.Compare) and len(expr.ops) == 1):
        return None
    left, right = expr.left, expr.comparators[0]
    if not (
        isinstance(left, ast.BinOp)
        and isinstance(left.op, ast.Mod)
        and isinstance(right, ast.Constant)
        and right.value == 0
        and not isinstance(left.left, ast.Constant | ast.JoinedStr)
    ):
        return None
    if isinstance(expr.ops[0], ast.NotEq):
        return left.left, left.right, "indivisible"
    if isinstance(expr.ops[0], ast.Eq):
        return left.left, left.right, "divides"
    return None


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


def simplify(expr: ast.expr, depth: int = 0) -> ast.expr:
    """Push ``not`` inwards so a condition reads the way a person would write it:
    ``not not x`` -> ``x``, ``not x != 1`` -> ``x == 1``, ``not (a or b)`` -> ``not a and not b``."""
    if depth > 20:
        return expr
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        inner = expr.operand
        if isinstance(inner, ast.UnaryOp) and isinstance(inner.op, ast.Not):
            return simplify(inner.operand, depth + 1)
        if isinstance(inner, ast.Compare) and len(inner.ops) == 1:
            inv = _INVERT_CMP.get(type(inner.ops[0]))
            if inv is not None:
                return ast.Compare(left=inner.left, ops=[inv()], comparators=list(inner.comparators))
        if isinstance(inner, ast.BoolOp):
            new_op: ast.boolop = ast.And() if isinstance(inner.op, ast.Or) else ast.Or()
            parts = [simplify(ast.UnaryOp(op=ast.Not(), operand=v), depth + 1) for v in inner.values]
            return ast.BoolOp(op=new_op, values=parts)
        return expr
    if isinstance(expr, ast.BoolOp):
        values = [simplify(v, depth + 1) for v in expr.values]
        if all(a is b for a, b in zip(values, expr.values, strict=True)):
            return expr
        return ast.BoolOp(op=expr.op, values=values)
    return expr


def unparse(expr: ast.AST) -> str:
    try:
        return ast.unparse(expr)
    except Exception:
        return ""


_MODEL_RE = re.compile(
    r"model_config|hf_config|hf_text_config|architectures?\b|model_type|\.config\b|_config\(|is_multimodal|"
    r"num_attention_heads|num_key_value_heads|head_dim|hidden_size|num_experts|quant_config|checkpoint"
)
_HW_RE = re.compile(
    # ``x.is_cuda`` counts too: a tensor is on the GPU kind the machine has.
    r"\bis_(cuda|hip|npu|xpu|cpu|mps|musa|hpu|blackwell|hopper|sm\d+\w*|cuda_alike|flashinfer_available)(?:_supported)?\b|"
    r"_is_(cuda|hip|npu|xpu|cpu|musa|hpu)\b|get_device_capability|device_capability|torch\.cuda\.is_available|"
    r"is_sm\d+|sm_version|compute_capability|get_device_sm|is_fp8_fnuz|supports_fp8|_is_sm|"
    r"\b(?:device_)?sm_(?:major|minor)\b|\bcc_major\b|"
    r"cpu_(?:has_)?amx|amx_(?:available|support)"
)
# Cheap substring pre-checks: most atoms mention none of these, and a substring test is far
# cheaper than the full pattern.
_MODEL_HINTS = ("config", "arch", "model", "head", "hidden", "expert", "checkpoint")
_HW_HINTS = ("is_", "capab", "sm", "cuda", "device", "supports", "amx")
_REQUEST_HINTS = ("req", "sampling", "body", "payload", "messages", "prompt")


def _has(text: str, hints: tuple[str, ...], rx: re.Pattern[str]) -> bool:
    return any(h in text for h in hints) and rx.search(text) is not None


REQUEST_WORD_RE = re.compile(r"\b(request|req|sampling_params|body|payload|messages|prompt)\b")
"""The words that make an atom read the request (:attr:`AtomView.request`)."""


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
        subj = unparse(expr.args[0])
        t = expr.args[1]
        types = [unparse(e) for e in t.elts] if isinstance(t, ast.Tuple) else [unparse(t)]
        if subj and all(types):
            return subj, types, positive
    return None


@dataclass
class AtomView:
    atom: GuardAtom
    text: str
    expr: ast.expr | None
    reads: Reads
    constraints: list[Constraint]
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
        return unparse(simplify(ast.UnaryOp(op=ast.Not(), operand=self.expr))) or f"not ({self.text})"


def atom_view(atom: GuardAtom, reads: Reads, ctx: ReadContext) -> AtomView:
    expr = _effective(atom)
    text = atom.text
    simple_expr = simplify(expr) if expr is not None else None
    simple = text
    if simple_expr is not None and simple_expr is not expr:
        simple = unparse(simple_expr) or text
    constraints: list[Constraint] = []
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
    return AtomView(
        atom=atom,
        text=text,
        expr=expr,
        reads=reads,
        constraints=constraints,
        simple=simple,
        model=_has(text, _MODEL_HINTS, _MODEL_RE),
        hardware=_has(text, _HW_HINTS, _HW_RE),
        request=_has(text, _REQUEST_HINTS, REQUEST_WORD_RE),
        isinstance_=_is_instance_atom(expr) if expr is not None else None,
    )


def best_constraints(views: list[AtomView]) -> list[Constraint]:
    """One constraint per flag/env var: one with concrete values (``x > 0``) says more about
    the command line than a presence test on the same flag (``x is not None``)."""
    best: dict[str, Constraint] = {}
    for v in views:
        for c in v.constraints:
            if c.name not in best or (c.values and not best[c.name].values):
                best[c.name] = c
    return list(best.values())


def passed_constraints(views: list[AtomView], ctx: ReadContext) -> list[Constraint]:
    """Constraints of the atoms on a parameter or ``self`` attribute (kind ``passed``) that no
    flag or env read of the function explains: what the callers may fill from a flag."""
    out: list[Constraint] = []
    for v in views:
        if v.expr is None or v.reads.flags or v.reads.envs:
            continue
        try:
            for part in split_and(simplify(v.expr)):
                c = _constraint(part, False, ctx, passed=True)
                if c is not None and c.kind == "passed":
                    out.append(c)
        except RecursionError:
            return []
    return out


def constraint_of(expr: ast.expr, ctx: ReadContext) -> Constraint | None:
    """The constraint ``expr`` puts on one flag or env value, if it is that simple."""
    return _constraint(expr, False, ctx)


def wants_hardware(v: AtomView) -> bool:
    """Whether a hardware atom fails where the hardware it names is missing (``not is_cuda()``,
    ``get_device_sm() not in (100, 103)``, ``major < 9``), rather than where it is (``is_hip()``,
    ``sm == 120``, ``major >= 10``)."""
    node = simplify(v.expr) if v.expr is not None else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return True
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        op = node.ops[0]
        if isinstance(op, ast.NotIn | ast.NotEq):
            return True
        if isinstance(op, ast.In | ast.Eq):
            return False
        # ``capability < 9``: too old; ``9 > capability`` reads the same way round.
        lower = isinstance(op, ast.Lt | ast.LtE)
        return lower if literal(node.comparators[0]) is not None else not lower
    return v.simple.startswith("not ")


def fails_on_hardware(views: Sequence[AtomView]) -> bool:
    """Whether every hardware test among ``views`` plainly holds where the hardware it names is
    present (``_is_npu``, ``is_hip()``, ``sm == 120``): the check is one that platform fails.
    A test of another shape (an ``or``, an ordering) leaves the direction unsaid."""
    tests = [v for v in views if v.hardware]
    return bool(tests) and all(_present_test(v) for v in tests)


def _present_test(v: AtomView) -> bool:
    node = simplify(v.expr) if v.expr is not None else None
    if isinstance(node, ast.Name | ast.Attribute | ast.Call):
        return True
    return isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq | ast.In)
