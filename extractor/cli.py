"""The ``sglang-errors`` command line: options in, one :mod:`extractor.api` call, rendering out.

Every command gets ``-q/-v/--color`` and the error boundary from :mod:`extractor.cliapp`; exit
codes are 0 success, 1 findings, 2 trouble, 3 nightly lock held, 130 interrupted. Results go
to stdout, notes and errors to stderr; ``-`` is stdin or stdout wherever a file is named.
The commands that read a dataset or the cache live in :mod:`extractor.cli_dataset`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from extractor.cli_options import (
    CacheDirOpt,
    ExcludeOpt,
    IncludeOpt,
    JobsOpt,
    JsonOpt,
    NoCacheOpt,
    RepoOpt,
    ShaOpt,
    SourceOpt,
)
from extractor.cli_options import extract_options as _options
from extractor.cli_options import format_option as _format_opt
from extractor.cliapp import EXIT_FINDINGS, app, current
from extractor.config import SCHEMA_PATH
from extractor.errors import ExtractorError
from extractor.render.formats import OutputFormat as F

__all__ = ["app", "main"]


@app.command()
def extract(
    source: SourceOpt = None,
    sha: ShaOpt = None,
    out_path: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            metavar="FILE",
            help="Dataset file, - for stdout (default: output/sglang-errors-<sha12>.jsonl).",
        ),
    ] = None,
    include: IncludeOpt = None,
    exclude: ExcludeOpt = None,
    repo: RepoOpt = None,
    jobs: JobsOpt = None,
    cache_dir: CacheDirOpt = None,
    no_cache: NoCacheOpt = False,
    fmt: Annotated[str | None, _format_opt(F.table, F.json)] = None,
    as_json: JsonOpt = False,
) -> None:
    """Extract every error site of sglang at one commit into a JSONL dataset.

    Settings may be pinned in [tool.sglang-errors] of pyproject.toml; flags override them.
    """
    from extractor import api
    from extractor.render.formats import choose, dumps
    from extractor.render.summary import extract_summary, print_extract_summary

    s = current()
    form = choose(fmt, as_json, (F.table, F.json))
    options = _options(source, sha, include, exclude, repo, jobs, cache_dir, no_cache)
    if out_path is not None:
        api.check_output_path(out_path)  # a bad --out is named before the work starts
    result = api.extract(options, progress=s.interactive, on_note=lambda t: s.say(f"note: {t}"))
    target = out_path or api.default_output_path(result.sha)
    api.write_result(result, target)
    if form is F.json:
        # With the dataset on stdout the summary goes to stderr, so the two never mix.
        stream = sys.stderr if str(target) == "-" else sys.stdout
        stream.write(dumps(extract_summary(result, target)))
    else:
        print_extract_summary(s.note, result, target, verbose=s.verbose)


@app.command()
def validate(
    paths: Annotated[
        list[Path],
        typer.Argument(metavar="FILE", help="Dataset files to check; - for stdin.", show_default=False),
    ],
    fmt: Annotated[str | None, _format_opt(F.table, F.json, F.jsonl, F.github)] = None,
    as_json: JsonOpt = False,
) -> None:
    """Check every line of datasets: JSON, shape, types, unique ids, patterns, source windows.

    Exit 1 when a line is bad.
    """
    from extractor import api
    from extractor.render.formats import choose, dumps
    from extractor.render.summary import validate_github, validate_summary

    s = current()
    form = choose(fmt, as_json, (F.table, F.json, F.jsonl, F.github))
    summaries = []
    bad = 0
    for path in paths:
        report = api.validate(path)
        bad += len(report.problems)
        summary = validate_summary(path, report)
        summaries.append(summary)
        if form is F.table:
            for problem in report.problems:
                s.alert.print(str(problem), markup=False, soft_wrap=True)
            state = "ok" if not report.problems else f"{len(report.problems)} bad line(s)"
            s.say(f"{path}: {report.good} record(s), {state}")
        elif form is F.jsonl:
            sys.stdout.write(dumps(summary, compact=True))
        elif form is F.github:
            sys.stdout.write(validate_github(report))
    if form is F.json:
        sys.stdout.write(dumps(summaries[0] if len(summaries) == 1 else summaries))
    if bad:
        raise typer.Exit(EXIT_FINDINGS)


@app.command()
def schema(
    out_path: Annotated[
        Path,
        typer.Option("--out", "-o", metavar="FILE", help="Where to write the JSON Schema; - for stdout."),
    ] = Path(SCHEMA_PATH),
    check: Annotated[
        bool, typer.Option("--check", help="Exit 1 if the file differs from the model instead of writing it.")
    ] = False,
) -> None:
    """Write the JSON Schema of a dataset line, generated from the pydantic model."""
    from extractor import api

    s = current()
    if check:
        if not api.schema_is_current(out_path):
            s.alert.print(f"{out_path}: out of date; run `sglang-errors schema`", markup=False)
            raise typer.Exit(EXIT_FINDINGS)
        s.say(f"{out_path}: up to date")
        return
    api.write_schema(out_path)
    if str(out_path) != "-":
        s.say(f"wrote {out_path}")


# -- diff command (issue 5) goes below this line --


@app.command()
def diff(
    old: Annotated[
        Path | None,
        typer.Argument(metavar="OLD", help="The older dataset (JSONL; - for stdin).", show_default=False),
    ] = None,
    new: Annotated[
        Path | None,
        typer.Argument(metavar="NEW", help="The newer dataset (JSONL; - for stdin).", show_default=False),
    ] = None,
    source: SourceOpt = None,
    from_ref: Annotated[
        str | None,
        typer.Option("--from", metavar="COMMIT", help="Commit-ish of the older side; extracts both sides."),
    ] = None,
    to_ref: Annotated[
        str | None, typer.Option("--to", metavar="COMMIT", help="Commit-ish of the newer side.")
    ] = None,
    fmt: Annotated[str | None, _format_opt(F.table, F.markdown, F.json, F.jsonl, F.github)] = None,
    as_json: JsonOpt = False,
    out_path: Annotated[
        Path | None,
        typer.Option("--out", "-o", metavar="FILE", help="Write the output to this file instead of stdout."),
    ] = None,
    include: IncludeOpt = None,
    exclude: ExcludeOpt = None,
    repo: RepoOpt = None,
    jobs: JobsOpt = None,
    cache_dir: CacheDirOpt = None,
    no_cache: NoCacheOpt = False,
) -> None:
    """Which errors were added, removed or changed between two datasets or two commits.

    Records pair by id, then by similarity, so a reworded or moved error is one change.

    Position is never a difference: lineNumber, sourceCode(Start/End), githubUrl, analyzedSha/At.

    Exit status as diff(1): 0 no differences, 1 differences, 2 trouble.
    """
    from extractor import api
    from extractor.render.diff import render, render_github, render_jsonl, render_table
    from extractor.render.formats import choose

    s = current()
    form = choose(fmt, as_json, (F.table, F.markdown, F.json, F.jsonl, F.github))
    if old is not None and new is not None and from_ref is None and to_ref is None and source is None:
        result = api.diff_files(old, new)
    elif old is None and new is None and from_ref is not None and to_ref is not None:
        options = _options(source, None, include, exclude, repo, jobs, cache_dir, no_cache)
        result = api.diff_commits(options, from_ref, to_ref, progress=s.interactive)
    else:
        raise ExtractorError("diff", "give two dataset files, or --from and --to (and optionally --source)")
    if form is F.github:
        text = render_github(result)
    elif form is F.jsonl:
        text = render_jsonl(result)
    elif form is F.table and (out_path is None or str(out_path) == "-"):
        render_table(s.out, result)
        raise typer.Exit(EXIT_FINDINGS if result.has_differences else 0)
    else:
        from extractor.render.diff import DiffFormat

        text = render(result, DiffFormat(form.value))
    if out_path is not None:
        api.write_bytes(out_path, [text.encode()])
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    raise typer.Exit(EXIT_FINDINGS if result.has_differences else 0)


# -- nightly command (issue 6) goes below this line --


@app.command()
def nightly(
    out_dir: Annotated[
        Path,
        typer.Option(
            "--out-dir",
            metavar="DIR",
            help="Folder of datasets, changelogs, manifest.json.",
            show_default=False,
        ),
    ],
    source: SourceOpt = None,
    ref: Annotated[
        str, typer.Option("--ref", metavar="COMMIT", help="Branch, tag or commit-ish to analyse.")
    ] = "main",
    keep: Annotated[
        int,
        typer.Option("--keep", min=1, metavar="N", help="Datasets kept in the folder, the new one included."),
    ] = 7,
    include: IncludeOpt = None,
    exclude: ExcludeOpt = None,
    repo: RepoOpt = None,
    jobs: JobsOpt = None,
    cache_dir: CacheDirOpt = None,
    no_cache: NoCacheOpt = False,
    wait: Annotated[
        bool, typer.Option("--wait", help="If another run holds the folder, wait for it instead of refusing.")
    ] = False,
    fmt: Annotated[str | None, _format_opt(F.table, F.json)] = None,
    as_json: JsonOpt = False,
) -> None:
    """Regenerate the dataset of a ref into a folder: dataset, changelog, then manifest.json.

    Exit 3 when another run holds the folder.
    """
    from extractor import api
    from extractor.render.formats import choose, dumps
    from extractor.render.summary import nightly_lines

    s = current()
    form = choose(fmt, as_json, (F.table, F.json))
    options = _options(source, None, include, exclude, repo, jobs, cache_dir, no_cache)
    result = api.nightly(
        options, ref=ref, out_dir=out_dir, keep=keep, wait=wait, progress=s.interactive, on_wait=s.say
    )
    if form is F.json:
        sys.stdout.write(dumps({**result.manifest, "published": not result.republished}))
        return
    for line in nightly_lines(result):
        s.say(line)


# -- match command (issue 8) goes below this line --


@app.command()
def match(
    text: Annotated[
        list[str] | None,
        typer.Argument(
            help="Error message, `Class: message` line, traceback or log; `-` or nothing reads stdin. "
            "Text that starts with `-` is text unless it is one of the options below (or put it after `--`).",
            show_default=False,
        ),
    ] = None,
    dataset: Annotated[
        Path | None,
        typer.Option(
            "--dataset",
            "-d",
            help="Dataset file, or nightly folder (its current dataset and the older ones it keeps) "
            "(default: output/, its newest dataset by analyzedAt).",
        ),
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help='Print [{"score": s, "record": {...}}, ...] best first; with several errors each row also '
            'has "group" and "error"; with --explain, "why".',
        ),
    ] = False,
    fmt: Annotated[str | None, _format_opt(F.table, F.json)] = None,
    top: Annotated[int, typer.Option("--top", "-n", min=1, help="How many matches to show per error.")] = 10,
    explain: Annotated[
        bool, typer.Option("--explain", help="Show how each candidate earned its score.")
    ] = False,
) -> None:
    """Find the sites that raise a runtime error: from a message, a traceback or a server log."""
    import orjson

    from extractor import api
    from extractor.datasets.match.render import json_rows, print_search
    from extractor.render.formats import choose

    s = current()
    words = text or []
    if (not words or words == ["-"]) and sys.stdin.isatty():
        raise ExtractorError("input", "nothing to match: pass a message or pipe a traceback on stdin")
    # Logs may hold stray bytes; a replacement character beats a crash.
    query = (
        " ".join(words) if words and words != ["-"] else sys.stdin.buffer.read().decode("utf-8", "replace")
    )
    if not query.strip():
        raise ExtractorError("input", "nothing to match: pass a message or pipe a traceback on stdin")
    form = choose(fmt, as_json, (F.table, F.json))
    result = api.match(dataset, query, top=top)
    found = any(g.matches for g in result.groups)
    if form is F.json:
        rows = json_rows(result, explain=explain)
        sys.stdout.write(orjson.dumps(rows, option=orjson.OPT_INDENT_2).decode() + "\n")
        print_search(s.note, result, tables=False, explain=False)
    else:
        # A pipe gets a readable width rather than rich's 80-column default.
        print_search(s.out, result, tables=True, explain=explain, width=None if s.out.is_terminal else 180)
    if not found:
        where = result.searched[0].path
        s.alert.print(f"no match: no site in {where} fits this error", highlight=False, markup=False)
        raise typer.Exit(EXIT_FINDINGS)


_MATCH_OPTIONS = {
    "--dataset": 1,
    "-d": 1,
    "--top": 1,
    "-n": 1,
    "--format": 1,
    "-f": 1,
    "--json": 0,
    "--explain": 0,
    # The options every command takes (see extractor.cliapp).
    "--help": 0,
    "-h": 0,
    "--quiet": 0,
    "-q": 0,
    "--verbose": 0,
    "-v": 0,
    "--color": 1,
}


def match_argv(argv: list[str]) -> list[str]:
    """``match`` arguments with every text after ``--``: a message may start with ``-`` or ``--``.

    Only the command's own options (exactly as spelled, or ``--opt=value``) stay options; any other
    argument, ``-x must be >= 1`` included, is text, in the order given.
    """
    if not argv or argv[0] != "match":
        return argv
    options: list[str] = []
    texts: list[str] = []
    k = 1
    while k < len(argv):
        arg = argv[k]
        k += 1
        if arg == "--":
            texts.extend(argv[k:])
            break
        name = arg.split("=", 1)[0] if arg.startswith("--") else arg
        if name.startswith("-n") and name[2:].isdigit():
            name = "-n="  # "-n5": the count attached
        arity = 0 if name == "-n=" else _MATCH_OPTIONS.get(name)
        if arity is None:
            texts.append(arg)
            continue
        options.append(arg)
        if arity and "=" not in arg and k < len(argv):
            options.append(argv[k])
            k += 1
    return ["match", *options, "--", *texts] if texts else ["match", *options]


@app.command()
def site(
    source: Annotated[
        Path,
        typer.Argument(
            metavar="DATASET|NIGHTLY_DIR",
            help="A dataset file, or a nightly folder (its manifest.json).",
            show_default=False,
        ),
    ],
    out_dir: Annotated[
        Path,
        typer.Option("--out", "-o", metavar="DIR", help="Folder to write the site into.", show_default=False),
    ],
    jobs: JobsOpt = None,
) -> None:
    """Write a static, browsable error catalogue: a page per error, flag, env var and kept version."""
    from extractor import api

    report = api.build_site(source, out_dir, jobs=jobs)
    current().say(
        f"wrote {report.out}: {report.pages} pages ({report.records} errors, {report.flags} flags, "
        f"{report.envs} env vars, {report.versions} versions) in {report.seconds:.1f}s"
    )


def main() -> None:
    """Console-script entry point."""
    try:
        app(args=match_argv(sys.argv[1:]))
    except KeyboardInterrupt:
        current().alert.print("interrupted", markup=False)
        sys.exit(130)


import extractor.cli_dataset  # noqa: E402,F401  (registers show, stats, cache)
