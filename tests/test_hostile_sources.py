"""Hostile sources through the real CLI: a clear error, a non-zero exit, nothing run, output untouched.

``tests/test_source.py`` checks :func:`extractor.source.git.validate_source` on its own; here every
command that opens a source (``extract``, ``diff --from/--to``, ``nightly``) is run as a
subprocess against sources and commit-ishes that would run a program, read the environment or
fail on the network, with a dataset already in place that must come out byte-identical. The
option-smuggling shapes of GitPython's advisories are checked to be refused before GitPython is
called at all.
"""

from __future__ import annotations

import socket
from pathlib import Path

import git
import pytest

from extractor.errors import ExtractorError
from extractor.source.git import open_target, validate_source
from tests.conftest import run_cli
from tests.gitrepos import make_repo
from tests.hostile import ROOT, assert_clean_failure

PREVIOUS = b'{"record": "a previous dataset, kept byte for byte"}\n'


@pytest.fixture(scope="module")
def origin(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    return make_repo(
        tmp_path_factory.mktemp("origin"),
        [
            {"python/sglang/a.py": b"def f(x):\n    if x:\n        raise ValueError('x')\n"},
            {"python/sglang/b.py": b"assert False, 'b'\n"},
        ],
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def smuggling_sources(marker: Path) -> dict[str, str]:
    """Source values that would run ``touch marker`` (or read the environment) if passed on."""
    touch = f"touch {marker}"
    return {
        "ext transport": f"ext::sh -c touch% {marker}",
        "ext transport, upper case": f"EXT::sh -c touch% {marker}",
        "fd transport": "fd::17",
        "helper transport": f"transport::{marker}",
        "option": f"--upload-pack={touch}",
        "abbreviated option": f"--upload-pa={touch}",
        "config option": f"--config=core.sshCommand={touch}",
        "template option": f"--template={marker.parent}",
        "joined short option": f"-u{touch}",
        "short option": "-c",
        "ssh option as host": f"ssh://-oProxyCommand={touch.replace(' ', '%20')}/repo",
        "ssh option as user": "ssh://-oProxyCommand=x@host/repo",
        "scp-like option": f"-oProxyCommand={touch}:repo",
        "env var": "https://example.com/$HOME/repo.git",
        "env var, braces": "https://example.com/${HOME}/repo.git",
        "env var, local": "${HOME}/repo",
        "env var, file url": "file://$HOME/repo",
        "windows env var": "https://example.com/%HOME%/repo.git",
        "newline": f"https://example.com/repo.git\n{touch}",
        "nul": "https://example.com/repo.git\x00",
        "unknown scheme": "gopher://example.com/repo",
    }


def _run_extract(source: str, sha: str, out: Path, cache: Path) -> None:
    """One ``extract`` that must fail cleanly and leave ``out`` as it was."""
    proc = run_cli(
        "extract", f"--source={source}", f"--sha={sha}", "--out", str(out), "--cache-dir", str(cache)
    )
    assert_clean_failure(proc, "error")
    assert out.read_bytes() == PREVIOUS, source


# The CLI runs a representative of each family (a subprocess each); the library test below runs all.
CLI_SHAPES = ["ext transport", "abbreviated option", "joined short option", "env var, braces", "newline"]


@pytest.mark.parametrize("shape", CLI_SHAPES)
def test_smuggling_source_is_refused_and_runs_nothing(shape: str, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    source = smuggling_sources(marker)[shape]
    out = tmp_path / "out" / "dataset.jsonl"
    out.parent.mkdir()
    out.write_bytes(PREVIOUS)
    cache = tmp_path / "cache"
    proc = run_cli(
        "extract", f"--source={source}", "--sha=HEAD", "--out", str(out), "--cache-dir", str(cache)
    )
    assert_clean_failure(proc)
    # The error names the source (control characters shown escaped) and says what is wrong.
    shown = source if source.isprintable() else repr(source)
    assert shown.splitlines()[0][:30] in proc.stderr.replace("\n", ""), proc.stderr
    assert not marker.exists()
    assert out.read_bytes() == PREVIOUS
    assert sorted(p.name for p in out.parent.iterdir()) == ["dataset.jsonl"]  # no temp file left
    assert not (cache / "repos").exists() or not any((cache / "repos").iterdir())


def test_source_from_the_environment_is_checked_too(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    out = tmp_path / "out.jsonl"
    out.write_bytes(PREVIOUS)
    proc = run_cli(
        "extract", "--sha=HEAD", "--out", str(out), "--cache-dir", str(tmp_path / "cache"),
        env={"SGLANG_ERRORS_SOURCE": f"ext::sh -c touch% {marker}"},
    )  # fmt: skip
    assert_clean_failure(proc, "ext::")
    assert not marker.exists()
    assert out.read_bytes() == PREVIOUS


@pytest.mark.parametrize("sha", ["--output=MARKER", "HEAD:python/sglang/a.py"])
def test_hostile_commitish_is_refused(sha: str, origin: tuple[Path, list[str]], tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    sha = sha.replace("MARKER", str(marker))
    out = tmp_path / "out.jsonl"
    out.write_bytes(PREVIOUS)
    _run_extract(str(origin[0]), sha, out, tmp_path / "cache")
    assert not marker.exists()


def test_missing_repository(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_bytes(PREVIOUS)
    missing = tmp_path / "no such repo"
    proc = run_cli(
        "extract", f"--source={missing}", "--sha=HEAD", "--out", str(out), "--cache-dir", str(tmp_path / "c")
    )
    assert_clean_failure(proc, str(missing), "does not exist")
    assert out.read_bytes() == PREVIOUS


def test_not_a_repository(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_bytes(PREVIOUS)
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.py").write_text("raise ValueError('x')\n")
    proc = run_cli(
        "extract", f"--source={plain}", "--sha=HEAD", "--out", str(out), "--cache-dir", str(tmp_path / "c")
    )
    assert_clean_failure(proc, str(plain), "not a git repository")
    assert out.read_bytes() == PREVIOUS


def test_missing_file_url(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_bytes(PREVIOUS)
    url = f"file://{tmp_path}/absent.git"
    cache = tmp_path / "cache"
    proc = run_cli("extract", f"--source={url}", "--sha=HEAD", "--out", str(out), "--cache-dir", str(cache))
    assert_clean_failure(proc, url, "could not clone")
    assert out.read_bytes() == PREVIOUS
    assert not cache.exists()  # neither the partial clone nor an empty cache folder is left


@pytest.mark.parametrize("url", ["https://127.0.0.1:{port}/x.git", "http://127.0.0.1:{port}/sglang.git"])
def test_network_failure(url: str, tmp_path: Path) -> None:
    url = url.format(port=_free_port())  # nothing listens there: refused at once, no real network
    out = tmp_path / "out.jsonl"
    out.write_bytes(PREVIOUS)
    cache = tmp_path / "cache"
    proc = run_cli("extract", f"--source={url}", "--sha=HEAD", "--out", str(out), "--cache-dir", str(cache))
    assert_clean_failure(proc, url, "could not clone", "127.0.0.1")
    assert out.read_bytes() == PREVIOUS
    assert not cache.exists()  # neither the partial clone nor an empty cache folder is left


def test_unknown_sha_is_named(origin: tuple[Path, list[str]], tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_bytes(PREVIOUS)
    unknown = "0123456789abcdef0123456789abcdef01234567"
    for sha in (unknown, "no-such-branch"):
        proc = run_cli("extract", f"--source={origin[0]}", f"--sha={sha}", "--out", str(out), "--no-cache")
        assert_clean_failure(proc, sha, "no such commit")
        assert out.read_bytes() == PREVIOUS


def test_unknown_sha_of_a_url_is_named(origin: tuple[Path, list[str]], tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_bytes(PREVIOUS)
    unknown = "f" * 40
    url = f"file://{origin[0]}"
    proc = run_cli(
        "extract",
        f"--source={url}",
        f"--sha={unknown}",
        "--out",
        str(out),
        "--cache-dir",
        str(tmp_path / "c"),
    )
    assert_clean_failure(proc, unknown, "no such commit")
    assert out.read_bytes() == PREVIOUS


def test_diff_and_nightly_refuse_the_same_sources(origin: tuple[Path, list[str]], tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    nightly_dir = tmp_path / "nightly"
    nightly_dir.mkdir()
    (nightly_dir / "manifest.json").write_bytes(PREVIOUS)
    diff_out = tmp_path / "diff.md"
    diff_out.write_bytes(PREVIOUS)
    for source in (f"ext::sh -c touch% {marker}", f"--upload-pack=touch {marker}"):
        proc = run_cli(
            "diff", f"--source={source}", "--from=HEAD~1", "--to=HEAD", "--format=markdown", "--out", str(diff_out),
            "--cache-dir", str(tmp_path / "c"),
        )  # fmt: skip
        assert_clean_failure(proc)
        assert proc.returncode == 2
        proc = run_cli(
            "nightly", f"--source={source}", "--out-dir", str(nightly_dir), "--cache-dir", str(tmp_path / "c")
        )
        assert_clean_failure(proc)
    assert not marker.exists()
    assert diff_out.read_bytes() == PREVIOUS
    # (nightly's lock file may stay: it is how concurrent runs exclude each other)
    assert sorted(p.name for p in nightly_dir.iterdir() if p.name != ".lock") == ["manifest.json"]
    assert (nightly_dir / "manifest.json").read_bytes() == PREVIOUS
    # and a hostile commit-ish on either side of a diff
    proc = run_cli("diff", f"--source={origin[0]}", f"--from=--output={marker}", "--to=HEAD", "--no-cache")
    assert_clean_failure(proc, "--output=")
    assert not marker.exists()


def test_hostile_repository_config_runs_nothing_through_the_cli(
    origin: tuple[Path, list[str]], tmp_path: Path
) -> None:
    """A local repository is read in place with its own config: nothing it names may run."""
    import shutil

    marker = tmp_path / "ran"
    repo_path = tmp_path / "hostile"
    shutil.copytree(origin[0], repo_path, symlinks=True)
    command = f"touch {marker}"
    with git.Repo(repo_path) as repo, repo.config_writer() as cfg:
        cfg.set_value("core", "fsmonitor", command)
        cfg.set_value("core", "sshCommand", command)
        cfg.set_value("core", "pager", command)
        cfg.set_value("core", "hooksPath", str(repo_path / "myhooks"))
        cfg.set_value("diff", "external", command)
        cfg.set_value('diff "py"', "textconv", command)
        cfg.set_value('filter "evil"', "smudge", command)
        cfg.set_value('filter "evil"', "clean", command)
        cfg.set_value('filter "evil"', "process", command)
        cfg.set_value("uploadpack", "packObjectsHook", command)
    (repo_path / ".git" / "info" / "attributes").write_text("*.py diff=py filter=evil\n")
    hooks = repo_path / "myhooks"
    hooks.mkdir()
    for name in ("post-checkout", "pre-commit", "post-merge", "reference-transaction", "post-index-change"):
        (hooks / name).write_text(f"#!/bin/sh\n{command}\n")
        (hooks / name).chmod(0o755)
    out = tmp_path / "out.jsonl"
    proc = run_cli(
        "extract",
        f"--source={repo_path}",
        "--sha=HEAD",
        "--out",
        str(out),
        "--cache-dir",
        str(tmp_path / "c"),
    )
    assert proc.returncode == 0, proc.stderr
    proc = run_cli(
        "diff", f"--source={repo_path}", "--from=HEAD~1", "--to=HEAD", "--cache-dir", str(tmp_path / "c")
    )
    assert proc.returncode == 1, proc.stderr  # b.py's assert was added
    proc = run_cli("extract", f"--source=file://{repo_path}", "--sha=HEAD", "--out", str(out), "--no-cache",
                   "--cache-dir", str(tmp_path / "c2"))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists()


# --------------------------------------------------------------------------- before GitPython


class _NoGit:
    """Stands in for ``git.Repo``: any use means a source reached GitPython."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        raise AssertionError(f"GitPython was reached with {args!r} {kwargs!r}")

    clone_from = __init__


def test_every_smuggling_shape_is_refused_before_gitpython(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(git, "Repo", _NoGit)
    monkeypatch.setattr(git.Git, "execute", _NoGit.__init__)
    for shape, source in smuggling_sources(tmp_path / "ran").items():
        with pytest.raises(ExtractorError) as info:
            open_target(source, "HEAD", cache_dir=tmp_path / "cache")
        assert info.value.where in (source, repr(source)), shape
        with pytest.raises(ExtractorError):
            validate_source(source)
    assert not (tmp_path / "ran").exists()


def test_clone_passes_no_options_keywords_or_multi_options(
    origin: tuple[Path, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one GitPython clone call: the validated URL as given, no extra git options of any kind."""
    seen: list[tuple[tuple[object, ...], dict[str, object]]] = []
    real = git.Repo.clone_from

    def spy(*args: object, **kwargs: object) -> git.Repo:
        seen.append((args, kwargs))
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(git.Repo, "clone_from", spy)
    url = f"file://{origin[0]}"
    with open_target(url, "HEAD", cache_dir=tmp_path / "cache") as target:
        assert target.sha == origin[1][-1]
    assert len(seen) == 1
    args, kwargs = seen[0]
    assert args[0] == url
    assert set(kwargs) <= {"bare", "env"}, kwargs  # no multi_options, no option keywords
    assert "allow_unsafe_protocols" not in kwargs and "allow_unsafe_options" not in kwargs


def test_gitpython_release_has_every_advisory_fixed() -> None:
    """3.1.55 is the first release with every clone/URL advisory fixed; older ones must not run."""
    major, minor, patch = (int(p) for p in git.__version__.split(".")[:3])
    assert (major, minor, patch) >= (3, 1, 55), git.__version__
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"GitPython>=3.1.55' in pyproject
