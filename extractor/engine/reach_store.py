"""The run's reach, kept between runs: one entry per set of files and knowledge.

Reach is global (an edit to one file changes the reach of others), so it is never part of a
file's payload. Building it takes the whole-target index; a run over the same files (same paths
and blobs) and the same knowledge reuses the last result instead.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from extractor.prose.knowledge import Knowledge
from extractor.prose.reach import RunReach, site_reach
from extractor.types import FileOutcome, Parsed

if TYPE_CHECKING:
    from extractor.source.git import TargetFile

__all__ = ["run_reach", "site_scopes"]


def site_scopes(outcomes: Sequence[tuple[TargetFile, FileOutcome]]) -> int:
    """How many distinct (file, qualname) scopes hold the run's sites: what a reach is asked for."""
    return len(
        {
            (f.path, str(p.get("id", "")).split("\x1f", 1)[0])
            for f, o in outcomes
            if isinstance(o, Parsed)
            for p in o.records
        }
    )


def run_reach(
    outcomes: Sequence[tuple[TargetFile, FileOutcome]], knowledge: Knowledge, cache_dir: Path | None
) -> tuple[RunReach, bool]:
    """The reach of the run's sites, and whether it came from the cache (these files and this
    knowledge were seen before)."""
    from extractor.engine.cache import ResultCache, code_fingerprint, make_namespace

    if cache_dir is None:
        return site_reach(outcomes, knowledge), False
    store = ResultCache(cache_dir, make_namespace(code_fingerprint(), "reach-v1"))
    files = sorted([f.path, f.blob_sha] for f, _ in outcomes)
    key = hashlib.sha256(orjson.dumps([files, knowledge.fingerprint()])).hexdigest()
    raw = store.get(key)
    if raw is not None:
        with contextlib.suppress(orjson.JSONDecodeError):
            found = RunReach.from_plain(orjson.loads(raw))
            if found is not None:
                return found, True
    reach = site_reach(outcomes, knowledge)
    with contextlib.suppress(OSError, TypeError):
        store.put(key, orjson.dumps(reach.to_plain()))
    return reach, False
