"""The schema-v2 error record: the single source of truth for the dataset's shape.

Field names are camelCase exactly as in the reference record; ``extra="forbid"`` makes any
unknown field an error, and the committed JSON Schema is generated from these classes.
"""

from __future__ import annotations

import functools
import re
from typing import Annotated, Literal
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

SCHEMA_VERSION: Literal[2] = 2

# ISO-8601 UTC with milliseconds and a trailing Z, as the reference record writes it.
TIMESTAMP_RE = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$"
SHA_RE = r"^[0-9a-f]{40}$"

Severity = Literal["critical", "error", "warning", "info"]

# The broad kind of failure.
ErrorType = Literal[
    "validation",
    "configuration",
    "not-implemented",
    "internal-invariant",
    "dependency",
    "hardware",
    "resource",
    "io",
    "network",
    "timeout",
    "bad-request",
    "runtime",
]
# Why the situation arises, from the user's side.
BackgroundTag = Literal[
    "model-feature-mismatch",
    "flag-conflict",
    "invalid-value",
    "missing-dependency",
    "hardware-unsupported",
    "not-implemented",
    "resource-exhausted",
    "internal-invariant",
    "io-error",
    "network-error",
    "timeout",
    "bad-request",
]
# How a caller should treat the error.
HandlingStrategy = Literal["validation", "configuration", "fail-fast", "retry", "fallback", "propagate"]

NonEmptyStr = Annotated[str, Field(min_length=1)]


# Escaped literals and ``(?s:.*)`` groups, the shape of most message patterns: always compiles.
_PLAIN_PATTERN = re.compile(r"(?:\\[^A-Za-z0-9]|[^\\()\[\]{}*+?|^$.]|\(\?s:\.\*\))*")


@functools.lru_cache(maxsize=1 << 15)
def _compile_problem(pattern: str) -> str | None:
    """Why ``pattern`` does not compile, or ``None``.

    Compiling is most of the cost of validating a record, and ``re``'s own cache holds only 512
    patterns; two versions of a dataset (diff, nightly) share nearly all of theirs. A pattern of
    the plain shape above is recognised ~50x faster than it compiles.
    """
    if _PLAIN_PATTERN.fullmatch(pattern):
        return None
    try:
        re.compile(pattern)
    except re.error as exc:
        return str(exc)
    return None


def permalink(repo: str, sha: str, path: str, start: int, end: int) -> str:
    """``https://github.com/{repo}/blob/{sha}/{path}#L{start}-L{end}``, the path percent-encoded
    (a space, ``#`` or ``?`` in a file name would otherwise break the URL)."""
    return f"https://github.com/{repo}/blob/{sha}/{quote(path, safe='/')}#L{start}-L{end}"


class ErrorRecord(BaseModel):
    """One site in sglang that raises an error (a ``raise`` or an ``assert`` with its guard)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    id: Annotated[str, Field(pattern=r"^[0-9a-f]{16}$")]
    repo: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")]
    slug: Annotated[str, Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")]
    errorCode: str | None
    errorMessage: str
    messagePattern: str
    errorType: ErrorType
    errorClass: NonEmptyStr
    httpStatus: Annotated[int, Field(ge=100, le=599)] | None
    severity: Severity
    filePath: NonEmptyStr
    lineNumber: Annotated[int, Field(ge=1)]
    sourceCode: str
    sourceCodeStart: Annotated[int, Field(ge=1)]
    sourceCodeEnd: Annotated[int, Field(ge=1)]
    githubUrl: Annotated[str, Field(pattern=r"^https://github\.com/")]
    documentation: NonEmptyStr
    triggerScenarios: NonEmptyStr
    commonSituations: NonEmptyStr
    solutions: Annotated[list[NonEmptyStr], Field(min_length=1)]
    exampleFix: NonEmptyStr
    handlingStrategy: HandlingStrategy
    validationCode: str
    typeGuard: str | None
    tryCatchPattern: str | None
    preventionTips: list[NonEmptyStr]
    tags: Annotated[list[NonEmptyStr], Field(min_length=1)]
    backgroundTag: BackgroundTag
    analyzedSha: Annotated[str, Field(pattern=SHA_RE)]
    analyzedAt: Annotated[str, Field(pattern=TIMESTAMP_RE)]
    schemaVersion: Literal[2]

    @field_validator("messagePattern")
    @classmethod
    def _pattern_compiles(cls, value: str) -> str:
        problem = _compile_problem(value)
        if problem is not None:
            raise ValueError(f"messagePattern does not compile: {problem}")
        return value

    @model_validator(mode="after")
    def _window_consistent(self) -> ErrorRecord:
        if self.sourceCodeEnd < self.sourceCodeStart:
            raise ValueError("sourceCodeEnd is before sourceCodeStart")
        if not self.sourceCodeStart <= self.lineNumber <= self.sourceCodeEnd:
            raise ValueError("lineNumber lies outside sourceCodeStart..sourceCodeEnd")
        lines = self.sourceCode.count("\n") + 1
        if lines != self.sourceCodeEnd - self.sourceCodeStart + 1:
            raise ValueError(
                f"sourceCode has {lines} lines but sourceCodeStart..sourceCodeEnd spans "
                f"{self.sourceCodeEnd - self.sourceCodeStart + 1}"
            )
        expected = permalink(
            self.repo, self.analyzedSha, self.filePath, self.sourceCodeStart, self.sourceCodeEnd
        )
        if self.githubUrl != expected:
            raise ValueError("githubUrl does not match repo, analyzedSha, filePath and the source window")
        return self


class DatasetLine(BaseModel):
    """One line of a dataset file: the record and the version of the dataset it belongs to."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    record: ErrorRecord
    datasetVersion: Annotated[str, Field(pattern=TIMESTAMP_RE)]


def json_schema() -> dict[str, object]:
    """The JSON Schema of one dataset line, as committed under ``schemas/``."""
    schema = DatasetLine.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://github.com/sgl-project/sglang-errors/schemas/error-record.v2.schema.json"
    return schema
