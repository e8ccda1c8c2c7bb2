"""A computation in a forked child: its bytes come back whole, a failure there comes back as None
(the caller then computes it itself), a cancelled child is ended and reaped, and the run's
handling computed in a child gives the records computed in one process."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from extractor.api import ExtractOptions, extract
from extractor.engine.side import in_child
from tests.gitrepos import make_repo


def test_the_childs_bytes_come_back_whole() -> None:
    big = os.urandom(3 * 1024 * 1024)  # more than a pipe holds at once
    assert in_child(lambda: big).result() == big


def test_a_failure_in_the_child_comes_back_as_none() -> None:
    def boom() -> bytes:
        raise RuntimeError("not computed")

    assert in_child(boom).result() is None


def test_a_cancelled_child_is_ended_and_reaped() -> None:
    child = in_child(lambda: b"x" * (3 * 1024 * 1024))  # blocks on a full pipe nobody reads
    pid = child._pid
    assert pid is not None
    child.cancel()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # already reaped: no such child any more
    assert child.result() is None  # and nothing is left to read


LOADER = b"""\
def load_plugin(name):
    if not name:
        raise ImportError("no plugin named " + repr(name))
    return name


def start(name):
    try:
        return load_plugin(name)
    except ImportError:
        return None
"""


def _records(tmp_path: Path, jobs: int) -> list[str]:
    repo, shas = make_repo(tmp_path / f"repo{jobs}", [{"python/sglang/pkg/loader.py": LOADER}])
    result = extract(
        ExtractOptions.build(source=str(repo), sha=shas[0], jobs=jobs, cache_dir=tmp_path / f"cache{jobs}")
    )
    return [r.model_dump_json() for r in result.records]


def test_handling_from_a_child_gives_the_same_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    one, two = _records(tmp_path, 1), _records(tmp_path, 2)
    assert one == two
    assert any("swallowed" in r for r in two)  # the callers' handling was applied
