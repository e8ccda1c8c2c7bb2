"""A check in a config class's ``from_config``: the checkpoint's own config is what it refuses.

``QuarkConfig.from_config(cls, config)`` is handed the checkpoint's ``quantization_config`` (a
model config class is handed its config.json): ``export_config = config.get("export")``, then
``kv_cache_group = export_config.get("kv_cache_group")``, then a raise when those entries do not
match. A value its test reads that comes, through the function's own assignments, from that
parameter is the checkpoint's, not a state of sglang's: the record names the entries read on the
way, and the fix is a checkpoint (or an export) whose config has them right.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from extractor.analysis.facts import Site
from extractor.analysis.walk import key_read
from extractor.prose.constraints import AtomView

__all__ = ["config_entries"]

_DEPTH = 6


def config_entries(site: Site, deciding: Sequence[AtomView]) -> tuple[str, ...] | None:
    """The keys of the config that the deciding tests of a ``from_config`` read (``export``,
    ``kv_cache_group``), when they read that config at all; None otherwise."""
    if not site.qualname.endswith(".from_config") or not (site.in_class or "").endswith("Config"):
        return None
    params = [p.name for p in site.params if p.name not in ("cls", "self")]
    if not params:
        return None
    handed = params[0]
    values: dict[str, list[ast.expr]] = {}
    for b in site.guard.bindings:
        if b.value is not None:
            values.setdefault(b.name, []).append(b.value)
    names = {
        n.id for v in deciding if v.expr is not None for n in ast.walk(v.expr) if isinstance(n, ast.Name)
    }
    keys: list[str] = []
    reached = handed in names
    seen: set[str] = set()
    for _ in range(_DEPTH):
        nxt: set[str] = set()
        for name in sorted(names - seen):  # in a fixed order: the keys come out in it
            seen.add(name)
            for value in values.get(name, ()):
                for node in ast.walk(value):
                    found = key_read(node)
                    if found is not None and found[2] not in keys:
                        keys.append(found[2])
                    if isinstance(node, ast.Name):
                        nxt.add(node.id)
        reached = reached or handed in nxt
        names = nxt
        if not names - seen:
            break
    if not reached:
        return None
    # Nearest the test first: the entry it looks at, then the ones it sits under.
    return tuple(keys) or None
