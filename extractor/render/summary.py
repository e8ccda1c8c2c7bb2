"""Summaries of runs: ``extract``, ``validate`` and ``nightly``, as tables or JSON."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from extractor.api import ValidationReport
    from extractor.datasets.nightly import NightlyResult
    from extractor.types import ExtractResult

__all__ = [
    "extract_summary",
    "nightly_lines",
    "print_extract_summary",
    "validate_github",
    "validate_summary",
]

# Failed files a default (not -v) summary names before saying how many more there are.
_SHOWN_FAILURES = 20


def extract_summary(result: ExtractResult, target: Path) -> dict[str, Any]:
    """The summary as JSON: what ``--format json`` prints."""
    stats = result.stats
    return {
        "sha": result.sha,
        "datasetVersion": result.dataset_version,
        "output": str(target),
        "records": stats.records,
        "sites": stats.sites,
        "files": {
            "inScope": stats.files_in_scope,
            "parsed": stats.files_parsed,
            "fromCache": stats.files_from_cache,
            "failed": len(stats.failures),
        },
        "failures": [{"path": f.path, "reason": f.reason} for f in stats.failures],
        "seconds": round(stats.seconds, 3),
    }


def print_extract_summary(console: Console, result: ExtractResult, target: Path, *, verbose: int = 0) -> None:
    """Files scanned, sites, records, the files that failed (named, with why) and the time taken."""
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
    shown = stats.failures if verbose else stats.failures[:_SHOWN_FAILURES]
    for failure in shown:
        console.print(f"  {failure.path}: {failure.reason}", highlight=False, markup=False, soft_wrap=True)
    if len(shown) < len(stats.failures):
        console.print(f"  … and {len(stats.failures) - len(shown)} more (-v lists them all)", markup=False)
    console.print(f"wrote {target}", highlight=False, markup=False)


def validate_summary(path: Path, report: ValidationReport) -> dict[str, Any]:
    return {
        "path": str(path),
        "records": report.good,
        "ok": not report.problems,
        "problems": [{"path": p.path, "line": p.line, "what": p.what} for p in report.problems],
    }


def validate_github(report: ValidationReport) -> str:
    from extractor.render.formats import annotation

    return "".join(
        annotation("error", p.what, file=p.path, line=p.line, title="sglang-errors validate")
        for p in report.problems
    )


def nightly_lines(result: NightlyResult) -> list[str]:
    """What a nightly run says it did, one line each."""
    m = result.manifest
    files = m["files"]
    lines = [f"{m['sha'][:12]} ({m['ref']}): {m['records']} record(s) -> {result.dataset_path}"]
    lines.append(
        f"files: {files['inScope']} in scope, {files['parsed']} parsed, {files['fromCache']} from cache, "
        f"{files['failed']} failed; {m['extractSeconds']:.1f}s extracting, {m['totalSeconds']:.1f}s in all"
    )
    if result.republished:
        lines.append(
            f"nothing changed at {m['sha'][:12]} since {m['datasetVersion']}: nothing new written; "
            "the published dataset is republished with its changelog"
        )
    if result.changelog_markdown is not None:
        since = (m["previousSha"] or "?")[:12]
        lines.append(f"changelog since {since}: {result.changelog_summary} -> {result.changelog_markdown}")
    else:
        lines.append("no changelog (no earlier dataset to compare with)")
    lines += [f"note: {text}" for text in result.notes]
    if result.pruned:
        lines.append(f"pruned {len(result.pruned)} old file(s)")
    lines.append(f"wrote {result.manifest_path}")
    return lines
