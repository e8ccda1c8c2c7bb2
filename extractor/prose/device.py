"""A device check on a tensor, on a path that already runs only on that device.

``assert key.is_cuda`` reads like a hardware requirement, and a file's analysis calls it one ("run on
CUDA hardware"). When every way to the function also passes a platform gate that only that device
passes (``if _is_cuda: fused_store(...)``), the machine cannot be the cause: a caller handed over a
tensor on another device, which is a bug. The file's analysis cannot see the callers, so it keeps
the record's internal wording beside it (:func:`device_spec`), and the run, once it knows the
reach, swaps it in (:func:`with_device`).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from extractor.prose.constraints import AtomView
from extractor.reach.guard_atoms import platform_word

if TYPE_CHECKING:
    from extractor.reach.paths import Reach

__all__ = [
    "DEVICE_KEY",
    "DEVICE_RULE",
    "PLATFORM_RULE",
    "device_spec",
    "gate_platforms",
    "tensor_platforms",
    "with_device",
]

DEVICE_KEY = "_device"
"""The partial record's key for the internal wording (dropped before the record is built)."""

DEVICE_RULE = "device-on-path"
"""The cause rule of the internal wording."""

PLATFORM_RULE = "platform-on-path"
"""The cause rule of the internal wording of a platform gate (``if not is_npu(): raise``) that
every way in already passes: code registered or built on that platform alone."""

# The platforms where a tensor property can hold: ROCm builds of torch report ``is_cuda`` too.
_PROPERTY_PLATFORMS = {
    "is_cuda": ("cuda", "hip"),
    "is_xpu": ("xpu",),
    "is_npu": ("npu",),
    "is_mps": ("mps",),
}
_TYPE_PLATFORMS = {"cuda": ("cuda", "hip"), "xpu": ("xpu",), "npu": ("npu",), "mps": ("mps",)}
# Fields the internal wording replaces; the rest (message, pattern, source) are the site's own.
_FIELDS = (
    "errorType",
    "severity",
    "documentation",
    "triggerScenarios",
    "commonSituations",
    "solutions",
    "exampleFix",
    "handlingStrategy",
    "preventionTips",
    "tags",
    "backgroundTag",
)


def _tensor_test(node: ast.expr) -> tuple[str, ...] | None:
    """The platforms a test of one tensor's device passes on: ``x.is_cuda`` (not called: a
    property), ``x.device.type == "cuda"``; None for anything else (``torch.cuda.is_available()``
    asks the machine, ``is_cuda()`` the build)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _tensor_test(node.operand)
    if isinstance(node, ast.BoolOp):
        parts = [_tensor_test(v) for v in node.values]
        if not parts or any(p is None for p in parts):
            return None
        return tuple(sorted({x for p in parts if p for x in p}))
    if isinstance(node, ast.Attribute) and node.attr in _PROPERTY_PLATFORMS:
        head = node.value
        while isinstance(head, ast.Attribute | ast.Subscript):
            head = head.value
        if isinstance(head, ast.Name) and head.id != "torch":
            return _PROPERTY_PLATFORMS[node.attr]
        return None
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq | ast.NotEq):
        left, right = node.left, node.comparators[0]
        if (
            isinstance(left, ast.Attribute)
            and left.attr == "type"
            and isinstance(left.value, ast.Attribute)
            and left.value.attr == "device"
            and isinstance(right, ast.Constant)
            and isinstance(right.value, str)
        ):
            return _TYPE_PLATFORMS.get(right.value)
    return None


def tensor_platforms(deciding: Sequence[AtomView]) -> tuple[str, ...] | None:
    """The platforms where the deciding hardware tests, all of them tensor device tests, can pass."""
    hardware = [v for v in deciding if v.hardware]
    if not hardware:
        return None
    found: set[str] = set()
    for v in hardware:
        if v.expr is None:
            return None
        plats = _tensor_test(v.expr)
        if plats is None:
            return None
        found.update(plats)
    return tuple(sorted(found))


def gate_platforms(deciding: Sequence[AtomView]) -> tuple[str, ...] | None:
    """The platforms where the deciding hardware tests, all of them ``not is_<platform>()`` gates,
    pass (the check fails everywhere else)."""
    found: set[str] = set()
    for v in deciding:
        if not v.hardware:
            continue
        node = v.expr
        word = (
            platform_word(node.operand)
            if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)
            else None
        )
        if word is None:
            return None
        found.add(word)
    return tuple(sorted(found)) or None


def device_spec(
    hardware: Mapping[str, Any], internal: Mapping[str, Any], platforms: Sequence[str]
) -> dict[str, Any]:
    """What :func:`with_device` needs: the platforms and the fields the internal wording changes."""
    return {"p": list(platforms), "f": {k: internal[k] for k in _FIELDS if internal[k] != hardware[k]}}


def with_device(partial: Mapping[str, Any], spec: Mapping[str, Any], reach: Reach) -> dict[str, Any]:
    """``partial`` in its internal wording when every way in runs on a platform where the tensor test
    passes (then the device is not what failed); else unchanged."""
    platforms = set(spec.get("p", ()))
    if not reach or not all(any(s[0] == "platform" and s[1] in platforms for s in way) for way in reach):
        return dict(partial)
    fields = spec.get("f", {})
    return {**partial, **{k: v for k, v in fields.items() if k in _FIELDS}}
