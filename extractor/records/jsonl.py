"""Datasets on disk: orjson JSONL written atomically, read back with every bad line named.

A dataset is written to a temporary file beside its destination and renamed over it, so an
interrupted or failed run never leaves a partial file and never clobbers the previous one.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

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


def atomic_write_bytes(path: Path, chunks: Iterable[bytes]) -> None:
    """Write ``chunks`` to ``path`` through a temp file in the same folder, fsync it, then rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp creates 0600; a dataset gets the mode any new file of the user would get.
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as fh:
            for chunk in chunks:
                fh.write(chunk)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


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


def iter_dataset(path: Path) -> Iterator[tuple[int, DatasetLine | LineProblem]]:
    """Yield ``(line number, parsed line or problem)`` for every non-blank line of a dataset."""
    name = str(path)
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise ExtractorError(name, f"cannot read dataset ({exc.strerror or exc})") from exc
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
            try:
                yield number, DatasetLine.model_validate(obj)
            except ValidationError as exc:
                yield number, LineProblem(name, number, _describe(exc))


def read_dataset(path: Path, *, check_unique_ids: bool = True) -> ReadResult:
    """Read a whole dataset, collecting problems (bad lines, duplicate ids) instead of stopping."""
    lines: list[DatasetLine] = []
    problems: list[LineProblem] = []
    seen: dict[str, int] = {}
    for number, item in iter_dataset(path):
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
