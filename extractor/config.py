"""Every default of the product in one place, and the optional ``[tool.sglang-errors]`` table.

A team pins its settings in its ``pyproject.toml``; a flag on the command line overrides the
table, and the table overrides the defaults here::

    [tool.sglang-errors]
    source = "../sglang"            # a URL, or a path relative to this pyproject.toml
    sha = "v0.5.0"
    include = ["python/sglang/srt/**/*.py"]
    exclude = ["**/legacy/**"]
    repo = "sgl-project/sglang"
    jobs = 4
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from extractor.errors import ExtractorError

DEFAULT_SOURCE = "https://github.com/sgl-project/sglang.git"
# The commit the reference record in shared/seed was analysed at.
DEFAULT_SHA = "0132848349585cfe6aae51c4941cbae872505f8a"
DEFAULT_REPO = "sgl-project/sglang"
SOURCE_ENV = "SGLANG_ERRORS_SOURCE"

DEFAULT_INCLUDE: tuple[str, ...] = ("python/sglang/**/*.py", "sgl-kernel/python/**/*.py")
DEFAULT_EXCLUDE: tuple[str, ...] = ("**/test/**", "**/tests/**")

DEFAULT_OUTPUT_DIR = "output"
SCHEMA_PATH = "schemas/error-record.v2.schema.json"

PROJECT_FILE = "pyproject.toml"
PROJECT_TABLE = "sglang-errors"


@dataclass(frozen=True)
class Scope:
    """Which files of the target are analysed."""

    include: tuple[str, ...] = DEFAULT_INCLUDE
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    repo: str = DEFAULT_REPO

    def key(self) -> str:
        """A stable text form, part of every cache key."""
        return "|".join(["inc", *self.include, "exc", *self.exclude, "repo", self.repo])


@dataclass(frozen=True)
class ProjectSettings:
    """``[tool.sglang-errors]`` of the nearest ``pyproject.toml`` that has one; every key optional."""

    path: Path | None = None
    source: str | None = None
    sha: str | None = None
    include: tuple[str, ...] | None = None
    exclude: tuple[str, ...] | None = None
    repo: str | None = None
    jobs: int | None = None


def _text(where: str, key: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ExtractorError(where, f"{key} must be a non-empty string, got {value!r}")
    return value


def _globs(where: str, key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ExtractorError(where, f"{key} must be a list of glob strings, got {value!r}")
    return tuple(value)


def project_settings(start: Path) -> ProjectSettings:
    """The settings table of the nearest ``pyproject.toml`` at or above ``start`` that has one.

    Searching stops at the first ``pyproject.toml`` holding the table (as ruff does); none at all
    means no settings. A malformed file or an unknown key is an error naming the file.
    """
    for folder in (start.resolve(), *start.resolve().parents):
        candidate = folder / PROJECT_FILE
        if not candidate.is_file():
            continue
        try:
            data = tomllib.loads(candidate.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise ExtractorError(str(candidate), f"cannot read ({exc})") from exc
        except tomllib.TOMLDecodeError as exc:
            raise ExtractorError(str(candidate), f"not valid TOML ({exc})") from exc
        table = data.get("tool", {}).get(PROJECT_TABLE) if isinstance(data.get("tool"), dict) else None
        if table is None:
            continue
        return _parse_table(candidate, table)
    return ProjectSettings()


def _parse_table(path: Path, table: Any) -> ProjectSettings:
    where = f"{path}: [tool.{PROJECT_TABLE}]"
    if not isinstance(table, dict):
        raise ExtractorError(where, "must be a table")
    known = {"source", "sha", "include", "exclude", "repo", "jobs"}
    unknown = sorted(set(table) - known)
    if unknown:
        raise ExtractorError(where, f"unknown key {unknown[0]!r} (known: {', '.join(sorted(known))})")
    jobs = table.get("jobs")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise ExtractorError(where, f"jobs must be a whole number of at least 1, got {jobs!r}")
    return ProjectSettings(
        path=path,
        source=_text(where, "source", table["source"]) if "source" in table else None,
        sha=_text(where, "sha", table["sha"]) if "sha" in table else None,
        include=_globs(where, "include", table["include"]) if "include" in table else None,
        exclude=_globs(where, "exclude", table["exclude"]) if "exclude" in table else None,
        repo=_text(where, "repo", table["repo"]) if "repo" in table else None,
        jobs=jobs,
    )
