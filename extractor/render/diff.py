"""A :class:`~extractor.datasets.diff.DiffResult` as JSON, as a markdown changelog, or as a rich table."""

from __future__ import annotations

import io
import re
from collections import defaultdict
from enum import StrEnum

import orjson
from rich.console import Console
from rich.table import Table
from rich.text import Text

from extractor.datasets.diff import Change, DiffResult, subsystem
from extractor.records.model import ErrorRecord

__all__ = ["DiffFormat", "render", "render_json", "render_markdown", "render_table", "summary_line"]


class DiffFormat(StrEnum):
    """The ``--format`` choices of ``sglang-errors diff``."""

    table = "table"
    markdown = "markdown"
    json = "json"


# How much of a long message a table cell or changelog line shows.
_MESSAGE_WIDTH = 160
# Prose fields are listed as changed by name only; their old and new values would drown the
# changelog. These fields (the message, class, place and guard) get an old -> new line each.
_SHOWN_FIELDS = (
    "errorClass",
    "errorMessage",
    "filePath",
    "errorType",
    "severity",
    "httpStatus",
    "errorCode",
    "slug",
    "validationCode",
)


def render_json(result: DiffResult) -> bytes:
    """The documented shape, indented, with a trailing newline."""
    return orjson.dumps(result.to_json(), option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)


def summary_line(result: DiffResult) -> str:
    s = result.summary()
    return f"{s['added']} added, {s['removed']} removed, {s['changed']} changed, {s['unchanged']} unchanged"


def _short(sha: str | None) -> str:
    return sha[:12] if sha else "?"


def _one_line(text: str, width: int = _MESSAGE_WIDTH) -> str:
    flat = text.replace("\r", "").replace("\n", "\\n")
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _code(text: str) -> str:
    """A markdown code span that survives backticks inside ``text``."""
    if not text:
        return "*(no message)*"
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or longest else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _where(record: ErrorRecord) -> str:
    return f"{record.filePath}:{record.lineNumber}"


def _short_where(record: ErrorRecord) -> str:
    """``_where`` without the ``python/sglang/`` every path starts with, for narrow table cells."""
    return _where(record).removeprefix("python/sglang/")


def _value(record: ErrorRecord, name: str) -> str:
    value = getattr(record, name)
    return "null" if value is None else _one_line(str(value))


def render_markdown(result: DiffResult) -> str:
    """A changelog: a summary, then one section per subsystem with added, removed and changed errors."""
    lines = [
        f"# Error changes from `{_short(result.from_sha)}` to `{_short(result.to_sha)}`",
        "",
        f"**{summary_line(result)}**",
    ]
    groups: dict[str, dict[str, list[str]]] = defaultdict(lambda: {"Added": [], "Removed": [], "Changed": []})
    for record in result.added:
        groups[subsystem(record.filePath)]["Added"].append(
            f"- `{record.errorClass}` {_code(_one_line(record.errorMessage))} (`{_where(record)}`)"
        )
    for record in result.removed:
        groups[subsystem(record.filePath)]["Removed"].append(
            f"- `{record.errorClass}` {_code(_one_line(record.errorMessage))} (`{_where(record)}`)"
        )
    for change in result.changed:
        groups[subsystem(change.new.filePath)]["Changed"].extend(_changed_item(change))
    for name in sorted(groups):
        lines += ["", f"## {name}"]
        for heading, items in groups[name].items():
            if items:
                lines += ["", f"### {heading}", "", *items]
    return "\n".join(lines) + "\n"


def _changed_item(change: Change) -> list[str]:
    new = change.new
    head = f"- `{new.errorClass}` {_code(_one_line(new.errorMessage))} (`{_where(new)}`): " + ", ".join(
        change.fields
    )
    out = [head]
    for name in _SHOWN_FIELDS:
        if name in change.fields:
            out.append(f"  - {name}: {_code(_value(change.old, name))} → {_code(_value(new, name))}")
    return out


def render_table(console: Console, result: DiffResult) -> None:
    """One row per difference, then the summary."""
    if result.has_differences:
        table = Table(
            title=f"Error changes {_short(result.from_sha)} → {_short(result.to_sha)}", show_lines=False
        )
        table.add_column("change", no_wrap=True)
        table.add_column("class", overflow="fold", ratio=1)
        table.add_column("where", overflow="fold", ratio=2)
        table.add_column("message / changed fields", overflow="fold", ratio=3)
        for record in result.added:
            table.add_row(
                Text("added", style="green"),
                Text(record.errorClass),
                Text(_short_where(record)),
                Text(_one_line(record.errorMessage)),
            )
        for record in result.removed:
            table.add_row(
                Text("removed", style="red"),
                Text(record.errorClass),
                Text(_short_where(record)),
                Text(_one_line(record.errorMessage)),
            )
        for change in result.changed:
            where = _short_where(change.new)
            if change.old.filePath != change.new.filePath:
                where = f"{_short_where(change.old)} → {where}"
            detail = Text(_one_line(change.new.errorMessage))
            detail.append("\n" + ", ".join(change.fields), style="yellow")
            table.add_row(Text("changed", style="yellow"), Text(change.new.errorClass), Text(where), detail)
        console.print(table)
    console.print(summary_line(result), highlight=False)


def render(result: DiffResult, fmt: DiffFormat, *, width: int = 160) -> str:
    """The whole output as text; a table is drawn without colour at ``width`` columns."""
    if fmt is DiffFormat.json:
        return render_json(result).decode()
    if fmt is DiffFormat.markdown:
        return render_markdown(result)
    buffer = io.StringIO()
    render_table(Console(file=buffer, width=width, color_system=None, force_terminal=False), result)
    return buffer.getvalue()


def render_jsonl(result: DiffResult) -> str:
    """One JSON object per difference: ``{"change": "added"|"removed"|"changed", ...}``."""
    lines = []
    for record in result.added:
        lines.append({"change": "added", "record": record.model_dump(mode="json")})
    for record in result.removed:
        lines.append({"change": "removed", "record": record.model_dump(mode="json")})
    for change in result.changed:
        lines.append(
            {
                "change": "changed",
                "fields": list(change.fields),
                "old": change.old.model_dump(mode="json"),
                "record": change.new.model_dump(mode="json"),
            }
        )
    return "".join(orjson.dumps(line, option=orjson.OPT_APPEND_NEWLINE).decode() for line in lines)


def render_github(result: DiffResult) -> str:
    """Workflow notices on the target's source lines, so a pull request shows the errors it changes."""
    from extractor.render.formats import annotation

    out = []
    for record in result.added:
        out.append(
            annotation(
                "notice",
                f"{record.errorClass}: {_one_line(record.errorMessage)}",
                file=record.filePath,
                line=record.lineNumber,
                title="error added",
            )
        )
    for record in result.removed:
        out.append(
            annotation(
                "notice",
                f"{record.errorClass}: {_one_line(record.errorMessage)}",
                file=record.filePath,
                line=record.lineNumber,
                title="error removed",
            )
        )
    for change in result.changed:
        new = change.new
        out.append(
            annotation(
                "notice",
                f"{new.errorClass}: {_one_line(new.errorMessage)} (changed: {', '.join(change.fields)})",
                file=new.filePath,
                line=new.lineNumber,
                title="error changed",
            )
        )
    out.append(annotation("notice", summary_line(result), title="sglang-errors diff"))
    return "".join(out)
