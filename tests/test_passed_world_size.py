"""A divisibility check on a parameter that the callers fill with a process group's size is a
check on the flag that sizes the group, found over the whole run (real pipeline, a repository
written by the test from ``tests/fixtures/user_causes/``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from extractor.api import ExtractOptions, extract
from extractor.records.model import ErrorRecord
from tests.gitrepos import make_repo

FIXTURES = Path(__file__).parent / "fixtures" / "user_causes"
PLACES = {
    "server_args.py": "python/sglang/srt/server_args.py",
    "split_util.py": "python/sglang/srt/dist/split_util.py",
    "sharded_linear.py": "python/sglang/srt/layers/sharded_linear.py",
}


def _records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[ErrorRecord]:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    files = {place: (FIXTURES / name).read_bytes() for name, place in PLACES.items()}
    files["python/sglang/srt/dist/state.py"] = b"def get_tensor_model_parallel_world_size():\n    return 1\n"
    repo, shas = make_repo(tmp_path, [files])
    return list(
        extract(ExtractOptions.build(source=str(repo), sha=shas[0], jobs=1, cache_dir=tmp_path / "c")).records
    )


def test_a_split_over_the_tensor_parallel_size_is_the_tp_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = next(r for r in _records(tmp_path, monkeypatch) if r.filePath.endswith("split_util.py"))
    assert "`--tp-size`" in record.documentation
    assert "`denominator` from `--tp-size`" in record.documentation
    assert any("--tp-size" in s for s in record.solutions)
    assert record.errorType == "configuration"
    after = record.exampleFix.split("# after", 1)[1]
    assert "--tp-size" in after and "check_env" not in record.exampleFix


def test_other_arithmetic_and_a_size_beside_another_test_stay_internal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = {
        r.lineNumber: r for r in _records(tmp_path, monkeypatch) if r.filePath.endswith("sharded_linear.py")
    }
    # ``need % self.page_size``: the allocator's own arithmetic, though the page size is a flag.
    assert "internal invariant" in lines[17].documentation
    # A size above 1 only says the sharded path runs; the missing result is what fails.
    assert "internal invariant" in lines[22].documentation
