"""What the cache folder holds (``cache info``) and emptying it (``cache clean``).

The folder holds bare clones of URL sources (``repos/``) and per-file results, one namespace per
extractor version and scope (``results/<namespace>/``). Deleting any of it is always safe: it is
rebuilt on the next run. ``--older-than`` removes only what was not used for that long (a
namespace's ``.last-used`` marker, a clone's newest file).
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from extractor.engine.cache import _LAST_USED, _RESULTS
from extractor.errors import ExtractorError

__all__ = ["CacheEntry", "CacheUsage", "clean", "usage"]

_REPOS = "repos"


@dataclass
class CacheEntry:
    """One clone or result namespace."""

    kind: str  # "clone" or "results"
    path: Path
    bytes: int
    files: int
    last_used: float  # Unix time


@dataclass
class CacheUsage:
    """The entries of a cache folder (or those a clean removed)."""

    root: Path
    entries: list[CacheEntry] = field(default_factory=list)
    removed: bool = False

    @property
    def bytes(self) -> int:
        return sum(e.bytes for e in self.entries)

    def to_json(self) -> dict[str, Any]:
        return {
            "cacheDir": str(self.root),
            "removed": self.removed,
            "bytes": self.bytes,
            "entries": [
                {
                    "kind": e.kind,
                    "path": str(e.path),
                    "bytes": e.bytes,
                    "files": e.files,
                    "lastUsed": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(e.last_used)),
                }
                for e in self.entries
            ],
        }


def _walk(folder: Path) -> tuple[int, int, float]:
    size = count = 0
    newest = 0.0
    for dirpath, _dirs, names in os.walk(folder):
        for name in names:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            size += st.st_size
            count += 1
            newest = max(newest, st.st_mtime)
    return size, count, newest


def _entries(root: Path) -> list[CacheEntry]:
    entries: list[CacheEntry] = []
    repos = root / _REPOS
    if repos.is_dir():
        for clone in sorted(repos.iterdir()):
            if clone.is_dir():
                size, count, newest = _walk(clone)
                entries.append(CacheEntry("clone", clone, size, count, newest or clone.stat().st_mtime))
    results = root / _RESULTS
    if results.is_dir():
        for ns in sorted(results.iterdir()):
            if not ns.is_dir():
                continue
            size, count, newest = _walk(ns)
            marker = ns / _LAST_USED
            last = marker.stat().st_mtime if marker.exists() else (newest or ns.stat().st_mtime)
            entries.append(CacheEntry("results", ns, size, count, last))
    return entries


def usage(root: Path) -> CacheUsage:
    if root.exists() and not root.is_dir():
        raise ExtractorError(str(root), "not a directory")
    return CacheUsage(root, _entries(root) if root.is_dir() else [])


def clean(root: Path, *, older_than_days: float | None, dry_run: bool = False) -> CacheUsage:
    """Remove every entry (or those unused for ``older_than_days``); return what was (or would be) removed."""
    if older_than_days is not None and older_than_days < 0:
        raise ExtractorError("--older-than", f"must not be negative, got {older_than_days}")
    found = usage(root)
    cutoff = time.time() - older_than_days * 86400 if older_than_days is not None else None
    gone = [e for e in found.entries if cutoff is None or e.last_used < cutoff]
    if not dry_run:
        for entry in gone:
            shutil.rmtree(entry.path, ignore_errors=True)
    return CacheUsage(root, gone, removed=not dry_run)
