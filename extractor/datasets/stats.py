"""A dataset summarised (``stats``) and one record looked up by id or slug (``show``).

Counts are by subsystem (the part of sglang a file belongs to), error class, cause kind
(``backgroundTag``), error type, and by command-line flag (``--name`` spelled in a record's message,
trigger or solutions; each record counts once per flag). Against an older dataset every count
gets the older figure beside it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from extractor.datasets.diff import subsystem
from extractor.errors import ExtractorError
from extractor.records.model import ErrorRecord

__all__ = ["DIMENSIONS", "DatasetStats", "dataset_stats", "find_record", "flags_of"]

# Dimension name -> (heading, how many rows a table shows by default).
DIMENSIONS: dict[str, str] = {
    "subsystem": "subsystem",
    "errorClass": "error class",
    "cause": "cause kind",
    "errorType": "error type",
    "flag": "flag",
}

_FLAG_RE = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*")
# An id prefix this long is unambiguous in practice and still short enough to type.
_MIN_PREFIX = 6
_ID_RE = re.compile(r"^[0-9a-f]+$")


def flags_of(record: ErrorRecord) -> set[str]:
    """The ``--flags`` a record names in its message, trigger scenarios or solutions."""
    texts = [record.errorMessage, record.triggerScenarios or "", *(record.solutions or [])]
    return {m.group(0) for text in texts for m in _FLAG_RE.finditer(text)}


def _counts(records: Iterable[ErrorRecord]) -> dict[str, Counter[str]]:
    counts: dict[str, Counter[str]] = {name: Counter() for name in DIMENSIONS}
    for r in records:
        counts["subsystem"][subsystem(r.filePath)] += 1
        counts["errorClass"][r.errorClass] += 1
        counts["cause"][r.backgroundTag or "(none)"] += 1
        counts["errorType"][str(r.errorType)] += 1
        counts["flag"].update(flags_of(r))
    return counts


@dataclass
class DatasetStats:
    """Counts of one dataset, and of an older one when compared."""

    label: str
    records: int
    files: int
    shas: list[str]
    counts: dict[str, Counter[str]]
    against: str | None = None
    old_records: int | None = None
    old_counts: dict[str, Counter[str]] | None = None
    dataset_versions: list[str] = field(default_factory=list)

    def rows(self, dimension: str) -> list[tuple[str, int, int | None]]:
        """``(key, count, older count or None)``, biggest first, then by key."""
        new = self.counts[dimension]
        old = self.old_counts[dimension] if self.old_counts is not None else None
        keys = set(new) | (set(old) if old is not None else set())
        rows = [(k, new.get(k, 0), old.get(k, 0) if old is not None else None) for k in keys]
        return sorted(rows, key=lambda row: (-row[1], -(row[2] or 0), row[0]))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "dataset": self.label,
            "records": self.records,
            "files": self.files,
            "analyzedSha": self.shas,
        }
        if self.against is not None:
            out["against"] = self.against
            out["againstRecords"] = self.old_records
        for name in DIMENSIONS:
            if self.old_counts is None:
                out[name] = {k: n for k, n, _ in self.rows(name)}
            else:
                out[name] = {
                    k: {"count": n, "before": o, "change": n - (o or 0)} for k, n, o in self.rows(name)
                }
        return out


def dataset_stats(
    records: list[ErrorRecord], old: list[ErrorRecord] | None, *, label: str, against: str | None
) -> DatasetStats:
    return DatasetStats(
        label=label,
        records=len(records),
        files=len({r.filePath for r in records}),
        shas=sorted({r.analyzedSha for r in records}),
        counts=_counts(records),
        against=against,
        old_records=len(old) if old is not None else None,
        old_counts=_counts(old) if old is not None else None,
    )


def find_record(records: list[ErrorRecord], key: str, *, where: str) -> ErrorRecord:
    """The record whose id or slug is ``key``, or whose id starts with ``key`` (6+ hex digits)."""
    wanted = key.strip()
    for r in records:
        if wanted in (r.id, r.slug):
            return r
    if len(wanted) >= _MIN_PREFIX and _ID_RE.match(wanted):
        hits = [r for r in records if r.id.startswith(wanted)]
        if len(hits) == 1:
            return hits[0]
        if hits:
            some = ", ".join(r.id for r in hits[:5])
            raise ExtractorError(
                key, f"id prefix matches {len(hits)} records in {where} ({some}): give more digits"
            )
    raise ExtractorError(key, f"no record in {where} has this id or slug", exit_code=1)
