"""The kept versions of a nightly folder: what its manifest names, each with counts and changelog.

Only what ``manifest.json`` names is read (docs/nightly.md): the current dataset, and for each
entry of ``history`` its dataset (counted per subsystem) and its changelog JSON (as
``sglang-errors diff --format json`` writes it). The manifest goes through the nightly job's own
reader (:func:`~extractor.datasets.manifest.read_manifest`), so the catalogue accepts exactly
the manifests the job accepts.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from extractor.datasets.manifest import MANIFEST_NAME, read_manifest
from extractor.errors import ExtractorError
from extractor.records.model import ErrorRecord
from extractor.records.subsystem import subsystem

__all__ = ["Changed", "Changelog", "Nightly", "Version", "read_nightly"]


@dataclass(frozen=True)
class Changed:
    old: ErrorRecord
    new: ErrorRecord
    fields: tuple[str, ...]


@dataclass
class Changelog:
    """Added, removed and changed errors from ``from_sha`` to the version's sha."""

    from_sha: str
    added: list[ErrorRecord]
    removed: list[ErrorRecord]
    changed: list[Changed]
    summary: dict[str, int]


@dataclass
class Version:
    """One kept dataset of a nightly folder."""

    key: str
    sha: str
    ref: str
    dataset_file: str
    dataset_version: str
    counts: dict[str, int]
    changelog: Changelog | None = None
    current: bool = False

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def href(self) -> str:
        return f"versions/{self.key}.html"


@dataclass
class Nightly:
    current: Path
    versions: list[Version] = field(default_factory=list)  # oldest first


def _safe_name(folder: Path, name: object, what: str) -> Path:
    """A file the manifest names, which must sit directly in ``folder`` and exist."""
    where = str(folder / MANIFEST_NAME)
    if not isinstance(name, str) or not name or "/" in name or "\\" in name or name.startswith("."):
        raise ExtractorError(where, f"{what} is not a plain file name: {name!r}")
    path = folder / name
    if not path.is_file():
        raise ExtractorError(str(path), f"{what} named by the manifest is missing")
    return path


def _count_subsystems(path: Path) -> dict[str, int]:
    counts: Counter[str] = Counter()
    try:
        with path.open("rb") as fh:
            for number, raw in enumerate(fh, 1):
                if not raw.strip():
                    continue
                try:
                    counts[subsystem(orjson.loads(raw)["record"]["filePath"])] += 1
                except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
                    raise ExtractorError(f"{path}:{number}", f"not a dataset line ({exc})") from exc
    except OSError as exc:
        raise ExtractorError(str(path), f"cannot read dataset ({exc.strerror or exc})") from exc
    return dict(sorted(counts.items()))


def _records(path: Path, items: Any, label: str) -> list[ErrorRecord]:
    if not isinstance(items, list):
        raise ExtractorError(str(path), f"{label}: expected a list")
    try:
        return [ErrorRecord.model_validate(item) for item in items]
    except ValidationError as exc:
        raise ExtractorError(str(path), f"{label}: not a record ({exc.errors()[0]['msg']})") from exc


def _read_changelog(path: Path) -> Changelog:
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise ExtractorError(str(path), f"cannot read changelog ({exc})") from exc
    if not isinstance(data, dict):
        raise ExtractorError(str(path), "changelog is not a JSON object")
    changed_items = data.get("changed", [])
    if not isinstance(changed_items, list) or not all(isinstance(c, dict) for c in changed_items):
        raise ExtractorError(str(path), "changed: expected a list of objects")
    olds = _records(path, [c.get("old") for c in changed_items], "changed.old")
    news = _records(path, [c.get("new") for c in changed_items], "changed.new")
    changed = [
        Changed(o, n, tuple(str(f) for f in c.get("fields", [])))
        for o, n, c in zip(olds, news, changed_items, strict=True)
    ]
    summary = data.get("summary") if isinstance(data.get("summary"), dict) else {}
    return Changelog(
        from_sha=str(data.get("from") or ""),
        added=_records(path, data.get("added", []), "added"),
        removed=_records(path, data.get("removed", []), "removed"),
        changed=changed,
        summary={str(k): int(v) for k, v in (summary or {}).items() if isinstance(v, int)},
    )


def read_nightly(folder: Path) -> Nightly:
    """The current dataset and every kept version (oldest first) of a nightly folder."""
    manifest = read_manifest(folder)
    if manifest is None:
        raise ExtractorError(
            str(folder), "no manifest.json: not a nightly folder (give a dataset file instead)"
        )
    current = _safe_name(folder, manifest.get("datasetFile"), "datasetFile")
    history = manifest.get("history") or [
        {k: manifest.get(k) for k in ("sha", "ref", "datasetFile", "datasetVersion", "changelog")}
    ]
    if not isinstance(history, list):
        raise ExtractorError(str(folder / MANIFEST_NAME), "history: expected a list")
    versions: list[Version] = []
    for entry in reversed(history):
        if not isinstance(entry, dict):
            raise ExtractorError(str(folder / MANIFEST_NAME), "history: expected objects")
        path = _safe_name(folder, entry.get("datasetFile"), "history datasetFile")
        changelog = None
        log = entry.get("changelog")
        if isinstance(log, dict) and log.get("json"):
            changelog = _read_changelog(_safe_name(folder, log["json"], "changelog json"))
        versions.append(
            Version(
                key=path.name.removesuffix(".jsonl"),
                sha=str(entry.get("sha") or ""),
                ref=str(entry.get("ref") or ""),
                dataset_file=path.name,
                dataset_version=str(entry.get("datasetVersion") or ""),
                counts=_count_subsystems(path),
                changelog=changelog,
                current=path.name == current.name,
            )
        )
    return Nightly(current=current, versions=versions)
