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


def test_options_no_declaration_describes_are_no_launch_flags(knowledge: Knowledge) -> None:
    # Options of another command's parser (a tool's, a request's): the launch declares neither.
    site = make_site((atom("not self._prompts"),), message="--apply-template requires --prompt-file")
    prose = enrich(site, knowledge)
    assert "Cause: the request or call input (`--apply-template`, `--prompt-file`)" in prose.documentation
    assert prose.solutions[-1].startswith(
        "Give `--apply-template`, `--prompt-file` as the message says to the command, script or request "
        "that takes them: no parser of the server's launch declares them"
    )
    assert "launch_server" not in prose.exampleFix


ENVIRON = b"""\
class EnvBool:
    def __init__(self, default):
        self.default = default


class Envs:
    SGLANG_JIT_ACT = EnvBool(True)
    SGLANG_FIX_MEMORY = EnvBool(False)


envs = Envs()
"""

LAUNCH_ARGS = b"""\
from dataclasses import dataclass

from sglang.srt.environ import envs


@dataclass
class ServerArgs:
    moe_backend: str = "auto"

    def __post_init__(self):
        if self.moe_backend == "mega":
            envs.SGLANG_FIX_MEMORY.set(True)

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--moe-backend", type=str, default="auto")
"""


def test_a_needed_variable_on_by_default_is_kept_on_and_one_the_launch_turns_on_is_set_to_0() -> None:
    from extractor.prose.knowledge import build_knowledge

    knowledge = build_knowledge(
        {"python/sglang/srt/server_args.py": LAUNCH_ARGS, "python/sglang/srt/environ.py": ENVIRON}
    )
    assert knowledge.env_launched == frozenset({"SGLANG_FIX_MEMORY"})
    site = make_site((atom("swizzle"),), message="SGLANG_FIX_MEMORY requires SGLANG_JIT_ACT=True")
    prose = enrich(site, knowledge)
    # Setting a variable that is already on changes nothing; it matters only if something set it to 0.
    assert prose.solutions[0] == (
        "Keep `SGLANG_JIT_ACT` on, its default: the message says `SGLANG_FIX_MEMORY` needs it; "
        "if your environment sets `SGLANG_JIT_ACT=0`, remove that"
    )
    # Unsetting a variable the launch turns on itself for some setups may leave it on.
    assert prose.solutions[1] == "Or set `SGLANG_FIX_MEMORY=0`"


def test_the_words_of_a_combination_follow_what_each_variable_is_when_left_unset() -> None:
    need = Combination("need", "SGLANG_A", "SGLANG_B")
    assert need.solutions() == [
        "Also set `SGLANG_B`: the message says `SGLANG_A` needs it",
        "Or unset `SGLANG_A`",
    ]
    assert need.solutions(on={"SGLANG_B"}, launched={"SGLANG_A"})[1] == "Or set `SGLANG_A=0`"
    conflict = Combination("conflict", "SGLANG_A", "SGLANG_B")
    assert conflict.solutions(launched={"SGLANG_B"})[0].startswith("Unset `SGLANG_A`, or set `SGLANG_B=0`")
