"""The result types of a run: per-file outcomes, failures, statistics and the run's result.

A file's outcome is one of :class:`Parsed`, :class:`Skipped` or :class:`Failed`; the last two carry
a :class:`~extractor.reasons.Reason` code and the human text. Outcomes cross process boundaries and
live in the cache as plain JSON data (:meth:`Parsed.to_plain`, :func:`outcome_from_plain`), never as
pickles.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from extractor.reasons import Reason

if TYPE_CHECKING:
    from extractor.config import Scope
    from extractor.records.model import ErrorRecord

__all__ = [
    "ExtractResult",
    "ExtractStats",
    "Failed",
    "FileFailure",
    "FileOutcome",
    "Parsed",
    "RunOptions",
    "Skipped",
    "outcome_from_plain",
]


@dataclass(frozen=True)
class Parsed:
    """A file that was analysed: its records without the commit fields, and how many sites it has."""

    records: list[dict[str, Any]]
    sites: int
    facts: str | None = None
    """The file's contribution to the whole-target index (:mod:`extractor.reach`) as JSON text:
    kept as one string inside the outcome so that a run which needs no new index (a warm run)
    decodes it as cheaply as any string."""

    def to_plain(self) -> dict[str, Any]:
        plain = {"status": "parsed", "records": self.records, "sites": self.sites}
        if self.facts is not None:
            plain["facts"] = self.facts
        return plain


@dataclass(frozen=True)
class Skipped:
    """A file left out on purpose (a symlink, a submodule...)."""

    reason: Reason
    text: str

    def to_plain(self) -> dict[str, Any]:
        return {"status": "skipped", "code": self.reason.value, "reason": self.text}


@dataclass(frozen=True)
class Failed:
    """A file that was read and could not be analysed."""

    reason: Reason
    text: str

    def to_plain(self) -> dict[str, Any]:
        return {"status": "failed", "code": self.reason.value, "reason": self.text}


FileOutcome = Parsed | Skipped | Failed


def outcome_from_plain(plain: Any) -> FileOutcome:
    """The outcome :meth:`to_plain` wrote; raises ``ValueError`` for anything else."""
    if not isinstance(plain, dict):
        raise ValueError("an outcome is a JSON object")
    status = plain.get("status")
    if status == "parsed":
        records, sites = plain.get("records"), plain.get("sites")
        if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
            raise ValueError("parsed outcome without a list of records")
        if not isinstance(sites, int) or isinstance(sites, bool):
            raise ValueError("parsed outcome without a site count")
        facts = plain.get("facts")
        return Parsed(records, sites, facts if isinstance(facts, str) else None)
    if status in ("skipped", "failed"):
        reason, text = Reason(plain.get("code")), plain.get("reason")
        if not isinstance(text, str):
            raise ValueError("outcome without a reason text")
        return Skipped(reason, text) if status == "skipped" else Failed(reason, text)
    raise ValueError(f"unknown outcome status {status!r}")


class RunOptions(Protocol):
    """What the engine reads of a run's options (``extractor.api.ExtractOptions`` has it all)."""

    @property
    def source(self) -> str: ...
    @property
    def sha(self) -> str: ...
    @property
    def scope(self) -> Scope: ...
    @property
    def jobs(self) -> int: ...
    @property
    def cache_dir(self) -> Path | None: ...
    @property
    def use_cache(self) -> bool: ...


@dataclass(frozen=True)
class FileFailure:
    """A target file that could not be analysed or was left out: its code and why, in words."""

    path: str
    reason: str
    code: Reason

    @property
    def skipped(self) -> bool:
        return self.code.skipped


@dataclass
class ExtractStats:
    """What one extraction did, reported in its summary."""

    files_in_scope: int = 0
    files_parsed: int = 0
    files_from_cache: int = 0
    reach_from_cache: int = 0
    """Site scopes (file and qualname) whose reach was reused from an earlier run."""
    reach_computed: int = 0
    """Site scopes whose reach this run computed (any file's edit can change another's reach)."""
    sites: int = 0
    records: int = 0
    failures: list[FileFailure] = field(default_factory=list)
    seconds: float = 0.0


@dataclass
class ExtractResult:
    """The records of one extraction with the sha they describe."""

    sha: str
    records: list[ErrorRecord]
    dataset_version: str
    stats: ExtractStats
