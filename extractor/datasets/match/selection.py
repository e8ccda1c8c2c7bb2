"""Which dataset ``match`` searches when none is named."""

from __future__ import annotations

from pathlib import Path

from extractor.errors import ExtractorError


def newest_dataset(folder: Path) -> Path:
    """The most recently modified ``*.jsonl`` under ``folder`` (the default ``--dataset``)."""
    try:
        found = [p for p in folder.rglob("*.jsonl") if p.is_file() and not p.name.startswith(".")]
    except OSError as exc:
        raise ExtractorError(str(folder), f"cannot list datasets ({exc.strerror or exc})") from exc
    if not found:
        raise ExtractorError(str(folder), "no dataset (*.jsonl) found; run `extract` or pass --dataset")
    return max(found, key=lambda p: (p.stat().st_mtime, str(p)))
