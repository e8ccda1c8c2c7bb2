"""Which datasets ``match`` searches: a file, a nightly folder (its current dataset and the kept
ones), or by default the newest dataset under the output folder by what it says of itself."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import orjson

from extractor.errors import ExtractorError


@dataclass(frozen=True)
class DatasetChoice:
    """The dataset to search and, from a nightly folder, the older ones its manifest keeps."""

    current: Path
    older: tuple[Path, ...] = ()
    """Newest first; a message from an older sglang is matched there and mapped to ``current``."""


def choose_datasets(dataset: Path | None, default_folder: Path) -> DatasetChoice:
    """The ``--dataset`` argument (a file or a folder) or, without one, the default folder's newest."""
    if dataset is None:
        return _from_folder(default_folder, default=True)
    if dataset.is_dir():
        return _from_folder(dataset, default=False)
    return DatasetChoice(dataset)


def _from_folder(folder: Path, *, default: bool) -> DatasetChoice:
    from extractor.datasets.nightly import MANIFEST_NAME, read_manifest

    if (folder / MANIFEST_NAME).is_file():
        manifest = read_manifest(folder)
        assert manifest is not None
        current = folder / manifest["datasetFile"]
        if not current.is_file():
            raise ExtractorError(str(current), "the manifest's current dataset is missing")
        older: list[Path] = []
        for entry in manifest.get("history") or []:
            name = entry.get("datasetFile") if isinstance(entry, dict) else None
            path = folder / name if isinstance(name, str) else None
            if path is not None and path != current and path.is_file() and path not in older:
                older.append(path)
        return DatasetChoice(current, tuple(older))
    return DatasetChoice(newest_dataset(folder))


def newest_dataset(folder: Path) -> Path:
    """The dataset under ``folder`` of the newest sglang it was extracted from.

    Each nightly folder offers its manifest's current dataset, and every other ``*.jsonl`` offers
    itself; the one whose records were analysed last (``analyzedAt`` of its first record) wins,
    not the one written last (a copied or re-downloaded older dataset has a new file time).
    """
    try:
        found = [p for p in folder.rglob("*.jsonl") if p.is_file() and not p.name.startswith(".")]
    except OSError as exc:
        raise ExtractorError(str(folder), f"cannot list datasets ({exc.strerror or exc})") from exc
    if not found:
        raise ExtractorError(str(folder), "no dataset (*.jsonl) found; run `extract` or pass --dataset")
    return max(found, key=lambda p: (_analyzed_at(p), str(p)))


def _analyzed_at(path: Path) -> str:
    """``analyzedAt`` of the dataset's first record ("" when it cannot be read: ranked oldest)."""
    try:
        with path.open("rb") as fh:
            first = fh.readline(1 << 22)
        obj = orjson.loads(first)
    except (OSError, orjson.JSONDecodeError):
        return ""
    record = obj.get("record") if isinstance(obj, dict) else None
    value = record.get("analyzedAt") if isinstance(record, dict) else None
    return value if isinstance(value, str) else ""
