"""Build small, real git repositories in a temporary folder for tests.

    from tests.gitrepos import Symlink, make_repo, bare_clone

    repo, shas = make_repo(tmp_path, [
        {"python/sglang/a.py": b"raise ValueError('x')\\n", "README.md": b"hi\\n"},
        {"python/sglang/a.py": b"assert x\\n", "README.md": None},        # edit, delete
        {"python/sglang/link.py": Symlink("/etc/passwd")},                 # a symlink blob
    ], tags={"v0.1": 1})
    mirror = bare_clone(repo, tmp_path / "mirror.git")

Each commit is a mapping ``path -> content`` applied on top of the previous commit:

* ``bytes``: write the file (folders are created);
* ``None``: delete the file;
* :class:`Symlink`: a symbolic link with that target (stored by git as mode 120000);
* :class:`Gitlink`: a submodule entry pointing at a commit sha (mode 160000, no content).

Author, committer and dates are fixed and the user's git configuration is ignored, so the same
commits always give the same shas. Branch ``main``; ``tags`` maps a tag name to the index of the
commit it names (``annotated_tags`` does the same with annotated tags).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import git

__all__ = ["Content", "Gitlink", "Symlink", "add_commit", "bare_clone", "copy_repo", "make_repo"]


@dataclass(frozen=True)
class Symlink:
    """A symbolic link to ``target`` (never created outside the repository's work tree)."""

    target: str


@dataclass(frozen=True)
class Gitlink:
    """A submodule entry: the path records commit ``sha`` of another repository."""

    sha: str


Content = bytes | None | Symlink | Gitlink

# A hermetic identity and configuration: no ~/.gitconfig, no /etc/gitconfig, fixed clocks.
_BASE_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.invalid",
}
_EPOCH = 1_700_000_000


def _git(repo: git.Repo, when: int | None = None) -> git.Git:
    env = dict(_BASE_ENV)
    if when is not None:
        stamp = f"{when} +0000"
        env |= {"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
    g = repo.git
    g.update_environment(**env)
    return g


def _apply(root: Path, repo: git.Repo, changes: Mapping[str, Content]) -> None:
    for rel, content in sorted(changes.items()):
        path = root / rel
        if isinstance(content, Gitlink):
            _git(repo).update_index("--add", "--cacheinfo", f"160000,{content.sha},{rel}")
            continue
        if path.is_symlink() or path.is_file():
            path.unlink()
        if content is None:
            _git(repo).rm("--cached", "--quiet", "--ignore-unmatch", "--", rel)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Symlink):
            os.symlink(content.target, path)
        else:
            path.write_bytes(content)
        _git(repo).add("--", rel)


def add_commit(repo_path: Path, changes: Mapping[str, Content], message: str | None = None) -> str:
    """Apply ``changes`` to the work-tree repository at ``repo_path``, commit, return the sha."""
    repo = git.Repo(repo_path)
    try:
        count = int(_git(repo).rev_list("--count", "HEAD")) if repo.head.is_valid() else 0
        _apply(repo_path, repo, changes)
        _git(repo, _EPOCH + 60 * count).commit(
            "--quiet", "--allow-empty", "--no-verify", "-m", message or f"commit {count}"
        )
        return repo.head.commit.hexsha
    finally:
        repo.close()


def make_repo(
    tmp_path: Path,
    commits: Sequence[Mapping[str, Content]],
    *,
    name: str = "origin",
    tags: Mapping[str, int] | None = None,
    annotated_tags: Mapping[str, int] | None = None,
    messages: Sequence[str] | None = None,
) -> tuple[Path, list[str]]:
    """A work-tree repository ``tmp_path/name`` with one commit per mapping; returns (path, shas)."""
    root = tmp_path / name
    repo = git.Repo.init(root, initial_branch="main")
    try:
        _git(repo).config("core.symlinks", "true")
    finally:
        repo.close()
    shas = [add_commit(root, changes, messages[i] if messages else None) for i, changes in enumerate(commits)]
    repo = git.Repo(root)
    try:
        for tag, index in (tags or {}).items():
            _git(repo).tag(tag, shas[index])
        for tag, index in (annotated_tags or {}).items():
            _git(repo, _EPOCH).tag("-a", "-m", f"release {tag}", tag, shas[index])
    finally:
        repo.close()
    return root, shas


def bare_clone(source: Path, dest: Path, *, drop_config: bool = False) -> Path:
    """A bare mirror of ``source`` at ``dest`` (all branches and tags).

    ``drop_config=True`` deletes the mirror's ``config`` file, as in an object store copied
    without it (git still reads such a folder; GitPython mistakes it for a work tree).
    """
    git.Repo.clone_from(str(source), dest, mirror=True, env=dict(_BASE_ENV)).close()
    if drop_config:
        (dest / "config").unlink()
    return dest


def copy_repo(source: Path, dest: Path) -> Path:
    """A plain copy of a repository folder (symlinks copied as links)."""
    shutil.copytree(source, dest, symlinks=True)
    return dest
