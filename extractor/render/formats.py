"""The ``--format`` choices and GitHub workflow annotations.

Every command that prints results takes ``--format`` (``--json`` is kept as an alias of
``--format json``); each offers the subset of :class:`OutputFormat` that fits what it prints.
``github`` prints workflow commands (``::error file=F,line=N::message``) that GitHub Actions
turns into annotations on the named lines.
"""

from __future__ import annotations

from enum import StrEnum

import orjson

from extractor.errors import ExtractorError

__all__ = ["OutputFormat", "annotation", "choose", "dumps"]


class OutputFormat(StrEnum):
    table = "table"
    json = "json"
    jsonl = "jsonl"
    markdown = "markdown"
    github = "github"


def choose(value: str | None, as_json: bool, allowed: tuple[OutputFormat, ...]) -> OutputFormat:
    """The format asked for (``--json`` meaning json), checked against what the command offers."""
    names = "|".join(allowed)
    if as_json:
        if value not in (None, OutputFormat.json):
            raise ExtractorError("--json", f"conflicts with --format {value}")
        return OutputFormat.json
    if value is None:
        return allowed[0]
    try:
        fmt = OutputFormat(value.lower())
    except ValueError:
        raise ExtractorError("--format", f"expected {names}, got {value!r}") from None
    if fmt not in allowed:
        raise ExtractorError("--format", f"expected {names}, got {value!r}")
    return fmt


def dumps(obj: object, *, compact: bool = False) -> str:
    """Indented JSON with a trailing newline, as every ``--format json`` prints it; ``compact``:
    one line, as ``jsonl`` prints each object."""
    indent = 0 if compact else orjson.OPT_INDENT_2
    return orjson.dumps(obj, option=indent | orjson.OPT_APPEND_NEWLINE).decode()


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(
    level: str, message: str, *, file: str | None = None, line: int | None = None, title: str = ""
) -> str:
    """One workflow command line: ``::notice file=a.py,line=3,title=T::message``."""
    props = []
    if file is not None:
        props.append(f"file={_escape_property(file)}")
    if line is not None and line > 0:
        props.append(f"line={line}")
    if title:
        props.append(f"title={_escape_property(title)}")
    head = f"::{level} {','.join(props)}" if props else f"::{level}"
    return f"{head}::{_escape_data(message)}\n"
