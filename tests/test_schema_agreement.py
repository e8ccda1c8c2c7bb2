"""The pydantic model and an independent JSON-Schema validator judge the same records alike.

The cases in ``fixtures/records/cases.json`` change one base line (the reference-shaped line of
``test_models``) and say whether it must pass or fail; the committed schema is read from disk and
checked with ``jsonschema`` (formats included), so a rule the model enforces that the schema
does not say (or the other way round) fails here.
"""

from __future__ import annotations

import ast
import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from extractor.records import message_pattern
from extractor.records.model import SCHEMA_ID, DatasetLine, permalink
from tests.conftest import LINE, SCHEMA, run_cli
from tests.gitrepos import make_repo

CASES = json.loads(
    (Path(__file__).parent / "fixtures" / "records" / "cases.json").read_text(encoding="utf-8")
)
SCHEMA_DOC: dict[str, Any] = json.loads(SCHEMA.read_text(encoding="utf-8"))
VALIDATOR = Draft202012Validator(SCHEMA_DOC, format_checker=Draft202012Validator.FORMAT_CHECKER)
_URL_INPUTS = {
    "record/filePath",
    "record/repo",
    "record/analyzedSha",
    "record/sourceCodeStart",
    "record/sourceCodeEnd",
}


def build(changes: dict[str, Any]) -> dict[str, Any]:
    line = copy.deepcopy(LINE)
    for path, value in changes.items():
        *parents, key = path.split("/")
        target: dict[str, Any] = line
        for name in parents:
            target = target[name]
        target[key] = value
    record = line["record"]
    if _URL_INPUTS & changes.keys() and "record/githubUrl" not in changes:
        record["githubUrl"] = permalink(
            record["repo"],
            record["analyzedSha"],
            record["filePath"],
            record["sourceCodeStart"],
            record["sourceCodeEnd"],
        )
    return line


def model_accepts(line: dict[str, Any]) -> bool:
    try:
        DatasetLine.model_validate(line)
    except ValidationError:
        return False
    return True


def schema_accepts(line: dict[str, Any]) -> bool:
    return not list(VALIDATOR.iter_errors(line))


def test_the_committed_schema_is_itself_valid_2020_12() -> None:
    Draft202012Validator.check_schema(SCHEMA_DOC)
    assert SCHEMA_DOC["$id"] == SCHEMA_ID
    assert SCHEMA_ID.endswith("/" + SCHEMA.parent.name + "/" + SCHEMA.name)


@pytest.mark.parametrize("name", sorted(CASES["good"]))
def test_good_records_pass_both(name: str) -> None:
    line = build(CASES["good"][name])
    assert model_accepts(line), name
    assert schema_accepts(line), [e.message for e in VALIDATOR.iter_errors(line)]


@pytest.mark.parametrize("name", sorted(CASES["bad"]))
def test_bad_records_fail_both(name: str) -> None:
    line = build(CASES["bad"][name])
    assert not model_accepts(line), name
    assert not schema_accepts(line), name


@pytest.mark.parametrize("name", sorted(CASES["model_only"]))
def test_cross_field_rules_are_the_models_and_are_documented(name: str) -> None:
    line = build(CASES["model_only"][name])
    assert not model_accepts(line), name
    assert schema_accepts(line), name  # JSON Schema cannot compare fields: the description says it
    fields = SCHEMA_DOC["$defs"]["ErrorRecord"]["properties"]
    (path,) = CASES["model_only"][name]
    assert "sourceCodeStart" in fields[path.split("/")[-1]]["description"]


def test_every_field_is_described_and_titled() -> None:
    for definition in SCHEMA_DOC["$defs"].values():
        for name, field in definition["properties"].items():
            assert field.get("description"), name
            assert field.get("title") and " " not in name, name
    assert "\\d" not in SCHEMA.read_text(encoding="utf-8")


def test_every_pattern_of_the_fixtures_is_portable() -> None:
    """The patterns the golden fixture modules produce, and the good cases above, are all in the
    portable dialect: they compile in ``re`` and the linear matcher reads them."""
    patterns = {c["record/messagePattern"] for c in CASES["good"].values() if "record/messagePattern" in c}
    for golden in (Path(__file__).parent / "fixtures").glob("*/*.jsonl"):
        for raw in golden.read_text(encoding="utf-8").splitlines():
            fact = json.loads(raw)
            if isinstance(fact.get("pattern"), str):
                patterns.add(fact["pattern"])
    assert len(patterns) > 50
    for pattern in sorted(patterns):
        assert message_pattern.problem(pattern) is None, pattern
        re.compile(pattern)
        message_pattern.matcher_for(pattern)


def test_an_extracted_dataset_validates_against_the_committed_schema(tmp_path: Path) -> None:
    """The real CLI over the fixture modules: every line passes ``jsonschema`` with formats, and
    every messagePattern and the pattern inside each tryCatchPattern are portable."""
    fixtures = Path(__file__).parent / "fixtures"
    files = {
        f"python/sglang/srt/{module.parent.name}/{module.name}": module.read_bytes()
        for module in sorted(fixtures.glob("*/*.py"))
    }
    repo, shas = make_repo(tmp_path, [files])
    out = tmp_path / "x.jsonl"
    proc = run_cli(
        "extract", "--source", str(repo), "--sha", shas[-1], "--out", str(out),
        "--cache-dir", str(tmp_path / "cache"), "--jobs", "1", env={"SOURCE_DATE_EPOCH": "1767225600"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(raw) for raw in out.read_text(encoding="utf-8").splitlines()]
    assert len(lines) > 50
    for line in lines:
        assert schema_accepts(line), [e.message for e in VALIDATOR.iter_errors(line)]
        record = line["record"]
        assert message_pattern.problem(record["messagePattern"]) is None
        snippet = record["tryCatchPattern"]
        if snippet and "re.fullmatch(" in snippet:
            calls = [
                node
                for node in ast.walk(ast.parse(snippet))
                if isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "fullmatch"
            ]
            embedded = {ast.literal_eval(call.args[0]) for call in calls}
            assert embedded == {record["messagePattern"] or message_pattern.WILDCARD}, snippet
