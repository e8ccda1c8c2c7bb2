"""Fixture modules beside golden JSONL files: the analysis facts of every site, reviewed as a diff.

Each ``tests/fixtures/{messages,conditions}/<case>.py`` is parsed and analysed; the facts of its
sites (:func:`extractor.analysis.analyse.site_facts`, one JSON object a line) must equal
``<case>.jsonl`` beside it. After a deliberate change, regenerate them with
``SGLANG_ERRORS_REGEN=1 pytest tests/test_golden.py`` and review the diff.
"""

from __future__ import annotations

import ast
import json
import os
import re
from pathlib import Path

import pytest

from extractor.analysis.analyse import analyse, site_facts
from extractor.analysis.parse import ParsedFile, parse_source
from tests.census import census

FIXTURES = Path(__file__).parent / "fixtures"
CASES = sorted([*FIXTURES.glob("messages/*.py"), *FIXTURES.glob("conditions/*.py")])
REGEN = os.environ.get("SGLANG_ERRORS_REGEN") == "1"


def facts_of(path: Path) -> list[dict[str, object]]:
    parsed = parse_source(path.relative_to(FIXTURES).as_posix(), path.read_bytes())
    assert isinstance(parsed, ParsedFile), parsed
    return [site_facts(site) for site in analyse(parsed)]


def render(facts: list[dict[str, object]]) -> str:
    return "".join(json.dumps(f, ensure_ascii=False) + "\n" for f in facts)


def test_there_are_cases() -> None:
    assert len(CASES) >= 10


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_golden(case: Path) -> None:
    golden = case.with_suffix(".jsonl")
    got = render(facts_of(case))
    if REGEN:
        golden.write_text(got, encoding="utf-8")
        return
    assert golden.exists(), f"{golden} missing: run SGLANG_ERRORS_REGEN=1 pytest tests/test_golden.py"
    want = golden.read_text(encoding="utf-8")
    got_lines, want_lines = got.splitlines(), want.splitlines()
    for i, (g, w) in enumerate(zip(got_lines, want_lines, strict=False), 1):
        assert json.loads(g) == json.loads(w), f"{golden.name} line {i}"
    assert len(got_lines) == len(want_lines), (
        f"{golden.name}: {len(got_lines)} sites, golden has {len(want_lines)}"
    )


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_facts_are_well_formed(case: Path) -> None:
    """Whatever the golden says: patterns compile and match their own literal-only templates,
    validationCode parses, and every site of the module has a record."""
    facts = facts_of(case)
    assert [f["line"] for f in facts] == sorted(census(ast.parse(case.read_bytes())).elements())
    for fact in facts:
        ast.parse(str(fact["validationCode"]))
        pattern = fact["pattern"]
        if pattern is None:
            continue
        rx = re.compile(str(pattern))
        template = str(fact["template"])
        if "{" not in template and fact["errorClass"] not in ("KeyError",) and not template.startswith("("):
            assert rx.fullmatch(template), (fact["line"], template, pattern)
