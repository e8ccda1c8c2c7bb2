"""extractor.source.git and extractor.source.scope on real git repositories built in tmp dirs."""

from __future__ import annotations

import socket
from pathlib import Path

import git
import pytest

from extractor.config import DEFAULT_SHA, DEFAULT_SOURCE, Scope
from extractor.errors import ExtractorError
from extractor.reasons import Reason
from extractor.source.git import (
    PathChange,
    clone_dir_for,
    default_cache_dir,
    is_url,
    open_target,
    validate_commitish,
    validate_source,
)
from extractor.source.scope import compile_glob, dir_in_scope, glob_match, in_scope
from tests.gitrepos import Content, Gitlink, Symlink, add_commit, bare_clone, copy_repo, make_repo

A_V0 = b"def f(x):\n    if x < 0:\n        raise ValueError('negative')\n"
A_V1 = A_V0 + b"\n\ndef g():\n    assert False, 'unreachable'\n"
B_PY = b"".join(b"def h%d(y):\n    raise RuntimeError('h%d failed')\n\n" % (i, i) for i in range(20))

COMMITS: list[dict[str, Content]] = [
    {
        "python/sglang/a.py": A_V0,
        "python/sglang/srt/b.py": B_PY,
        "python/sglang/test/t.py": b"assert 1\n",
        "python/sglang/srt/tests/deep/t2.py": b"assert 2\n",
        "python/sglang/testing/kept.py": b"raise KeyError('k')\n",
        "python/sglang/data.txt": b"not python\n",
        "sgl-kernel/python/sgl_kernel/k.py": b"raise OSError('k')\n",
        "test/srt/outside.py": b"assert 3\n",
        "README.md": b"readme\n",
    },
    {
        "python/sglang/a.py": A_V1,
        # A link that, if followed, would read a host file: it must stay a blob holding its text.
        "python/sglang/passwd.py": Symlink("/etc/passwd"),
        "python/sglang/alias.py": Symlink("a.py"),
        "python/sglang/third_party/vendored": Gitlink("1" * 40),
        "python/sglang/data.txt": None,
    },
    {
        "python/sglang/srt/b.py": None,
        "python/sglang/srt/b2.py": B_PY,  # a rename git's --find-renames pairs with b.py
        "python/sglang/new.py": b"raise NotImplementedError\n",
    },
]
EXPECTED_FILES = [
    "python/sglang/a.py",
    "python/sglang/new.py",
    "python/sglang/srt/b2.py",
    "python/sglang/testing/kept.py",
    "sgl-kernel/python/sgl_kernel/k.py",
]


@pytest.fixture(scope="module")
def origin(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A work-tree repository with three commits, tags v0.1 (light) and v0.2 (annotated)."""
    return make_repo(tmp_path_factory.mktemp("src"), COMMITS, tags={"v0.1": 0}, annotated_tags={"v0.2": 1})


@pytest.fixture(scope="module")
def mirror(origin: tuple[Path, list[str]], tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bare_clone(origin[0], tmp_path_factory.mktemp("mirror") / "sglang.git")


# --- opening local repositories ------------------------------------------------------------------


def test_work_tree_clone_lists_in_scope_files(origin: tuple[Path, list[str]]) -> None:
    path, shas = origin
    with open_target(str(path), "HEAD") as target:
        assert target.sha == shas[-1]
        files = target.files(Scope())
        assert [f.path for f in files] == EXPECTED_FILES
        by_path = {f.path: f for f in files}
        a = by_path["python/sglang/a.py"]
        assert a.mode == 0o100644
        assert a.size == len(A_V1)
        assert target.read(a.blob_sha) == A_V1
        assert a.blob_sha == git.Repo(path).git.rev_parse(f"{shas[-1]}:python/sglang/a.py")


def test_bare_mirror_reads_the_same_as_the_clone(origin: tuple[Path, list[str]], mirror: Path) -> None:
    path, shas = origin
    with open_target(str(path), shas[1]) as clone, open_target(str(mirror), shas[1]) as bare:
        assert bare.files(Scope()) == clone.files(Scope())
        assert bare.git_dir == mirror
        assert bare.read_path("python/sglang/a.py") == A_V1


def test_bare_mirror_without_config_file(origin: tuple[Path, list[str]], tmp_path: Path) -> None:
    # A bare mirror with objects, refs and HEAD but no config: GitPython then takes the parent
    # folder for a work tree; every command must still go to the mirror itself.
    path, shas = origin
    bare = bare_clone(path, tmp_path / "noconfig.git", drop_config=True)
    with open_target(str(bare), "main~1") as target:
        assert target.sha == shas[1]
        assert target.read_path("python/sglang/srt/b.py") == B_PY


@pytest.mark.parametrize(
    ("commitish", "index"),
    [("HEAD", 2), ("main", 2), ("HEAD~1", 1), ("HEAD^", 1), ("main~2", 0), ("v0.1", 0), ("v0.2", 1)],
)
def test_commitish_resolves_to_full_sha(
    origin: tuple[Path, list[str]], mirror: Path, commitish: str, index: int
) -> None:
    _, shas = origin
    with open_target(str(mirror), commitish) as target:
        assert target.sha == shas[index]
        assert target.resolve(commitish) == shas[index]


def test_short_and_full_sha_resolve(origin: tuple[Path, list[str]], mirror: Path) -> None:
    _, shas = origin
    with open_target(str(mirror), shas[0][:8]) as target:
        assert target.sha == shas[0]
        assert target.resolve(shas[1][:12]) == shas[1]
        assert target.resolve(shas[2].upper()) == shas[2]


def test_unknown_sha_names_sha_and_source(mirror: Path) -> None:
    missing = "0123456789abcdef0123456789abcdef01234567"
    with pytest.raises(ExtractorError) as info:
        open_target(str(mirror), missing)
    assert info.value.where == missing
    assert str(mirror) in info.value.what
    with pytest.raises(ExtractorError) as info:
        open_target(str(mirror), "no-such-branch")
    assert info.value.where == "no-such-branch"


def test_missing_repository(tmp_path: Path) -> None:
    with pytest.raises(ExtractorError) as info:
        open_target(str(tmp_path / "nope"), "HEAD")
    assert info.value.where == str(tmp_path / "nope")
    assert "does not exist" in info.value.what


@pytest.mark.parametrize("kind", ["empty-dir", "file", "subdir-of-work-tree"])
def test_not_a_repository(tmp_path: Path, origin: tuple[Path, list[str]], kind: str) -> None:
    if kind == "empty-dir":
        bad = tmp_path / "plain"
        bad.mkdir()
    elif kind == "file":
        bad = tmp_path / "file.txt"
        bad.write_text("x")
    else:
        bad = origin[0] / "python"  # inside a work tree, but not its top: not searched upwards
    with pytest.raises(ExtractorError) as info:
        open_target(str(bad), "HEAD")
    assert info.value.where == str(bad)
    assert "not a git repository" in info.value.what


# --- URLs and the clone cache ---------------------------------------------------------------------


def test_file_url_is_cloned_bare_once_and_reused(origin: tuple[Path, list[str]], tmp_path: Path) -> None:
    path, shas = origin
    upstream = bare_clone(path, tmp_path / "upstream.git")
    url = f"file://{upstream}"
    cache = tmp_path / "cache"
    with open_target(url, "v0.1", cache_dir=cache) as first:
        assert first.sha == shas[0]
        clone = first.git_dir
    assert clone == clone_dir_for(url, cache)
    assert clone.parent == cache / "repos" and clone.name.startswith("upstream-") and clone.suffix == ".git"
    assert git.Repo(clone).bare
    assert [p.name for p in (cache / "repos").iterdir()] == [clone.name]  # no leftover partial clone
    inode = clone.stat().st_ino

    # With the upstream gone, any clone or fetch would fail: a second open must use the cache.
    upstream.rename(tmp_path / "gone.git")
    with open_target(url, shas[2][:10], cache_dir=cache) as second:
        assert second.sha == shas[2]
        assert second.git_dir == clone
        assert [f.path for f in second.files(Scope())] == EXPECTED_FILES
    assert clone.stat().st_ino == inode


def test_cached_clone_fetches_a_commit_it_lacks(origin: tuple[Path, list[str]], tmp_path: Path) -> None:
    work = copy_repo(origin[0], tmp_path / "work")
    url = f"file://{work}"
    cache = tmp_path / "cache"
    with open_target(url, "HEAD", cache_dir=cache) as first:
        clone = first.git_dir
    inode = clone.stat().st_ino
    newer = add_commit(work, {"python/sglang/late.py": b"raise ValueError('late')\n"})
    with open_target(url, newer, cache_dir=cache) as second:
        assert second.sha == newer
        assert second.read_path("python/sglang/late.py") == b"raise ValueError('late')\n"
    assert clone.stat().st_ino == inode  # fetched into the same clone, not cloned again
    with pytest.raises(ExtractorError) as info:
        open_target(url, "f" * 40, cache_dir=cache)
    assert info.value.where == "f" * 40
    assert url in info.value.what


def test_refresh_fetches_a_moved_branch(origin: tuple[Path, list[str]], tmp_path: Path) -> None:
    work = copy_repo(origin[0], tmp_path / "work")
    url = f"file://{work}"
    cache = tmp_path / "cache"
    with open_target(url, "main", cache_dir=cache) as first:
        assert first.sha == origin[1][-1]
    newer = add_commit(work, {"python/sglang/late.py": b"assert late\n"})
    with open_target(url, "main", cache_dir=cache) as cached:
        assert cached.sha == origin[1][-1]  # a name that resolves is taken from the cache
    with open_target(url, "main", cache_dir=cache, refresh=True) as fresh:
        assert fresh.sha == newer


def test_clone_of_missing_url_fails_cleanly(tmp_path: Path) -> None:
    url = f"file://{tmp_path / 'absent.git'}"
    with pytest.raises(ExtractorError) as info:
        open_target(url, "HEAD", cache_dir=tmp_path / "cache")
    assert info.value.where == url
    assert info.value.what.startswith("could not clone:")
    assert "Traceback" not in info.value.what and "cmdline" not in info.value.what
    assert list((tmp_path / "cache" / "repos").iterdir()) == []  # the partial clone is removed


def test_network_failure_is_a_clear_error(tmp_path: Path) -> None:
    # A loopback port nothing listens on: the connection is refused at once.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/sglang.git"
    with pytest.raises(ExtractorError) as info:
        open_target(url, "HEAD", cache_dir=tmp_path / "cache")
    assert info.value.where == url
    assert "could not clone" in info.value.what
    assert "127.0.0.1" in info.value.what


def test_default_cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "sglang-errors"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "sglang-errors"


def test_defaults_are_valid() -> None:
    validate_source(DEFAULT_SOURCE)
    validate_commitish(DEFAULT_SHA)
    assert is_url(DEFAULT_SOURCE)


# --- hostile sources and commit-ishes -------------------------------------------------------------


def _hostile_sources(marker: Path) -> list[str]:
    return [
        f"ext::sh -c touch% {marker}",
        "ext::sh -c touch% pwned",  # relative: lands in the working folder, which must stay empty
        f"--upload-pack=touch {marker}",
        f"-u touch {marker}",
        f"-utouch {marker}",
        "--config=core.sshCommand=touch",
        "fd::3",
        "fd::3,4/x",
        "transport::x",
        "ssh::host/x",
        "https://host/$HOME/x",
        "https://host/${PATH}",
        f"file://{marker.parent}/$USER/repo",
        "$HOME/repo",
        "https://host/%PATH%/x",
        f"https://host/x\ntouch {marker}",
        f"{marker.parent}/repo\r--upload-pack=touch {marker}",
        f"{marker.parent}/repo\x00x",
        f"ssh://-oProxyCommand=touch%20{marker}/x",
        "ssh://-oProxyCommand=x@host/x",
        "-oProxyCommand=x@host:repo",
        "user@-oProxyCommand=x:repo",
        "ftp://host/x.git",
        "gopher://host/x",
        "javascript://x",
        "https://host/a b",
        "https:host/x",
        "file://remotehost/x",
        "file://relative",
        "",
    ]


def test_hostile_sources_are_refused_before_git_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "pwned"
    cache = tmp_path / "cache"
    monkeypatch.chdir(tmp_path)

    class NoGit:
        def __init__(self, *args: object, **kwargs: object) -> None:
            raise AssertionError("GitPython was reached")

        clone_from = __init__

    monkeypatch.setattr(git, "Repo", NoGit)
    for source in _hostile_sources(marker):
        with pytest.raises(ExtractorError) as info:
            open_target(source, "HEAD", cache_dir=cache)
        assert info.value.where in (source, repr(source)), source
        assert info.value.what
        with pytest.raises(ExtractorError):
            validate_source(source)
    assert not marker.exists()
    assert not cache.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "source",
    [
        DEFAULT_SOURCE,
        "http://example.com/sglang.git",
        "git@github.com:sgl-project/sglang.git",
        "github.com:sgl-project/sglang.git",
        "ssh://git@example.com:2222/sgl-project/sglang.git",
        "ssh://[::1]/srv/sglang.git",
        "git://example.com/sglang.git",
        "https://example.com/a%20b/sglang.git",
        "file:///srv/git/sglang.git",
        "/srv/git/sglang",
        "./relative/clone",
        "relative/clone",
        "~/src/sglang",
        "./odd:name",
        "/path with spaces/sglang",
    ],
)
def test_ordinary_sources_pass(source: str) -> None:
    validate_source(source)


@pytest.mark.parametrize(
    ("source", "url"),
    [
        ("https://h/x", True),
        ("git@h:x", True),
        ("h:x", True),
        ("file:///x", True),
        ("/x", False),
        ("./a:b", False),
        ("rel/dir", False),
    ],
)
def test_is_url(source: str, url: bool) -> None:
    assert is_url(source) is url


BAD_COMMITISHES = [
    "--output=x",
    "-p",
    "-",
    "HEAD..main",
    "HEAD...main",
    "HEAD:python/sglang/a.py",
    ":/message",
    "main@{1}",
    "@{-1}",
    "HEAD^{tree}",
    "a b",
    "main\n--all",
    "main\x00",
    "",
    "refs//heads",
    "main.lock",
    "main/",
    "release/.hidden",
    "$HOME",
    "~1",
    "x" * 300,
]


@pytest.mark.parametrize("value", BAD_COMMITISHES)
def test_bad_commitish_refused(value: str, mirror: Path) -> None:
    with pytest.raises(ExtractorError) as info:
        validate_commitish(value)
    assert info.value.where in (value, repr(value)) or value.startswith(info.value.where.removesuffix("..."))
    with pytest.raises(ExtractorError):
        open_target(str(mirror), value)


def test_bad_commitish_refused_by_resolve_and_diff(mirror: Path, tmp_path: Path) -> None:
    out = tmp_path / "x"
    with open_target(str(mirror), "HEAD") as target:
        for value in (f"--output={out}", "-p", "HEAD..HEAD~1"):
            with pytest.raises(ExtractorError):
                target.resolve(value)
            with pytest.raises(ExtractorError):
                target.changed_paths(value)
    assert not out.exists()


@pytest.mark.parametrize(
    "value", ["HEAD", "HEAD~40", "HEAD^2~3", "v0.5.1", "release/v1.0", "abc1234", DEFAULT_SHA, "main"]
)
def test_good_commitish_passes(value: str) -> None:
    validate_commitish(value)


# --- symlinks, submodules and odd paths ----------------------------------------------------------


def test_symlinks_and_submodules_are_skipped_not_followed(mirror: Path) -> None:
    with open_target(str(mirror), "HEAD") as target:
        paths = [f.path for f in target.files(Scope())]
        assert "python/sglang/passwd.py" not in paths
        assert "python/sglang/alias.py" not in paths
        assert target.skipped(Scope()) == [
            ("python/sglang/alias.py", Reason.SYMLINK, "symlink"),
            ("python/sglang/passwd.py", Reason.SYMLINK, "symlink"),
            ("python/sglang/third_party/vendored", Reason.SUBMODULE, "submodule"),
        ]
        assert target.read_path("python/sglang/passwd.py") is None
        assert target.read_path("python/sglang/third_party/vendored") is None
        # The link's blob is its target text: nothing on the host was opened.
        link_blob = git.Repo(mirror).git.rev_parse("HEAD:python/sglang/passwd.py")
        assert target.read(link_blob) == b"/etc/passwd"
        # Out of scope, nothing is reported.
        assert target.skipped(Scope(include=("sgl-kernel/**/*.py",))) == []


def test_non_utf8_path_is_extracted_under_an_escaped_name(tmp_path: Path) -> None:
    odd = "python/sglang/caf\udce9.py"  # the byte 0xE9 alone: Latin-1 on disk, not UTF-8
    repo, _ = make_repo(tmp_path, [{odd: b"raise ValueError\n", "python/sglang/ok.py": b"assert 1\n"}])
    with open_target(str(repo), "HEAD") as target:
        assert [f.path for f in target.files(Scope())] == ["python/sglang/caf\\xe9.py", "python/sglang/ok.py"]
        assert target.skipped(Scope()) == []


# --- reading ------------------------------------------------------------------------------------


def test_read_many_in_order_with_duplicates(mirror: Path) -> None:
    with open_target(str(mirror), "HEAD") as target:
        files = target.files(Scope())
        shas = [f.blob_sha for f in files]
        wanted = [*reversed(shas), shas[0]]
        got = list(target.read_many(wanted))
        assert [s for s, _ in got] == wanted
        assert [data for _, data in got] == [target.read(s) for s in wanted]
        assert all(len(data) == f.size for f, (_, data) in zip(reversed(files), got, strict=False))
        assert list(target.read_many([])) == []


def test_read_many_closed_early_and_bad_ids(mirror: Path) -> None:
    with open_target(str(mirror), "HEAD") as target:
        shas = [f.blob_sha for f in target.files(Scope())] * 50
        stream = target.read_many(shas)
        first = next(stream)
        stream.close()  # must end git, not hang on a full pipe
        assert first[0] == shas[0]
        with pytest.raises(ExtractorError):
            list(target.read_many(["HEAD"]))
        with pytest.raises(ExtractorError):
            list(target.read_many(["a" * 40 + "\n" + "b" * 40]))
        with pytest.raises(ExtractorError) as info:
            list(target.read_many(["e" * 40]))
        assert info.value.where == "e" * 40
        with pytest.raises(ExtractorError):
            target.read("e" * 40)
        with pytest.raises(ExtractorError):
            target.read("--batch")


def test_read_many_more_ids_than_a_pipe_holds(mirror: Path) -> None:
    # 2,000 ids are ~80 KB on git's stdin, more than a pipe buffers: the writer must not block
    # the reader (or the other way round).
    with open_target(str(mirror), "HEAD") as target:
        files = target.files(Scope())
        shas = [f.blob_sha for f in files] * 400
        sizes = {f.blob_sha: f.size for f in files}
        count = 0
        for sha, data in target.read_many(shas):
            assert len(data) == sizes[sha]
            count += 1
        assert count == len(shas)


def test_hostile_local_repository_config_runs_nothing(origin: tuple[Path, list[str]], tmp_path: Path) -> None:
    # A local clone is read in place, config and all: none of the commands used may run a program
    # that the repository's own config names.
    marker = tmp_path / "ran"
    repo_path = copy_repo(origin[0], tmp_path / "hostile")
    command = f"touch {marker}"
    with git.Repo(repo_path) as repo, repo.config_writer() as cfg:
        cfg.set_value("core", "fsmonitor", command)
        cfg.set_value("core", "sshCommand", command)
        cfg.set_value("core", "pager", command)
        cfg.set_value("diff", "external", command)
        cfg.set_value('diff "py"', "textconv", command)
        cfg.set_value("uploadpack", "packObjectsHook", command)
    (repo_path / ".git" / "info" / "attributes").write_text("*.py diff=py\n")
    hook = repo_path / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\n{command}\n")
    hook.chmod(0o755)
    with open_target(str(repo_path), "HEAD~2") as target:
        files = target.files(Scope())
        dict(target.read_many(f.blob_sha for f in files))
        target.read(files[0].blob_sha)
        target.read_path("python/sglang/a.py")
        target.resolve("v0.2")
        target.tree_changes("HEAD")
    assert not marker.exists()


def test_read_path(origin: tuple[Path, list[str]], mirror: Path) -> None:
    _, shas = origin
    with open_target(str(mirror), shas[0]) as old:
        assert old.read_path("python/sglang/a.py") == A_V0
        assert old.read_path("python/sglang/data.txt") == b"not python\n"
        assert old.read_path("python/sglang/new.py") is None
        assert old.read_path("python/sglang") is None  # a folder is not a file


def test_changed_paths_follows_renames(origin: tuple[Path, list[str]], mirror: Path) -> None:
    _, shas = origin
    with open_target(str(mirror), shas[0]) as old:
        changes = old.changed_paths(shas[2])
        assert changes == {
            "python/sglang/a.py": "python/sglang/a.py",
            "python/sglang/data.txt": None,
            "python/sglang/srt/b.py": "python/sglang/srt/b2.py",
        }
        assert old.changed_paths("HEAD~2") == {}
        tree = old.tree_changes("HEAD")
        assert PathChange("A", None, "python/sglang/new.py") in tree
        assert PathChange("R", "python/sglang/srt/b.py", "python/sglang/srt/b2.py") in tree
        assert PathChange("A", None, "python/sglang/passwd.py") in tree


# --- scope globs --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "path", "hit"),
    [
        ("python/sglang/**/*.py", "python/sglang/a.py", True),  # ** as zero segments
        ("python/sglang/**/*.py", "python/sglang/srt/layers/x.py", True),
        ("python/sglang/**/*.py", "python/sglang/a.pyi", False),
        ("python/sglang/**/*.py", "python/sglangx/a.py", False),
        ("python/sglang/**/*.py", "other/python/sglang/a.py", False),  # anchored at the root
        ("*.py", "a.py", True),
        ("*.py", "dir/a.py", False),  # * stays within one segment
        ("python/*/a.py", "python/x/y/a.py", False),
        ("**/tests/**", "tests/a.py", True),
        ("**/tests/**", "a/b/tests/c/d.py", True),
        ("**/tests/**", "a/tests.py", False),
        ("**/tests/**", "a/testsuite/b.py", False),
        ("**/test/**", "python/sglang/test/x.py", True),
        ("**/test/**", "python/sglang/testing/x.py", False),
        ("**", "any/thing.py", True),
        ("a/**", "a", True),
        ("a/**/b.py", "a/b.py", True),
        ("a/**/**/b.py", "a/x/y/b.py", True),
        ("a/?.py", "a/x.py", True),
        ("a/?.py", "a/xy.py", False),
        ("a/[bc].py", "a/c.py", True),
        ("a/[!bc].py", "a/d.py", True),
        ("a/[!bc].py", "a/b.py", False),
        ("a[!x]b", "a/b", False),  # a negated set never matches "/"
        ("a/(x)+.py", "a/(x)+.py", True),  # regex characters are literal
        ("a/(x)+.py", "a/xx.py", False),
    ],
)
def test_glob_match(pattern: str, path: str, hit: bool) -> None:
    assert glob_match(pattern, path) is hit


def test_invalid_glob() -> None:
    with pytest.raises(ExtractorError) as info:
        compile_glob("a/[z-a].py")
    assert info.value.where == "a/[z-a].py"


def test_default_scope() -> None:
    scope = Scope()
    assert in_scope("python/sglang/srt/managers/scheduler.py", scope)
    assert in_scope("sgl-kernel/python/sgl_kernel/moe.py", scope)
    assert in_scope("python/sglang/testing/x.py", scope)
    assert not in_scope("python/sglang/test/runners.py", scope)
    assert not in_scope("python/sglang/srt/a/b/tests/c/x.py", scope)
    assert not in_scope("sgl-kernel/tests/test_x.py", scope)
    assert not in_scope("test/srt/test_x.py", scope)
    assert not in_scope("python/sglang/README.md", scope)
    custom = Scope(include=("**/*.py",), exclude=("**/k.py", "docs/**"))
    assert in_scope("test/x.py", custom)
    assert not in_scope("a/k.py", custom)
    assert not in_scope("docs/conf.py", custom)
    assert not in_scope("x.py", Scope(include=()))


def test_dir_in_scope() -> None:
    scope = Scope()
    assert dir_in_scope("python/sglang/third_party/x", scope)
    assert dir_in_scope("python", scope)
    assert not dir_in_scope("python/sglang/tests", scope)
    assert not dir_in_scope("docs", scope)
    assert dir_in_scope("a/b", Scope(include=("**/*.py",), exclude=("**/*_pb2.py",)))


def test_target_files_honour_custom_scope(mirror: Path) -> None:
    with open_target(str(mirror), "HEAD") as target:
        scope = Scope(include=("**/*.py",), exclude=("python/sglang/srt/**",))
        paths = [f.path for f in target.files(scope)]
        assert paths == sorted(paths)
        assert "test/srt/outside.py" in paths
        assert "python/sglang/srt/b2.py" not in paths
        assert "python/sglang/test/t.py" in paths  # the default excludes are not implied


def test_gitrepos_helper_is_deterministic(tmp_path: Path) -> None:
    _, first = make_repo(tmp_path, COMMITS[:1], name="one")
    _, second = make_repo(tmp_path, COMMITS[:1], name="two")
    assert first == second
    _, third = make_repo(tmp_path, [{**COMMITS[0], "README.md": b"other\n"}], name="three")
    assert third != first
