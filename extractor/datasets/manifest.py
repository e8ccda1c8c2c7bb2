"""A nightly folder's ``manifest.json``: what it names, and the one reader that checks it.

The nightly job writes the manifest and the catalogue (``sglang-errors site``) reads it; both go
through :func:`read_manifest`, so a manifest one of them refuses the other refuses too, with the
same ``file: what`` error. Only the files a manifest names are trusted (docs/nightly.md).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from extractor.errors import ExtractorError

__all__ = ["MANIFEST_NAME", "MANIFEST_VERSION", "is_own_file", "named_files", "read_manifest"]

MANIFEST_NAME = "manifest.json"
MANIFEST_VERSION = 1

# Files the nightly job owns in its folder; nothing else there is ever deleted.
_DATASET_RE = re.compile(r"^sglang-errors-[0-9a-f]{12}-[0-9TZ]+(-[0-9a-f]{8})?\.jsonl$")
_CHANGELOG_RE = re.compile(
    r"^sglang-errors-[0-9a-f]{12}-[0-9TZ]+(-[0-9a-f]{8})?\.changelog(-[0-9a-f]{8})?\.(md|json)$"
)
_SHA_RE = re.compile(r"^[0-9a-f]{40}$")


def read_manifest(folder: Path) -> dict[str, Any] | None:
    """The manifest in ``folder``, or ``None`` when there is none; a damaged one raises."""
    path = folder / MANIFEST_NAME
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ExtractorError(str(path), f"cannot read manifest ({exc.strerror or exc})") from exc
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ExtractorError(str(path), f"not valid JSON ({exc}); move it aside to start afresh") from exc
    problem = _manifest_problem(obj)
    if problem:
        raise ExtractorError(str(path), f"{problem}; move it aside to start afresh")
    assert isinstance(obj, dict)
    return obj


def _manifest_problem(obj: object) -> str | None:
    if not isinstance(obj, dict):
        return "not a JSON object"
    if obj.get("manifestVersion") != MANIFEST_VERSION:
        return f"unsupported manifestVersion {obj.get('manifestVersion')!r} (expected {MANIFEST_VERSION})"
    sha = obj.get("sha")
    if not isinstance(sha, str) or not _SHA_RE.match(sha):
        return f"sha is not a full commit sha: {sha!r}"
    if not isinstance(obj.get("datasetFile"), str):
        return "datasetFile missing"
    for name in named_files(obj):
        # Names are bare file names in DIR; anything else was not written by this job.
        if not is_own_file(name):
            return f"names a file this job does not write: {name!r}"
    return None


def named_files(manifest: dict[str, Any] | None) -> set[str]:
    """Every file a manifest names: its dataset and changelog, and those of its history."""
    if manifest is None:
        return set()
    names: set[str] = set()
    entries: list[Any] = [manifest]
    history = manifest.get("history")
    if isinstance(history, list):
        entries.extend(history)
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        if isinstance(entry.get("datasetFile"), str):
            names.add(entry["datasetFile"])
        log = entry.get("changelog")
        if isinstance(log, dict):
            names.update(v for k, v in log.items() if k in ("markdown", "json") and isinstance(v, str))
    return names


def is_own_file(name: str) -> bool:
    return bool(_DATASET_RE.match(name) or _CHANGELOG_RE.match(name))
