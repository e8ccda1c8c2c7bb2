"""A half-precision requirement in model code: met by the dtype the model runs in.

A model's forward that asserts ``pixel_values.dtype == torch.bfloat16`` gets its tensors cast to
the model's own dtype (``pixel_values.to(self.visual.dtype)``), and that dtype is what ``--dtype``
selects (``auto`` takes the checkpoint's). Such a check fails when the server runs the model in
another dtype, so its cause is the flag and its fix the accepted value. Only half-precision
requirements are read this way: a float32 check in model code is about a value the code upcasts
on purpose (a modulation, a rotary table), which no flag changes.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from extractor.analysis.facts import Site
from extractor.prose.constraints import AtomView, simplify, unparse
from extractor.prose.knowledge import FlagInfo

__all__ = ["ModelDtype", "model_dtype"]

# The torch dtypes a model runs in when ``--dtype`` asks for half precision.
_HALF = frozenset({"bfloat16", "float16", "half"})


@dataclass(frozen=True)
class ModelDtype:
    flag: FlagInfo
    accepted: tuple[str, ...]
    """The flag's choices the check accepts, as the flag spells them (``bfloat16``)."""
    rejected: str
    """A choice of the flag the check rejects (for the failing launch)."""


def _torch_dtypes(node: ast.expr) -> list[str] | None:
    elts = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else [node]
    out = []
    for e in elts:
        if not (isinstance(e, ast.Attribute) and unparse(e.value) == "torch"):
            return None
        out.append(e.attr)
    return out


def _model_value(node: ast.expr, params: set[str]) -> bool:
    """A parameter of the forward (its input, cast to the model dtype) or a weight."""
    if isinstance(node, ast.Name):
        return node.id in params
    return isinstance(node, ast.Attribute) and node.attr == "weight"


def model_dtype(site: Site, deciding: Sequence[AtomView], flags: Mapping[str, FlagInfo]) -> ModelDtype | None:
    """The ``--dtype`` cause of a model-code check that its tensor is in half precision."""
    exprs = [v.expr for v in deciding if v.expr is not None]
    if "/models/" not in site.path or len(exprs) != 1:
        return None
    test = simplify(exprs[0])
    if not (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.NotEq | ast.NotIn)
    ):
        return None
    left = test.left
    if not (isinstance(left, ast.Attribute) and left.attr == "dtype"):
        return None
    if not _model_value(left.value, {p.name for p in site.params}):
        return None
    wanted = _torch_dtypes(test.comparators[0])
    if not wanted or not set(wanted) <= _HALF:
        return None
    # Looked up last: a file's cached result is kept under the flags it read.
    info = flags.get("dtype")
    if info is None:
        return None
    accepted = tuple(c for c in info.choices if c in wanted)
    rejected = next((c for c in info.choices if c not in wanted and c not in ("auto", "half")), "")
    if not accepted or not rejected:
        return None
    return ModelDtype(info, accepted, rejected)
