"""The last run's finished records, kept whole: a rerun at the same commit reads them back.

A run's records depend on the extractor's code, the scope (with the repo) and the files of the
analysed commit, which its sha fixes, and on nothing else but the build time, which only fills
``analyzedAt`` (set again on reading). A rerun at the same sha with the same code and scope
therefore gets exactly the records the last run assembled: it reads them instead of checking
every file's cached answers, decoding every payload and applying the reach and the handling again.

Only the last run of a code and scope is kept (one entry, replaced by every run that assembles),
so the cache does not grow by a dataset per commit. The entry is plain JSON in a checksummed
:class:`~extractor.engine.cache.ResultCache` entry, never a pickle; anything unexpected in it
is a miss.
"""

from __future__ import annotations

import contextlib
import hashlib
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from extractor.config import Scope
from extractor.reasons import Reason
from extractor.records.model import ErrorRecord, trusted_record
from extractor.types import ExtractStats, FileFailure

__all__ = ["DatasetStore"]

_VERSION = "dataset-v1"


class DatasetStore:
    """Where the last run of one code and scope keeps its records (nothing without a cache folder)."""

    def __init__(self, cache_dir: Path, scope: Scope) -> None:
        from extractor.engine.cache import ResultCache, code_fingerprint, make_namespace

        self._store = ResultCache(cache_dir, make_namespace(code_fingerprint(), _VERSION, scope.key()))
        # One entry per namespace: the commit it holds is checked inside.
        self._key = hashlib.sha256(f"{_VERSION}\0{scope.key()}".encode()).hexdigest()

    def get(self, sha: str, analyzed_at: str) -> tuple[list[ErrorRecord], ExtractStats] | None:
        """The records and statistics of the last run if it analysed ``sha``, with ``analyzed_at``
        as their build time; None otherwise."""
        raw = self._store.get(self._key)
        if raw is None:
            return None
        try:
            data = orjson.loads(raw)
            if data["sha"] != sha:
                return None
            records = [_record(plain, analyzed_at) for plain in data["records"]]
            stats = _stats(data["stats"])
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            return None
        if records:
            # As a run validates its first record in full: the commit fields every record shares.
            try:
                ErrorRecord.model_validate(records[0].__dict__)
            except ValidationError:
                return None
        stats.records = len(records)
        return records, stats

    def put(self, sha: str, records: list[ErrorRecord], stats: ExtractStats) -> None:
        """Keep the run's records (fields only: every value is already plain JSON) and statistics."""
        plain = {
            "sha": sha,
            "records": [r.__dict__ for r in records],
            "stats": {
                "files_in_scope": stats.files_in_scope,
                "reach_scopes": stats.reach_from_cache + stats.reach_computed,
                "sites": stats.sites,
                "failures": [[f.path, f.reason, f.code.value] for f in stats.failures],
            },
        }
        # A record orjson cannot write is not kept: the next run assembles again.
        with contextlib.suppress(OSError, TypeError, orjson.JSONEncodeError):
            self._store.put(self._key, orjson.dumps(plain))

    @property
    def path(self) -> Path:
        """The file the kept records live in (whether or not it exists)."""
        return self._store.path_for(self._key)

    def forget(self) -> None:
        """Drop the kept records: the next run assembles them again from the per-file results."""
        with contextlib.suppress(OSError):
            self.path.unlink()


def _record(plain: Any, analyzed_at: str) -> ErrorRecord:
    if not isinstance(plain, dict):
        raise TypeError("a record is a JSON object")
    plain["analyzedAt"] = analyzed_at
    return trusted_record(plain)


def _stats(plain: Any) -> ExtractStats:
    """What a warm run says: every file and every scope's reach from the cache, nothing analysed."""
    files, scopes, sites = plain["files_in_scope"], plain["reach_scopes"], plain["sites"]
    if not all(isinstance(n, int) for n in (files, scopes, sites)):
        raise TypeError("counts are integers")
    failures = [FileFailure(str(path), str(why), Reason(code)) for path, why, code in plain["failures"]]
    return ExtractStats(
        files_in_scope=files,
        files_parsed=0,
        files_from_cache=files,
        reach_from_cache=scopes,
        reach_computed=0,
        sites=sites,
        failures=failures,
    )
