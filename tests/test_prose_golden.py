"""Golden test of the user-facing prose: ``tests/fixtures/prose/advice.py`` holds one site per
cause kind; ``advice.jsonl`` beside it the prose fields each should get. Regenerate after a
deliberate change with ``SGLANG_ERRORS_REGEN=1`` and review the diff."""

from __future__ import annotations

import ast
from pathlib import Path

from extractor.analysis.analyse import analyse
from extractor.analysis.parse import ParsedFile, parse_source
from extractor.prose.enrich import enrich
from extractor.prose.knowledge import build_knowledge, module_constants
from tests.conftest import assert_golden_rows

FIXTURES = Path(__file__).parent / "fixtures" / "prose"
GOLDEN = FIXTURES / "advice.jsonl"
FIELDS = (
    "errorType",
    "backgroundTag",
    "handlingStrategy",
    "documentation",
    "triggerScenarios",
    "commonSituations",
    "solutions",
    "exampleFix",
    "validationCode",
)


def prose_of_fixture() -> list[dict[str, object]]:
    knowledge = build_knowledge(
        {
            "python/sglang/srt/server_args.py": (FIXTURES / "server_args.py").read_bytes(),
            "python/sglang/srt/environ.py": (FIXTURES / "environ.py").read_bytes(),
        }
    )
    parsed = parse_source("python/sglang/srt/layers/advice.py", (FIXTURES / "advice.py").read_bytes())
    assert isinstance(parsed, ParsedFile), parsed
    constants = module_constants(parsed.tree)
    out: list[dict[str, object]] = []
    for site in analyse(parsed):
        prose = enrich(site, knowledge, constants)
        row: dict[str, object] = {"line": site.line, "roles": [a.role for a in site.guard.atoms]}
        row.update({f: getattr(prose, f) for f in FIELDS})
        out.append(row)
    return out


def test_prose_matches_the_golden_file() -> None:
    assert_golden_rows(GOLDEN, prose_of_fixture())


def _double_negation(code: str) -> bool:
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner = node.operand
            if isinstance(inner, ast.UnaryOp) and isinstance(inner.op, ast.Not):
                return True
            if isinstance(inner, ast.Compare) and isinstance(inner.ops[0], ast.NotIn | ast.IsNot | ast.NotEq):
                return True
    return False


def _texts(value: object) -> list[str]:
    """A prose field that holds a list of lines (``solutions``), checked to be one."""
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), value
    return [str(v) for v in value]


def test_prose_invariants() -> None:
    rows = {int(str(r["line"])): r for r in prose_of_fixture()}
    for row in rows.values():
        assert not _double_negation(str(row["validationCode"]))
        assert "\nif " not in str(row["exampleFix"])
    # The second page check survives the first: its fix keeps --page-size positive.
    upper = rows[11]
    assert upper["roles"] == ["survivor", "deciding"]
    assert "`--page-size 64`" in " ".join(_texts(upper["solutions"]))
    # EnvBool(True) fires only when set false: the fix sets it back, not "unset or 0".
    fast = rows[30]
    assert any("SGLANG_USE_FAST_PATH" in s and "=0" not in s for s in _texts(fast["solutions"]))
    # An internal check names no flag or env var in its solutions.
    for line in (53, 59, 61):
        assert not any("--" in s for s in _texts(rows[line]["solutions"]))
