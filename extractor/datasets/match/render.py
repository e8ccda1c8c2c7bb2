"""Ranked matches as a rich table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from extractor.datasets.match.ranking import Match


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
