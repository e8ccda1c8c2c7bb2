"""Human-facing summaries of extraction runs (rich tables on stderr)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from extractor.types import ExtractResult


def print_extract_summary(console: Console, result: ExtractResult, target: Path) -> None:
    """Files scanned, sites, records, every file that failed (named, with why) and the time taken."""
    stats = result.stats
    table = Table(title=f"sglang-errors extract @ {result.sha[:12]}", show_header=False, title_justify="left")
    table.add_column("what")
    table.add_column("value", justify="right")
    table.add_row("files in scope", str(stats.files_in_scope))
    table.add_row("files parsed", str(stats.files_parsed))
    table.add_row("files from cache", str(stats.files_from_cache))
    table.add_row("sites", str(stats.sites))
    table.add_row("records", str(stats.records))
    table.add_row("files failed or skipped", str(len(stats.failures)))
    table.add_row("time", f"{stats.seconds:.1f} s")
    console.print(table)
    for failure in stats.failures:
        console.print(f"  {failure.path}: {failure.reason}", highlight=False, markup=False, soft_wrap=True)
    console.print(f"wrote {target}", highlight=False, markup=False)
