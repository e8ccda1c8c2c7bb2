"""Other modules of the target, reached through a file's imports: where a raised class or helper is defined.

``from sglang.srt.errors import BadInput`` binds ``BadInput`` to a class of another file; ``raise
BadInput(...)`` then resolves the way a class of the same file does, read from that file's own
tree. Files are found by path only: an absolute import is looked for under each folder above the
importing file that holds the import's top package (``python/`` for ``sglang.srt.errors`` imported
in ``python/sglang/...``), a relative one beside it. Packages outside the target (``torch``) are
never looked for.

The other files come from a :class:`TargetFiles` the caller provides (the run engine reads blobs of
the analysed commit and records each path it was asked about, so a cached result is recomputed
when a file it read changes); :class:`~extractor.analysis.resolver.OtherModules` keeps their
resolvers per process, keyed by path and blob, so the answer never depends on which files were
analysed before.
"""

from __future__ import annotations

import ast
import posixpath
from dataclasses import dataclass
from typing import Protocol

from extractor.analysis.walk import own_statements


class TargetFiles(Protocol):
    """The files of the analysed commit, by path."""

    def blob_of(self, path: str) -> str | None:
        """The blob id of the regular file at ``path``, ``None`` when there is none (the answer is
        what a cached result depends on)."""

    def read_blob(self, blob: str) -> bytes:
        """The bytes of a blob :meth:`blob_of` named."""


@dataclass(frozen=True)
class Imported:
    """What an import binds a name to: ``module`` (dotted, after ``level`` leading dots) or its ``name``."""

    module: str
    name: str | None
    level: int


def imports_of(tree: ast.Module) -> dict[str, Imported]:
    """Names the module-level imports bind (inside ``try``/``if`` blocks too; the last one wins)."""
    out: dict[str, Imported] = {}
    for stmt in own_statements(tree.body):
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    out[alias.asname] = Imported(alias.name, None, 0)
                else:
                    top = alias.name.split(".")[0]
                    out[top] = Imported(top, None, 0)
        elif isinstance(stmt, ast.ImportFrom):
            for alias in stmt.names:
                if alias.name != "*":
                    out[alias.asname or alias.name] = Imported(stmt.module or "", alias.name, stmt.level)
    return out


def module_paths(importer: str, module: str, level: int) -> list[str]:
    """Where the file of ``module`` may be, imported from the file at ``importer``, in the order tried."""
    parts = [p for p in module.split(".") if p]
    folder = posixpath.dirname(importer)
    bases: list[str] = []
    if level > 0:
        base = folder
        for _ in range(level - 1):
            if not base:
                return []
            base = posixpath.dirname(base)
        bases = [base]
    elif parts:
        # The folders above the importing file that hold the top package, innermost first.
        chain = folder.split("/") if folder else []
        for i in range(len(chain), -1, -1):
            if i < len(chain) and chain[i] == parts[0]:
                bases.append("/".join(chain[:i]))
    out: list[str] = []
    for base in bases:
        stem = posixpath.join(base, *parts) if parts else base
        if parts:
            out.append(stem + ".py")
        out.append(posixpath.join(stem, "__init__.py"))
    return out
