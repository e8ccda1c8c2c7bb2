"""match favours the sites a log's launch choices reach: the model architecture, a backend, a switch.

Two sites raise the same message; their records carry different reach, written by the real reach
writer (``extractor.prose.reach.with_reach``) into their tags and prose. A log naming one site's
choice must rank that site first, whichever way round the two are listed, and the favour stays a
tiebreak: it never lifts a weaker message match over a literal one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from extractor.datasets.match import Matcher
from extractor.datasets.match.choices import named_choices
from extractor.datasets.match.ranking import CHOICE_POINTS
from extractor.prose.reach import with_reach
from extractor.reach.paths import Reach
from extractor.records.model import ErrorRecord
from tests.match_factory import make_record, write

ROOT = Path(__file__).resolve().parent.parent
FA3 = "python/sglang/srt/layers/attention/flashattention_backend.py"
MLA = "python/sglang/srt/models/deepseek_v2.py"
MESSAGE = "page_size must be a multiple of 64 for this kernel"
BACKEND: Reach = (frozenset({("flag", "--attention-backend", ("fa3",))}),)
ARCH: Reach = (frozenset({("arch", "DeepseekV3ForCausalLM", ())}),)
SWITCH: Reach = (frozenset({("flag", "--enable-lora", ())}),)
CHOICES = {"--attention-backend": ("triton", "fa3", "flashinfer")}


def reached(path: str, line: int, template: str, reach: Reach, cls: str = "ValueError") -> ErrorRecord:
    """A record whose reach fields are what the extractor writes for ``reach``."""
    base = make_record(path, line, cls, template, tags=["attention"])
    fields = with_reach(base.model_dump(), reach, CHOICES)
    return ErrorRecord.model_validate(fields)


def pair(swapped: bool) -> list[ErrorRecord]:
    """The backend's site and the model's site; ``swapped`` puts each reach in the other's file,
    so that neither the file order nor the line order is what ranks them."""
    first, second = (MLA, FA3) if swapped else (FA3, MLA)
    return [reached(first, 120, MESSAGE, BACKEND), reached(second, 880, MESSAGE, ARCH)]


def first_reach(records: list[ErrorRecord], text: str) -> str:
    """Which of the pair the match ranks first: ``backend`` or ``arch``."""
    top = Matcher(records).match(text, top=5)[0].record
    return "backend" if "fa3" in top.tags else "arch" if "deepseek-v3" in top.tags else "neither"


SERVER_ARGS_LOG = (
    "[2026-01-01 12:00:00] server_args=ServerArgs(model_path='org/model', tp_size=8, "
    "attention_backend='fa3', enable_lora=False, disable_cuda_graph=False)\n"
    "[2026-01-01 12:00:07 TP0] Scheduler hit an exception\n"
    f"[2026-01-01 12:00:07 TP0] ValueError: {MESSAGE}\n"
)
ARCH_LOG = (
    '[2026-01-01 12:00:00] Model config: {"architectures": [\n    "DeepseekV3ForCausalLM"\n  ]}\n'
    f"[2026-01-01 12:00:07 TP0] ValueError: {MESSAGE}\n"
)


def test_the_writer_puts_the_choices_in_the_tags() -> None:
    fa3, mla = pair(False)
    assert "fa3" in fa3.tags and "deepseek-v3" in mla.tags
    assert "--attention-backend fa3" in fa3.documentation


@pytest.mark.parametrize("swapped", [False, True])
def test_a_log_naming_the_backend_ranks_the_site_it_reaches_first(swapped: bool) -> None:
    records = pair(swapped)
    assert first_reach(records, SERVER_ARGS_LOG) == "backend"
    command = f"$ python -m sglang.launch_server --attention-backend fa3 --tp 8\nValueError: {MESSAGE}"
    assert first_reach(records, command) == "backend"


@pytest.mark.parametrize("swapped", [False, True])
def test_a_log_naming_the_architecture_ranks_the_model_site_first(swapped: bool) -> None:
    records = pair(swapped)
    assert first_reach(records, ARCH_LOG) == "arch"
    assert first_reach(records, f"DeepseekV3ForCausalLM failed to load\nValueError: {MESSAGE}") == "arch"


def test_without_a_named_choice_the_two_sites_tie() -> None:
    matches = Matcher(pair(False)).match(f"ValueError: {MESSAGE}", top=5)
    assert [m.score for m in matches][:2] == [matches[0].score] * 2
    assert not any("reached with" in w for m in matches for w in m.why)


def test_the_favour_is_shown_and_bounded() -> None:
    matches = Matcher(pair(True)).match(SERVER_ARGS_LOG, top=5)
    assert 0 < matches[0].score - matches[1].score <= 2 * CHOICE_POINTS + 0.05
    assert any("`fa3`" in w for w in matches[0].why)
    assert any(part.startswith("reach +") for part in matches[0].explain)


@pytest.mark.parametrize("swapped", [False, True])
def test_a_switch_turned_on_names_its_sites_and_one_left_off_does_not(swapped: bool) -> None:
    first, second = (MLA, FA3) if swapped else (FA3, MLA)
    records = [reached(first, 120, MESSAGE, BACKEND), reached(second, 880, MESSAGE, SWITCH)]
    on = f"server_args=ServerArgs(enable_lora=True)\nValueError: {MESSAGE}"
    off = f"server_args=ServerArgs(enable_lora=False)\nValueError: {MESSAGE}"
    assert "enable-lora" in Matcher(records).match(on)[0].record.tags
    assert not any("reached with" in w for m in Matcher(records).match(off) for w in m.why)


def test_a_named_choice_never_overturns_a_literal_match() -> None:
    # The literal site says the whole message; the reached one only a generic part of it.
    literal = make_record(MLA, 40, "ValueError", "Unsupported page size {p} for the fa3 decode kernel")
    generic = reached(FA3, 300, "Unsupported page size {p}{rest}", BACKEND)
    matcher = Matcher([generic, literal])
    text = SERVER_ARGS_LOG.replace(MESSAGE, "Unsupported page size 32 for the fa3 decode kernel")
    ranked = matcher.match(text, top=5)
    assert ranked[0].record.id == literal.id
    assert any(m.record.id == generic.id for m in ranked)


def test_named_choices_read_dumps_command_lines_and_configs() -> None:
    dump = (
        "ServerArgs(model_path='deepseek-ai/DeepSeek-V3', attention_backend='cutlass_mla', tp_size=8, "
        "enable_lora=True, enable_dp_attention=False, quantization=None, device='cuda')"
    )
    assert named_choices(dump) == {"cutlass-mla", "enable-lora", "cuda"}
    line = (
        "python -m sglang.launch_server --model-path /models/x --tp 8 --moe-a2a-backend deepep --enable-eplb"
    )
    assert named_choices(line) == {"deepep", "enable-eplb"}
    config = '{"architectures": ["Qwen3VLForConditionalGeneration"], "moe_runner_backend": "deep_gemm"}'
    assert named_choices(config) == {"qwen3-vl", "deep-gemm"}
    assert named_choices("ValueError: tp_size=8 is not divisible by 3") == frozenset()


def test_cli_ranks_the_reached_site_first(tmp_path: Path) -> None:
    dataset = write(tmp_path / "output" / "sglang-errors-test.jsonl", pair(True))  # fa3's site sorts last
    proc = subprocess.run(
        [sys.executable, "-m", "extractor", "match", "--dataset", str(dataset), "--json", "--explain", "-"],
        input=SERVER_ARGS_LOG,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"},
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    rows = orjson.loads(proc.stdout)
    assert "fa3" in rows[0]["record"]["tags"] and "deepseek-v3" in rows[1]["record"]["tags"]
    assert rows[0]["score"] > rows[1]["score"]
    assert any("fa3" in w for w in rows[0]["why"])


def test_the_bench_builds_and_scores_reach_log_inputs(tmp_path: Path) -> None:
    records = [*pair(False), reached(FA3, 400, "kv_lora_rank {r} is not supported here", SWITCH)]
    records.append(make_record(MLA, 990, "ValueError", "kv_lora_rank {r} is not supported here"))
    dataset = write(tmp_path / "x.jsonl", records)
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "match_eval.py"), str(dataset), "--per-kind", "10"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    row = next(line for line in proc.stdout.splitlines() if line.startswith("| reach_log |"))
    # Both sites of the shared page-size message, and the switch's site of the other one.
    assert row == "| reach_log | 3 | 3 | 100.0% |", proc.stdout
