"""Golden test of flag fixes that must pass the other checks of their function:
``tests/fixtures/fixes/draft_checks.py`` ties two flags the way sglang's speculative validation
does; ``draft_checks.jsonl`` beside it holds the prose fields each site gets. Regenerate after a
deliberate change with ``SGLANG_ERRORS_REGEN=1`` and review the diff."""

from __future__ import annotations

import json
from pathlib import Path

from extractor.analysis.analyse import analyse
from extractor.analysis.parse import ParsedFile, parse_source
from extractor.prose.enrich import Siblings, enrich
from extractor.prose.knowledge import build_knowledge, module_constants
from tests.conftest import assert_golden_rows

FIXTURES = Path(__file__).parent / "fixtures" / "fixes"
GOLDEN = FIXTURES / "draft_checks.jsonl"
FIELDS = ("triggerScenarios", "solutions", "exampleFix")


def _rows() -> list[dict[str, object]]:
    knowledge = build_knowledge(
        {"python/sglang/srt/server_args.py": (FIXTURES / "server_args.py").read_bytes()}
    )
    parsed = parse_source(
        "python/sglang/srt/arg_groups/draft.py", (FIXTURES / "draft_checks.py").read_bytes()
    )
    assert isinstance(parsed, ParsedFile), parsed
    constants = module_constants(parsed.tree)
    sites = analyse(parsed)
    siblings = Siblings(sites)
    out: list[dict[str, object]] = []
    for site in sites:
        prose = enrich(site, knowledge, constants, siblings=siblings)
        row: dict[str, object] = {"line": site.line}
        row.update({f: getattr(prose, f) for f in FIELDS})
        out.append(row)
    return out


def test_flag_fixes_match_the_golden_file() -> None:
    assert_golden_rows(GOLDEN, _rows())


def test_a_fix_brings_what_the_other_checks_need() -> None:
    rows = {int(str(r["line"])): r for r in _rows()}
    exact = rows[16]
    first = str(exact["solutions"][0])  # type: ignore[index]
    # --draft-topk 1 alone trips the assertion above (topk without steps): steps come with it.
    assert "`--draft-topk 1`" in first and "`--draft-steps <value>`" in first and "line 11" in first
    after = str(exact["exampleFix"]).split("# after", 1)[1]
    assert "--draft-topk 1" in after and "--draft-steps" in after
    # An elif chain fails only for a value no branch handles, and the fix is a declared choice.
    store = rows[24]
    assert "--store-mode sharded" in str(store["triggerScenarios"])
    assert "--store-mode plain" not in str(store["exampleFix"]).split("# after", 1)[0]
    # Without a sibling that the new value turns on, a fix stands alone.
    assert not any("same function" in str(s) for s in json.loads(json.dumps(store["solutions"])))


def test_an_earlier_assert_that_needs_a_flag_is_reach() -> None:
    knowledge = build_knowledge(
        {"python/sglang/srt/server_args.py": (FIXTURES / "server_args.py").read_bytes()}
    )
    parsed = parse_source(
        "python/sglang/srt/arg_groups/draft.py", (FIXTURES / "draft_checks.py").read_bytes()
    )
    assert isinstance(parsed, ParsedFile), parsed
    sites = {s.line: s for s in analyse(parsed)}
    siblings = Siblings(list(sites.values()))
    docs = {line: enrich(s, knowledge, siblings=siblings).documentation for line, s in sites.items()}
    needs = "It is reached only with `--scale-backend` given: without it the assert at line 29"
    assert needs in docs[30]
    # The assert that needs the flag is not reached after itself, and one outside its branch
    # runs whether or not the flag is given.
    assert "It is reached only with" not in docs[29]
    assert "It is reached only with" not in docs[32]


def test_a_valued_flag_left_empty_is_given_a_value() -> None:
    rows = {int(str(r["line"])): r for r in _rows()}
    empty = rows[38]
    assert str(empty["triggerScenarios"]).startswith("Launching without `--scale-backend`")
    assert "Launch with `--scale-backend <value>`" in list(empty["solutions"])  # type: ignore[call-overload]
    assert str(empty["exampleFix"]).endswith("--scale-backend <value>")


def test_a_flag_that_must_be_given_is_offered_its_declared_choices() -> None:
    args = (
        "from dataclasses import dataclass\n\n\n@dataclass\nclass ServerArgs:\n"
        "    split_strategy: str = None\n\n"
        "    @staticmethod\n    def add_cli_args(parser):\n"
        '        parser.add_argument("--split-strategy", type=str, choices=["zigzag", "interleave", "none"])\n'
    )
    knowledge = build_knowledge({"python/sglang/srt/server_args.py": args.encode()})
    source = (
        "from sglang.srt.server_args import get_global_server_args\n\n\n"
        "def split(batch):\n"
        "    strategy = get_global_server_args().split_strategy\n"
        "    if strategy is None:\n"
        '        raise ValueError("a split strategy is needed to split the batch")\n'
        "    return batch\n"
    )
    parsed = parse_source("python/sglang/srt/layers/split.py", source.encode())
    assert isinstance(parsed, ParsedFile), parsed
    (site,) = analyse(parsed)
    prose = enrich(site, knowledge)
    # The declared choices (not the "none" word) stand in for a placeholder.
    assert any("`--split-strategy zigzag`" in s for s in prose.solutions), prose.solutions
    assert "interleave" in " ".join(prose.solutions) and "<value>" not in " ".join(prose.solutions)
    assert prose.exampleFix.endswith("--split-strategy zigzag")
