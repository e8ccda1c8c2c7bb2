"""A repository at one resolved commit: its tree, classified by scope, and its blobs read in bulk.

Nothing is ever checked out: files are read from git objects at the resolved commit, so a
symlink in the target is a blob holding its link text, never a path this process follows.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Generator, Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import TracebackType
from typing import IO

import git

from extractor.config import Scope
from extractor.errors import ExtractorError
from extractor.reasons import Reason
from extractor.source.clones import git_message, git_options, rev_parse, unknown_commit
from extractor.source.scope import dir_in_scope, in_scope
from extractor.source.urls import HEX40, validate_commitish

SkippedPath = tuple[str, Reason, str]
"""A path left out of the analysis, its reason code and the reason in words."""

__all__ = [
    "MODE_GITLINK",
    "MODE_SYMLINK",
    "REGULAR_MODES",
    "PathChange",
    "SkippedPath",
    "Target",
    "TargetFile",
]

MODE_SYMLINK = 0o120000
MODE_GITLINK = 0o160000  # a submodule: a commit of another repository, no content here
REGULAR_MODES = frozenset({0o100644, 0o100755, 0o100664})


@dataclass(frozen=True)
class TargetFile:
    """One regular file of the target at the resolved commit."""

    path: str  # repo-relative, '/' separated
    blob_sha: str  # 40-hex git blob sha
    mode: int  # git file mode, e.g. 0o100644; 0o120000 = symlink (never followed; callers skip it)
    size: int


@dataclass(frozen=True)
class PathChange:
    """One entry of ``git diff-tree --find-renames`` between two commits.

    ``status`` is git's letter: ``M`` modified, ``A`` added, ``D`` deleted, ``R`` renamed,
    ``T`` type changed (``C`` copied never appears: copies are not searched for).
    ``old_path`` is None for an addition, ``new_path`` None for a deletion.
    """

    status: str
    old_path: str | None
    new_path: str | None


@dataclass(frozen=True)
class _Entry:
    path: str
    mode: int
    kind: str  # blob / commit (submodule)
    sha: str
    size: int


class Target:
    """A repository at one resolved commit. Reads git objects only; never checks anything out.

    Holds git processes open (GitPython's cat-file): use it as a context manager or call
    :meth:`close`. It is not meant to cross process boundaries; a worker process can reopen it
    cheaply with ``open_target(str(target.git_dir), target.sha)``.
    """

    def __init__(self, source: str, sha: str, repo: git.Repo) -> None:
        self.source = source
        self.sha = sha
        self._repo = repo
        self._classified: dict[Scope, tuple[list[TargetFile], list[SkippedPath]]] = {}

    def __repr__(self) -> str:
        return f"Target(source={self.source!r}, sha={self.sha!r})"

    def __enter__(self) -> Target:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """End the git processes this target keeps open."""
        self._repo.close()

    @property
    def git_dir(self) -> Path:
        """The local git directory objects are read from (the cached clone for a URL)."""
        return Path(self._repo.git_dir)

    @cached_property
    def _tree(self) -> list[_Entry]:
        try:
            raw: bytes = self._repo.git.ls_tree(
                "-r", "-z", "-l", "--full-tree", self.sha, stdout_as_string=False
            )
        except git.GitCommandError as exc:
            raise ExtractorError(
                self.sha, f"cannot list the tree in {self.source}: {git_message(exc)}"
            ) from None
        entries: list[_Entry] = []
        for record in raw.split(b"\0"):
            if not record:
                continue
            meta, _, path = record.partition(b"\t")
            mode, kind, sha, size = meta.split()
            entries.append(
                _Entry(
                    # Non-UTF-8 names survive as lone surrogates; files() reports them as skipped.
                    path=path.decode("utf-8", errors="surrogateescape"),
                    mode=int(mode, 8),
                    kind=kind.decode("ascii"),
                    sha=sha.decode("ascii"),
                    size=int(size) if size.isdigit() else 0,
                )
            )
        entries.sort(key=lambda e: e.path)
        return entries

    @cached_property
    def _by_path(self) -> dict[str, _Entry]:
        return {e.path: e for e in self._tree}

    def _classify(self, scope: Scope) -> tuple[list[TargetFile], list[SkippedPath]]:
        cached = self._classified.get(scope)
        if cached is None:
            cached = self._classified[scope] = self._classify_uncached(scope)
        return cached

    def _classify_uncached(self, scope: Scope) -> tuple[list[TargetFile], list[SkippedPath]]:
        files: list[TargetFile] = []
        skipped: list[SkippedPath] = []
        for e in self._tree:
            if e.mode == MODE_GITLINK:
                if dir_in_scope(e.path, scope):
                    skipped.append((e.path, Reason.SUBMODULE, "submodule"))
                continue
            if not in_scope(e.path, scope):
                continue
            if e.mode == MODE_SYMLINK:
                skipped.append((e.path, Reason.SYMLINK, "symlink"))
            elif e.mode not in REGULAR_MODES or e.kind != "blob":
                skipped.append((e.path, Reason.NOT_REGULAR, f"not a regular file (mode {e.mode:o})"))
            elif not _is_utf8(e.path):
                skipped.append(
                    (
                        e.path.encode("utf-8", "surrogateescape").decode("utf-8", "replace"),
                        Reason.PATH_NOT_UTF8,
                        "path is not valid UTF-8",
                    )
                )
            else:
                files.append(TargetFile(path=e.path, blob_sha=e.sha, mode=e.mode, size=e.size))
        return files, skipped

    def files(self, scope: Scope) -> list[TargetFile]:
        """In-scope regular files sorted by path; symlinks and submodules are left out (see :meth:`skipped`).

        Scope globs decide what is in scope (default: ``.py`` files under the package folders).
        """
        return list(self._classify(scope)[0])

    def skipped(self, scope: Scope) -> list[SkippedPath]:
        """In-scope paths that are not analysed, with the reason code and why in words: ``symlink``, ``submodule``, ..."""
        return list(self._classify(scope)[1])

    def read(self, blob_sha: str) -> bytes:
        """The raw bytes of one blob."""
        _check_object_id(blob_sha)
        try:
            stream = self._repo.odb.stream(bytes.fromhex(blob_sha))
        except ValueError as exc:
            raise ExtractorError(blob_sha, f"no such object in {self.source}: {exc}") from None
        data: bytes = stream.read()
        return data

    def read_many(self, blob_shas: Iterable[str]) -> Generator[tuple[str, bytes], None, None]:
        """``(sha, bytes)`` for each blob, in the order given, through one ``git cat-file --batch``.

        The ids are written to git from a thread while this generator reads the answers, so git
        never waits on a full pipe. Closing the generator early ends the git process.
        """
        shas = list(blob_shas)
        for sha in shas:
            _check_object_id(sha)
        if not shas:
            return
        proc = subprocess.Popen(
            [
                git.Git.GIT_PYTHON_GIT_EXECUTABLE or "git",
                *git_options(str(self._repo.git_dir)),
                "cat-file",
                "--batch",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert proc.stdin is not None and proc.stdout is not None
        writer = threading.Thread(target=_write_ids, args=(proc.stdin, shas), daemon=True)
        writer.start()
        try:
            out = proc.stdout
            for sha in shas:
                header = out.readline()
                parts = header.split()
                if len(parts) != 3:
                    what = (
                        "missing" if header.endswith(b" missing\n") else f"unexpected reply {header[:80]!r}"
                    )
                    raise ExtractorError(sha, f"cannot read object from {self.source}: {what}")
                size = int(parts[2])
                data = out.read(size)
                out.read(1)  # the newline after each object
                if len(data) != size:
                    raise ExtractorError(sha, f"cannot read object from {self.source}: truncated")
                yield sha, data
        finally:
            proc.kill()
            proc.wait()
            proc.stdout.close()
            writer.join()

    def read_path(self, path: str) -> bytes | None:
        """The content of the regular file at ``path`` in this commit; None if there is none.

        A symlink or submodule at ``path`` also gives None: a link is never resolved.
        """
        entry = self._by_path.get(path.strip("/"))
        if entry is None or entry.mode not in REGULAR_MODES or entry.kind != "blob":
            return None
        return self.read(entry.sha)

    def resolve(self, commitish: str) -> str:
        """Another commit-ish of the same repository as a full commit sha."""
        validate_commitish(commitish)
        full, complaint = rev_parse(self._repo, commitish)
        if full is None:
            raise unknown_commit(commitish, self.source, complaint, fetched=False)
        return full

    def tree_changes(self, other_sha: str) -> list[PathChange]:
        """Every path that differs between this commit and ``other_sha`` (renames followed), by path."""
        other = self.resolve(other_sha)
        try:
            raw: bytes = self._repo.git.diff_tree(
                "-r", "-z", "--name-status", "--find-renames", "--no-ext-diff", "--no-textconv",
                self.sha, other, stdout_as_string=False,
            )  # fmt: skip
        except git.GitCommandError as exc:
            raise ExtractorError(other_sha, f"cannot compare with {self.sha}: {git_message(exc)}") from None
        fields = [f.decode("utf-8", errors="surrogateescape") for f in raw.split(b"\0")]
        changes: list[PathChange] = []
        i = 0
        while i < len(fields) and fields[i]:
            status = fields[i][0]
            if status in "RC":
                old, new = fields[i + 1], fields[i + 2]
                changes.append(PathChange("R" if status == "R" else "C", old, new))
                i += 3
                continue
            path = fields[i + 1]
            if status == "A":
                changes.append(PathChange("A", None, path))
            elif status == "D":
                changes.append(PathChange("D", path, None))
            else:
                changes.append(PathChange(status, path, path))
            i += 2
        changes.sort(key=lambda c: c.old_path or c.new_path or "")
        return changes

    def changed_paths(self, other_sha: str) -> dict[str, str | None]:
        """Paths of this commit that differ at ``other_sha``: path here -> path there, None if deleted.

        A modified file maps to itself, a renamed one (``git diff --find-renames``) to its new
        path. Files added at ``other_sha`` have no path here and are not keys (see
        :meth:`tree_changes`).
        """
        return {c.old_path: c.new_path for c in self.tree_changes(other_sha) if c.old_path is not None}


def _write_ids(stdin: IO[bytes], shas: list[str]) -> None:
    try:
        stdin.write("".join(f"{s}\n" for s in shas).encode("ascii"))
        stdin.close()
    except (BrokenPipeError, ValueError, OSError):
        pass  # the reader gave up and killed git: nothing left to tell it


def _check_object_id(sha: str) -> None:
    if not isinstance(sha, str) or not HEX40.match(sha):
        raise ExtractorError(repr(sha), "not a 40-hex object id")


def _is_utf8(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
