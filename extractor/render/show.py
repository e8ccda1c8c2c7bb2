"""One record readably (``show``), a dataset's counts (``stats``) and the cache (``cache info``)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from rich.console import Console, Group
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from extractor.datasets.stats import DIMENSIONS, DatasetStats
from extractor.records.model import ErrorRecord

if TYPE_CHECKING:
    from extractor.engine.cache_usage import CacheUsage

__all__ = ["print_cache", "print_record", "print_stats", "record_markdown", "stats_markdown"]


def _sections(r: ErrorRecord) -> list[tuple[str, str]]:
    """(heading, text) pairs in the order a reader asks: what, where, when, why, what to do."""
    where = f"{r.filePath}:{r.lineNumber}\n{r.githubUrl}"
    kind = ", ".join(
        x
        for x in (str(r.errorType), r.backgroundTag or "", f"HTTP {r.httpStatus}" if r.httpStatus else "")
        if x
    )
    out = [("message", r.errorMessage or "(no message)"), ("where", where), ("kind", kind)]
    if r.triggerScenarios:
        out.append(("when", r.triggerScenarios))
    if r.documentation:
        out.append(("why", r.documentation))
    if r.commonSituations:
        out.append(("seen when", r.commonSituations))
    if r.solutions:
        out.append(("what to do", "\n".join(f"- {s}" for s in r.solutions)))
    if r.exampleFix:
        out.append(("example fix", r.exampleFix))
    if r.validationCode:
        out.append(("guard", r.validationCode))
    return out


def print_record(console: Console, r: ErrorRecord) -> None:
    """A panel in a terminal; in a pipe or file plain lines, with no padding to strip."""
    if not console.is_terminal:
        console.print(f"{r.errorClass} · {r.slug} · {r.id}", markup=False)
        for heading, text in _sections(r):
            first, *rest = text.split("\n")
            console.print(f"{heading + ':':<12} {first}", markup=False)
            for line in rest:
                console.print(f"{'':<12} {line}", markup=False)
        console.print("", markup=False)
        width = len(str(r.sourceCodeEnd))
        for number, line in enumerate(r.sourceCode.split("\n"), r.sourceCodeStart):
            mark = ">" if number == r.lineNumber else " "
            console.print(f"{mark} {number:>{width}}  {line}", markup=False)
        return
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    for heading, text in _sections(r):
        table.add_row(heading, Text(text))
    code = Syntax(
        r.sourceCode,
        "python",
        line_numbers=True,
        start_line=r.sourceCodeStart,
        highlight_lines={r.lineNumber},
    )
    title = f"{r.errorClass} · {r.slug} · {r.id}"
    console.print(Panel(Group(table, Text(""), code), title=title, title_align="left", expand=False))


def record_markdown(r: ErrorRecord) -> str:
    lines = [f"## `{r.errorClass}`: {r.errorMessage or '(no message)'}", "", f"`{r.id}` · `{r.slug}`", ""]
    for heading, text in _sections(r)[1:]:
        lines += [f"**{heading}**", "", text, ""]
    lines += ["```python", r.sourceCode, "```", ""]
    return "\n".join(lines)


def _stats_rows(stats: DatasetStats, dimension: str, top: int | None) -> list[tuple[str, str, str]]:
    rows = stats.rows(dimension)
    shown = rows if top is None else rows[:top]
    out = []
    for key, n, old in shown:
        change = "" if old is None else f"{n - old:+d}" if n != old else "0"
        out.append((key, str(n), change))
    if top is not None and len(rows) > top:
        out.append((f"… {len(rows) - top} more", "", ""))
    return out


def print_stats(console: Console, stats: DatasetStats, *, top: int | None = 15) -> None:
    head = f"{stats.label}: {stats.records} record(s) in {stats.files} file(s)"
    if stats.against is not None:
        head += f"; {stats.old_records} in {stats.against} ({stats.records - (stats.old_records or 0):+d})"
    console.print(head, markup=False)
    for name, heading in DIMENSIONS.items():
        table = Table(title=f"by {heading}", title_justify="left")
        table.add_column(heading, overflow="fold")
        table.add_column("records", justify="right")
        if stats.against is not None:
            table.add_column("change", justify="right")
        for key, n, change in _stats_rows(stats, name, top):
            table.add_row(key, n, *([change] if stats.against is not None else []))
        console.print(table)


def stats_markdown(stats: DatasetStats, *, top: int | None = 15) -> str:
    compare = stats.against is not None
    lines = [f"# {stats.label}", "", f"{stats.records} record(s) in {stats.files} file(s)"]
    if compare:
        lines[-1] += f"; {stats.old_records} in {stats.against}"
    for name, heading in DIMENSIONS.items():
        lines += ["", f"## By {heading}", "", f"| {heading} | records |" + (" change |" if compare else "")]
        lines.append("| --- | ---: |" + (" ---: |" if compare else ""))
        for key, n, change in _stats_rows(stats, name, top):
            cell = key.replace("|", "\\|")
            lines.append(f"| {cell} | {n} |" + (f" {change} |" if compare else ""))
    return "\n".join(lines) + "\n"


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "kB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{n} B"


def print_cache(console: Console, usage: CacheUsage, *, verb: str = "") -> None:
    if verb:
        console.print(
            f"{verb} {len(usage.entries)} entr{'y' if len(usage.entries) == 1 else 'ies'}, {_size(usage.bytes)} from {usage.root}",
            markup=False,
        )
    else:
        console.print(
            f"{usage.root}: {_size(usage.bytes)} in {len(usage.entries)} entr{'y' if len(usage.entries) == 1 else 'ies'}",
            markup=False,
        )
    if not usage.entries:
        return
    table = Table()
    table.add_column("kind")
    table.add_column("entry", overflow="fold")
    table.add_column("files", justify="right")
    table.add_column("size", justify="right")
    table.add_column("last used (UTC)")
    for e in usage.entries:
        when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(e.last_used))
        table.add_row(e.kind, e.path.name, str(e.files), _size(e.bytes), when)
    console.print(table)
