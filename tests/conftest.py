"""Helpers every test module shares: the real CLI (in process and as a subprocess), a record
shaped like the reference record, and git repositories made in a temporary folder.

Test modules import these from here, never from one another; the domain factories
(``diff_factory``, ``match_factory``, ``gitrepos``, ``hostile``) build on them.
"""

from __future__ import annotations

import ast
import copy
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from extractor.api import ExtractOptions, extract
from extractor.prose.knowledge import build_knowledge
from extractor.reach import SiteReach
from extractor.reach.file_index import file_facts
from extractor.records.model import ErrorRecord
from tests.gitrepos import Content, make_repo

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "schemas" / "error-record.v2.schema.json"

# A record shaped like the reference record (content written for the tests).
LINE: dict[str, Any] = {
    "record": {
        "id": "0123456789abcdef",
        "repo": "sgl-project/sglang",
        "slug": "widget-must-be-positive-012345",
        "errorCode": None,
        "errorMessage": "widget must be positive, got {n}",
        "messagePattern": "widget must be positive, got [\\s\\S]*?",
        "errorType": "validation",
        "errorClass": "ValueError",
        "httpStatus": None,
        "severity": "error",
        "filePath": "python/sglang/srt/widget.py",
        "lineNumber": 11,
        "sourceCode": "    if n <= 0:\n        raise ValueError(f'widget must be positive, got {n}')",
        "sourceCodeStart": 10,
        "sourceCodeEnd": 11,
        "githubUrl": "https://github.com/sgl-project/sglang/blob/"
        + "a" * 40
        + "/python/sglang/srt/widget.py#L10-L11",
        "documentation": "In `Widget.make`, `n <= 0` raises.",
        "triggerScenarios": "Passing a non-positive n.",
        "commonSituations": "A zero default.",
        "solutions": ["Pass n > 0"],
        "exampleFix": "make(1)",
        "handlingStrategy": "validation",
        "validationCode": "n <= 0",
        "typeGuard": None,
        "tryCatchPattern": None,
        "preventionTips": ["Check n first"],
        "tags": ["widget"],
        "backgroundTag": "invalid-value",
        "analyzedSha": "a" * 40,
        "analyzedAt": "2026-08-28T05:10:05.995Z",
        "schemaVersion": 2,
    },
    "datasetVersion": "2026-08-28T06:17:29.519Z",
}


def records_by_message(tmp_path: Path, files: Mapping[str, str]) -> dict[str, ErrorRecord]:
    """The records of a one-commit repository of ``files`` (path -> source), by message."""
    repo, shas = make_repo(tmp_path / "repo", [{p: s.encode() for p, s in files.items()}])
    result = extract(
        ExtractOptions.build(source=str(repo), sha=shas[0], jobs=1, cache_dir=tmp_path / "cache")
    )
    return {r.errorMessage: r for r in result.records}


def record_line(**record: Any) -> dict[str, Any]:
    """A fresh copy of :data:`LINE` with ``record`` fields replaced."""
    line = copy.deepcopy(LINE)
    line["record"].update(record)
    return line


def run_cli(
    *args: str | Path, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m extractor <args>`` as a real subprocess with the repository on PYTHONPATH.

    Colour is off and the terminal is wide, so tests read plain, unwrapped text.
    """
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = str(ROOT) + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env["NO_COLOR"] = "1"
    full_env["COLUMNS"] = "200"
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "extractor", *map(str, args)],
        cwd=cwd or ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def invoke(*args: str | Path, input: str | None = None, env: Mapping[str, str] | None = None) -> Result:
    """The CLI run in this process (typer's runner): for tests where a subprocess adds nothing."""
    from extractor.cli import app, match_argv

    runner = CliRunner()
    argv = match_argv([str(a) for a in args])
    return runner.invoke(app, argv, input=input, env={"NO_COLOR": "1", "COLUMNS": "200", **(env or {})})


def run_in_process(
    *args: str | Path, input: str | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """:func:`invoke` read as :func:`run_cli` reads a process: exit status, stdout, stderr.

    An exception the command did not turn into a message is raised here, where a process would
    have printed its traceback and exited 1.
    """
    done = invoke(*args, input=input, env=env)
    if done.exception is not None and not isinstance(done.exception, SystemExit):
        raise done.exception
    return subprocess.CompletedProcess([str(a) for a in args], done.exit_code, done.stdout, done.stderr)


def site_reach_of(files: Mapping[str, str], args_path: str) -> SiteReach:
    """The whole-target reach of fixture sources (path -> text); ``args_path`` holds the flags."""
    knowledge = build_knowledge({args_path: files[args_path].encode()})
    facts = [file_facts(p, ast.parse(src)).to_plain() for p, src in sorted(files.items())]
    return SiteReach(facts, knowledge)


def assert_golden_rows(golden: Path, rows: Iterable[Mapping[str, object]]) -> None:
    """``rows`` as JSON lines equal ``golden``; with ``SGLANG_ERRORS_REGEN=1`` the file is rewritten
    first, so the change shows as a diff to review."""
    got = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    if os.environ.get("SGLANG_ERRORS_REGEN") == "1":
        golden.write_text(got, encoding="utf-8")
    assert got == golden.read_text(encoding="utf-8")


@pytest.fixture
def cli() -> Callable[..., Result]:
    """:func:`invoke` as a fixture."""
    return invoke


@pytest.fixture
def git_repo(tmp_path: Path) -> Callable[[list[dict[str, Content]]], tuple[Path, list[str]]]:
    """Make a git repository under ``tmp_path`` with one commit per mapping of path to content;
    returns its path and the commits' shas."""

    def make(commits: list[dict[str, Content]]) -> tuple[Path, list[str]]:
        return make_repo(tmp_path, commits)

    return make
