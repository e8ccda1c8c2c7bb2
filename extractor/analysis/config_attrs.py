"""The attributes a model class keeps from its checkpoint's config.

``self.visual = None`` in the ``else`` of ``if vision_config is not None:``, where ``vision_config
= getattr(config, "vision_config", None)``; ``self.use_bias = config.attention_bias``: a later
``if self.visual is None: raise`` in another method of the class checks what the checkpoint's
config.json declares, not the server's own state. An attribute counts only when every store of it
in the class is such a read, or sits under a test of one, of one and the same key.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from extractor.analysis.config_read import config_read
from extractor.analysis.walk import NEW_SCOPE, child_blocks, read_path

__all__ = ["config_attributes"]


def config_attributes(cls: ast.ClassDef) -> tuple[tuple[str, ...], ...]:
    """``(attribute, config key, ...)`` of each attribute of ``cls`` filled from config keys."""
    found: dict[str, set[tuple[str, ...]]] = {}
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            _Method(found).visit(stmt.body, [])
        elif isinstance(stmt, ast.Assign | ast.AnnAssign):
            # A class-level default is a value no config gave.
            for target in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
                if isinstance(target, ast.Name):
                    found.setdefault(target.id, set()).add(())
    return tuple(
        (attr, *keys)
        for attr, stores in sorted(found.items())
        if len(stores) == 1 and (keys := next(iter(stores)))
    )


class _Method:
    """The stores of one method: its locals read from the config, and the tests around each store."""

    def __init__(self, found: dict[str, set[tuple[str, ...]]]) -> None:
        self.found = found
        self.bound: dict[str, str] = {}

    def key_of(self, node: ast.expr) -> str | None:
        """The config key a read gives: ``config.k``, ``getattr(config, "k", d)``, a local read
        from the config, or a key below one (``arch.use_x`` of ``arch = config.arch_config``)."""
        key = config_read(node)
        if key is not None:
            return key
        root, parts = read_path(node)
        if root is None:
            return None
        if root in self.bound:
            return parts[-1] if parts else self.bound[root]
        # ``config.arch_config.use_x``: the last key below the config object.
        return parts[-1] if len(parts) >= 2 and config_read(_first_read(node)) is not None else None

    def keys_of(self, node: ast.expr) -> tuple[str, ...]:
        """The keys ``node`` reads, each whole read once (not also the reads inside it)."""
        inner: set[int] = set()
        keys: list[str] = []
        for n in ast.walk(node):
            if id(n) in inner or not isinstance(n, ast.expr):
                continue
            key = self.key_of(n)
            if key is not None:
                keys.append(key)
                inner.update(id(m) for m in ast.walk(n))
        return tuple(sorted(set(keys)))

    def visit(self, body: Sequence[ast.stmt], tests: list[ast.expr]) -> None:
        for stmt in body:
            if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in targets:
                    self.store(target, stmt.value, tests)
            elif isinstance(stmt, ast.If):
                self.visit(stmt.body, [*tests, stmt.test])
                self.visit(stmt.orelse, [*tests, stmt.test])
            elif isinstance(stmt, ast.AugAssign):
                self.store(stmt.target, None, tests)
            elif not isinstance(stmt, NEW_SCOPE):
                # A loop, ``with``, ``try`` or ``match``: its stores sit under the same tests.
                for block in child_blocks(stmt):
                    self.visit(block, tests)

    def store(self, target: ast.expr, value: ast.expr | None, tests: list[ast.expr]) -> None:
        if isinstance(target, ast.Tuple | ast.List):
            for elt in target.elts:
                self.store(elt, None, tests)
            return
        key = self.key_of(value) if value is not None else None
        if isinstance(target, ast.Name):
            if key is not None and not tests:
                self.bound.setdefault(target.id, key)
            return
        if not (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == "self"
        ):
            return
        if key is not None:
            self.found.setdefault(target.attr, set()).add((key,))
            return
        # A value the innermost test of config keys picks (``if vision_config is not None:
        # self.visual = ... else: self.visual = None``).
        keys: tuple[str, ...] = ()
        for test in reversed(tests):
            keys = self.keys_of(test)
            if keys:
                break
        self.found.setdefault(target.attr, set()).add(keys)


def _first_read(node: ast.expr) -> ast.expr:
    """``config.arch_config`` of ``config.arch_config.use_x``: the read one below the root."""
    while isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
        node = node.value
    return node
