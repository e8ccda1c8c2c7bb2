"""The callers' handling of the run's raises, kept between runs: one entry per set of files.

Like reach, it is global (an edit to a caller changes what becomes of a raise in another file), so
it is never part of a file's payload; a run over the same files (same paths and blobs) reuses the
last result instead of joining every file's facts again.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from extractor.reach.handled import RunHandling, run_handling
from extractor.types import FileOutcome

if TYPE_CHECKING:
    from extractor.source.git import TargetFile

__all__ = ["stored_handling"]


def stored_handling(
    outcomes: Sequence[tuple[TargetFile, FileOutcome]], cache_dir: Path | None
) -> RunHandling:
    """:func:`~extractor.reach.handled.run_handling` of the run, from the cache when these files were seen."""
    from extractor.engine.cache import ResultCache, code_fingerprint, make_namespace

    if cache_dir is None:
        return run_handling(outcomes)
    store = ResultCache(cache_dir, make_namespace(code_fingerprint(), "handled-v1"))
    key = hashlib.sha256(orjson.dumps(sorted([f.path, f.blob_sha] for f, _ in outcomes))).hexdigest()
    raw = store.get(key)
    if raw is not None:
        with contextlib.suppress(orjson.JSONDecodeError):
            found = RunHandling.from_plain(orjson.loads(raw))
            if found is not None:
                return found
    handling = run_handling(outcomes)
    with contextlib.suppress(OSError, TypeError):
        store.put(key, orjson.dumps(handling.to_plain()))
    return handling
