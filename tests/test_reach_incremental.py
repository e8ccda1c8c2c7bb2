"""Incremental reach in a real git history: an edit to one file changes the reach of a site in
another; the next run reuses every per-file result whose inputs did not change, computes the reach
again, and writes the bytes a cold run writes, with one job or two. Asserted on the cache-usage
counters of the runs, never on their times."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from extractor.api import ExtractOptions, ExtractResult, extract, write_result
from tests.gitrepos import make_repo

ARGS = "python/sglang/srt/server_args.py"
DISPATCH = "python/sglang/srt/store/dispatch.py"
RING = "python/sglang/srt/store/ring_store.py"

SERVER_ARGS = """\
from dataclasses import dataclass


@dataclass
class ServerArgs:
    store_backend: str = "flat"

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--store-backend", type=str, choices=["flat", "ring"])
"""

# The ring store is built only when the flag picks it: its sites are reached only that way.
DISPATCH_GUARDED = """\
from sglang.srt.store.ring_store import RingStore


def make_store(server_args):
    if server_args.store_backend == "ring":
        return RingStore(server_args)
    return None
"""

# The same file after the edit: the ring store is built whatever the flag says.
DISPATCH_OPEN = """\
from sglang.srt.store.ring_store import RingStore


def make_store(server_args):
    return RingStore(server_args)
"""

RING_SRC = """\
class RingStore:
    def __init__(self, server_args):
        self.slots = []

    def put(self, item):
        if item is None:
            raise ValueError("a ring store cannot hold None")
        self.slots.append(item)


def store_all(store, items):
    for item in items:
        store.put(item)
"""


def _filler(i: int) -> str:
    return f"def check_{i}(n):\n    assert n != {i}, 'n must differ from {i}'\n    return n\n"


@pytest.fixture(autouse=True)
def fixed_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    first = {ARGS: SERVER_ARGS, DISPATCH: DISPATCH_GUARDED, RING: RING_SRC}
    # Enough files that a run with two jobs uses the worker pool.
    first.update({f"python/sglang/srt/checks/c{i}.py": _filler(i) for i in range(10)})
    commits = [
        {p: textwrap.dedent(src).encode() for p, src in first.items()},
        {DISPATCH: DISPATCH_OPEN.encode()},
    ]
    return make_repo(tmp_path_factory.mktemp("repo"), commits)


def _run(repo: Path, sha: str, cache: Path, jobs: int = 1) -> ExtractResult:
    return extract(ExtractOptions.build(source=str(repo), sha=sha, jobs=jobs, cache_dir=cache))


def _bytes(result: ExtractResult, where: Path) -> bytes:
    write_result(result, where)
    return where.read_bytes()


def _ring_doc(result: ExtractResult) -> str:
    (record,) = [r for r in result.records if r.filePath == RING]
    return record.documentation


def test_an_edit_in_one_file_recomputes_the_reach_of_another_and_reuses_the_rest(
    history: tuple[Path, list[str]], tmp_path: Path
) -> None:
    repo, (before, after) = history
    cache = tmp_path / "cache"

    cold = _run(repo, before, cache)
    assert cold.stats.files_parsed == cold.stats.files_in_scope == 13
    assert cold.stats.reach_computed > 0 and cold.stats.reach_from_cache == 0
    assert "only with `--store-backend ring`" in _ring_doc(cold)

    warm = _run(repo, before, cache)
    assert warm.stats.files_parsed == 0 and warm.stats.files_from_cache == 13
    assert warm.stats.reach_from_cache == cold.stats.reach_computed and warm.stats.reach_computed == 0
    assert _bytes(warm, tmp_path / "warm.jsonl") == _bytes(cold, tmp_path / "cold.jsonl")

    edited = _run(repo, after, cache)
    # Only the edited file is analysed again; the ring store's file is reused as it was, yet its
    # reach is computed again and no longer narrowed by the flag.
    assert edited.stats.files_parsed == 1 and edited.stats.files_from_cache == 12
    assert edited.stats.reach_computed == cold.stats.reach_computed
    assert edited.stats.reach_from_cache == 0
    assert "only with" not in _ring_doc(edited)
    assert "only with" not in _ring_doc(_run(repo, after, tmp_path / "fresh"))


@pytest.mark.parametrize("jobs", [1, 2])
def test_incremental_warm_and_cold_runs_write_the_same_bytes(
    history: tuple[Path, list[str]], tmp_path: Path, jobs: int
) -> None:
    repo, (before, after) = history
    cache = tmp_path / "cache"
    _run(repo, before, cache, jobs=jobs)
    incremental = _bytes(_run(repo, after, cache, jobs=jobs), tmp_path / "incremental.jsonl")
    rerun = _run(repo, after, cache, jobs=3 - jobs)
    assert rerun.stats.files_parsed == 0 and rerun.stats.reach_computed == 0
    assert _bytes(rerun, tmp_path / "warm.jsonl") == incremental
    for n in (1, 2):
        cold = _run(repo, after, tmp_path / f"cold{n}", jobs=n)
        assert cold.stats.files_from_cache == 0 and cold.stats.reach_from_cache == 0
        assert _bytes(cold, tmp_path / f"cold{n}.jsonl") == incremental
