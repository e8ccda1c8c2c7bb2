"""The CLI a new user expects, through the real CLI (typer's runner in process, a few subprocesses).

First run (the pinned sha, a dirty work tree, an unreachable URL, a scope that matches nothing),
the conventions every command shares (-h, -V, -q/-v, --color, completion, exit codes, --format,
``-`` for stdin/stdout, wide piped tables), and the ``show``, ``stats``, ``cache`` commands and
the ``[tool.sglang-errors]`` settings.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner, Result

from extractor.cli import app
from extractor.config import DEFAULT_SHA
from tests.gitrepos import make_repo

ROOT = Path(__file__).resolve().parents[1]
EPOCH = "1767225600"

SCHEDULER = b"""\
def check_batch(max_batch_size, chunked_prefill_size):
    if max_batch_size <= 0:
        raise ValueError(f"--max-batch-size must be positive, got {max_batch_size}")
    if chunked_prefill_size is not None and chunked_prefill_size < 16:
        raise ValueError(
            "--chunked-prefill-size is too small for the paged attention kernels that this scheduler "
            "dispatches to; raise it to at least sixteen tokens or leave it unset"
        )
"""
LOADER = b"""\
import os


def open_weights(path):
    if not os.path.exists(path):
        raise FileNotFoundError(f"weights not found at {path}")
    return open(path, "rb")
"""
KERNEL = b"def launch(grid):\n    assert grid > 0, 'empty grid'\n"
FILES = {
    "python/sglang/srt/managers/scheduler_checks.py": SCHEDULER,
    "python/sglang/srt/model_loader/weights.py": LOADER,
    "sgl-kernel/python/sgl_kernel/launch.py": KERNEL,
}
SECOND = {
    "python/sglang/srt/model_loader/weights.py": LOADER
    + b'\n\ndef check_dtype(dtype):\n    if dtype not in ("fp16", "bf16"):\n        raise TypeError(f"unsupported dtype {dtype}")\n'
}


def run(*args: str | Path, input: str | bytes | None = None, env: dict[str, str] | None = None) -> Result:
    base = {"SOURCE_DATE_EPOCH": EPOCH, "NO_COLOR": None, "FORCE_COLOR": None}
    return CliRunner().invoke(app, [str(a) for a in args], input=input, env={**base, **(env or {})})


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    tmp = tmp_path_factory.mktemp("cli")
    path, shas = make_repo(tmp, [FILES, SECOND], name="sglang")
    return path, shas


@pytest.fixture(scope="module")
def datasets(repo: tuple[Path, list[str]], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    source, shas = repo
    out = tmp_path_factory.mktemp("data")
    cache = out / "cache"
    paths = []
    for i, sha in enumerate(shas):
        target = out / f"d{i}.jsonl"
        result = run(
            "extract", "--source", source, "--sha", sha, "-o", target, "--cache-dir", cache, "-j", "1"
        )
        assert result.exit_code == 0, result.output
        paths.append(target)
    return paths[0], paths[1]


def records(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line)["record"] for line in path.read_bytes().splitlines()]


# -- first run --------------------------------------------------------------------------------


def test_pinned_sha_is_named_in_help_and_in_the_error_with_a_hint(
    repo: tuple[Path, list[str]], tmp_path: Path
) -> None:
    assert DEFAULT_SHA in " ".join(run("extract", "--help").stdout.split())
    result = run("extract", "--source", repo[0], "--cache-dir", tmp_path / "c", "-o", tmp_path / "x.jsonl")
    assert result.exit_code == 2
    assert DEFAULT_SHA in result.stderr and "--sha HEAD" in result.stderr
    assert "Traceback" not in result.output
    assert not (tmp_path / "x.jsonl").exists()


def test_an_explicit_unknown_sha_gets_no_pinned_hint(repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    result = run("extract", "--source", repo[0], "--sha", "v9.9.9", "--cache-dir", tmp_path / "c")
    assert result.exit_code == 2 and "v9.9.9: no such commit" in result.stderr
    assert "pinned" not in result.stderr


def test_dirty_work_tree_is_noted_and_the_committed_tree_read(tmp_path: Path) -> None:
    clone, _ = make_repo(tmp_path, [FILES, SECOND], name="work")
    args = ("extract", "--source", clone, "--sha", "HEAD", "--cache-dir", tmp_path / "c", "-j", "1")
    clean = run(*args, "-o", tmp_path / "clean.jsonl")
    assert clean.exit_code == 0 and "uncommitted" not in clean.stderr
    edited = clone / "python/sglang/srt/model_loader/weights.py"
    edited.write_bytes(edited.read_bytes() + b"\n\ndef extra():\n    raise KeyError('not committed')\n")
    dirty = run(*args, "-o", tmp_path / "dirty.jsonl")
    assert dirty.exit_code == 0
    assert "1 file(s) in scope have uncommitted changes" in dirty.stderr
    assert "committed tree" in dirty.stderr
    # What was read is the commit: the uncommitted raise is not in the dataset.
    assert (tmp_path / "dirty.jsonl").read_bytes() == (tmp_path / "clean.jsonl").read_bytes()
    assert not any("not committed" in r["errorMessage"] for r in records(tmp_path / "dirty.jsonl"))


def _closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_unreachable_url_hints_at_a_local_source_and_leaves_no_cache_folder(tmp_path: Path) -> None:
    cache = tmp_path / "fresh" / "cache"
    url = f"http://127.0.0.1:{_closed_port()}/sglang.git"
    result = run("extract", "--source", url, "--sha", "main", "--cache-dir", cache)
    assert result.exit_code == 2
    assert "could not clone" in result.stderr
    assert "--source also takes a local clone or bare mirror" in result.stderr
    assert not (tmp_path / "fresh").exists()


def test_include_that_matches_nothing_is_exit_2_naming_the_globs(
    repo: tuple[Path, list[str]], tmp_path: Path
) -> None:
    source, shas = repo
    out = tmp_path / "none.jsonl"
    result = run(
        "extract", "--source", source, "--sha", shas[0], "--include", "srt/**/*.py",
        "--include", "nowhere/*.py", "-o", out, "--cache-dir", tmp_path / "c",
    )  # fmt: skip
    assert result.exit_code == 2
    assert "--include: no file" in result.stderr and "srt/**/*.py, nowhere/*.py" in result.stderr
    assert not out.exists()


# -- conventions ------------------------------------------------------------------------------

COMMANDS = [
    ["extract"], ["validate"], ["schema"], ["diff"], ["nightly"], ["match"],
    ["show"], ["stats"], ["cache", "info"], ["cache", "clean"],
]  # fmt: skip


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_has_short_help_quiet_verbose_and_color(command: list[str]) -> None:
    short, long = run(*command, "-h"), run(*command, "--help")
    assert short.exit_code == long.exit_code == 0
    assert short.stdout == long.stdout
    for option in ("-q, --quiet", "-v, --verbose", "--color auto|always|never", "-h, --help"):
        assert option in short.stdout, option
    # Value names, never Python types or reprs of defaults.
    assert not re.search(r"<(bool|int|str|list)|\[\'|list\[", short.stdout)


def test_version_and_completion(monkeypatch: pytest.MonkeyPatch) -> None:
    for flag in ("-V", "--version"):
        result = run(flag)
        assert result.exit_code == 0 and re.fullmatch(r"sglang-errors \d+\.\d+\.\d+\n", result.stdout)
    # The shell is found from the process's ancestors, which a detached test run may not have.
    monkeypatch.setattr("shellingham.detect_shell", lambda: ("bash", "/bin/bash"))
    completion = run("--show-completion")
    assert completion.exit_code == 0, (completion.output, completion.exc_info)
    assert "_SGLANG_ERRORS_COMPLETE" in completion.stdout


def test_usage_errors_and_bad_formats_exit_2(datasets: tuple[Path, Path]) -> None:
    assert run("validate", "--no-such-option").exit_code == 2
    bad = run("validate", datasets[0], "--format", "yaml")
    assert bad.exit_code == 2 and "--format: expected table|json|jsonl|github, got 'yaml'" in bad.stderr
    assert run("stats", datasets[0], "--format", "github").exit_code == 2


def test_a_failed_write_is_where_what_and_exit_2(repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = run("extract", "--source", repo[0], "--sha", repo[1][0], "-o", blocker / "x.jsonl",
                 "--cache-dir", tmp_path / "c", "-j", "1")  # fmt: skip
    assert result.exit_code == 2
    assert re.search(rf"error: {re.escape(str(blocker))}\S*: ", result.stderr)
    assert "Traceback" not in result.output


def test_quiet_silences_notes_but_not_results(datasets: tuple[Path, Path]) -> None:
    loud = run("validate", datasets[0])
    assert loud.exit_code == 0 and "record(s), ok" in loud.stderr
    quiet = run("validate", datasets[0], "-q")
    assert quiet.exit_code == 0 and quiet.stderr == ""
    assert run("stats", datasets[0], "-q").stdout == run("stats", datasets[0]).stdout


def test_color_always_never_and_no_color(datasets: tuple[Path, Path]) -> None:
    rid = records(datasets[0])[0]["id"]
    always = run("show", rid, "-d", datasets[0], "--color", "always")
    never = run("show", rid, "-d", datasets[0], "--color", "never", env={"FORCE_COLOR": "1"})
    auto_no_color = run("show", rid, "-d", datasets[0], env={"NO_COLOR": "1", "FORCE_COLOR": "1"})
    assert "\x1b[" in always.stdout
    assert "\x1b[" not in never.stdout and "\x1b[" not in auto_no_color.stdout


def test_piped_tables_are_not_wrapped_at_80_columns(datasets: tuple[Path, Path]) -> None:
    result = run("stats", datasets[1], "--against", datasets[0])
    assert result.exit_code == 0
    long_flag_row = [ln for ln in result.stdout.splitlines() if "--chunked-prefill-size" in ln]
    assert long_flag_row, result.stdout
    diff = run("diff", datasets[0], datasets[1])
    assert diff.exit_code == 1
    # The whole message sits on one line of the table, however long that line is.
    assert any("unsupported dtype {dtype}" in ln for ln in diff.stdout.splitlines())
    show = run("show", "--dataset", datasets[0], _id_of(datasets[0], "chunked-prefill"))
    assert any(len(ln) > 80 for ln in show.stdout.splitlines())
    assert any("leave it unset" in ln and "--chunked-prefill-size" in ln for ln in show.stdout.splitlines())
    # Plain lines in a pipe: nothing padded out to a panel's width.
    assert all(ln == ln.rstrip() for ln in show.stdout.splitlines())


def _id_of(path: Path, needle: str) -> str:
    [rid] = [str(r["id"]) for r in records(path) if needle in r["errorMessage"]]
    return rid


# -- formats and stdin/stdout -----------------------------------------------------------------


def test_extract_summary_as_json_and_dataset_on_stdout(repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    source, shas = repo
    common = ("extract", "--source", source, "--sha", shas[0], "--cache-dir", tmp_path / "c", "-j", "1")
    as_json = run(*common, "-o", tmp_path / "a.jsonl", "--format", "json")
    alias = run(*common, "-o", tmp_path / "a.jsonl", "--json")
    summary = orjson.loads(as_json.stdout)
    assert summary["sha"] == shas[0] and summary["records"] == 4 and summary["files"]["inScope"] == 3
    assert orjson.loads(alias.stdout)["records"] == 4
    piped = run(*common, "-o", "-")
    assert piped.exit_code == 0
    assert piped.stdout.encode() == (tmp_path / "a.jsonl").read_bytes()


def test_validate_reads_stdin_and_speaks_json_jsonl_and_github(datasets: tuple[Path, Path]) -> None:
    good = datasets[0].read_bytes()
    ok = run("validate", "-", "--format", "json", input=good)
    assert ok.exit_code == 0 and orjson.loads(ok.stdout) == {
        "path": "-",
        "records": 4,
        "ok": True,
        "problems": [],
    }
    broken = good + b'{"record": {}}\n'
    gh = run("validate", "-", "--format", "github", input=broken)
    assert gh.exit_code == 1
    assert gh.stdout.startswith("::error file=-,line=5,title=sglang-errors validate::")
    lines = run("validate", datasets[0], datasets[1], "--format", "jsonl")
    assert [orjson.loads(ln)["records"] for ln in lines.stdout.splitlines()] == [4, 5]


def test_schema_to_stdout_and_check_from_stdin() -> None:
    committed = (ROOT / "schemas" / "error-record.v2.schema.json").read_bytes()
    assert run("schema", "-o", "-").stdout.encode() == committed
    assert run("schema", "--check", "-o", "-", input=committed).exit_code == 0
    assert run("schema", "--check", "-o", "-", input=b"{}").exit_code == 1


def test_diff_formats_github_jsonl_markdown_and_stdin(datasets: tuple[Path, Path]) -> None:
    old, new = datasets
    gh = run("diff", old, new, "--format", "github")
    assert gh.exit_code == 1
    assert "::notice file=python/sglang/srt/model_loader/weights.py,line=" in gh.stdout
    assert "title=error added::TypeError: unsupported dtype {dtype}" in gh.stdout
    entries = [orjson.loads(ln) for ln in run("diff", old, new, "-f", "jsonl").stdout.splitlines()]
    assert [e["change"] for e in entries] == ["added"]
    assert entries[0]["record"]["errorClass"] == "TypeError"
    markdown = run("diff", "-", new, "--format", "markdown", input=old.read_bytes())
    assert markdown.exit_code == 1 and "### Added" in markdown.stdout
    assert run("diff", old, old, "--json").exit_code == 0
    assert run("diff", "-", "-", input=b"").exit_code == 2


# -- show, stats, cache -----------------------------------------------------------------------


def test_show_by_id_prefix_and_slug(datasets: tuple[Path, Path]) -> None:
    record = next(r for r in records(datasets[0]) if r["errorClass"] == "FileNotFoundError")
    by_id = run("show", record["id"], "-d", datasets[0])
    assert by_id.exit_code == 0
    text = by_id.stdout
    for part in ("weights not found at {path}", record["githubUrl"], "what to do", "raise FileNotFoundError"):
        assert part in text, part
    assert run("show", record["slug"], "-d", datasets[0]).stdout == text
    assert run("show", record["id"][:8], "-d", datasets[0]).stdout == text
    as_json = run("show", record["id"], "-d", "-", "--json", input=datasets[0].read_bytes())
    assert orjson.loads(as_json.stdout) == record
    assert "## `FileNotFoundError`" in run("show", record["id"], "-d", datasets[0], "-f", "markdown").stdout
    missing = run("show", "no-such-slug", "-d", datasets[0])
    assert missing.exit_code == 1 and "no record" in missing.stderr


def test_stats_counts_and_change_against_an_older_dataset(datasets: tuple[Path, Path]) -> None:
    old, new = datasets
    alone = orjson.loads(run("stats", old, "--json").stdout)
    assert alone["records"] == 4 and alone["files"] == 3
    assert alone["errorClass"] == {"ValueError": 2, "AssertionError": 1, "FileNotFoundError": 1}
    assert alone["subsystem"]["srt/managers"] == 2
    assert alone["flag"] == {"--chunked-prefill-size": 1, "--max-batch-size": 1}
    compared = orjson.loads(run("stats", new, "--against", old, "--json").stdout)
    assert compared["againstRecords"] == 4 and compared["records"] == 5
    assert compared["errorClass"]["TypeError"] == {"count": 1, "before": 0, "change": 1}
    assert compared["errorClass"]["ValueError"]["change"] == 0
    assert "| TypeError | 1 | +1 |" in run("stats", new, "--against", old, "-f", "markdown").stdout


def test_cache_info_and_clean(repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert run("extract", "--source", repo[0], "--sha", repo[1][0], "-o", tmp_path / "x.jsonl",
               "--cache-dir", cache, "-j", "1").exit_code == 0  # fmt: skip
    info = orjson.loads(run("cache", "info", "--cache-dir", cache, "--json").stdout)
    kinds = [e["kind"] for e in info["entries"]]
    assert info["bytes"] > 0 and set(kinds) == {"results"}
    assert sum(e["files"] for e in info["entries"]) >= 3
    n = len(kinds)
    table = run("cache", "info", "--cache-dir", cache).stdout
    assert str(cache) in table and "results" in table
    recent = orjson.loads(run("cache", "clean", "--cache-dir", cache, "--older-than", "1d", "--json").stdout)
    assert recent["entries"] == [] and (cache / "results").is_dir()
    dry = run("cache", "clean", "--cache-dir", cache, "--dry-run")
    assert f"would remove {n} entries" in dry.stdout and any((cache / "results").iterdir())
    gone = run("cache", "clean", "--cache-dir", cache)
    assert gone.exit_code == 0 and f"removed {n} entries" in gone.stdout
    assert not any((cache / "results").iterdir())
    bad = run("cache", "clean", "--cache-dir", cache, "--older-than", "soon")
    assert bad.exit_code == 2 and "--older-than" in bad.stderr


# -- [tool.sglang-errors] -----------------------------------------------------------------------


def test_project_settings_apply_and_flags_override_them(
    repo: tuple[Path, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, shas = repo
    project = tmp_path / "team"
    (project / "sub").mkdir(parents=True)
    rel = os.path.relpath(source, project)
    (project / "pyproject.toml").write_text(
        f'[project]\nname = "team"\n\n[tool.sglang-errors]\nsource = "{rel}"\nsha = "{shas[0]}"\n'
        'include = ["python/sglang/**/*.py"]\nrepo = "team/sglang-fork"\njobs = 1\n'
    )
    monkeypatch.chdir(project / "sub")  # the nearest pyproject.toml above the working folder
    monkeypatch.delenv("SGLANG_ERRORS_SOURCE", raising=False)
    pinned = run("extract", "-o", tmp_path / "p.jsonl", "--cache-dir", tmp_path / "c", "--json")
    assert pinned.exit_code == 0, pinned.output
    got = records(tmp_path / "p.jsonl")
    assert {r["analyzedSha"] for r in got} == {shas[0]} and {r["repo"] for r in got} == {"team/sglang-fork"}
    assert not any(r["filePath"].startswith("sgl-kernel/") for r in got)
    flags = run(
        "extract",
        "--sha",
        shas[1],
        "--repo",
        "a/b",
        "-o",
        tmp_path / "f.jsonl",
        "--cache-dir",
        tmp_path / "c",
    )
    assert flags.exit_code == 0
    assert {(r["analyzedSha"], r["repo"]) for r in records(tmp_path / "f.jsonl")} == {(shas[1], "a/b")}
    (project / "pyproject.toml").write_text("[tool.sglang-errors]\nthreads = 4\n")
    bad = run("extract", "--cache-dir", tmp_path / "c")
    assert bad.exit_code == 2 and "[tool.sglang-errors]: unknown key 'threads'" in bad.stderr


# -- true subprocesses --------------------------------------------------------------------------


def _subprocess(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SOURCE_DATE_EPOCH": EPOCH}
    return subprocess.run(
        [sys.executable, "-m", "extractor", *map(str, args)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_subprocess_exit_codes_and_no_tracebacks(datasets: tuple[Path, Path], tmp_path: Path) -> None:
    assert _subprocess("validate", datasets[0]).returncode == 0
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    found = _subprocess("validate", bad)
    assert found.returncode == 1 and f"{bad}:1:" in found.stderr
    trouble = _subprocess("validate", tmp_path / "absent.jsonl")
    assert trouble.returncode == 2 and "no such dataset file" in trouble.stderr
    for proc in (found, trouble):
        assert "Traceback" not in proc.stderr
