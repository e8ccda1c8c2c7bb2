"""End to end: a real git repository, the real CLI, and the records it writes."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.conftest import run_cli, run_in_process
from tests.gitrepos import bare_clone, make_repo

FIXTURES = Path(__file__).parent / "fixtures" / "core"
ROOT = Path(__file__).resolve().parents[1]
EPOCH = "1780000000"


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    tmp = tmp_path_factory.mktemp("repo")
    files = {
        "python/sglang/srt/mem_cache/pool_configurator.py": (FIXTURES / "pool_configurator.py").read_bytes(),
        "python/sglang/srt/shapes.py": (FIXTURES / "shapes.py").read_bytes(),
        "python/sglang/srt/tests/test_skip.py": b"raise ValueError('in a test folder')\n",
        "python/sglang/test/helpers.py": b"raise ValueError('in a test folder')\n",
        "python/sglang/broken.py": b"def broken(:\n    raise ValueError('x')\n",
        "sgl-kernel/python/sgl_kernel/ops.py": b"def op(x):\n    if x is None:\n        raise TypeError('x is required')\n",
        "docs/outside.py": b"raise ValueError('out of scope')\n",
    }
    repo, shas = make_repo(tmp, [files])
    mirror = bare_clone(repo, tmp / "mirror.git")
    return mirror, shas[-1]


@pytest.fixture(scope="module")
def dataset(target: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    mirror, sha = target
    out = tmp_path_factory.mktemp("out") / "x.jsonl"
    cache = tmp_path_factory.mktemp("cache")
    proc = run_cli(
        "extract",
        "--source",
        mirror,
        "--sha",
        sha[:10],
        "--out",
        out,
        "--cache-dir",
        cache,
        env={"SOURCE_DATE_EPOCH": EPOCH},
    )
    assert proc.returncode == 0, proc.stderr
    assert "python/sglang/broken.py" in proc.stderr  # named in the summary, with its reason
    assert "syntax error" in proc.stderr
    return out


def test_validate_accepts_the_output(dataset: Path) -> None:
    proc = run_in_process("validate", dataset)
    assert proc.returncode == 0, proc.stderr


def test_records_have_exactly_the_reference_fields(dataset: Path) -> None:
    from extractor.records.model import DatasetLine, ErrorRecord

    for line in read_lines(dataset):
        assert list(line) == ["record", "datasetVersion"]
        assert list(line["record"]) == list(ErrorRecord.model_fields)
        DatasetLine.model_validate(line)


def test_scope_and_sites(dataset: Path, target: tuple[Path, str]) -> None:
    _, sha = target
    records = [line["record"] for line in read_lines(dataset)]
    paths = {r["filePath"] for r in records}
    assert paths == {
        "python/sglang/srt/mem_cache/pool_configurator.py",
        "python/sglang/srt/shapes.py",
        "sgl-kernel/python/sgl_kernel/ops.py",
    }
    assert all(r["analyzedSha"] == sha for r in records)
    shapes = {(r["lineNumber"], r["errorClass"]) for r in records if r["filePath"].endswith("shapes.py")}
    # The bare raise and the re-raise of a caught name make no record; the message-less assert does.
    assert shapes == {
        (7, "RuntimeError"),
        (12, "ValueError"),
        (18, "errors.ConfigError"),
        (23, "AssertionError"),
        (24, "AssertionError"),
        (28, "NotImplementedError"),
        (34, "KeyError"),
        (36, "LookupError"),
    }
    order = [(r["filePath"], r["lineNumber"]) for r in records]
    assert order == sorted(order)
    assert len({r["id"] for r in records}) == len(records)
    assert len({r["slug"] for r in records}) == len(records)


def test_reference_gate_record(dataset: Path, target: tuple[Path, str]) -> None:
    _, sha = target
    (rec,) = [
        line["record"]
        for line in read_lines(dataset)
        if line["record"]["filePath"].endswith("pool_configurator.py")
    ]
    message = "--enable-linear-replay-spec with REPLAY/FOLD requires a linear (kimi_linear) model; got a non-linear model."
    assert rec["errorClass"] == "ValueError"
    assert rec["errorMessage"] == message
    assert rec["messagePattern"] == (
        "--enable-linear-replay-spec with REPLAY/FOLD requires a linear \\(kimi_linear\\) model; got a non-linear model\\."
    )
    assert re.fullmatch(rec["messagePattern"], message)
    assert rec["lineNumber"] == 26
    source = (FIXTURES / "pool_configurator.py").read_text().splitlines()
    # The window holds the comments above the gate, the local binding it reads, the gate and the raise.
    assert rec["sourceCodeStart"] == 18
    assert rec["sourceCodeEnd"] == 29
    assert rec["sourceCode"] == "\n".join(source[17:29])
    assert rec["githubUrl"] == (
        f"https://github.com/sgl-project/sglang/blob/{sha}/python/sglang/srt/mem_cache/pool_configurator.py#L18-L29"
    )
    assert "PoolConfigurator._build_hybrid_pool" in rec["documentation"]
    code = rec["validationCode"]
    compile(code, "<validationCode>", "exec")
    assert "_algo = (get_spec().speculative_algorithm or '').upper()" in code
    assert "_algo in ('REPLAY', 'FOLD')" in code
    assert rec["slug"].startswith("enable-linear-replay-spec-with-replay-fold")
    assert re.fullmatch(r"[0-9a-f]{16}", rec["id"])
    assert rec["analyzedAt"] == "2026-05-28T20:26:40.000Z"  # SOURCE_DATE_EPOCH fixes it


def test_same_sha_and_epoch_give_the_same_bytes(
    target: tuple[Path, str], tmp_path: Path, dataset: Path
) -> None:
    mirror, sha = target
    again = tmp_path / "again.jsonl"
    proc = run_cli(
        "extract",
        "--source",
        mirror,
        "--sha",
        sha,
        "--out",
        again,
        "--no-cache",
        "--jobs",
        "1",
        env={"SOURCE_DATE_EPOCH": EPOCH},
    )
    assert proc.returncode == 0, proc.stderr
    assert again.read_bytes() == dataset.read_bytes()


def test_ids_do_not_depend_on_line_shifts(tmp_path: Path) -> None:
    body = (FIXTURES / "shapes.py").read_bytes()
    repo, shas = make_repo(
        tmp_path,
        [
            {"python/sglang/a.py": body, "python/sglang/b.py": b"raise OSError('b')\n"},
            {
                "python/sglang/a.py": b"# a new header line\n\n" + body,
                "python/sglang/b.py": b"raise OSError('b')\n",
            },
        ],
    )
    ids = []
    for i, sha in enumerate(shas):
        out = tmp_path / f"{i}.jsonl"
        proc = run_in_process("extract", "--source", repo, "--sha", sha, "--out", out, "--no-cache")
        assert proc.returncode == 0, proc.stderr
        recs = [line["record"] for line in read_lines(out)]
        ids.append({(r["filePath"], r["id"], r["slug"]) for r in recs})
        lines = sorted(r["lineNumber"] for r in recs if r["filePath"] == "python/sglang/a.py")
        assert lines[0] == 7 + 2 * i
    assert ids[0] == ids[1]


def test_include_exclude_and_repo_options(target: tuple[Path, str], tmp_path: Path) -> None:
    mirror, sha = target
    out = tmp_path / "x.jsonl"
    proc = run_in_process(
        "extract",
        "--source",
        mirror,
        "--sha",
        sha,
        "--out",
        out,
        "--no-cache",
        "--include",
        "python/sglang/**/*.py",
        "--exclude",
        "**/mem_cache/**",
        "--repo",
        "someone/fork",
    )
    assert proc.returncode == 0, proc.stderr
    recs = [line["record"] for line in read_lines(out)]
    assert {r["filePath"] for r in recs} == {"python/sglang/srt/shapes.py"}
    assert all(
        r["repo"] == "someone/fork" and r["githubUrl"].startswith("https://github.com/someone/fork/")
        for r in recs
    )


def test_failed_run_keeps_the_previous_output(target: tuple[Path, str], tmp_path: Path) -> None:
    mirror, _ = target
    out = tmp_path / "keep.jsonl"
    out.write_bytes(b"previous dataset\n")
    proc = run_cli("extract", "--source", mirror, "--sha", "0" * 40, "--out", out, "--no-cache")
    assert proc.returncode != 0
    assert "0" * 40 in proc.stderr
    assert "Traceback" not in proc.stderr
    assert out.read_bytes() == b"previous dataset\n"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.jsonl"]


def test_source_from_environment_variable(target: tuple[Path, str], tmp_path: Path) -> None:
    mirror, sha = target
    out = tmp_path / "env.jsonl"
    proc = run_in_process(
        "extract", "--sha", sha, "--out", out, "--no-cache", env={"SGLANG_ERRORS_SOURCE": str(mirror)}
    )
    assert proc.returncode == 0, proc.stderr
    assert len(read_lines(out)) == 10  # every site of the fixture repository, bare assert included
