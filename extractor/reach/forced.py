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

__all__ = [
    "ALWAYS",
    "ARCH_NAME",
    "Forced",
    "ModelSet",
    "forced_by_function",
    "forced_by_table",
    "set_by_function",
]

ARCH_NAME = re.compile(r"^[A-Z][A-Za-z0-9_]*For[A-Z][A-Za-z0-9_]*$")
"""A model architecture's class name (``Qwen3ForCausalLM``)."""

Forced = tuple[str, str, tuple[str, ...]]
"""(setting name, the value as text, the architectures it is forced for)."""


ModelSet = tuple[str, str, str, tuple[str, ...]]
"""(setting name, the constant values it is given joined by ``|`` (``""``: not known), how, the
architectures): what :func:`set_by_function` finds."""

ALWAYS = "always"
"""How a setting is set for a model: on every call, whatever the launch gives (its value may depend
on the hardware: ``page_size = 128 if npu else 256``)."""
SOME = "some"
"""How a setting is set for a model: for some launches, which tests of other settings pick."""


def _registered_archs(func: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...] | None:
    archs: tuple[str, ...] | None = None
    for dec in func.decorator_list:
        if isinstance(dec, ast.Call) and not dec.keywords:
            archs = archs or _arch_keys(dec.args)
    return archs


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
    archs = _registered_archs(func)
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


def set_by_function(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ModelSet]:
    """The settings a function registered for architectures writes into the dict it returns
    (``overrides["page_size"] = 64``), each with its constant values and how it is set:
    :data:`ALWAYS` when no test of the launch's settings picks the write (a test of the
    platform may pick its value), :data:`SOME` otherwise. A setting some write of which is
    picked by a test of that setting itself (filled in only when not given) is left out."""
    archs = _registered_archs(func)
    if archs is None:
        return []
    returned = _returned_name(func)
    if returned is None:
        return []
    constants = _local_constants(func)
    writes: dict[str, list[tuple[str | None, list[ast.expr]]]] = {}
    blocks: list[tuple[list[ast.stmt], list[ast.expr]]] = [(func.body, [])]
    while blocks:
        body, tests = blocks.pop()
        for stmt in body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            if isinstance(stmt, ast.If):
                blocks.append((stmt.body, [*tests, stmt.test]))
                blocks.append((stmt.orelse, [*tests, stmt.test]))
                continue
            if isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    key = _written_key(target, returned)
                    if key is not None:
                        writes.setdefault(key, []).append((_value_text(stmt.value, constants), tests))
            for block in (getattr(stmt, f, None) for f in ("body", "orelse", "finalbody", "handlers")):
                if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                    # A loop or a ``try`` runs its body on some paths only.
                    blocks.append((block, [*tests, ast.Constant(value=True)]))
    out: list[ModelSet] = []
    for key, found in sorted(writes.items()):
        aliases = _aliases(func, key)
        if any(_reads_setting(t, key, aliases) for _, ts in found for t in ts):
            continue  # filled in only when the launch left it out
        how = ALWAYS if all(_platform_only(t) for _, ts in found for t in ts) else SOME
        values = sorted({v for v, _ in found if v is not None})
        known = all(v is not None for v, _ in found)
        out.append((key, "|".join(values) if known else "", how, archs))
    return out


def _returned_name(func: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The name of the dict every return of ``func`` hands back, if there is one."""
    for node in ast.walk(func):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Name):
            return node.value.id if _returns_name(func, node.value.id) else None
    return None


def _written_key(target: ast.expr, returned: str) -> str | None:
    if (
        isinstance(target, ast.Subscript)
        and isinstance(target.value, ast.Name)
        and target.value.id == returned
        and isinstance(target.slice, ast.Constant)
        and isinstance(target.slice.value, str)
        and target.slice.value.isidentifier()
    ):
        return target.slice.value
    return None


def _local_constants(func: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, set[str] | None]:
    """Local name -> the constants every assignment gives it (None: some assignment is no constant)."""
    out: dict[str, set[str] | None] = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name, value = node.targets[0].id, node.value
            known = out.get(name, set())
            if (
                isinstance(value, ast.Constant)
                and isinstance(value.value, str | int | float | bool)
                and known is not None
            ):
                known.add(str(value.value))
                out[name] = known
            else:
                out[name] = None
    return out


def _value_text(value: ast.expr, constants: dict[str, set[str] | None]) -> str | None:
    if isinstance(value, ast.Constant) and isinstance(value.value, str | int | float | bool):
        return str(value.value)
    if isinstance(value, ast.Name):
        known = constants.get(value.id)
        return "|".join(sorted(known)) if known else None
    return None


def _reads_setting(test: ast.expr, key: str, aliases: set[str]) -> bool:
    """Whether ``test`` reads setting ``key``: ``server_args.page_size``, a helper named for it
    (``server_args.is_attention_backend_not_set()``), or a local read from it (``aliases``)."""
    return any(
        (isinstance(n, ast.Attribute) and key in n.attr) or (isinstance(n, ast.Name) and n.id in aliases)
        for n in ast.walk(test)
    )


def _aliases(func: ast.FunctionDef | ast.AsyncFunctionDef, key: str) -> set[str]:
    """Locals assigned from an expression that reads setting ``key`` (``page = server_args.page_size``)."""
    return {
        t.id
        for node in ast.walk(func)
        if isinstance(node, ast.Assign)
        and any(isinstance(n, ast.Attribute) and n.attr == key for n in ast.walk(node.value))
        for t in node.targets
        if isinstance(t, ast.Name)
    }


def _platform_only(test: ast.expr) -> bool:
    """Whether ``test`` asks only about the machine: calls of no arguments (``is_hip()``,
    ``aiter_can_use_preshuffle_paged_mqa()``) joined by ``and`` / ``or`` / ``not``."""
    if isinstance(test, ast.BoolOp):
        return all(_platform_only(v) for v in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _platform_only(test.operand)
    return isinstance(test, ast.Call) and not test.args and not test.keywords
