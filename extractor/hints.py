"""What a first run needs told: the next thing to try when it fails, and what it does not read.

* The pinned sha missing from a local clone: name it and suggest ``--sha HEAD`` (or a branch).
* The public repository out of reach: ``--source`` takes a local clone or mirror.
* A failed run leaves no empty cache folder it created.
* A scope that matches no file is an error naming the globs, not an empty dataset.
* ``--sha HEAD`` on a work tree with uncommitted changes reads the committed tree: say so. The
  work tree is compared by hashing its files as git would (no git command runs there, so no
  configured filter or fsmonitor program of that repository is started).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from extractor.config import DEFAULT_SOURCE
from extractor.errors import ExtractorError

if TYPE_CHECKING:
    from extractor.api import ExtractOptions
    from extractor.config import Scope

__all__ = ["explain", "missing_dirs", "remove_empty", "scope_is_empty", "worktree_note"]


def explain(exc: ExtractorError, options: ExtractOptions) -> ExtractorError:
    """``exc`` with the hint a new user needs appended, or ``exc`` itself."""
    from extractor.source.git import is_url

    what = exc.what
    if options.pinned and exc.where == options.sha and what.startswith("no such commit"):
        what = (
            f"{what}: this is the sha the tool is pinned to; pass --sha HEAD (or a branch or tag) "
            "to analyse what the clone has"
        )
    elif is_url(options.source) and what.startswith(("could not clone", "could not fetch")):
        default = " (the default source)" if options.source == DEFAULT_SOURCE else ""
        what = (
            f"{what}{default}; --source also takes a local clone or bare mirror of sglang "
            "(e.g. --source ~/src/sglang)"
        )
    if what == exc.what:
        return exc
    return ExtractorError(exc.where, what, exit_code=exc.exit_code)


def missing_dirs(folder: Path) -> list[Path]:
    """``folder`` and its ancestors that do not exist yet, deepest first."""
    missing: list[Path] = []
    current = folder.absolute()
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    return missing


def remove_empty(created: list[Path]) -> None:
    """Remove the folders of ``created`` (and their ``repos``/``results``) a failed run left empty."""
    for folder in created:
        for sub in ("repos", "results"):
            _rmdir(folder / sub)
        _rmdir(folder)


def _rmdir(path: Path) -> None:
    with contextlib.suppress(OSError):  # not empty, or not ours to remove
        path.rmdir()


def scope_is_empty(options: ExtractOptions, sha: str) -> ExtractorError:
    scope = options.scope
    globs = ", ".join(scope.include)
    excluded = f" once {', '.join(scope.exclude)} are left out" if scope.exclude else ""
    return ExtractorError(
        "--include",
        f"no file of {options.source} at {sha[:12]} matches {globs}{excluded}; "
        "check the globs (paths are relative to the repository root, ** spans folders)",
    )


def _blob_sha(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def worktree_note(source: str, sha: str, scope: Scope) -> str | None:
    """A note when ``source`` is a work tree at ``sha`` whose in-scope files differ from the commit."""
    from extractor.source.git import is_url, open_target

    if is_url(source):
        return None
    root = Path(source).expanduser()
    if not (root / ".git").exists():
        return None  # a bare repository or mirror: no work tree to differ
    try:
        with open_target(str(root), "HEAD") as head:
            if head.sha != sha:
                return None
            files = head.files(scope)
    except ExtractorError:
        return None
    changed = 0
    for f in files:
        local = root / f.path
        if os.path.islink(local) or _blob_sha(local) != f.blob_sha:
            changed += 1
    if not changed:
        return None
    return (
        f"{source}: {changed} file(s) in scope have uncommitted changes, which are not read; "
        f"the committed tree at {sha[:12]} is what was analysed (commit them to include them)"
    )
