"""Datasets on disk: orjson JSONL written atomically, read back with every bad line named.

A dataset is written to a temporary file beside its destination and renamed over it, so an
interrupted or failed run never leaves a partial file and never clobbers the previous one. ``-``
means stdout, and a path that is not a regular file (``/dev/stdout``, a FIFO) is written through,
never replaced. Reading refuses anything but a regular file (``/dev/zero``, a FIFO), and a line
with a key given twice.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import orjson
from pydantic import ValidationError

from extractor.errors import ExtractorError
from extractor.records.model import DatasetLine, ErrorRecord

_DUMP_OPTS = orjson.OPT_APPEND_NEWLINE


def sort_key(record: ErrorRecord) -> tuple[str, int, str]:
    """Datasets are ordered by file, then line, then id (two sites can share a line)."""
    return (record.filePath, record.lineNumber, record.id)


def dumps_line(record: ErrorRecord, dataset_version: str) -> bytes:
    """One dataset line, ``{"record": {...}, "datasetVersion": "..."}`` and a newline."""
    return orjson.dumps(
        {"record": record.model_dump(mode="json"), "datasetVersion": dataset_version}, option=_DUMP_OPTS
    )


def _umask() -> int:
    # os.umask can only be read by setting it; set it straight back.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


STDOUT = "-"
"""The path that names standard output wherever a path is written."""


def _error(path: Path, exc: OSError) -> ExtractorError:
    return ExtractorError(str(path), f"cannot write ({exc.strerror or exc})")


def _check_folder(path: Path, parent: Path) -> None:
    """Refuse a path below something that exists and is not a folder (``file.txt/x.jsonl``)."""
    ancestor = parent
    while not ancestor.exists() and ancestor.parent != ancestor:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise ExtractorError(str(path), f"cannot write ({ancestor} is not a folder)")


def check_output_path(path: Path) -> None:
    """Refuse, before any work, an output path that can be known not to take a file.

    A directory, a parent that is not a folder, a folder this process cannot create a file in, or
    a full disk; each is an :class:`ExtractorError` naming the path. ``-`` (stdout) always passes.
    """
    if str(path) == STDOUT:
        return
    if path.is_dir():
        raise ExtractorError(str(path), "is a directory, not a file")
    if path.exists() and not path.is_file():
        return  # a device or a pipe: written through (see atomic_write_bytes)
    parent = path.parent
    _check_folder(path, parent)
    try:
        parent.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".probe", dir=parent)
        os.close(fd)
        os.unlink(probe)
        free = os.statvfs(parent)
    except OSError as exc:
        raise _error(path, exc) from None
    if (free.f_bfree if os.geteuid() == 0 else free.f_bavail) == 0:
        raise ExtractorError(str(path), "cannot write (no space left on the device)")


def _write_through(path: Path | None, chunks: Iterable[bytes]) -> None:
    """Write to stdout (``path`` None) or to an existing device or pipe, never replacing it."""
    import sys

    try:
        if path is None:
            stream = sys.stdout.buffer
            for chunk in chunks:
                stream.write(chunk)
            stream.flush()
            return
        # No O_TRUNC or O_CREAT: what is there (a terminal, /dev/null, a FIFO) stays what it is.
        fd = os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC)
        with os.fdopen(fd, "wb") as fh:
            for chunk in chunks:
                fh.write(chunk)
    except OSError as exc:
        raise _error(path or Path(STDOUT), exc) from None


def atomic_write_bytes(path: Path, chunks: Iterable[bytes]) -> None:
    """Write ``chunks`` to ``path`` through a temp file in the same folder, fsync it, then rename.

    ``-`` writes to stdout. A symlink is followed and its target replaced (the link stays a link);
    a path that is not a regular file (a device such as ``/dev/stdout``, a FIFO) is written
    through, never replaced; a directory is refused. Every failure is an :class:`ExtractorError`.
    """
    if str(path) == STDOUT:
        _write_through(None, chunks)
        return
    real = Path(os.path.realpath(path)) if path.is_symlink() else path
    if real.is_dir():
        raise ExtractorError(str(path), "is a directory, not a file")
    if real.exists() and not real.is_file():
        _write_through(real, chunks)
        return
    _check_folder(path, real.parent)
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent)
    except OSError as exc:
        raise _error(path, exc) from None
    try:
        # mkstemp creates 0600; a dataset gets the mode any new file of the user would get.
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as fh:
            for chunk in chunks:
                fh.write(chunk)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, real)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise _error(path, exc) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(real.parent)


def _fsync_dir(folder: Path) -> None:
    # The rename is durable only once the folder entry is on disk.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_dataset(path: Path, records: Iterable[ErrorRecord], dataset_version: str) -> int:
    """Write records sorted by (filePath, lineNumber) atomically; return how many were written."""
    ordered = sorted(records, key=sort_key)
    atomic_write_bytes(path, (dumps_line(r, dataset_version) for r in ordered))
    return len(ordered)


@dataclass(frozen=True)
class LineProblem:
    """One unusable line of a dataset file."""

    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


@dataclass
class ReadResult:
    """Everything read from a dataset file: the good lines and each problem by line number."""

    lines: list[DatasetLine]
    problems: list[LineProblem]

    @property
    def records(self) -> list[ErrorRecord]:
        return [line.record for line in self.lines]


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(p) for p in err["loc"]) or "(line)"
        parts.append(f"{loc}: {err['msg']}")
    more = len(exc.errors()) - 5
    if more > 0:
        parts.append(f"and {more} more")
    return "; ".join(parts)


def _json_problem(raw: bytes, exc: orjson.JSONDecodeError) -> str:
    # orjson reports bytes that are not UTF-8 as "surrogates not allowed": say what is wrong.
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        return f"not valid UTF-8 at column {bad.start + 1} ({bad.reason})"
    return f"invalid JSON ({exc})"


class _DuplicateKey(ValueError):
    pass


def _no_duplicate_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return found


def _duplicate_key(raw: bytes) -> str | None:
    """The first key an object of the line gives twice (orjson keeps the last one silently)."""
    try:
        json.loads(raw, object_pairs_hook=_no_duplicate_keys)
    except _DuplicateKey as exc:
        return str(exc)
    except (ValueError, RecursionError):
        return None  # orjson read it; a difference in what the two accept is not a duplicate
    return None


def open_regular(path: Path, what: str = "dataset") -> BinaryIO:
    """``path`` opened for reading if it is a regular file; anything else is an :class:`ExtractorError`.

    Opened without blocking, so a FIFO is refused instead of waiting for a writer forever, and a
    device (``/dev/zero``) is refused instead of read until memory runs out.
    """
    name = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise ExtractorError(name, f"cannot read {what} ({exc.strerror or exc})") from exc
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise ExtractorError(name, f"is a directory, not a {what} file")
        if not stat.S_ISREG(mode):
            raise ExtractorError(name, f"not a regular file: a {what} is read from a file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def iter_dataset(
    path: Path, *, reject_duplicate_keys: bool = False
) -> Iterator[tuple[int, DatasetLine | LineProblem]]:
    """Yield ``(line number, parsed line or problem)`` for every non-blank line of a dataset.

    With ``reject_duplicate_keys`` a line whose object gives a key twice is a problem (``validate``).
    """
    name = str(path)
    fh = open_regular(path)
    with fh:
        for number, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            if not raw.endswith(b"\n"):
                # The last line of a dataset always ends in a newline; one that does not was cut off.
                try:
                    orjson.loads(raw)
                except orjson.JSONDecodeError:
                    yield number, LineProblem(name, number, "truncated line (no newline, not complete JSON)")
                    continue
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                yield number, LineProblem(name, number, _json_problem(raw, exc))
                continue
            if not isinstance(obj, dict):
                yield number, LineProblem(name, number, f"expected a JSON object, got {type(obj).__name__}")
                continue
            if reject_duplicate_keys:
                twice = _duplicate_key(raw)
                if twice is not None:
                    yield (
                        number,
                        LineProblem(name, number, f"duplicate key {twice!r} (JSON keys must be unique)"),
                    )
                    continue
            try:
                yield number, DatasetLine.model_validate(obj)
            except ValidationError as exc:
                yield number, LineProblem(name, number, _describe(exc))
            except RecursionError:
                # A pattern nested a thousand groups deep overflows the regex compiler's recursion.
                yield number, LineProblem(name, number, "nested too deeply to check (a pattern or value)")


def read_dataset(
    path: Path, *, check_unique_ids: bool = True, reject_duplicate_keys: bool = False
) -> ReadResult:
    """Read a whole dataset, collecting problems (bad lines, duplicate ids) instead of stopping."""
    lines: list[DatasetLine] = []
    problems: list[LineProblem] = []
    seen: dict[str, int] = {}
    for number, item in iter_dataset(path, reject_duplicate_keys=reject_duplicate_keys):
        if isinstance(item, LineProblem):
            problems.append(item)
            continue
        rid = item.record.id
        if check_unique_ids and rid in seen:
            problems.append(LineProblem(str(path), number, f"duplicate id {rid} (first on line {seen[rid]})"))
            continue
        seen[rid] = number
        lines.append(item)
    return ReadResult(lines, problems)


def load_records(path: Path) -> list[ErrorRecord]:
    """Read a dataset that must be entirely valid; the first problem raises :class:`ExtractorError`."""
    result = read_dataset(path)
    if result.problems:
        first = result.problems[0]
        extra = f" (and {len(result.problems) - 1} more problems)" if len(result.problems) > 1 else ""
        raise ExtractorError(f"{first.path}:{first.line}", first.what + extra)
    return result.records
