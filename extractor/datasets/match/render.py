"""Ranked matches as the CLI shows them: rich tables per error, or JSON rows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console

from extractor.datasets.match.history import SearchResult
from extractor.datasets.match.results import Match


def matches_table(found: Sequence[Match], title: str) -> Any:
    """A rich table of ranked matches: rank, score, class, file:line, message, first solution."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, title_justify="left")
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("score", justify="right", no_wrap=True)
    table.add_column("class", no_wrap=True)
    table.add_column("file:line", overflow="fold")
    table.add_column("message", overflow="fold", ratio=3)
    table.add_column("first solution", overflow="fold", ratio=2)
    for rank, m in enumerate(found, 1):
        r = m.record
        message = r.errorMessage if len(r.errorMessage) <= 300 else r.errorMessage[:297] + "..."
        # Text(): messages hold "[...]" that rich would otherwise read as markup.
        table.add_row(
            str(rank),
            f"{m.score:.1f}",
            Text(r.errorClass),
            Text(f"{r.filePath}:{r.lineNumber}"),
            Text(message or "(no message)"),
            Text(r.solutions[0]),
        )
    return table


def searched_line(result: SearchResult) -> str:
    """Which datasets were searched, and of which sglang sha."""
    parts = []
    for k, s in enumerate(result.searched):
        sha = s.sha[:12] if s.sha else "mixed shas"
        parts.append(f"{'older ' if k else ''}{s.path} (sglang {sha}, {s.records} records)")
    return "searched " + "; ".join(parts)


def print_search(
    console: Console, result: SearchResult, *, tables: bool, explain: bool, width: int | None = None
) -> None:
    """The searched datasets, then one table per distinct error (and each score's parts)."""
    from rich.text import Text

    console.print(Text(searched_line(result)), width=width, soft_wrap=width is None)
    if not tables:
        return
    many = len(result.groups) > 1
    for k, group in enumerate(result.groups, 1):
        if not group.matches:
            continue
        title = f"error {k} of {len(result.groups)}: {group.label}" if many else "matches"
        console.print(matches_table(group.matches, title), width=width)
        if explain:
            for rank, m in enumerate(group.matches, 1):
                console.print(
                    Text(f"#{rank} {m.score:.1f} {m.record.filePath}:{m.record.lineNumber}"), width=width
                )
                for line in (*m.explain, *(w for w in m.why if w.startswith("found as "))):
                    console.print(Text("    " + line), width=width)


def json_rows(result: SearchResult, *, explain: bool) -> list[dict[str, Any]]:
    """``{"score", "record"}`` rows best first; ``group``/``error`` only when the input holds
    several errors, ``why`` only with ``--explain``, ``matchedOlder`` only for a match found in
    an older dataset of a nightly folder."""
    rows: list[dict[str, Any]] = []
    many = len(result.groups) > 1
    for k, group in enumerate(result.groups):
        for m in group.matches:
            row: dict[str, Any] = {"score": m.score, "record": m.record.model_dump(mode="json")}
            if many:
                row["group"] = k
                row["error"] = group.label
            if explain:
                row["why"] = [*m.why, *m.explain]
            if m.via is not None:
                row["matchedOlder"] = {
                    "id": m.via.id,
                    "analyzedSha": m.via.analyzedSha,
                    "filePath": m.via.filePath,
                    "lineNumber": m.via.lineNumber,
                }
            rows.append(row)
    return rows
