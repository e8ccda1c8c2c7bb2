"""Datasets read back by ``validate``, ``diff`` and ``match``: every bad line named, never a traceback.

``tests/test_validate.py`` checks ``validate`` on one file mixing the common problems; here each
problem gets a file of its own and goes through all three readers: in process (the
:class:`ExtractorError` names ``file:line``) and through the real CLI for each command (exit
status, message, no traceback).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from extractor import api
from extractor.datasets.diff import diff_files
from extractor.datasets.match import Matcher
from extractor.errors import ExtractorError
from tests.conftest import LINE, run_cli
from tests.hostile import assert_clean_failure


def line(**changes: object) -> bytes:
    data = copy.deepcopy(LINE)
    data["record"].update(changes)
    return orjson.dumps(data) + b"\n"


def top(**extra: object) -> bytes:
    data = copy.deepcopy(LINE)
    data.update(extra)
    return orjson.dumps(data) + b"\n"


OTHER = "fedcba9876543210"

# name -> (file content, line the first problem is on, text its description holds)
BAD: dict[str, tuple[bytes, int, str]] = {
    "truncated": (line() + line(id=OTHER)[:-40], 2, "truncated line"),
    "invalid-json": (line() + b'{"record": {"id": \n', 2, "invalid JSON"),
    "wrong-type": (line() + line(id=OTHER, lineNumber="12"), 2, "lineNumber"),
    "wrong-type-list": (line() + line(id=OTHER, solutions="just one"), 2, "solutions"),
    "null-field": (line() + line(id=OTHER, errorClass=None), 2, "errorClass"),
    "duplicate-id": (line() + line(id=OTHER) + line(), 3, "duplicate id 0123456789abcdef (first on line 1)"),
    "unknown-record-field": (line() + line(id=OTHER, secretField=1), 2, "secretField"),
    "unknown-top-field": (top(extra=1), 1, "extra"),
    "missing-field": (line() + orjson.dumps({"record": {"id": OTHER}}) + b"\n", 2, "record."),
    "array-line": (line() + b"[1, 2]\n", 2, "expected a JSON object, got list"),
    "null-line": (b"null\n" + line(), 1, "expected a JSON object, got NoneType"),
    "string-line": (line() + b'"just text"\n', 2, "expected a JSON object, got str"),
    "number-line": (line() + b"42\n", 2, "expected a JSON object, got int"),
    "not-utf8": (line() + b'{"record": "\xff\xfe"}\n', 2, "not valid UTF-8 at column 13"),
    "bom": (b"\xef\xbb\xbf" + line(), 1, "byte order mark"),
    "deep-json": (line() + b"[" * 50_000 + b"]" * 50_000 + b"\n", 2, "depth limit"),
    "bad-pattern": (
        line() + line(id=OTHER, messagePattern="(unclosed"),
        2,
        "messagePattern is not a portable pattern",
    ),
    "window-mismatch": (line() + line(id=OTHER, sourceCodeEnd=99), 2, "source"),
    "binary": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\n", 1, ""),
}


@pytest.fixture
def good(tmp_path: Path) -> Path:
    path = tmp_path / "good.jsonl"
    path.write_bytes(line() + line(id=OTHER))
    return path


def _write(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(BAD[name][0])
    return path


READERS: dict[str, Callable[[Path, Path], object]] = {
    "diff-old": lambda bad, good: diff_files(bad, good),
    "diff-new": lambda bad, good: diff_files(good, bad),
    "match": lambda bad, good: Matcher.from_path(bad),
}


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("name", list(BAD))
def test_each_reader_names_the_file_and_line(name: str, reader: str, tmp_path: Path, good: Path) -> None:
    bad = _write(tmp_path, name)
    _, number, text = BAD[name]
    with pytest.raises(ExtractorError) as info:
        READERS[reader](bad, good)
    assert info.value.where == f"{bad}:{number}"
    assert text in info.value.what


@pytest.mark.parametrize("name", list(BAD))
def test_validate_lists_every_problem_by_line(name: str, tmp_path: Path) -> None:
    bad = _write(tmp_path, name)
    _, number, text = BAD[name]
    report = api.validate(bad)
    assert report.problems, name
    first = report.problems[0]
    assert (first.path, first.line) == (str(bad), number)
    assert text in first.what


@pytest.mark.parametrize("content", [b"", b"\n\n   \n"], ids=["empty", "blank"])
def test_empty_dataset(content: bytes, tmp_path: Path, good: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(content)
    report = api.validate(path)
    assert [(p.path, p.what) for p in report.problems] == [(str(path), "empty dataset")]
    # Read as data, an empty dataset holds no records: a diff removes everything, a match finds nothing.
    assert diff_files(good, path).has_differences
    assert Matcher.from_path(path).match("ValueError: anything", top=3) == []


@pytest.mark.parametrize("kind", ["missing", "directory"])
def test_missing_file_and_directory(kind: str, tmp_path: Path, good: Path) -> None:
    path = tmp_path / "data.jsonl"
    if kind == "directory":
        path.mkdir()
    for read in (
        api.validate,
        lambda p: diff_files(good, p),
        lambda p: diff_files(p, good),
        Matcher.from_path,
    ):
        with pytest.raises(ExtractorError) as info:
            read(path)
        assert info.value.where == str(path)
        assert ("directory" if kind == "directory" else "no such") in info.value.what.lower()


# --------------------------------------------------------------------------- the CLI


def test_validate_cli_names_each_file_and_line(tmp_path: Path) -> None:
    paths = [_write(tmp_path, name) for name in BAD]
    proc = run_cli("validate", *map(str, paths))
    assert_clean_failure(proc)
    assert proc.returncode == 1
    for path, (_, number, _text) in zip(paths, BAD.values(), strict=True):
        assert f"{path}:{number}:" in proc.stderr, path


@pytest.mark.parametrize("name", ["truncated", "unknown-record-field", "not-utf8", "duplicate-id"])
def test_diff_and_match_cli_name_the_file_and_line(name: str, tmp_path: Path, good: Path) -> None:
    bad = _write(tmp_path, name)
    _, number, text = BAD[name]
    for args in (
        ["diff", str(good), str(bad)],
        ["match", "--dataset", str(bad), "ValueError: something failed"],
    ):
        proc = run_cli(*args)
        assert_clean_failure(proc, f"{bad}:{number}:", text)
        assert proc.returncode == 2


@pytest.mark.parametrize("kind", ["missing", "directory"])
def test_cli_on_missing_file_and_directory(kind: str, tmp_path: Path, good: Path) -> None:
    path = tmp_path / "data.jsonl"
    if kind == "directory":
        path.mkdir()
    for args in (
        ["validate", str(path)],
        ["diff", str(path), str(good)],
        ["match", "--dataset", str(path), "x"],
    ):
        proc = run_cli(*args)
        assert_clean_failure(proc, str(path))
        assert proc.returncode == 2


def test_diff_out_is_untouched_when_an_input_is_bad(tmp_path: Path, good: Path) -> None:
    out = tmp_path / "changes.md"
    out.write_bytes(b"previous changelog\n")
    bad = _write(tmp_path, "truncated")
    proc = run_cli("diff", str(good), str(bad), "--format", "markdown", "--out", str(out))
    assert_clean_failure(proc, f"{bad}:2:")
    assert out.read_bytes() == b"previous changelog\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["changes.md", "good.jsonl", "truncated.jsonl"]
    )
