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

__all__ = ["handling_store", "stored_handling"]


class handling_store:
    """Where the handling of one set of files is kept (nothing is kept without a cache folder)."""

    def __init__(self, outcomes: Sequence[tuple[TargetFile, FileOutcome]], cache_dir: Path | None) -> None:
        from extractor.engine.cache import ResultCache, code_fingerprint, make_namespace

        self.outcomes = outcomes
        self.store = (
            ResultCache(cache_dir, make_namespace(code_fingerprint(), "handled-v1"))
            if cache_dir is not None
            else None
        )
        self.key = hashlib.sha256(orjson.dumps(sorted([f.path, f.blob_sha] for f, _ in outcomes))).hexdigest()

    def get(self) -> RunHandling | None:
        """The handling kept for these files, if any."""
        raw = self.store.get(self.key) if self.store is not None else None
        if raw is not None:
            with contextlib.suppress(orjson.JSONDecodeError):
                return RunHandling.from_plain(orjson.loads(raw))
        return None

    def compute(self) -> RunHandling:
        """The handling computed, and kept."""
        handling = run_handling(self.outcomes)
        if self.store is not None:
            with contextlib.suppress(OSError, TypeError):
                self.store.put(self.key, orjson.dumps(handling.to_plain()))
        return handling


def stored_handling(
    outcomes: Sequence[tuple[TargetFile, FileOutcome]], cache_dir: Path | None
) -> RunHandling:
    """:func:`~extractor.reach.handled.run_handling` of the run, from the cache when these files were seen."""
    store = handling_store(outcomes, cache_dir)
    found = store.get()
    return found if found is not None else store.compute()
