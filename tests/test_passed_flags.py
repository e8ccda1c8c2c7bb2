"""A check on a value the callers fill from a flag (a parameter, a ``self`` attribute set in
``__init__``) is told as a flag cause once the whole run is known. The fixture modules in
``tests/fixtures/passed/`` are committed to a real repository and extracted with the real
pipeline; ``passed.jsonl`` beside them holds the prose fields of every site. Regenerate after a
deliberate change with ``SGLANG_ERRORS_REGEN=1`` and review the diff."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extractor.api import ExtractOptions, extract
from tests.conftest import assert_golden_rows
from tests.gitrepos import make_repo

FIXTURES = Path(__file__).parent / "fixtures" / "passed"
GOLDEN = FIXTURES / "passed.jsonl"
PLACES = {
    "server_args.py": "python/sglang/srt/server_args.py",
    "host_pool.py": "python/sglang/srt/offload/host_pool.py",
    "controller.py": "python/sglang/srt/offload/controller.py",
    "cache.py": "python/sglang/srt/offload/cache.py",
    "grid_mixer.py": "python/sglang/srt/layers/grid_mixer.py",
    "io_bench.py": "python/sglang/srt/offload/io_bench.py",
    "server_args_addr.py": "python/sglang/srt/server_args_addr.py",
    "addr.py": "python/sglang/srt/offload/addr.py",
    "grid_model.py": "python/sglang/srt/models/grid_model.py",
    "targets.py": "python/sglang/srt/offload/targets.py",
    "offload_config.py": "python/sglang/srt/offload/offload_config.py",
    "offload_start.py": "python/sglang/srt/offload/offload_start.py",
}
FIELDS = ("errorType", "documentation", "triggerScenarios", "solutions", "exampleFix")


def _rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runs: int = 1) -> list[dict[str, object]]:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    files = {place: (FIXTURES / name).read_bytes() for name, place in PLACES.items()}
    files["python/sglang/srt/offload/__init__.py"] = b""
    files["python/sglang/srt/layers/__init__.py"] = b""
    files["python/sglang/srt/models/__init__.py"] = b""
    repo, shas = make_repo(tmp_path, [files])
    for _ in range(runs):
        # A later run reads the run's reach back from the cache: it must say the same.
        result = extract(
            ExtractOptions.build(source=str(repo), sha=shas[0], jobs=1, cache_dir=tmp_path / "cache")
        )
    out: list[dict[str, object]] = []
    for r in result.records:
        row: dict[str, object] = {"file": r.filePath.rsplit("/", 1)[-1], "line": r.lineNumber}
        row.update({f: getattr(r, f) for f in FIELDS})
        out.append(row)
    return out


def test_passed_flags_match_the_golden_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_golden_rows(GOLDEN, _rows(tmp_path, monkeypatch))


def test_a_warm_run_says_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    got = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in _rows(tmp_path, monkeypatch, runs=2))
    assert got == GOLDEN.read_text(encoding="utf-8")


def test_what_the_callers_pass_decides_the_cause(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = {(r["file"], r["line"]): r for r in _rows(tmp_path, monkeypatch)}
    sols = {k: " ".join(map(str, r["solutions"])) for k, r in rows.items()}  # type: ignore[call-overload]
    # A parameter filled, two calls up, from --offload-io: a value the chain does not handle.
    copy_in = rows[("host_pool.py", 44)]
    assert "`--offload-io`" in str(copy_in["documentation"])
    assert "--offload-io kernel" in sols[("host_pool.py", 44)]
    assert "--offload-io <unsupported-value>" in str(copy_in["exampleFix"])
    # An attribute copied from a constructor argument that the server args fill.
    assert "`--offload-workers 1`" in sols[("controller.py", 21)]
    # Ordered against a count the code computes: the flag is the cause, with no one value to name.
    assert "Cause: a launch flag (`--offload-workers`)" in str(rows[("controller.py", 30)]["documentation"])
    assert "Change `--offload-workers` in the launch command so that" in sols[("controller.py", 30)]
    # The same as a bare assert stays the callers' invariant.
    assert "--" not in sols[("controller.py", 32)]
    # The constructor's own check on the layout is the flag's; a later method that handles the
    # same layouts cannot see another one (the constructor already raised), so it stays internal.
    assert "`--offload-layout`" in str(rows[("host_pool.py", 18)]["documentation"])
    assert "--" not in sols[("host_pool.py", 36)]
    # Two checks that both run while the pool is built are not ordered: each names the flag.
    assert "`--offload-layout`" in str(rows[("host_pool.py", 28)]["documentation"])
    assert "--offload-layout layer_first" in sols[("host_pool.py", 28)]
    # An attribute of a settings object, read as what its class stores (``OffloadConfig.layout``).
    assert "Cause: a launch flag (`--offload-layout`)" in str(
        rows[("offload_config.py", 17)]["documentation"]
    )
    # Each side of a conditional expression may fill it: both flags are named.
    assert "Cause: a launch flag (`--offload-io`, `--offload-draft-io`)" in str(
        rows[("offload_config.py", 11)]["documentation"]
    )
    # A dataclass field is what its constructions pass for it.
    assert "`--offload-chunk 1`" in sols[("cache.py", 14)]
    # A parameter every caller fills with a literal carries no flag.
    assert "--" not in sols[("host_pool.py", 48)]


def test_a_value_the_callers_take_from_the_model_config_is_the_checkpoints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = {(r["file"], r["line"]): r for r in _rows(tmp_path, monkeypatch)}
    # The layer is in one file, the model that hands it its config's value in another.
    window = rows[("grid_mixer.py", 6)]
    # The config class reads ``mixer_window`` from ``mixer_span`` (or ``span``): those are the keys.
    assert "Cause: the model (its checkpoint or config) (`mixer_span`, `span`)" in str(
        window["documentation"]
    )
    assert (
        "(`window` from `config.mixer_window` (the config class reads it from `mixer_span` or `span`))"
        in str(window["documentation"])
    )
    assert "Use a checkpoint whose config.json sets `mixer_span`, `span`" in str(window["solutions"])
    assert "Report it to sglang" not in str(window["solutions"])
    assert "--model-path <other-checkpoint>" in str(window["exampleFix"])
    # Three config keys reach the shared helper: it stays an internal check.
    assert "Cause: an internal invariant" in str(rows[("grid_mixer.py", 12)]["documentation"])
    # A head count the model hands in that the tensor-parallel size does not divide: the flag is
    # the cause, and the fix says which key of config.json the size must divide.
    heads = rows[("grid_mixer.py", 21)]
    assert "Cause: a launch flag (`--tp-size`)" in str(heads["documentation"])
    assert (
        "`num_heads` is the checkpoint's `num_attention_heads` (its config.json): pick a size that divides it"
        in str(heads["solutions"])
    )
    assert "--tp-size <a divisor of num_attention_heads>" in str(heads["exampleFix"])
    # The other way round: more ranks than KV heads, each head copied over a whole number of them.
    kv = rows[("grid_mixer.py", 32)]
    assert (
        "`num_kv_heads` is the checkpoint's `num_key_value_heads` (its config.json): pick a size that is "
        "a multiple of it" in str(kv["solutions"])
    ), kv["solutions"]
    assert "--tp-size <a multiple of num_key_value_heads>" in str(kv["exampleFix"])
    # An assert above needs the same size to divide the query heads: the multiple must too.
    grouped = rows[("grid_mixer.py", 43)]
    assert "pick a size that is a multiple of it and still divides `num_attention_heads` (`num_heads`" in str(
        grouped["solutions"]
    ), grouped["solutions"]
    assert "--tp-size <a multiple of num_key_value_heads that divides num_attention_heads>" in str(
        grouped["exampleFix"]
    )


def test_a_scripts_own_flag_is_not_the_launch_flag_of_the_same_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = {(r["file"], r["line"]): r for r in _rows(tmp_path, monkeypatch)}
    # ``args.offload_io`` there is the script's own ``--offload-io``, not the server's.
    picked = rows[("io_bench.py", 8)]
    assert "python -m sglang.launch_server" not in str(picked["exampleFix"])
    assert "the callers pass its value" not in str(picked["documentation"])


def test_a_value_a_mixin_of_the_server_args_passes_on_is_the_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = {(r["file"], r["line"]): r for r in _rows(tmp_path, monkeypatch)}
    # ``split_port(self.head_addr)`` in a mixin that ServerArgs derives from: ``self`` is the args.
    port = rows[("addr.py", 6)]
    assert "Cause: a launch flag (`--head-addr`)" in str(port["documentation"])


def test_a_switch_the_check_needs_left_out_is_said_as_a_launch_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = {(r["file"], r["line"]): r for r in _rows(tmp_path, monkeypatch)}
    spill = next(
        r for (f, _), r in rows.items() if f == "controller.py" and "room" in str(r["documentation"])
    )
    assert str(spill["triggerScenarios"]).startswith("Launching without `--offload-spill` makes")
    assert "Launching with `--offload-spill`" not in str(spill["triggerScenarios"])
