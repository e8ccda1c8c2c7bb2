"""The schema-v2 error record: the single source of truth for the dataset's shape.

Field names are camelCase exactly as in the reference record; ``extra="forbid"`` makes any
unknown field an error, and the committed JSON Schema is generated from these classes.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any, Literal
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from extractor.records import message_pattern

SCHEMA_VERSION: Literal[2] = 2

SCHEMA_ID = (
    "https://raw.githubusercontent.com/sgl-project/sglang-errors/main/schemas/error-record.v2.schema.json"
)
"""Where the committed schema is served: the raw file on the project's main branch."""

# ISO-8601 UTC with milliseconds and a trailing Z, as the reference record writes it.
TIMESTAMP_RE = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$"
SHA_RE = r"^[0-9a-f]{40}$"
# A path segment that is neither "." nor "..", with no control character.
_SEGMENT = r"(?:[^/.\x00-\x1f]|\.[^/.\x00-\x1f]|\.\.[^/\x00-\x1f])[^/\x00-\x1f]*"
FILE_PATH_RE = rf"^{_SEGMENT}(?:/{_SEGMENT})*$"
_NAME = r"[A-Za-z0-9_.-]+"
REPO_RE = rf"^{_NAME}/{_NAME}$"
GITHUB_URL_RE = (
    rf"^https://github\.com/{_NAME}/{_NAME}/blob/[0-9a-f]{{40}}/[A-Za-z0-9_.~%/-]+#L[0-9]+-L[0-9]+$"
)
SLUG_MAX = 80

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


def _title(name: str, _info: Any = None) -> str:
    """``errorClass`` -> ``Error class``: titles that read as words."""
    words = re.sub(r"(?<=[a-z0-9])([A-Z])", r" \1", name).lower().split()
    spelled = {"id": "ID", "url": "URL", "github": "GitHub", "http": "HTTP", "sha": "SHA"}
    words = [spelled.get(w, w) for w in words]
    return " ".join([words[0][:1].upper() + words[0][1:], *words[1:]])


def _no_newline(extra: dict[str, Any]) -> None:
    # Python's "$" also matches before a final newline (jsonschema runs re.search), ECMA-262's and
    # RE2's do not: saying "no newline" outright makes every validator read the pattern alike.
    extra["not"] = {"pattern": "\n"}


_CONFIG = ConfigDict(
    extra="forbid", frozen=True, strict=True, use_attribute_docstrings=True, field_title_generator=_title
)


def permalink(repo: str, sha: str, path: str, start: int, end: int) -> str:
    """``https://github.com/{repo}/blob/{sha}/{path}#L{start}-L{end}``, the path percent-encoded
    (a space, ``#`` or ``?`` in a file name would otherwise break the URL)."""
    return f"https://github.com/{repo}/blob/{sha}/{_quoted(path)}#L{start}-L{end}"


@functools.lru_cache(maxsize=4096)
def _quoted(path: str) -> str:
    # Every record of a file links into the same path: it is encoded once.
    return quote(path, safe="/")


class ErrorRecord(BaseModel):
    """One site in sglang that raises an error (a ``raise`` or an ``assert`` with its guard)."""

    model_config = ConfigDict(**_CONFIG, title="Error record")

    id: Annotated[str, Field(pattern=r"^[0-9a-f]{16}$", min_length=16, max_length=16)]
    """16 hex digits from the repo, file, scope, class, message and guard (never the line number):
    an edit that only shifts lines keeps the id."""
    repo: Annotated[str, Field(pattern=REPO_RE, json_schema_extra=_no_newline)]
    """The analysed repository as ``owner/name``."""
    slug: Annotated[
        str,
        Field(
            pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$",
            min_length=1,
            max_length=SLUG_MAX,
            json_schema_extra=_no_newline,
        ),
    ]
    """Kebab-case words of the message (else of the class and scope) and a short id suffix."""
    errorCode: str | None
    """An application error code the site passes (``error_code=...``), else null."""
    errorMessage: str
    """The message template: literal text with braces doubled as ``str.format`` reads them, and
    each dynamic part as ``{source text}`` with its conversion and format spec (``{dtype!r}``,
    ``{x:.2f}``); empty when the error carries no message."""
    messagePattern: Annotated[
        str,
        Field(
            json_schema_extra={
                "format": "regex",
                "pattern": message_pattern.SCHEMA_PATTERN,
                "not": {"pattern": "\n"},
            }
        ),
    ]
    r"""A regex that full-matches every runtime ``str(exc)`` of this site, in the common subset of
    Python ``re`` (3.8+), ECMA-262 (with or without the ``u`` flag) and RE2: literal text with only
    the syntax characters ``^$\.*+?()[]{}|`` (and ``/``) escaped, ``\n``-style escapes for control
    characters, ``[\s\S]*?`` for each dynamic part, ``[0-9]`` for one digit, ``[ \t]*`` or a whitespace class with ``*`` for
    blanks a runtime dedent or strip may change, ``(?:a|b)`` for a choice; no inline flags,
    anchors, look-around, atomic groups, possessive or counted quantifiers. The consumer anchors
    it: ``re.fullmatch`` in Python, ``^(?:PATTERN)$`` without the ``m`` flag in JavaScript,
    ``FullMatch`` in RE2. Every pattern can be matched in linear time: split it on ``[\s\S]*?``
    and find each literal piece in order (a backtracking engine may otherwise be slow on long
    hostile text)."""
    errorType: ErrorType
    """The broad kind of failure."""
    errorClass: NonEmptyStr
    """The exception class as written at the site (``ValueError``, ``errors.MMError``;
    ``AssertionError`` for an assert)."""
    httpStatus: Annotated[int, Field(ge=100, le=599)] | None
    """The HTTP status a server answers with for this error, else null."""
    severity: Severity
    """How bad it is for the user: critical, error, warning or info."""
    filePath: Annotated[str, Field(pattern=FILE_PATH_RE, json_schema_extra=_no_newline)]
    """The file's path inside the repository, ``/``-separated, relative (no leading ``/``) and with
    no ``.`` or ``..`` segment."""
    lineNumber: Annotated[int, Field(ge=1)]
    """The line of the ``raise`` or ``assert``; lies within sourceCodeStart..sourceCodeEnd."""
    sourceCode: str
    """The source window around the site: exactly sourceCodeEnd - sourceCodeStart + 1 lines."""
    sourceCodeStart: Annotated[int, Field(ge=1)]
    """The first line of sourceCode in the file."""
    sourceCodeEnd: Annotated[int, Field(ge=1)]
    """The last line of sourceCode in the file; not before sourceCodeStart."""
    githubUrl: Annotated[str, Field(pattern=GITHUB_URL_RE, json_schema_extra=_no_newline)]
    """The permalink of the window: ``https://github.com/{repo}/blob/{analyzedSha}/{filePath}``
    (the path percent-encoded) ``#L{sourceCodeStart}-L{sourceCodeEnd}``, built from exactly those
    fields."""
    documentation: NonEmptyStr
    """What the check guards and why it fails, for a user."""
    triggerScenarios: NonEmptyStr
    """What a user does that makes the check fire."""
    commonSituations: NonEmptyStr
    """Where users usually meet the error."""
    solutions: Annotated[list[NonEmptyStr], Field(min_length=1)]
    """What to do about it, most likely fix first."""
    exampleFix: NonEmptyStr
    """A before/after example of a fix."""
    handlingStrategy: HandlingStrategy
    """How a caller should treat the error."""
    validationCode: str
    """Python: assignments of the local names the guard reads, then the whole guard as one
    expression; enclosing ``except E`` handlers lead as comments."""
    typeGuard: str | None
    """A Python predicate that checks the value's type before the call, when the guard is an
    ``isinstance`` check; else null."""
    tryCatchPattern: str | None
    """Python that catches this error and recognises it by messagePattern (``re.fullmatch``)."""
    preventionTips: list[NonEmptyStr]
    """How to keep the error from happening."""
    tags: Annotated[list[NonEmptyStr], Field(min_length=1, json_schema_extra={"uniqueItems": True})]
    """Topic tags, each once."""
    backgroundTag: BackgroundTag
    """Why the situation arises, from the user's side."""
    analyzedSha: Annotated[str, Field(pattern=SHA_RE, min_length=40, max_length=40)]
    """The full commit sha that was analysed."""
    analyzedAt: Annotated[
        str,
        Field(pattern=TIMESTAMP_RE, min_length=24, max_length=24, json_schema_extra={"format": "date-time"}),
    ]
    """When the analysis ran: ISO-8601 UTC with milliseconds (``2026-01-01T00:00:00.000Z``)."""
    schemaVersion: Literal[2]
    """The record format's version."""

    @field_validator("messagePattern")
    @classmethod
    def _pattern_portable(cls, value: str) -> str:
        problem = message_pattern.problem(value)
        if problem is not None:
            raise ValueError(f"messagePattern is not a portable pattern: {problem}")
        return value

    @field_validator("analyzedAt")
    @classmethod
    def _real_time(cls, value: str) -> str:
        return _real_timestamp(value)

    @field_validator("tags")
    @classmethod
    def _tags_unique(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("tags repeat a tag")
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


_RECORD_FIELDS = tuple(ErrorRecord.model_fields)
_FIELD_SET = frozenset(_RECORD_FIELDS)
_PLAIN_CONSTRUCT = (
    all(
        f.is_required() and f.alias is None and f.validation_alias is None
        for f in ErrorRecord.model_fields.values()
    )
    and not ErrorRecord.__pydantic_post_init__
)


def trusted_record(fields: Mapping[str, Any]) -> ErrorRecord:
    """``ErrorRecord.model_construct(**fields)`` for fields already validated: the same instance
    (fields in schema order, the fields given as set, keys that are not fields left out), built
    without pydantic's per-field alias and default lookups (about 40% less time per record)."""
    if not _PLAIN_CONSTRUCT or not fields.keys() >= _FIELD_SET:
        return ErrorRecord.model_construct(**fields)
    record = ErrorRecord.__new__(ErrorRecord)
    setattr_ = object.__setattr__
    setattr_(record, "__dict__", {name: fields[name] for name in _RECORD_FIELDS})
    setattr_(record, "__pydantic_fields_set__", set(_RECORD_FIELDS))
    setattr_(record, "__pydantic_extra__", None)
    setattr_(record, "__pydantic_private__", None)
    return record


def _real_timestamp(value: str) -> str:
    # The pattern fixes the shape; the calendar (month 13, February 30) needs a parse.
    try:
        datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ")
    except ValueError:
        raise ValueError(f"{value!r} is not a real UTC time") from None
    return value


class DatasetLine(BaseModel):
    """One line of a dataset file: the record and the version of the dataset it belongs to."""

    model_config = ConfigDict(**_CONFIG, title="Dataset line")

    record: ErrorRecord
    """The error record."""
    datasetVersion: Annotated[
        str,
        Field(pattern=TIMESTAMP_RE, min_length=24, max_length=24, json_schema_extra={"format": "date-time"}),
    ]
    """When the dataset was made (the same for every line of a file), as analyzedAt."""

    @field_validator("datasetVersion")
    @classmethod
    def _real_time(cls, value: str) -> str:
        return _real_timestamp(value)


def json_schema() -> dict[str, object]:
    """The JSON Schema of one dataset line, as committed under ``schemas/``."""
    schema = DatasetLine.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = SCHEMA_ID
    schema["description"] = (
        "One line of an sglang-errors dataset (JSON Lines). Rules that cross fields are checked by "
        "the project's model and stated in the fields' descriptions."
    )
    return schema


def schema_bytes() -> bytes:
    """The JSON Schema as committed: indented, with a trailing newline (its hash is in manifests)."""
    import orjson

    return orjson.dumps(json_schema(), option=orjson.OPT_INDENT_2) + b"\n"
