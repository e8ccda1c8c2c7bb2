"""An environment variable in ``exampleFix`` is set in front of the launcher, never passed to it
as if it were a command-line argument."""

from __future__ import annotations

import shlex
import textwrap
from pathlib import Path

from extractor.analysis.analyse import analyse
from extractor.analysis.parse import ParsedFile, parse_source
from extractor.prose.enrich import enrich
from extractor.prose.knowledge import build_knowledge, module_constants
from tests.conftest import records_by_message

SOURCE = b"""import os


def profile_run(profile):
    if profile:
        assert "SGLANG_PROFILE_OUT_DIR" in os.environ, "Please set SGLANG_PROFILE_OUT_DIR."
"""


def test_env_var_fix_sets_the_variable_before_the_launcher() -> None:
    parsed = parse_source("python/sglang/srt/utils/profiling.py", SOURCE)
    assert isinstance(parsed, ParsedFile), parsed
    knowledge = build_knowledge({})
    (site,) = analyse(parsed)
    fix = enrich(site, knowledge, module_constants(parsed.tree)).exampleFix
    assert fix and "SGLANG_PROFILE_OUT_DIR" in fix
    for line in fix.splitlines():
        if line.startswith("#") or "SGLANG_PROFILE_OUT_DIR" not in line:
            continue
        words = shlex.split(line)
        launcher = words.index("python") if "python" in words else words.index("sglang")
        named = [i for i, w in enumerate(words) if "SGLANG_PROFILE_OUT_DIR" in w]
        # ``NAME=value`` before the launcher is an assignment the shell applies; after it, an argument.
        assert all(i < launcher and words[i].startswith("SGLANG_PROFILE_OUT_DIR=") for i in named), line


DISABLE_SOURCE = b"""from sglang.srt.environ import envs


def verify_layout(batch):
    return batch.layout if envs.SGLANG_VERIFY_LAYOUT.get() == "compact" else None


def plan_verify(batch, graph_mode):
    if verify_layout(batch) is not None and graph_mode:
        raise NotImplementedError("compact verify is not captured in graphs; disable SGLANG_VERIFY_LAYOUT.")
"""


def test_a_message_that_says_disable_the_variable_gets_a_fix_without_it() -> None:
    parsed = parse_source("python/sglang/srt/layers/verify.py", DISABLE_SOURCE)
    assert isinstance(parsed, ParsedFile), parsed
    (site,) = analyse(parsed)
    out = enrich(site, build_knowledge({}), module_constants(parsed.tree))
    before, after = out.exampleFix.split("# after")
    assert "SGLANG_VERIFY_LAYOUT=" in before
    # Asked to disable it, no value of the variable is the accepted one: the fix leaves it out.
    assert "SGLANG_VERIFY_LAYOUT" not in after and "<accepted-value>" not in after
    assert any(s.startswith("Unset `SGLANG_VERIFY_LAYOUT`") for s in out.solutions)


REGISTRY = b"""class EnvBool:
    def __init__(self, default):
        self.default = default


class Envs:
    SGLANG_PACKED_LAYOUT = EnvBool(False)


envs = Envs()
"""

SWITCH_SOURCE = b"""from sglang.srt.environ import envs


class Pool:
    def __init__(self):
        self.packed = envs.SGLANG_PACKED_LAYOUT.get()

    def transfer_infos(self):
        assert not self.packed, "Packed layout (SGLANG_PACKED_LAYOUT) is not supported with transfer yet."
"""


def test_a_switch_that_is_off_by_default_is_fixed_by_leaving_it_unset() -> None:
    knowledge = build_knowledge({"python/sglang/srt/environ.py": REGISTRY})
    parsed = parse_source("python/sglang/srt/mem_cache/pool.py", SWITCH_SOURCE)
    assert isinstance(parsed, ParsedFile), parsed
    (site,) = analyse(parsed)
    out = enrich(site, knowledge, module_constants(parsed.tree))
    before, after = out.exampleFix.split("# after")
    # The message names the variable whose feature is unsupported; off is its default.
    assert "SGLANG_PACKED_LAYOUT=" in before and "SGLANG_PACKED_LAYOUT" not in after
    assert any(s.startswith("Unset `SGLANG_PACKED_LAYOUT`") for s in out.solutions)
    assert not any(s.startswith("Change `SGLANG_PACKED_LAYOUT`") for s in out.solutions)


HARDWARE_SOURCE = b"""def fused_pad(x):
    if not x.is_cuda:
        raise RuntimeError("fused pad needs a CUDA tensor")
"""


def test_a_hardware_fix_without_a_flag_to_change_says_what_changes() -> None:
    parsed = parse_source("python/sglang/jit_kernel/pad.py", HARDWARE_SOURCE)
    assert isinstance(parsed, ParsedFile), parsed
    (site,) = analyse(parsed)
    fix = enrich(site, build_knowledge({}), module_constants(parsed.tree)).exampleFix
    after = fix.split("# after")[1]
    # The same launch on both sides is only an example when the comment says the machine changes.
    assert "CUDA" in after.splitlines()[0]


SWITCH_ARGS = b"""import argparse


def add_cli_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--enable-radix-reuse", action="store_true")
"""

SWITCH_FLAG_SOURCE = b"""def build_cache(server_args, worker):
    windowed = worker.is_windowed
    if server_args.enable_radix_reuse:
        if windowed:
            raise ValueError("--enable-radix-reuse is incompatible with windowed attention models")
"""


def test_a_switch_the_path_needs_given_is_left_out_not_given_a_value() -> None:
    knowledge = build_knowledge({"python/sglang/srt/server_args.py": SWITCH_ARGS})
    parsed = parse_source("python/sglang/srt/mem_cache/builder.py", SWITCH_FLAG_SOURCE)
    assert isinstance(parsed, ParsedFile), parsed
    (site,) = analyse(parsed)
    fix = enrich(site, knowledge, module_constants(parsed.tree)).exampleFix
    before, after = fix.split("# after")
    # ``--enable-radix-reuse <value>`` is no command line: a switch is given or left out.
    assert "value>" not in fix
    assert "--enable-radix-reuse" in before and "--enable-radix-reuse" not in after


def test_a_variable_that_must_be_set_is_said_to_be_left_unset_and_set_in_the_scripts_own_run(
    tmp_path: Path,
) -> None:
    files = {
        "python/sglang/benchmark/replay_bench.py": textwrap.dedent(
            """\
            import argparse
            import os


            def replay_once(profile):
                if profile:
                    assert "SGLANG_REPLAY_TRACE_DIR" in os.environ, "Please set SGLANG_REPLAY_TRACE_DIR."


            def main():
                parser = argparse.ArgumentParser()
                parser.add_argument("--profile", action="store_true")
                args = parser.parse_args()
                replay_once(args.profile)


            if __name__ == "__main__":
                main()
            """
        ),
    }
    record = records_by_message(tmp_path, files)["Please set SGLANG_REPLAY_TRACE_DIR."]
    assert "`SGLANG_REPLAY_TRACE_DIR` is left unset" in record.documentation, record.documentation
    # Any value passes: no value is wrong, and no fix asks for "an accepted" one.
    assert "leaves out `SGLANG_REPLAY_TRACE_DIR`" in record.commonSituations, record.commonSituations
    assert any("this check fails because it is unset" in s for s in record.solutions), record.solutions
    assert "<current-value>" not in record.exampleFix
    # The benchmark runs itself: the fix sets the variable for that run, not for a server launch.
    before, after = record.exampleFix.split("# after")
    assert "python -m sglang.benchmark.replay_bench" in before and "launch_server" not in record.exampleFix
    assert "SGLANG_REPLAY_TRACE_DIR=" in after and "SGLANG_REPLAY_TRACE_DIR" not in before
