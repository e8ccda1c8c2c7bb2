"""Which constructor parameters of a class its ``from_config`` fills from keys of a config dict.

A quantization (or other) config class is built from the checkpoint's config by a classmethod::

    @classmethod
    def from_config(cls, config):
        weight_bits = cls.get_from_keys(config, ["w_bit", "bits"])
        return cls(weight_bits, ...)

so a check in that class on ``weight_bits`` (or on ``self.weight_bits``, which ``__init__`` copies
it into) tests what the checkpoint declares under ``w_bit`` or ``bits``: the user's checkpoint, not
sglang's internals. :func:`config_fields` reads that mapping off one module.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from extractor.analysis.config_read import config_read
from extractor.analysis.walk import key_read

if TYPE_CHECKING:  # the declarations module imports this one; these are only annotations
    from extractor.analysis.facts import Site
    from extractor.prose.constraints import AtomView

__all__ = ["attribute_keys", "config_attributes", "config_fields", "config_keys", "config_word"]

_BUILDERS = frozenset({"from_config", "from_dict", "from_hf_config", "from_json"})


def _keys_read(value: ast.expr, source: str) -> tuple[str, ...]:
    """The keys ``value`` reads from dict ``source``: ``get_from_keys(config, ["a", "b"])``,
    ``config.get("a", d)``, ``config["a"]``; a helper handed ``config`` and a list of keys too."""
    node = value
    read = key_read(node)
    if read is not None and read[0] == source and read[1] != "pop":
        return (read[2],)
    if not isinstance(node, ast.Call):
        return ()
    if not any(isinstance(a, ast.Name) and a.id == source for a in node.args):
        return ()
    for arg in node.args:
        if isinstance(arg, ast.List | ast.Tuple) and arg.elts:
            keys = [e.value for e in arg.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if len(keys) == len(arg.elts):
                return tuple(keys)
    return ()


def _self_attribute(node: ast.AST) -> str | None:
    """``self.x`` for a node that reads or writes attribute ``x`` of ``self``; else None."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return f"self.{node.attr}"
    return None


def _params(func: ast.FunctionDef) -> list[str]:
    return [a.arg for a in [*func.args.posonlyargs, *func.args.args][1:]]


def _class_fields(cls: ast.ClassDef) -> dict[str, tuple[str, ...]]:
    methods = {s.name: s for s in cls.body if isinstance(s, ast.FunctionDef)}
    init = methods.get("__init__")
    if init is None:
        return {}
    params = _params(init)
    out: dict[str, tuple[str, ...]] = {}
    for name in sorted(_BUILDERS & set(methods)):
        builder = methods[name]
        args = _params(builder)
        if not args:
            continue
        source = args[0]
        local: dict[str, tuple[str, ...]] = {}
        for node in ast.walk(builder):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                keys = _keys_read(node.value, source)
                if keys:
                    local[node.targets[0].id] = keys
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "cls"):
                continue
            passed = [(p, a) for p, a in zip(params, node.args, strict=False)]
            passed += [(k.arg, k.value) for k in node.keywords if k.arg is not None]
            for param, arg in passed:
                keys = local.get(arg.id, ()) if isinstance(arg, ast.Name) else _keys_read(arg, source)
                if keys:
                    out.setdefault(param, keys)
    if not out:
        return out
    # ``self.x = x`` in the constructor: the attribute holds the same value.
    for node in ast.walk(init):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and (attr := _self_attribute(node.targets[0])) is not None
            and isinstance(node.value, ast.Name)
            and node.value.id in out
        ):
            out.setdefault(attr, out[node.value.id])
    return out


def config_fields(module: ast.Module) -> Mapping[str, Mapping[str, tuple[str, ...]]]:
    """Top-level class -> parameter (``bits``) or attribute (``self.bits``) -> the config keys its
    ``from_config`` fills it from, for the classes that have such a builder. Never raises."""
    out: dict[str, dict[str, tuple[str, ...]]] = {}
    try:
        for stmt in module.body:
            if isinstance(stmt, ast.ClassDef):
                found = _class_fields(stmt)
                if found:
                    out[stmt.name] = found
    except (AttributeError, TypeError, RecursionError):
        return {}
    return out


def config_keys(
    site: Site, deciding: Sequence[AtomView], fields: Mapping[str, Mapping[str, tuple[str, ...]]]
) -> tuple[str, ...]:
    """The config keys the deciding tests of a site read, when its class is built by a
    ``from_config`` that fills what they test from those keys; empty otherwise."""
    by_name = fields.get(site.in_class or "")
    if not by_name or not deciding:
        return ()
    keys: list[str] = []
    for v in deciding:
        if v.expr is None:
            return ()
        for node in ast.walk(v.expr):
            if (attr := _self_attribute(node)) is not None:
                found = by_name.get(attr, ())
            elif isinstance(node, ast.Name) and site.qualname.endswith(".__init__"):
                found = by_name.get(node.id, ())  # a parameter is the value only in the constructor
            else:
                continue
            keys.extend(k for k in found if k not in keys)
    return tuple(keys)


def config_attributes(module: ast.Module) -> Mapping[str, Mapping[str, str]]:
    """Top-level class -> ``self.x`` -> the model config key its constructor copies into it
    (``self.num_mtp_layers = getattr(config, "num_nextn_predict_layers", 1)``), read off the
    constructor's own statements; an attribute it assigns twice is left out. Never raises."""
    out: dict[str, dict[str, str]] = {}
    try:
        for stmt in module.body:
            if not isinstance(stmt, ast.ClassDef):
                continue
            init = next(
                (s for s in stmt.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None
            )
            if init is None:
                continue
            found: dict[str, str | None] = {}
            for line in init.body:
                if not (isinstance(line, ast.Assign | ast.AnnAssign) and line.value is not None):
                    continue
                attr = _self_attribute(line.targets[0] if isinstance(line, ast.Assign) else line.target)
                if attr is None:
                    continue
                found[attr] = None if attr in found else config_read(line.value)
            kept = {a: k for a, k in found.items() if k is not None}
            if kept:
                out[stmt.name] = kept
    except (AttributeError, TypeError, RecursionError):
        return {}
    return out


def attribute_keys(deciding: Sequence[AtomView], by_attr: Mapping[str, str]) -> tuple[str, ...]:
    """The config keys of a check whose every test compares what the constructor of the site's
    class copied from the model's config (``by_attr``: ``self.x`` -> key, see
    :func:`config_attributes`) with constants or with each other (``self.num_mtp_layers != 1``):
    the checkpoint's values decide it. Empty when some operand is anything else (a tensor's
    shape, a launch setting), where the config value is only one side of the story."""
    if not by_attr or not deciding:
        return ()
    keys: list[str] = []
    for v in deciding:
        if v.expr is None:
            return ()
        for node in ast.walk(v.expr):
            if (attr := _self_attribute(node)) is not None:
                key = by_attr.get(attr)
                if key is None:
                    return ()
                if key not in keys:
                    keys.append(key)
            elif (isinstance(node, ast.Name) and node.id != "self") or isinstance(
                node, ast.Call | ast.Subscript | ast.Lambda | ast.NamedExpr
            ):
                return ()
    return tuple(keys)


def config_word(site: Site) -> str:
    """What the checkpoint calls the config such a class is built from."""
    return "quantization_config" if "quant" in site.path.lower() else "config"
