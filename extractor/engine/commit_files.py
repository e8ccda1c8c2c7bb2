"""The Python files of the analysed commit, as the analysis reads other modules of the target.

A worker asks for a module by path (:meth:`CommitFiles.blob_of`) and reads its blob from git in
its own process. Every path asked about is noted in the current file's reads, beside the knowledge
answers: a cached payload is reused only while each of those paths still holds the same blob (or
still holds none), so an edit of a module that defines an exception class recomputes the files
that raise it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from extractor.engine.read_kinds import ReadKind

if TYPE_CHECKING:
    from extractor.source.blobs import Target


class CommitFiles:
    """``path -> blob`` of one commit's Python files; blobs are read through a git process per process."""

    def __init__(self, git_dir: str, sha: str, blobs: Mapping[str, str]) -> None:
        self._git_dir = git_dir
        self._sha = sha
        self.blobs = dict(blobs)
        self.reads: dict[tuple[str, str, str], Any] | None = None
        """Where lookups are noted while one file is analysed (``None``: not noted)."""
        self._target: Target | None = None
        self._pid = 0

    def __getstate__(self) -> dict[str, Any]:
        # A spawned worker opens its own git process; open ones never cross a process boundary.
        return {**self.__dict__, "_target": None, "_pid": 0, "reads": None}

    def blob_of(self, path: str) -> str | None:
        blob = self.blobs.get(path)
        if self.reads is not None:
            self.reads[(ReadKind.MODULE.value, path, "")] = blob
        return blob

    def read_blob(self, blob: str) -> bytes:
        if self._target is None or self._pid != os.getpid():
            from extractor.source.git import open_target

            # After a fork the parent's git processes are not this process's to use.
            self._target = open_target(self._git_dir, self._sha)
            self._pid = os.getpid()
        return self._target.read(blob)

    def close(self) -> None:
        if self._target is not None and self._pid == os.getpid():
            self._target.close()
        self._target = None


def commit_files(target: Target) -> CommitFiles:
    """The commit's Python files (test folders left out, as in every scope) for the analysis to read."""
    from extractor.config import Scope

    every = target.files(Scope(include=("**/*.py",), exclude=()))
    return CommitFiles(str(target.git_dir), target.sha, {f.path: f.blob_sha for f in every})
