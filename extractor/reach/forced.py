"""Settings the code forces for a model architecture, whatever the command line says.

sglang declares per-architecture values for some server settings, in a table keyed by
architecture or in a function registered for a list of architectures::

    OVERRIDES = {"FooForCausalLM": {"dtype": "bfloat16"}}

    @register_for("BarForCausalLM")
    def _bar(server_args, hf_config):
        overrides = {"attention_backend": "bar_attn"}
        ...
        return overrides

A code path selected by such a value (``--attention-backend bar_attn``) is the one every
``BarForCausalLM`` checkpoint takes: "use another attention backend" is no way out for its users,
and the record says which checkpoints get the value from the code. Only values set on every call
count: a value returned inside an ``if`` depends on the launch or the machine.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

__all__ = ["ARCH_NAME", "Forced", "forced_by_function", "forced_by_table"]

ARCH_NAME = re.compile(r"^[A-Z][A-Za-z0-9_]*For[A-Z][A-Za-z0-9_]*$")
"""A model architecture's class name (``Qwen3ForCausalLM``)."""

Forced = tuple[str, str, tuple[str, ...]]
"""(setting name, the value as text, the architectures it is forced for)."""


def _arch_keys(args: Sequence[ast.expr]) -> tuple[str, ...] | None:
    names = [a.value for a in args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if not names or len(names) != len(args) or not all(ARCH_NAME.match(n) for n in names):
        return None
    return tuple(names)


def _constant_items(value: ast.Dict) -> list[tuple[str, str]]:
    out = []
    for k, v in zip(value.keys, value.values, strict=True):
        if not (isinstance(k, ast.Constant) and isinstance(k.value, str) and k.value.isidentifier()):
            continue
        if isinstance(v, ast.Constant) and isinstance(v.value, str | bool | int | float):
            out.append((k.value, str(v.value)))
    return out


def forced_by_table(value: ast.expr) -> list[Forced]:
    """The entries of a module-level ``{"XForCausalLM": {"setting": <constant>}}`` table."""
    if not isinstance(value, ast.Dict) or not value.keys:
        return []
    out: list[Forced] = []
    for k, v in zip(value.keys, value.values, strict=True):
        archs = _arch_keys([k] if k is not None else [])
        if archs is None:
            return []  # not a table keyed by architectures
        if isinstance(v, ast.Dict):
            out.extend((name, text, archs) for name, text in _constant_items(v))
    return out


def forced_by_function(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[Forced]:
    """The constant settings a function registered for architectures (a decorator called with
    architecture names only) declares before anything can return: a dict literal it returns first
    or assigns to the name it returns."""
    archs: tuple[str, ...] | None = None
    for dec in func.decorator_list:
        if isinstance(dec, ast.Call) and not dec.keywords:
            archs = archs or _arch_keys(dec.args)
    if archs is None:
        return []
    out: list[Forced] = []
    for stmt in func.body:
        if isinstance(stmt, ast.Return):
            if isinstance(stmt.value, ast.Dict):
                out.extend((n, t, archs) for n, t in _constant_items(stmt.value))
            break
        if any(isinstance(n, ast.Return) for n in ast.walk(stmt)):
            break  # an earlier return may leave the rest out
        target = None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            target, value = stmt.target, stmt.value
        if isinstance(target, ast.Name) and isinstance(value, ast.Dict) and _returns_name(func, target.id):
            later = _rewritten(func, target.id)
            out.extend(
                (n, t, archs) for n, t in _constant_items(value) if later is not None and n not in later
            )
    return out


def _rewritten(func: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> set[str] | None:
    """The keys the function writes into dict ``name`` after building it (None: any key may be)."""
    keys: set[str] = set()
    for node in ast.walk(func):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del):
            if isinstance(node.value, ast.Name) and node.value.id == name:
                if not (isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
                    return None
                keys.add(node.slice.value)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == name
            and node.func.attr in ("update", "pop", "setdefault", "clear", "popitem")
        ):
            return None
    return keys


def _returns_name(func: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    # Every return hands back that dict (perhaps with more added), never a fresh one.
    returns = [n for n in ast.walk(func) if isinstance(n, ast.Return)]
    return bool(returns) and all(isinstance(r.value, ast.Name) and r.value.id == name for r in returns)
