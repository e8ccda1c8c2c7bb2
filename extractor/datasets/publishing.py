"""How the nightly job writes into its folder: names no manifest uses, staged and synced temp
files, validation before a dataset gets its final name, atomic renames.

Readers see an old file or a new one, never a part: every file is written to a temp name beside
its destination (``.<name>.<random>.tmp``, swept by the next run if this one dies), synced, and
renamed into place; the folder is synced after the rename.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import tempfile
from pathlib import Path

from extractor.errors import ExtractorError
from extractor.records.jsonl import read_dataset

__all__ = ["compact", "fresh_names", "same_bytes", "write_public", "write_validated"]


def compact(dataset_version: str) -> str:
    """``2026-08-28T06:17:29.519Z`` -> ``20260828T061729519Z``, safe in a file name."""
    return re.sub(r"[^0-9TZ]", "", dataset_version)


def fresh_names(folder: Path, stem: str, parts: list[tuple[str, bytes]], protected: set[str]) -> list[str]:
    """``stem + ext`` for each part, unless the previous manifest names such a file with other bytes.

    Same sha and datasetVersion normally mean the same bytes, and rewriting identical bytes is
    harmless; if they differ (a changed extractor under a fixed SOURCE_DATE_EPOCH), every part
    gets one content-hash suffix so the old files stay exactly as the manifest promised.
    """
    names = [stem + ext for ext, _ in parts]
    for name, (_, data) in zip(names, parts, strict=True):
        path = folder / name
        if name in protected and path.exists() and not same_bytes(path, data):
            digest = hashlib.sha256(b"".join(data for _, data in parts)).hexdigest()[:8]
            return [f"{stem}-{digest}{ext}" for ext, _ in parts]
    return names


def same_bytes(path: Path, data: bytes) -> bool:
    try:
        return path.stat().st_size == len(data) and path.read_bytes() == data
    except OSError:
        return False


@functools.cache
def _file_mode() -> int:
    # mkstemp creates 0600 files; published files get the usual 0666 & ~umask, so a web server
    # or another user can read the folder. Read the umask once (setting it is process-wide).
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def _stage(path: Path, data: bytes) -> Path:
    """``data`` in a synced temp file beside ``path`` (a name the next run sweeps if we die)."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise _write_error(path, exc) from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), _file_mode())
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise _write_error(path, exc) from exc
        raise
    return Path(tmp)


def _write_error(path: Path, exc: OSError) -> ExtractorError:
    return ExtractorError(
        str(path), f"cannot write ({exc.strerror or exc}); the published files are unchanged"
    )


def _install(tmp: Path, path: Path) -> None:
    try:
        os.replace(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise _write_error(path, exc) from exc
        raise
    # The rename is durable only once the folder entry is on disk.
    with contextlib.suppress(OSError):
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_public(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically: readers see the old file or the new, never a part."""
    _install(_stage(path, data), path)


def write_validated(path: Path, data: bytes, expected: int) -> None:
    """Stage the dataset, validate the staged file, and only then give it its final name."""
    staging = _stage(path, data)
    try:
        report = read_dataset(staging)
        if report.problems:
            first = report.problems[0]
            more = f" (and {len(report.problems) - 1} more problems)" if len(report.problems) > 1 else ""
            raise ExtractorError(
                f"{path.name}:{first.line}",
                f"new dataset does not validate: {first.what}{more}; nothing was published",
            )
        if len(report.lines) != expected:
            raise ExtractorError(
                path.name,
                f"validated {len(report.lines)} records but extracted {expected}; nothing was published",
            )
    except BaseException:
        staging.unlink(missing_ok=True)
        raise
    _install(staging, path)
