"""Local repositories opened in place, URLs cloned once (bare) into the cache and fetched on demand.

A URL is cloned into ``<cache_dir>/repos/<name>-<hash of url>.git`` and reused; the clone is
fetched only when the requested commit is missing from it. A finished clone is published with one
rename, so a crash never leaves a half-cloned repository under the name later runs reuse. Every git
command gets options that keep a target's own configuration from running anything
(:func:`git_options`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import tempfile
from pathlib import Path

import git

from extractor.errors import ExtractorError
from extractor.source.urls import GIT_NETWORK_ENV, HEX40

__all__ = [
    "clone_dir_for",
    "fetch_origin",
    "git_message",
    "git_options",
    "open_cached_clone",
    "open_local",
    "rev_parse",
    "unknown_commit",
]


def clone_dir_for(url: str, cache_dir: Path) -> Path:
    """Where the bare clone of ``url`` lives: ``<cache_dir>/repos/<name>-<hash of url>.git``."""
    tail = re.split(r"[/:]", url.rstrip("/"))[-1]
    name = re.sub(r"[^A-Za-z0-9._-]", "_", tail.removesuffix(".git")).strip("._-")[:40] or "repo"
    digest = hashlib.sha256(url.encode("utf-8")).hexdigest()[:16]
    return cache_dir / "repos" / f"{name}-{digest}.git"


def git_message(exc: git.GitCommandError) -> str:
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


def git_options(git_dir: str) -> list[str]:
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


def open_local(source: str) -> git.Repo:
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
        git.Repo.clone_from(url, tmp, bare=True, env=dict(GIT_NETWORK_ENV)).close()
    except git.GitCommandError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise ExtractorError(url, f"could not clone: {git_message(exc)}") from None
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


def open_cached_clone(url: str, cache_dir: Path) -> tuple[git.Repo, bool]:
    """The cached bare clone of ``url`` (cloned now if absent) and whether it was just cloned."""
    dest = clone_dir_for(url, cache_dir)
    if dest.exists():
        try:
            return _bind(git.Repo(dest, expand_vars=False)), False
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            # Not something we published (we rename finished clones into place): start over.
            shutil.rmtree(dest, ignore_errors=True)
    return _clone(url, dest), True


def fetch_origin(repo: git.Repo, url: str, commitish: str) -> None:
    """Bring the cached clone up to date with every branch and tag of its origin."""
    refspecs = ["+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"]
    try:
        repo.git.fetch("--quiet", "--", "origin", *refspecs, env=dict(GIT_NETWORK_ENV))
    except git.GitCommandError as exc:
        raise ExtractorError(url, f"could not fetch: {git_message(exc)}") from None
    if HEX40.match(commitish) and rev_parse(repo, commitish)[0] is None:
        # A commit no branch or tag reaches (an old PR head): ask for it by id. The server saying
        # no is not a network failure; the caller reports the commit as unknown.
        with contextlib.suppress(git.GitCommandError):
            repo.git.fetch("--quiet", "--", "origin", commitish, env=dict(GIT_NETWORK_ENV))


def rev_parse(repo: git.Repo, commitish: str) -> tuple[str | None, str]:
    """(full sha or None, git's complaint)."""
    try:
        out = repo.git.rev_parse("--verify", "--end-of-options", f"{commitish}^{{commit}}")
    except git.GitCommandError as exc:
        return None, git_message(exc)
    sha = out.strip()
    return (sha, "") if HEX40.match(sha) else (None, f"unexpected rev-parse output {sha!r}")


def unknown_commit(commitish: str, source: str, complaint: str, *, fetched: bool) -> ExtractorError:
    detail = ""
    if "ambiguous" in complaint:
        detail = " (the short sha is ambiguous: give more digits)"
    where = " even after fetching" if fetched else ""
    return ExtractorError(commitish, f"no such commit in {source}{where}{detail}")
