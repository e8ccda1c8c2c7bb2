"""Every error the target can raise makes a record: bare asserts and message-less raises included.

Real git repositories and the real extract, validate and diff.
"""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest

from extractor.api import ExtractOptions, ExtractResult, extract
from extractor.datasets.diff import diff_records
from extractor.records.jsonl import dumps_line
from tests.conftest import run_cli
from tests.gitrepos import make_repo

LOADER = "python/sglang/srt/model_loader/loader.py"

BEFORE = b"""
def load_weights(model, weights):
    assert weights is not None
    for name, tensor in weights:
        assert name in model.params
        assert tensor.dim() == 2
    assert tensor.dim() == 2
    return model


def check_rank(rank, world):
    if world > 1:
        assert 0 <= rank < world
    raise NotImplementedError
"""

# check_rank renamed: its sites change ids and most of their window, not their guard.
AFTER = BEFORE.replace(b"def check_rank(", b"def validate_rank_of_worker(")


@pytest.fixture(autouse=True)
def fixed_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    return make_repo(tmp_path_factory.mktemp("repo"), [{LOADER: BEFORE}, {LOADER: AFTER}])


def run(repo: Path, sha: str) -> ExtractResult:
    return extract(ExtractOptions.build(source=str(repo), sha=sha, jobs=1, use_cache=False))


def test_each_bare_assert_is_a_record_with_the_empty_message(history: tuple[Path, list[str]]) -> None:
    repo, shas = history
    records = run(repo, shas[0]).records
    asserts = [r for r in records if r.errorClass == "AssertionError"]
    assert [r.lineNumber for r in asserts] == [3, 5, 6, 7, 13]
    for r in asserts:
        assert (r.errorMessage, r.messagePattern) == ("", "")
        assert re.fullmatch(r.messagePattern, str(AssertionError()))
    first = asserts[0]
    assert first.validationCode == "weights is None"
    # What the traceback shows is the asserted test: the documentation says it in words.
    assert "`assert weights is not None`" in first.documentation
    assert "`weights is not None` was false" in first.documentation
    guarded = asserts[-1]
    assert guarded.validationCode == "world > 1 and not 0 <= rank < world"
    # The same test twice in one scope: two records, two ids.
    assert len({r.id for r in records}) == len(records)
    raised = [r for r in records if r.errorClass == "NotImplementedError"]
    assert [(r.errorMessage, r.messagePattern) for r in raised] == [("", "")]


def test_validate_accepts_the_empty_messages(history: tuple[Path, list[str]], tmp_path: Path) -> None:
    repo, shas = history
    result = run(repo, shas[0])
    good = tmp_path / "good.jsonl"
    good.write_bytes(b"".join(dumps_line(r, result.dataset_version) for r in result.records))
    assert any(orjson.loads(line)["record"]["errorMessage"] == "" for line in good.read_bytes().splitlines())
    proc = run_cli("validate", good)
    assert proc.returncode == 0, proc.stderr
    assert f"{len(result.records)} record(s), ok" in proc.stderr


def test_diff_pairs_message_less_records_on_their_guard(history: tuple[Path, list[str]]) -> None:
    repo, shas = history
    old, new = run(repo, shas[0]).records, run(repo, shas[1]).records
    result = diff_records(old, new)
    assert not result.added and not result.removed
    renamed = [c for c in result.changed if c.old.lineNumber == 13]
    # The exact stage keys on file, class, message and guard: an empty message pairs on the guard.
    assert len(renamed) == 1 and renamed[0].paired_by == "exact"
    assert renamed[0].old.id != renamed[0].new.id
