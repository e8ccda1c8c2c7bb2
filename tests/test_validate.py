"""`validate` names every bad line by number and exits non-zero; a good file passes."""

from __future__ import annotations

import copy
from pathlib import Path

import orjson

from tests.conftest import LINE, invoke, run_cli


def _line(**changes: object) -> bytes:
    line = copy.deepcopy(LINE)
    line["record"].update(changes)
    return orjson.dumps(line) + b"\n"


def test_good_file_passes(tmp_path: Path) -> None:
    path = tmp_path / "good.jsonl"
    path.write_bytes(_line() + _line(id="fedcba9876543210"))
    result = invoke("validate", path)
    assert result.exit_code == 0, result.stderr
    assert "2 record(s), ok" in result.stderr


def test_each_bad_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(
        _line()
        + b"{not json\n"
        + _line(id="1111111111111111", lineNumber="x")
        + _line()  # duplicate id of line 1
        + _line(id="2222222222222222", messagePattern="([")
        + b"[1, 2]\n"
        + _line(id="3333333333333333", sourceCodeStart=9)
        + _line(id="4444444444444444")[:-40]  # truncated, no newline
    )
    result = invoke("validate", path)
    assert result.exit_code == 1
    err = result.stderr
    for number in (2, 3, 4, 5, 6, 7, 8):
        assert f"{path}:{number}:" in err, (number, err)
    assert f"{path}:1:" not in err
    assert "duplicate id" in err
    assert "Traceback" not in err


def test_missing_file_is_an_error(tmp_path: Path) -> None:
    proc = run_cli("validate", tmp_path / "nope.jsonl")
    assert proc.returncode == 2
    assert "nope.jsonl" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_atomic_write_uses_the_normal_file_mode(tmp_path: Path) -> None:
    import os

    from extractor.records.jsonl import atomic_write_bytes

    target = tmp_path / "d.jsonl"
    old = os.umask(0o022)
    try:
        atomic_write_bytes(target, [b"x\n"])
    finally:
        os.umask(old)
    assert target.stat().st_mode & 0o777 == 0o644
    assert target.read_bytes() == b"x\n"
