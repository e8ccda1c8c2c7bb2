"""The analysed repository: validate where it comes from, resolve a commit-ish, list and read blobs.

A *source* is either a URL (``https://``, ``http://``, ``ssh://``, ``git://``, ``file://`` or
scp-like ``user@host:path``) or a local path to a git repository (a work tree with ``.git``, or a
bare directory). Local repositories are read in place. URLs are cloned once, bare, into
``<cache_dir>/repos/<name>-<hash of url>.git`` and reused; the clone is fetched only when the
requested commit is missing from it.

Nothing is ever checked out: files are read from git objects at the resolved commit, so a
symlink in the target is a blob holding its link text, never a path this process follows.

Both the source and the commit-ish are checked here *before* any git command or GitPython call
sees them (:func:`validate_source`, :func:`validate_commitish`): git's remote helpers
(``ext::``, ``fd::``, ``<transport>::``), option-like values, control characters and
environment-variable references are refused, because each has been a way to run commands through
``git clone``/``git fetch`` or through GitPython's URL handling (CVE-2022-24439, the option
smuggling advisories up to GitPython 3.1.51, the env-var expansion of clone URLs).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Generator, Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import TracebackType
from typing import IO
from urllib.parse import SplitResult, urlsplit

import git

from extractor.config import Scope
from extractor.engine.cache import default_cache_dir
from extractor.errors import ExtractorError
from extractor.source.scope import dir_in_scope, in_scope

__all__ = [
    "ALLOWED_SCHEMES",
    "PathChange",
    "Target",
    "TargetFile",
    "default_cache_dir",
    "is_url",
    "open_target",
    "validate_commitish",
    "validate_source",
]

ALLOWED_SCHEMES: tuple[str, ...] = ("https", "http", "ssh", "git", "file")

MODE_SYMLINK = 0o120000
MODE_GITLINK = 0o160000  # a submodule: a commit of another repository, no content here
REGULAR_MODES = frozenset({0o100644, 0o100755, 0o100664})

# Every git process started for a clone or fetch gets these: never prompt for credentials (a
# missing repository on a forge would otherwise wait for a username), allow only the transports a
# source may name (git itself then refuses ext::/fd:: even if something slipped through), and give
# up on a transfer that has stalled instead of hanging forever.
_GIT_NETWORK_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ALLOW_PROTOCOL": ":".join(ALLOWED_SCHEMES),
    "GIT_HTTP_LOW_SPEED_LIMIT": "1000",
    "GIT_HTTP_LOW_SPEED_TIME": "60",
}

_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f]")
# git picks a remote helper for "<transport>::<address>" when the prefix is made of URL-scheme
# characters (transport.c); "ext::" runs an arbitrary command, "fd::" talks over a descriptor.
_TRANSPORT_PREFIX = re.compile(r"^[A-Za-z0-9][A-Za-z0-9+.-]*::")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
# scp-like syntax: git treats "[user@]host:path" as ssh when the first ":" comes before any "/".
_SCP_LIKE = re.compile(r"^(?:(?P<user>[^@/:]*)@)?(?P<host>\[[^\]/]*\]|[^@/:\[\]]*):(?P<path>.*)$", re.DOTALL)
# "%NAME%" is how Windows spells a variable; "%2F"-style percent-escapes are left alone.
_PERCENT_VAR = re.compile(r"%([A-Za-z_][A-Za-z0-9_]*)%")
_PERCENT_ESCAPE = re.compile(r"^[0-9A-Fa-f]{2}$")
_HEX40 = re.compile(r"^[0-9a-f]{40}$")
# A commit-ish is a hex id or a ref name, optionally followed by ~N / ^N steps. Nothing else
# (ranges, ":path", "@{...}", "^{...}", options) reaches git.
_COMMITISH = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._/-]*(?:[~^][0-9]{0,6})*$")
_MAX_COMMITISH = 256


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


# ---------------------------------------------------------------------------------------------
# Validation


def _refuse(value: str, why: str) -> ExtractorError:
    return ExtractorError(repr(value) if _CONTROL_CHARS.search(value) else value, why)


def is_url(source: str) -> bool:
    """Whether a (valid) source names a remote to clone rather than a local repository path."""
    if _SCHEME.match(source):
        return True
    scp = _SCP_LIKE.match(source)
    # As in git: "host:path" is ssh only if the ":" comes before any "/"; "./a:b" is a path.
    return scp is not None and bool(scp.group("host"))


def _check_env_references(source: str) -> None:
    if "$" in source:
        raise _refuse(source, "environment-variable references ('$') are not allowed in a source")
    for m in _PERCENT_VAR.finditer(source):
        if not _PERCENT_ESCAPE.match(m.group(1)):
            raise _refuse(
                source, f"environment-variable references ('%{m.group(1)}%') are not allowed in a source"
            )


def _check_url(source: str, parts: SplitResult) -> None:
    scheme = parts.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        raise _refuse(source, f"unsupported URL scheme {scheme!r} (use one of {', '.join(ALLOWED_SCHEMES)})")
    if any(ch.isspace() for ch in source):
        raise _refuse(source, "a URL cannot contain whitespace (percent-encode it)")
    for m in re.finditer(r"%(.{0,2})", source):
        if not _PERCENT_ESCAPE.match(m.group(1)):
            raise _refuse(source, "a '%' in a URL must start a percent-escape such as %20")
    try:
        host = parts.hostname
        username = parts.username
        _ = parts.port  # raises ValueError for a non-numeric port
    except ValueError as exc:
        raise _refuse(source, f"malformed URL: {exc}") from None
    if scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise _refuse(source, "a file:// URL names a local path: file:///absolute/path")
        if not parts.path.startswith("/"):
            raise _refuse(source, "a file:// URL needs an absolute path: file:///absolute/path")
        return
    if not host:
        raise _refuse(source, "the URL has no host")
    # ssh would read "-oProxyCommand=..." as an option; git refuses it too, we refuse it first.
    if host.startswith("-") or (username or "").startswith("-"):
        raise _refuse(source, "a host or user name cannot start with '-'")
    if not parts.path.strip("/"):
        raise _refuse(source, "the URL names no repository path")


def _check_scp(source: str, m: re.Match[str]) -> None:
    user, host, path = m.group("user") or "", m.group("host"), m.group("path")
    if any(ch.isspace() for ch in source):
        raise _refuse(source, "an scp-like URL cannot contain whitespace")
    if user.startswith("-") or host.startswith("-"):
        raise _refuse(source, "a host or user name cannot start with '-'")
    if not path.strip("/") or path.startswith("-"):
        raise _refuse(source, "an scp-like URL needs a repository path after ':' (user@host:owner/repo.git)")


def validate_source(source: str) -> None:
    """Refuse any source that is not a plain URL of an allowed scheme or a plain local path.

    Raises :class:`ExtractorError` (``where`` = the source) for: an empty value, control
    characters (NUL, newline, ...), a leading ``-`` (git would read an option such as
    ``--upload-pack=...``), git's remote-helper syntax ``<transport>::`` (``ext::``, ``fd::``),
    ``$``/``${...}``/``%VAR%`` environment-variable references, unknown URL schemes, and URLs
    whose host or user starts with ``-``. Local paths are not checked for existence here.
    """
    if not isinstance(source, str) or not source:
        raise ExtractorError(repr(source), "empty source: give a git URL or the path of a local repository")
    if _CONTROL_CHARS.search(source):
        raise _refuse(source, "control characters (NUL, newline, ...) are not allowed in a source")
    if source.startswith("-"):
        raise _refuse(source, "a source cannot start with '-' (it would be read as a git option)")
    if _TRANSPORT_PREFIX.match(source) or "::" in re.sub(r"\[[^\]]*\]", "", source):
        raise _refuse(source, "git remote-helper syntax '<transport>::' (ext::, fd::, ...) is not allowed")
    _check_env_references(source)
    if _SCHEME.match(source):
        _check_url(source, urlsplit(source))
        return
    scp = _SCP_LIKE.match(source)
    if scp is not None and scp.group("host"):
        if "@" not in source and scp.group("host").lower() in ALLOWED_SCHEMES:
            # "https:host/x" would go to an ssh host called "https": a mistyped URL, not a host.
            raise _refuse(source, "malformed URL: expected scheme://host/path")
        _check_scp(source, scp)


def validate_commitish(value: str) -> None:
    """Refuse anything but a hex id or a ref name with optional ``~N``/``^N`` steps.

    Raises :class:`ExtractorError` (``where`` = the value) for option-like values (``-x``,
    ``--output=...``), whitespace or control characters, ranges (``a..b``), ``rev:path``,
    reflog/peel syntax (``@{...}``, ``^{...}``) and malformed ref names.
    """
    if not isinstance(value, str) or not value:
        raise ExtractorError(repr(value), "empty commit-ish: give a sha, tag, branch or e.g. HEAD~1")
    if _CONTROL_CHARS.search(value) or any(ch.isspace() for ch in value):
        raise _refuse(value, "a commit-ish cannot contain whitespace or control characters")
    if value.startswith("-"):
        raise _refuse(value, "a commit-ish cannot start with '-' (it would be read as a git option)")
    if len(value) > _MAX_COMMITISH:
        raise _refuse(value[:40] + "...", f"a commit-ish is at most {_MAX_COMMITISH} characters")
    if ".." in value:
        raise _refuse(value, "revision ranges ('..') are not accepted: give one commit")
    if ":" in value:
        raise _refuse(value, "'rev:path' syntax is not accepted: give one commit")
    if "@{" in value or "{" in value or "}" in value:
        raise _refuse(value, "reflog and peel syntax ('@{...}', '^{...}') are not accepted")
    if not _COMMITISH.match(value):
        raise _refuse(
            value, "not a commit-ish: expected a hex sha, a tag or branch name, optionally with ~N or ^N"
        )
    name = re.split(r"[~^]", value, maxsplit=1)[0]
    if "//" in name or "/." in name or name.endswith(("/", ".", ".lock")):
        raise _refuse(value, "not a valid ref name")


# ---------------------------------------------------------------------------------------------
# Opening


def clone_dir_for(url: str, cache_dir: Path) -> Path:
    """Where the bare clone of ``url`` lives: ``<cache_dir>/repos/<name>-<hash of url>.git``."""
    tail = re.split(r"[/:]", url.rstrip("/"))[-1]
    name = re.sub(r"[^A-Za-z0-9._-]", "_", tail.removesuffix(".git")).strip("._-")[:40] or "repo"
    digest = hashlib.sha256(url.encode("utf-8")).hexdigest()[:16]
    return cache_dir / "repos" / f"{name}-{digest}.git"


def _git_message(exc: git.GitCommandError) -> str:
    """git's own explanation, without GitPython's command-line dump (which may hold a URL)."""
    stderr = exc.stderr if isinstance(exc.stderr, str) else str(exc.stderr or "")
    stderr = stderr.strip().removeprefix("stderr:").strip().strip("'").strip()
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    # Progress chatter and advice are not the reason; ssh's own complaint ("ssh: connect to host
    # ... refused") has no prefix, so it is kept along with git's fatal:/error: lines.
    keep = [ln for ln in lines if not ln.startswith(("Cloning into", "hint:", "warning:", "remote: "))]
    keep = [ln for ln in keep if ln.startswith(("fatal:", "error:", "ssh:"))] or keep
    text = "; ".join(ln.removeprefix("fatal: ").removeprefix("error: ") for ln in keep[:3])
    return text or f"git exited with status {exc.status}"


def _git_options(git_dir: str) -> list[str]:
    """Global options for every git command run on a target repository.

    ``--git-dir``: name the repository instead of letting git discover it from a working
    directory; GitPython guesses that directory from the config, and a bare mirror with no config
    file (a copied object store) would send every command to its parent folder.
    ``--bare`` and ``core.fsmonitor=false``: only objects are read, so the work tree and index of
    a local clone are irrelevant, and must stay so: ``git diff-tree`` in a work tree runs the
    repository's ``core.fsmonitor`` command, a program named by a config we did not write.
    """
    return [f"--git-dir={git_dir}", "--bare", "-c", "core.fsmonitor=false"]


def _bind(repo: git.Repo) -> git.Repo:
    repo.git.set_persistent_git_options(git_dir=repo.git_dir, bare=True, c="core.fsmonitor=false")
    return repo


def _open_local(source: str) -> git.Repo:
    path = Path(source).expanduser()
    if not path.exists():
        raise ExtractorError(source, "no such repository: the path does not exist")
    try:
        # expand_vars=False: the path is used as given, "$X" is never looked up in the environment.
        repo = git.Repo(path, expand_vars=False)
    except git.NoSuchPathError:
        raise ExtractorError(source, "no such repository: the path does not exist") from None
    except git.InvalidGitRepositoryError:
        raise ExtractorError(source, "not a git repository (expected a clone or a bare mirror)") from None
    return _bind(repo)


def _clone(url: str, dest: Path) -> git.Repo:
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".partial", dir=dest.parent))
    except OSError as exc:
        raise ExtractorError(
            str(dest.parent), f"cannot create the clone cache: {exc.strerror or exc}"
        ) from None
    try:
        # The URL was validated above; GitPython's own protocol/option checks stay on (no
        # allow_unsafe_*), and no multi_options are passed.
        git.Repo.clone_from(url, tmp, bare=True, env=dict(_GIT_NETWORK_ENV)).close()
    except git.GitCommandError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise ExtractorError(url, f"could not clone: {_git_message(exc)}") from None
    except (git.UnsafeProtocolError, git.UnsafeOptionError) as exc:
        # Only reachable if validate_source let something through: GitPython's own check held.
        shutil.rmtree(tmp, ignore_errors=True)
        raise ExtractorError(url, f"refused by GitPython: {exc}") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    try:
        # Publish the finished clone in one step: a crash leaves a ".partial" folder, never a
        # half-cloned repository under the name later runs reuse.
        os.rename(tmp, dest)
    except OSError as exc:
        # Usually another process published the same clone first: then use theirs.
        shutil.rmtree(tmp, ignore_errors=True)
        if not dest.is_dir():
            raise ExtractorError(str(dest), f"cannot store the clone: {exc.strerror or exc}") from None
    return _bind(git.Repo(dest, expand_vars=False))


def _open_cached_clone(url: str, cache_dir: Path) -> tuple[git.Repo, bool]:
    """The cached bare clone of ``url`` (cloned now if absent) and whether it was just cloned."""
    dest = clone_dir_for(url, cache_dir)
    if dest.exists():
        try:
            return _bind(git.Repo(dest, expand_vars=False)), False
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            # Not something we published (we rename finished clones into place): start over.
            shutil.rmtree(dest, ignore_errors=True)
    return _clone(url, dest), True


def _fetch(repo: git.Repo, url: str, commitish: str) -> None:
    """Bring the cached clone up to date with every branch and tag of its origin."""
    refspecs = ["+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"]
    try:
        repo.git.fetch("--quiet", "--", "origin", *refspecs, env=dict(_GIT_NETWORK_ENV))
    except git.GitCommandError as exc:
        raise ExtractorError(url, f"could not fetch: {_git_message(exc)}") from None
    if _HEX40.match(commitish) and _rev_parse(repo, commitish)[0] is None:
        # A commit no branch or tag reaches (an old PR head): ask for it by id. The server saying
        # no is not a network failure; the caller reports the commit as unknown.
        with contextlib.suppress(git.GitCommandError):
            repo.git.fetch("--quiet", "--", "origin", commitish, env=dict(_GIT_NETWORK_ENV))


def _rev_parse(repo: git.Repo, commitish: str) -> tuple[str | None, str]:
    """(full sha or None, git's complaint)."""
    try:
        out = repo.git.rev_parse("--verify", "--end-of-options", f"{commitish}^{{commit}}")
    except git.GitCommandError as exc:
        return None, _git_message(exc)
    sha = out.strip()
    return (sha, "") if _HEX40.match(sha) else (None, f"unexpected rev-parse output {sha!r}")


def _unknown(commitish: str, source: str, complaint: str, *, fetched: bool) -> ExtractorError:
    detail = ""
    if "ambiguous" in complaint:
        detail = " (the short sha is ambiguous: give more digits)"
    where = " even after fetching" if fetched else ""
    return ExtractorError(commitish, f"no such commit in {source}{where}{detail}")


def open_target(source: str, sha: str, *, cache_dir: Path | None = None, refresh: bool = False) -> Target:
    """Open ``source`` at commit-ish ``sha``, resolved to a full commit sha.

    Local paths are read in place; URLs are cloned (bare) into ``cache_dir`` (default
    :func:`default_cache_dir`) once and fetched only when the commit is missing, or always with
    ``refresh=True`` (for a moving name such as ``main`` that must be current). Every failure
    (refused source or commit-ish, missing path, not a repository, network error, unknown
    commit) is an :class:`ExtractorError`.
    """
    validate_source(source)
    validate_commitish(sha)
    if not is_url(source):
        repo = _open_local(source)
        full, complaint = _rev_parse(repo, sha)
        if full is None:
            repo.close()
            raise _unknown(sha, source, complaint, fetched=False)
        return Target(source, full, repo)
    repo, fresh = _open_cached_clone(source, cache_dir if cache_dir is not None else default_cache_dir())
    full, complaint = _rev_parse(repo, sha)
    # Fetch only for a commit the clone lacks: a branch or tag name that resolves uses the clone's
    # copy of it, so a cached run needs no network (pass a full sha to pin a commit exactly).
    up_to_date = fresh
    if (full is None or refresh) and not fresh:
        _fetch(repo, source, sha)
        full, complaint = _rev_parse(repo, sha)
        up_to_date = True
    if full is None:
        repo.close()
        raise _unknown(sha, source, complaint, fetched=up_to_date)
    return Target(source, full, repo)


# ---------------------------------------------------------------------------------------------
# Reading


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
        self._classified: dict[Scope, tuple[list[TargetFile], list[tuple[str, str]]]] = {}

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
                self.sha, f"cannot list the tree in {self.source}: {_git_message(exc)}"
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

    def _classify(self, scope: Scope) -> tuple[list[TargetFile], list[tuple[str, str]]]:
        cached = self._classified.get(scope)
        if cached is None:
            cached = self._classified[scope] = self._classify_uncached(scope)
        return cached

    def _classify_uncached(self, scope: Scope) -> tuple[list[TargetFile], list[tuple[str, str]]]:
        files: list[TargetFile] = []
        skipped: list[tuple[str, str]] = []
        for e in self._tree:
            if e.mode == MODE_GITLINK:
                if dir_in_scope(e.path, scope):
                    skipped.append((e.path, "submodule"))
                continue
            if not in_scope(e.path, scope):
                continue
            if e.mode == MODE_SYMLINK:
                skipped.append((e.path, "symlink"))
            elif e.mode not in REGULAR_MODES or e.kind != "blob":
                skipped.append((e.path, f"not a regular file (mode {e.mode:o})"))
            elif not _is_utf8(e.path):
                skipped.append(
                    (
                        e.path.encode("utf-8", "surrogateescape").decode("utf-8", "replace"),
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

    def skipped(self, scope: Scope) -> list[tuple[str, str]]:
        """In-scope paths that are not analysed, with why: ``symlink``, ``submodule``, ..."""
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
                *_git_options(str(self._repo.git_dir)),
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
        full, complaint = _rev_parse(self._repo, commitish)
        if full is None:
            raise _unknown(commitish, self.source, complaint, fetched=False)
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
            raise ExtractorError(other_sha, f"cannot compare with {self.sha}: {_git_message(exc)}") from None
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
    if not isinstance(sha, str) or not _HEX40.match(sha):
        raise ExtractorError(repr(sha), "not a 40-hex object id")


def _is_utf8(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
