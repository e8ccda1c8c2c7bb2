"""The record model is the single source of the schema; the committed JSON Schema must match it."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from extractor import api
from extractor.records.model import DatasetLine, ErrorRecord
from tests.conftest import LINE, ROOT, SCHEMA


def test_a_well_formed_line_validates() -> None:
    DatasetLine.model_validate(LINE)


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("record", "unknownField"), 1),
        (("record", "lineNumber"), "11"),
        (("record", "id"), "XYZ"),
        (("record", "messagePattern"), "(unclosed"),
        (("record", "sourceCodeEnd"), 12),
        (("record", "lineNumber"), 30),
        (("record", "githubUrl"), "https://github.com/other/repo/blob/x/y#L1-L2"),
        (("record", "analyzedAt"), "2026-08-28 05:10:05"),
        (("record", "schemaVersion"), 1),
        (("record", "solutions"), []),
        (("datasetVersion",), "yesterday"),
        (("extra",), True),
    ],
)
def test_bad_lines_are_rejected(path: tuple[str, ...], value: object) -> None:
    line = copy.deepcopy(LINE)
    node: dict[str, Any] = line
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(ValidationError):
        DatasetLine.model_validate(line)


def test_missing_field_is_rejected() -> None:
    line = copy.deepcopy(LINE)
    del line["record"]["tags"]
    with pytest.raises(ValidationError):
        DatasetLine.model_validate(line)


def test_committed_schema_matches_the_model() -> None:
    assert SCHEMA.read_bytes() == api.schema_bytes(), "schema drifted: run `sglang-errors schema`"


def test_schema_lists_exactly_the_record_fields() -> None:
    schema = json.loads(SCHEMA.read_text())
    record = schema["$defs"]["ErrorRecord"]
    assert list(record["properties"]) == list(ErrorRecord.model_fields)
    assert set(record["required"]) == set(ErrorRecord.model_fields)
    assert record["additionalProperties"] is False


def test_schema_command_check_and_write(tmp_path: Path) -> None:
    target = tmp_path / "s.json"
    run = [sys.executable, "-m", "extractor", "schema", "--out", str(target)]
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    assert subprocess.run([*run, "--check"], env=env, capture_output=True).returncode == 1
    assert subprocess.run(run, env=env, capture_output=True).returncode == 0
    assert target.read_bytes() == api.schema_bytes()
    assert subprocess.run([*run, "--check"], env=env, capture_output=True).returncode == 0
