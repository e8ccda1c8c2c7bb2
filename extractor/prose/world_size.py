"""Parallel world sizes read through the distributed getters, as the flags that set them.

Model and layer code does not read ``server_args.tp_size``: it asks the process group
(``get_tensor_model_parallel_world_size()``, ``get_tp_group().world_size``,
``self.pp_group.world_size``, ``get_ulysses_parallel_world_size()``), which was built with the size
the launcher took from a flag. A check that splits a model dimension over that size
(``num_heads % tp_size != 0``) or wants a fixed size (``pp_group.world_size != 1``) is about the
flag. The group's name leads to the flag by the target's own spellings: ``tp`` to ``--tp-size``,
``ulysses_parallel`` to ``--ulysses-degree``, ``tensor_model_parallel`` to the alias
``--tensor-parallel-size``, ``sequence_parallel`` by its initials to ``--sp-degree``. A group no
declared flag spells (``world``) stays unnamed; ``attn_tp`` is the tensor-parallel group's
attention part, ``--tp-size`` split by ``--dp-size`` (under DP attention) and ``--attn-cp-size``; ``moe_tp`` is the MoE
layers' part, ``--tp-size`` split by ``--ep-size`` and ``--moe-dp-size``, and ``moe_ep`` is ``--ep-size``. A value
named as a parallel size (``self.attn_tp_size``, ``self.moe_tp_size``,
``tp_size``, ``get_attention_tp_size()``) is read as that group's size.

Three shapes make the size the cause: a divisibility test on it, a comparison with a literal,
and an ordering against a value of the model's config (``self.tp_size > config.n_routed_experts``:
the launch splits the checkpoint's experts over more ranks than there are). An equality with a
value the code computed (``len(seq_lens) != world_size``) is the code disagreeing with itself, not
a setting to change.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Mapping, Sequence

from extractor.analysis.conditions import split_and
from extractor.analysis.config_read import config_read
from extractor.analysis.walk import called_name, last_name
from extractor.prose.constraints import MIRROR, AtomView, Constraint, divisor_test, literal, simplify, unparse
from extractor.prose.flag_spelling import find_flag
from extractor.prose.knowledge import FlagInfo
from extractor.prose.reads import BINDING_DEPTH, ReadContext, Reads, is_peer

__all__ = ["TP_PARTS", "flag_for_group", "group_of", "split_share", "told_split", "with_world_sizes"]

_GETTER_RE = re.compile(r"^_?get_([a-z][a-z0-9_]*?)_world_size$")
_GROUP_RE = re.compile(r"^_?(?:get_)?([a-z][a-z0-9_]*?)_group$")
# ``get_attention_tp_size()``, ``self.attn_tp_size``, ``tp_size``: a parallel size by its short name.
_SIZE_NAME_RE = re.compile(
    r"^_?(?:get_)?((?:attn_|attention_|moe_)?(?:tp|dp|pp|ep|d?cp|sp))_(?:world_)?size$"
)
# Words a group's name carries that no flag spells: ``tensor_model_parallel`` is ``--tensor-parallel-size``;
# the attention part of the tensor-parallel group (``attn_tp``) is sized by ``--tp-size`` (split
# by ``--dp-size`` under DP attention).
_FILLER = ("model", "parallel", "group", "attn", "attention", "moe")
_SUFFIXES = ("_size", "_degree", "_parallel_size")
_ORDER = frozenset({"lt", "gt", "le", "ge"})
_CMP = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}


def group_of(node: ast.expr, ctx: ReadContext | None = None, depth: int = 0) -> str | None:
    """The process group whose size ``node`` is (``tp`` for ``get_tp_group().world_size``);
    without ``ctx``, local bindings are not followed."""
    if isinstance(node, ast.Call):
        name = called_name(node)
        if not node.args and not node.keywords and (m := _GETTER_RE.match(name) or _SIZE_NAME_RE.match(name)):
            return m.group(1)
        # ``max(get_ulysses_parallel_world_size(), 1)``: still that size.
        if name in ("max", "min", "int") and node.args:
            return group_of(node.args[0], ctx, depth)
        return None
    if isinstance(node, ast.Attribute) and node.attr == "world_size":
        recv = node.value
        name = (
            called_name(recv)
            if isinstance(recv, ast.Call) and not recv.args
            else recv.attr
            if isinstance(recv, ast.Attribute)
            else recv.id
            if isinstance(recv, ast.Name)
            else ""
        )
        if (m := _GROUP_RE.match(name)) is not None:
            return m.group(1)
        if isinstance(recv, ast.Name) and ctx is not None and depth < BINDING_DEPTH:
            values = ctx.bindings.get(recv.id, ())
            if len(values) == 1 and isinstance(values[0], ast.Call):
                m = _GROUP_RE.match(called_name(values[0]))
                return m.group(1) if m else None
        return None
    if isinstance(node, ast.Name) and ctx is not None and depth < BINDING_DEPTH:
        values = ctx.bindings.get(node.id, ())
        # ``try: tp = get_parallel().attn_tp_size`` / ``except ...: tp = 1``: a literal fallback
        # is no split of its own; the size is the group's wherever one is read.
        read = [v for v in values if not _number(v)]
        if len(read) == 1:
            return group_of(read[0], ctx, depth + 1)
        if values:
            return None
    if ctx is None:
        return None  # a name alone is read as a size only where its bindings were looked at
    if isinstance(node, ast.Attribute) and is_peer(node.value, ctx):
        return None  # the size another server reported (``info.attn_cp_size``), not this launch's
    name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
    m = _SIZE_NAME_RE.match(name)
    return m.group(1) if m else None


def _number(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
    )


def flag_for_group(group: str, flags: Mapping[str, FlagInfo]) -> FlagInfo | None:
    """The declared flag that sets the size of ``group``, by the target's own spellings."""
    words = [w for w in group.split("_") if w]
    if not words:
        return None
    stems = [
        "_".join(words),
        "_".join(w for w in words if w not in _FILLER),
        "".join(w[0] for w in words if w != "model"),
        "".join(w[0] for w in words),
    ]
    names = [stem + suffix for stem in dict.fromkeys(s for s in stems if s) for suffix in _SUFFIXES]
    # Destinations first, then aliases (``--tensor-parallel-size``); one lookup each, as a cached
    # result is kept under the flags it read.
    for name in names:
        hit = flags.get(name)
        if hit is not None and not hit.is_bool:
            return hit
    for name in names:
        hit = find_flag("aliased", name, flags)
        if hit is not None and not hit.is_bool:
            return hit
    return None


def size_flags(node: ast.expr, ctx: ReadContext) -> list[FlagInfo]:
    """The flags that set the size ``node`` is: one group's flag; for the attention or MoE part of
    the tensor-parallel group, also those that split it (``tp // dp // attn_cp`` under DP
    attention, ``tp // ep // moe_dp``)."""
    group = group_of(node, ctx)
    if group is None:
        return []
    first = flag_for_group(group, ctx.flags)
    if first is None:
        return []
    out = [first]
    splits = _ATTENTION_SPLITS if group in _ATTENTION_TP else _MOE_SPLITS if group in _MOE_TP else ()
    for dest in splits:
        info = ctx.flags.get(dest)
        if info is not None and not info.is_bool and info not in out:
            out.append(info)
    return out


# ``input_size_per_partition``, ``output_partition_size``: a dimension already split over the
# tensor-parallel ranks.
_PER_PARTITION_RE = re.compile(r"^[a-z][a-z0-9_]*_per_partition$|^(?:[a-z][a-z0-9_]*_)?partition_size$")


def _split_flag(node: ast.expr, flags: Mapping[str, FlagInfo]) -> FlagInfo | None:
    """The tensor-parallel size's flag when ``node`` names a dimension split over its ranks
    (``input_size_per_partition``): a check that the share divides evenly is about that size."""
    return flag_for_group("tp", flags) if _PER_PARTITION_RE.match(last_name(node)) else None


def _split_flags(node: ast.expr, ctx: ReadContext) -> list[FlagInfo]:
    first = _split_flag(node, ctx.flags)
    return [first] if first is not None else []


def split_share(views: Sequence[AtomView], flags: Mapping[str, FlagInfo]) -> tuple[str, str, str] | None:
    """``(flag, share, divisor)`` for the first deciding test ``share % divisor != 0`` of a
    dimension already split over the tensor-parallel ranks (``input_size_per_partition % block_k``):
    a smaller size gives each rank a larger share, which the divisor may then fit."""
    for v in views:
        for part in split_and(simplify(v.expr)) if v.expr is not None else ():
            found = divisor_test(part)
            info = _split_flag(found[0], flags) if found is not None and found[2] == "indivisible" else None
            if found is not None and info is not None:
                return info.flag, last_name(found[0]), unparse(found[1])
    return None


def _rank_gate(expr: ast.expr | None, ctx: ReadContext) -> FlagInfo | None:
    """The size flag of the group in ``not <group>.is_first_rank`` (or ``is_last_rank``): a rank
    that is not the first (or the last) exists only when that size is above 1."""
    if not (isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not)):
        return None
    inner = expr.operand
    if not (isinstance(inner, ast.Attribute) and inner.attr in ("is_first_rank", "is_last_rank")):
        return None
    group = group_of(ast.Attribute(value=inner.value, attr="world_size", ctx=ast.Load()), ctx)
    info = flag_for_group(group, ctx.flags) if group is not None else None
    return info if info is not None and not info.is_bool else None


def _split_ranks(expr: ast.expr, ctx: ReadContext) -> FlagInfo | None:
    """The size flag of the one group every disjunct of ``expr`` finds split: ``not g.is_first_rank
    or not g.is_last_rank`` holds only on a launch that sets that size above 1."""
    expr = simplify(expr)
    parts = expr.values if isinstance(expr, ast.BoolOp) and isinstance(expr.op, ast.Or) else [expr]
    found = {_rank_gate(p, ctx) for p in parts}
    if len(found) != 1:
        return None
    return found.pop()


def _size_flag(node: ast.expr, ctx: ReadContext) -> FlagInfo | None:
    found = size_flags(node, ctx)
    return found[0] if found else None


# The attention tensor-parallel size is ``--tp-size`` split by the data-parallel size (under DP
# attention) and the attention context-parallel size.
_ATTENTION_TP = frozenset({"attn_tp", "attention_tp"})
_ATTENTION_SPLITS = ("dp_size", "attn_cp_size")
# The MoE layers' part of the tensor-parallel group: ``--tp-size`` split by the expert-parallel and
# MoE data-parallel sizes (``moe_tp_size = tp_size // moe_ep_size // moe_dp_size``).
_MOE_TP = frozenset({"moe_tp"})
_MOE_SPLITS = ("ep_size", "moe_dp_size")
TP_PARTS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("attention", _ATTENTION_SPLITS, "enable_dp_attention"),
    ("MoE layers'", _MOE_SPLITS, ""),
)
"""The parts of the tensor-parallel group sized by ``--tp-size`` divided by other sizes: the part's
name, the destinations of the sizes that divide it, and the switch the first one divides under."""


def _config_key(node: ast.expr, ctx: ReadContext, depth: int = 0) -> str | None:
    """The key of the model's config that ``node`` reads (``n_routed_experts`` for
    ``config.n_routed_experts``, :func:`~extractor.reach.arguments.config_read`), following a
    local name bound once, or a ``self.`` attribute the constructor copied from the config; None
    for anything else."""
    if isinstance(node, ast.Name) and depth < BINDING_DEPTH:
        values = ctx.bindings.get(node.id, ())
        return _config_key(values[0], ctx, depth + 1) if len(values) == 1 else None
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        # ``self.n_routed_experts = getattr(config, "num_experts", None)`` in the constructor.
        key = ctx.config_attrs.get(f"self.{node.attr}")
        if key is not None:
            return key
    return config_read(node)


def _world_reads(
    expr: ast.expr, ctx: ReadContext
) -> tuple[list[FlagInfo], list[FlagInfo], list[Constraint], bool]:
    """The sizes ``expr`` divides by or orders against the model's config, the sizes it compares
    with a literal, the constraints those comparisons put on them (a divisibility test puts none a
    value can be read from), and whether a size meets the model's config."""
    divided: list[FlagInfo] = []
    compared: list[FlagInfo] = []
    constraints: list[Constraint] = []
    with_config = False
    for part in split_and(simplify(expr)):
        for node in ast.walk(part):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
                found = (
                    size_flags(node.right, ctx) or size_flags(node.left, ctx) or _split_flags(node.left, ctx)
                )
                for split in found:
                    if split not in divided:
                        divided.append(split)
        if isinstance(part, ast.Compare) and len(part.ops) == 1:
            op = _CMP.get(type(part.ops[0]))
            left, right = part.left, part.comparators[0]
            info, lit = _size_flag(left, ctx), literal(right)
            if info is None and op is not None:
                info, lit, op = _size_flag(right, ctx), literal(left), MIRROR[op]
            if info is not None and op is not None and lit is not None and lit != ("None",):
                if info not in compared:
                    compared.append(info)
                constraints.append(Constraint("flag", info.flag, op, lit, info))
            elif op in _ORDER:
                for size, other in ((left, right), (right, left)):
                    if _config_key(other, ctx) is None:
                        continue
                    for split in size_flags(size, ctx):
                        with_config = True
                        if split not in divided:
                            divided.append(split)
    return divided, compared, constraints, with_config


def _sized_gate(expr: ast.expr, ctx: ReadContext) -> Constraint | None:
    """The one constraint a gate puts on a group size compared with a literal, if that is all it tests."""
    try:
        _, compared, constraints, _ = _world_reads(expr, ctx)
    except RecursionError:
        return None
    if len(compared) != 1 or len(constraints) != 1 or len(split_and(simplify(expr))) != 1:
        return None
    return constraints[0]


def with_world_sizes(views: Sequence[AtomView], ctx: ReadContext) -> list[AtomView]:
    """``views`` with the world sizes a deciding atom tests read as their flags.

    A size compared with a literal (``world_size > 1``) is the cause only when every deciding
    atom tests a size: beside another test (``x.ndim != 4``) it only says the parallel path runs,
    and the other test is what fails."""
    found: dict[int, tuple[list[FlagInfo], list[FlagInfo], list[Constraint], bool]] = {}
    deciding = [v for v in views if v.atom.role == "deciding" and v.expr is not None]
    for v in deciding:
        if v.reads.flags or v.reads.envs or v.expr is None:
            continue
        try:
            found[id(v)] = _world_reads(v.expr, ctx)
        except RecursionError:
            continue
        split = _split_ranks(v.expr, ctx) if not any(found[id(v)][:2]) else None
        if split is not None:
            # ``assert pp_group.is_first_rank and pp_group.is_last_rank``: the model refuses to be
            # split in stages, which only a size above 1 does.
            found[id(v)] = ([], [split], [Constraint("flag", split.flag, "gt", ("1",), split)], False)
    all_sizes = bool(deciding) and all(
        (r := found.get(id(v))) is not None and (r[0] or r[1]) for v in deciding
    )
    out = []
    for v in views:
        got = found.get(id(v))
        if got is None:
            gate = v.atom.role != "deciding" and not v.reads.flags and not v.reads.envs and v.expr is not None
            ranked = _rank_gate(v.expr, ctx) if gate else None
            if ranked is not None:
                # ``not self.pp_group.is_first_rank``: a later stage exists only with that size above 1.
                above = Constraint("flag", ranked.flag, "gt", ("1",), ranked)
                v = dataclasses.replace(v, reads=Reads(flags=[ranked], envs=[]), constraints=[above])
            elif gate and v.expr is not None and (sized := _sized_gate(v.expr, ctx)) is not None:
                # ``self.dcp_size > 1``: the path of a split the size's flag asks for.
                assert sized.info is not None
                v = dataclasses.replace(v, reads=Reads(flags=[sized.info], envs=[]), constraints=[sized])
            out.append(v)
            continue
        divided, compared, constraints, with_config = got
        flags = list(dict.fromkeys([*divided, *compared])) if all_sizes else divided
        if not flags:
            out.append(v)
            continue
        kept = constraints if all_sizes else []
        # A size against the model's config: the launch and the checkpoint disagree.
        out.append(
            dataclasses.replace(
                v, reads=Reads(flags=flags, envs=[]), constraints=kept, model=v.model or with_config
            )
        )
    return out


# The message says the tensor-parallel size does not fit the model ("TP size may be too large for
# this model", "not divisible by the tp size", "Cannot TP-shard ..."), while the test reads values
# the code derived from it.
_TOLD_SPLIT_RE = re.compile(
    r"\b(?:TP|tp|tensor[ _-]?(?:model[ _-]?)?parallel)[ _-](?:size|degree)\b[^.;]*?"
    r"\b(?:too large|incompatible|not divisible|must divide|exceed|greater than|larger than)"
    r"|\bnot divisible by (?:the )?(?:attn |attention )?(?:TP|tp|tensor[ _-]?parallel)(?:[ _-](?:size|degree))?\b"
    r"|\b(?:this|the) (?:TP|tp|tensor[ _-]?parallel) size is incompatible"
    r"|\bcannot TP[- ]shard|\bTP[- ]shard (?:is )?not aligned",
    re.I,
)


def told_split(message: str, flags: Mapping[str, FlagInfo]) -> FlagInfo | None:
    """The tensor-parallel size flag, when ``message`` says that size does not fit the model."""
    if not _TOLD_SPLIT_RE.search(message[:400]):
        return None
    return flag_for_group("tp", flags)
