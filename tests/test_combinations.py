"""Settings a message ties together ("--a is incompatible with --b", "--a requires --b x"): the
fix drops one of two that conflict, or adds the one the first needs (``extractor.prose.combinations``)."""

from __future__ import annotations

import pytest

from extractor.prose.combinations import Combination, combination_of
from extractor.prose.enrich import enrich
from extractor.prose.knowledge import Knowledge
from tests.test_enrich import atom, knowledge, make_site

__all__ = ["knowledge"]


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("--stream is incompatible with --max-queue", Combination("conflict", "--stream", "--max-queue")),
        (
            "SGLANG_FAST_ACT is not compatible with SGLANG_SWIZZLE (layout)",
            Combination("conflict", "SGLANG_FAST_ACT", "SGLANG_SWIZZLE"),
        ),
        ("--a and --b cannot be used together.", Combination("conflict", "--a", "--b")),
        ("Cannot enable both --a and --b", Combination("conflict", "--a", "--b")),
        ("--a cannot be used with `--b`", Combination("conflict", "--a", "--b")),
        (
            "--sample-config can only be used with --dataset random",
            Combination("need", "--sample-config", "--dataset", "random"),
        ),
        # "to be set" is no value of --b.
        ("--a requires --b to be set", Combination("need", "--a", "--b")),
        ("--a requires {x} --b", None),
        ("--tp-size must divide the number of heads", None),
    ],
)
def test_the_message_states_the_combination(message: str, expected: Combination | None) -> None:
    assert combination_of(message) == expected


def test_a_conflict_named_by_the_message_is_fixed_by_dropping_either(knowledge: Knowledge) -> None:
    # The test reads a value the code derived; the message names the two flags behind it.
    site = make_site((atom("self._mode == 'eager'"),), message="--stream is incompatible with --max-queue")
    prose = enrich(site, knowledge)
    assert prose.solutions[0].startswith("Launch without `--stream`, or launch without `--max-queue`")
    before, after = prose.exampleFix.split("# after\n")
    assert "--stream --max-queue <value>" in before
    assert "--stream" in after and "--max-queue" not in after
    assert not any(s.startswith("Change ") for s in prose.solutions)


def test_a_need_named_by_the_message_adds_the_needed_flag_with_its_value(knowledge: Knowledge) -> None:
    site = make_site((atom("not self._random"),), message="--stream can only be used with --max-queue 4")
    prose = enrich(site, knowledge)
    assert prose.solutions[:2] == [
        "Also set `--max-queue 4`: the message says `--stream` needs it",
        "Or launch without `--stream`",
    ]
    assert prose.exampleFix.split("# after\n")[1].endswith("--stream --max-queue 4")


def test_env_vars_the_message_names_are_the_cause(knowledge: Knowledge) -> None:
    site = make_site(
        (atom("swizzle"),), message="SGLANG_FAST_ACT is incompatible with SGLANG_SWIZZLE (swizzled layout)"
    )
    prose = enrich(site, knowledge)
    assert "Cause: an environment variable (`SGLANG_FAST_ACT`, `SGLANG_SWIZZLE`)" in prose.documentation
    assert prose.solutions[0].startswith("Unset `SGLANG_FAST_ACT`, or unset `SGLANG_SWIZZLE`")
    before, after = prose.exampleFix.split("# after\n")
    assert before.startswith("# before\nSGLANG_FAST_ACT=1 SGLANG_SWIZZLE=1 ")
    assert after.startswith("SGLANG_FAST_ACT=1 ") and "SGLANG_SWIZZLE" not in after


def test_a_flag_no_declaration_describes_reads_as_a_switch_by_its_name(knowledge: Knowledge) -> None:
    # A script's own parser: the run's declarations know neither flag.
    site = make_site((atom("not self._prompts"),), message="--apply-template requires --prompt-file")
    before, after = enrich(site, knowledge).exampleFix.split("# after\n")
    assert before.endswith("--apply-template\n") and after.endswith("--apply-template --prompt-file <value>")
