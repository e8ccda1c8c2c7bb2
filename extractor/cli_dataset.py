"""The commands that read a dataset or the cache: ``show``, ``stats``, ``cache info|clean``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from extractor.cli_options import CacheDirOpt, DatasetOpt, JsonOpt
from extractor.cli_options import format_option as _format_opt
from extractor.cliapp import App, app, current
from extractor.errors import ExtractorError
from extractor.render.formats import OutputFormat as F


@app.command()
def show(
    key: Annotated[
        str, typer.Argument(metavar="ID|SLUG", help="The record's id (or a 6+ digit prefix) or slug.")
    ],
    dataset: DatasetOpt = None,
    fmt: Annotated[str | None, _format_opt(F.table, F.json, F.markdown)] = None,
    as_json: JsonOpt = False,
) -> None:
    """Print one record readably: message, where (with the permalink), when, why, what to do, the code.

    Exit 1 when no record has that id or slug.
    """
    from extractor import api
    from extractor.render.formats import choose, dumps
    from extractor.render.show import print_record, record_markdown

    s = current()
    form = choose(fmt, as_json, (F.table, F.json, F.markdown))
    record = api.show(dataset if dataset is not None else api.newest_dataset(), key)
    if form is F.json:
        sys.stdout.write(dumps(record.model_dump(mode="json")))
    elif form is F.markdown:
        sys.stdout.write(record_markdown(record))
    else:
        print_record(s.out, record)


@app.command()
def stats(
    dataset: Annotated[
        Path | None,
        typer.Argument(
            metavar="FILE",
            help="Dataset; - for stdin (default: the newest under output/).",
            show_default=False,
        ),
    ] = None,
    against: Annotated[
        Path | None,
        typer.Option(
            "--against", metavar="FILE", help="An older dataset: show each count's change since it."
        ),
    ] = None,
    top: Annotated[
        int, typer.Option("--top", "-n", min=1, metavar="N", help="Rows per table (json: all).")
    ] = 15,
    fmt: Annotated[str | None, _format_opt(F.table, F.json, F.markdown)] = None,
    as_json: JsonOpt = False,
) -> None:
    """Summarise a dataset: records by subsystem, error class, cause kind, error type and flag."""
    from extractor import api
    from extractor.render.formats import choose, dumps
    from extractor.render.show import print_stats, stats_markdown

    s = current()
    form = choose(fmt, as_json, (F.table, F.json, F.markdown))
    summary = api.stats(dataset if dataset is not None else api.newest_dataset(), against)
    if form is F.json:
        sys.stdout.write(dumps(summary.to_json()))
    elif form is F.markdown:
        sys.stdout.write(stats_markdown(summary, top=top))
    else:
        print_stats(s.out, summary, top=top)


cache_app = App(
    name="cache",
    help="The per-file result cache and the clones: what it holds, and emptying it.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,
)
app.add_typer(cache_app, name="cache")


def _days(text: str | None) -> float | None:
    """``30``, ``30d``, ``12h``, ``2w`` as days."""
    if text is None:
        return None
    raw = text.strip().lower()
    scale = {"h": 1 / 24, "d": 1.0, "w": 7.0}
    unit = raw[-1] if raw and raw[-1] in scale else "d"
    number = raw[:-1] if raw and raw[-1] in scale else raw
    try:
        value = float(number)
    except ValueError:
        raise ExtractorError(
            "--older-than", f"expected a duration such as 30d, 12h or 2w, got {text!r}"
        ) from None
    if value < 0:
        raise ExtractorError("--older-than", f"must not be negative, got {text!r}")
    return value * scale[unit]


@cache_app.command("info")
def cache_info(
    cache_dir: CacheDirOpt = None,
    fmt: Annotated[str | None, _format_opt(F.table, F.json)] = None,
    as_json: JsonOpt = False,
) -> None:
    """Where the cache is, what it holds (clones, result namespaces), their sizes and last use."""
    from extractor import api
    from extractor.render.formats import choose, dumps
    from extractor.render.show import print_cache

    s = current()
    form = choose(fmt, as_json, (F.table, F.json))
    usage = api.cache_info(cache_dir)
    if form is F.json:
        sys.stdout.write(dumps(usage.to_json()))
    else:
        print_cache(s.out, usage)


@cache_app.command("clean")
def cache_clean(
    cache_dir: CacheDirOpt = None,
    older_than: Annotated[
        str | None,
        typer.Option("--older-than", metavar="AGE", help="Only what was unused this long: 30d, 12h, 2w."),
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what would go; delete nothing.")] = False,
    fmt: Annotated[str | None, _format_opt(F.table, F.json)] = None,
    as_json: JsonOpt = False,
) -> None:
    """Delete the cache, or only its entries unused for --older-than (always safe: rebuilt on demand)."""
    from extractor import api
    from extractor.render.formats import choose, dumps
    from extractor.render.show import print_cache

    s = current()
    form = choose(fmt, as_json, (F.table, F.json))
    gone = api.cache_clean(cache_dir, older_than_days=_days(older_than), dry_run=dry_run)
    if form is F.json:
        sys.stdout.write(dumps(gone.to_json()))
    else:
        print_cache(s.out, gone, verb="would remove" if dry_run else "removed")
