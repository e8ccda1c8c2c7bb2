"""The library API: every CLI command is one call here.

``extract`` reads the target at a sha from git objects, analyses each in-scope file (in parallel,
reusing cached per-file results), and assembles schema-v2 records; ``validate`` checks a dataset
file line by line; ``write_schema`` regenerates the committed JSON Schema.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from extractor.config import (
    DEFAULT_EXCLUDE,
    DEFAULT_INCLUDE,
    DEFAULT_OUTPUT_DIR,
    DEFAULT_SHA,
    DEFAULT_SOURCE,
    Scope,
)
from extractor.errors import ExtractorError
from extractor.records.jsonl import LineProblem, atomic_write_bytes, read_dataset, write_dataset
from extractor.records.model import json_schema

# The run's result types live in extractor.types; they are part of this surface too.
from extractor.types import ExtractResult as ExtractResult
from extractor.types import ExtractStats as ExtractStats
from extractor.types import FileFailure as FileFailure


def _usable_cores() -> int:
    """Cores this process may run on (a container's limit, not the host's count)."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):
        return os.cpu_count() or 1


@dataclass(frozen=True)
class ExtractOptions:
    """Everything one extraction depends on."""

    source: str = DEFAULT_SOURCE
    sha: str = DEFAULT_SHA
    scope: Scope = field(default_factory=Scope)
    jobs: int = 1
    cache_dir: Path | None = None
    use_cache: bool = True

    @classmethod
    def build(
        cls,
        *,
        source: str | None = None,
        sha: str | None = None,
        include: list[str] | None = None,
        exclude: list[str] | None = None,
        repo: str | None = None,
        jobs: int | None = None,
        cache_dir: Path | None = None,
        use_cache: bool = True,
    ) -> ExtractOptions:
        """Options from CLI-shaped values: ``include`` replaces the default globs, ``exclude`` adds to them."""
        from extractor.config import DEFAULT_REPO

        scope = Scope(
            include=tuple(include) if include else DEFAULT_INCLUDE,
            exclude=DEFAULT_EXCLUDE + tuple(exclude or ()),
            repo=repo or DEFAULT_REPO,
        )
        if "/" not in scope.repo or scope.repo.count("/") != 1 or not all(scope.repo.split("/")):
            raise ExtractorError("--repo", f"expected owner/name, got {scope.repo!r}")
        return cls(
            source=source or DEFAULT_SOURCE,
            sha=sha or DEFAULT_SHA,
            scope=scope,
            jobs=jobs or _usable_cores(),
            cache_dir=cache_dir,
            use_cache=use_cache,
        )


def default_output_path(sha: str) -> Path:
    return Path(DEFAULT_OUTPUT_DIR) / f"sglang-errors-{sha[:12]}.jsonl"


def extract(options: ExtractOptions, *, progress: bool = False) -> ExtractResult:
    """Analyse the target at ``options.sha`` and return its records, sorted and with unique ids."""
    from extractor.engine.pipeline import run_extraction

    return run_extraction(options, progress=progress)


def write_result(result: ExtractResult, path: Path) -> int:
    """Write the dataset atomically; the previous file at ``path`` survives any failure."""
    return write_dataset(path, result.records, result.dataset_version)


@dataclass
class ValidationReport:
    good: int
    problems: list[LineProblem]


def validate(path: Path) -> ValidationReport:
    """Check every line of a dataset: JSON, shape and types, unique ids, patterns, source windows."""
    if path.is_dir():
        raise ExtractorError(str(path), "is a directory, not a dataset file")
    if not path.is_file():
        raise ExtractorError(str(path), "no such dataset file")
    result = read_dataset(path)
    problems = list(result.problems)
    if not result.lines and not problems:
        problems.append(LineProblem(str(path), 0, "empty dataset"))
    return ValidationReport(good=len(result.lines), problems=problems)


def schema_bytes() -> bytes:
    return orjson.dumps(json_schema(), option=orjson.OPT_INDENT_2) + b"\n"


def write_schema(path: Path) -> None:
    atomic_write_bytes(path, [schema_bytes()])


def schema_is_current(path: Path) -> bool:
    try:
        return path.read_bytes() == schema_bytes()
    except FileNotFoundError:
        return False
