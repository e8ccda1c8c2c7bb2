"""The ``sglang-errors`` command line: options in, library calls, rendering, exit codes.

Only this layer catches :class:`~extractor.errors.ExtractorError`; it prints ``where: what`` and
exits non-zero. Every command is a thin wrapper over a function of :mod:`extractor.api`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console

from extractor import __version__
from extractor.config import DEFAULT_EXCLUDE, DEFAULT_INCLUDE, DEFAULT_REPO, SOURCE_ENV
from extractor.errors import ExtractorError

app = typer.Typer(
    name="sglang-errors",
    help="Mine sglang's source for every error it can raise, as a schema-validated dataset.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
err = Console(stderr=True)
out = Console()


def fail(exc: ExtractorError) -> NoReturn:
    err.print(f"[bold red]error[/]: {exc.where}: {exc.what}", highlight=False, markup=True, soft_wrap=True)
    raise typer.Exit(exc.exit_code)


SourceOpt = Annotated[
    str | None,
    typer.Option(
        "--source",
        help=f"Git URL, local clone or bare mirror of sglang (env {SOURCE_ENV}; default: the public repository).",
        show_default=False,
    ),
]
ShaOpt = Annotated[
    str | None,
    typer.Option("--sha", help="Commit-ish to analyse; resolved to a full sha (default: the pinned sha)."),
]
IncludeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--include", help=f"Glob of files to analyse; repeatable; replaces {list(DEFAULT_INCLUDE)}."
    ),
]
ExcludeOpt = Annotated[
    list[str] | None,
    typer.Option("--exclude", help=f"Glob of files to skip; repeatable; added to {list(DEFAULT_EXCLUDE)}."),
]
RepoOpt = Annotated[str, typer.Option("--repo", help="owner/name used in `repo` and `githubUrl`.")]
JobsOpt = Annotated[
    int | None, typer.Option("--jobs", "-j", min=1, help="Worker processes (default: the number of cores).")
]
CacheDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--cache-dir", help="Where clones and per-file results are cached (default: user cache dir)."
    ),
]
NoCacheOpt = Annotated[bool, typer.Option("--no-cache", help="Neither read nor write per-file results.")]


def version_callback(value: bool) -> None:
    if value:
        out.print(f"sglang-errors {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=version_callback, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """Mine sglang's source for every error it can raise."""


@app.command()
def extract(
    source: SourceOpt = None,
    sha: ShaOpt = None,
    out_path: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Dataset file (default: output/sglang-errors-<sha12>.jsonl)."),
    ] = None,
    include: IncludeOpt = None,
    exclude: ExcludeOpt = None,
    repo: RepoOpt = DEFAULT_REPO,
    jobs: JobsOpt = None,
    cache_dir: CacheDirOpt = None,
    no_cache: NoCacheOpt = False,
) -> None:
    """Extract every error site of sglang at one commit into a JSONL dataset."""
    from extractor import api
    from extractor.render.summary import print_extract_summary

    try:
        options = api.ExtractOptions.build(
            source=source or os.environ.get(SOURCE_ENV) or None,
            sha=sha,
            include=include,
            exclude=exclude,
            repo=repo,
            jobs=jobs,
            cache_dir=cache_dir,
            use_cache=not no_cache,
        )
        result = api.extract(options, progress=err.is_terminal)
        target = out_path or api.default_output_path(result.sha)
        api.write_result(result, target)
    except ExtractorError as exc:
        fail(exc)
    print_extract_summary(err, result, target)


@app.command()
def validate(
    paths: Annotated[list[Path], typer.Argument(help="Dataset files to check.", show_default=False)],
) -> None:
    """Check every line of datasets: JSON, shape, types, unique ids, patterns, source windows."""
    from extractor import api

    bad = 0
    for path in paths:
        try:
            report = api.validate(path)
        except ExtractorError as exc:
            fail(exc)
        for problem in report.problems:
            err.print(str(problem), highlight=False, markup=False, soft_wrap=True)
        bad += len(report.problems)
        state = "ok" if not report.problems else f"{len(report.problems)} bad line(s)"
        err.print(f"{path}: {report.good} record(s), {state}", highlight=False, markup=False, soft_wrap=True)
    if bad:
        raise typer.Exit(1)


@app.command()
def schema(
    out_path: Annotated[Path, typer.Option("--out", "-o", help="Where to write the JSON Schema.")] = Path(
        "schemas/error-record.v2.schema.json"
    ),
    check: Annotated[
        bool, typer.Option("--check", help="Exit 1 if the file differs from the model instead of writing it.")
    ] = False,
) -> None:
    """Write the JSON Schema of a dataset line, generated from the pydantic model."""
    from extractor import api

    try:
        if check:
            if not api.schema_is_current(out_path):
                err.print(f"{out_path}: out of date; run `sglang-errors schema`", highlight=False)
                raise typer.Exit(1)
            err.print(f"{out_path}: up to date", highlight=False)
            return
        api.write_schema(out_path)
    except ExtractorError as exc:
        fail(exc)
    err.print(f"wrote {out_path}", highlight=False)


# -- diff command (issue 5) goes below this line --


@app.command()
def diff(
    old: Annotated[Path | None, typer.Argument(help="The older dataset (JSONL).", show_default=False)] = None,
    new: Annotated[Path | None, typer.Argument(help="The newer dataset (JSONL).", show_default=False)] = None,
    source: SourceOpt = None,
    from_ref: Annotated[
        str | None, typer.Option("--from", help="Commit-ish of the older side; extracts both sides.")
    ] = None,
    to_ref: Annotated[str | None, typer.Option("--to", help="Commit-ish of the newer side.")] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="table, markdown or json.")] = "table",
    out_path: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the output to this file instead of stdout.")
    ] = None,
    include: IncludeOpt = None,
    exclude: ExcludeOpt = None,
    repo: RepoOpt = DEFAULT_REPO,
    jobs: JobsOpt = None,
    cache_dir: CacheDirOpt = None,
    no_cache: NoCacheOpt = False,
) -> None:
    """Which errors were added, removed or changed between two datasets or two commits.

    Records pair by id, then by similarity, so a reworded or moved error is one change.

    Position is never a difference: lineNumber, sourceCode(Start/End), githubUrl, analyzedSha/At.

    Exit status as diff(1): 0 no differences, 1 differences, 2 trouble.
    """
    from extractor.datasets import diff as diffing
    from extractor.records.jsonl import atomic_write_bytes
    from extractor.render.diff import DiffFormat, render, render_table

    try:
        if fmt.lower() not in DiffFormat.__members__:
            raise ExtractorError("--format", f"expected table, markdown or json, got {fmt!r}")
        form = DiffFormat(fmt.lower())
        if old is not None and new is not None and from_ref is None and to_ref is None and source is None:
            result = diffing.diff_files(old, new)
        elif old is None and new is None and from_ref is not None and to_ref is not None:
            result = diffing.diff_commits(
                source or os.environ.get(SOURCE_ENV) or None,
                from_ref,
                to_ref,
                include=include,
                exclude=exclude,
                repo=repo,
                jobs=jobs,
                cache_dir=cache_dir,
                use_cache=not no_cache,
                progress=err.is_terminal,
            )
        else:
            raise ExtractorError(
                "diff", "give two dataset files, or --from and --to (and optionally --source)"
            )
    except ExtractorError as exc:
        fail(exc)
    try:
        if out_path is not None:
            atomic_write_bytes(out_path, [render(result, form).encode()])
        elif form is DiffFormat.table:
            render_table(out, result)
        else:
            sys.stdout.write(render(result, form))
            sys.stdout.flush()
    except OSError as exc:
        fail(ExtractorError(str(out_path or "stdout"), f"cannot write ({exc.strerror or exc})"))
    raise typer.Exit(1 if result.has_differences else 0)


# -- nightly command (issue 6) goes below this line --


@app.command()
def nightly(
    out_dir: Annotated[
        Path,
        typer.Option("--out-dir", help="Folder of datasets, changelogs, manifest.json.", show_default=False),
    ],
    source: SourceOpt = None,
    ref: Annotated[str, typer.Option("--ref", help="Branch, tag or commit-ish to analyse.")] = "main",
    keep: Annotated[
        int, typer.Option("--keep", min=1, help="Datasets kept in the folder, the new one included.")
    ] = 7,
    include: IncludeOpt = None,
    exclude: ExcludeOpt = None,
    repo: RepoOpt = DEFAULT_REPO,
    jobs: JobsOpt = None,
    cache_dir: CacheDirOpt = None,
    no_cache: NoCacheOpt = False,
    wait: Annotated[
        bool, typer.Option("--wait", help="If another run holds the folder, wait for it instead of refusing.")
    ] = False,
) -> None:
    """Regenerate the dataset of a ref into a folder: dataset, changelog, then manifest.json."""
    from extractor.config import DEFAULT_SOURCE
    from extractor.datasets.nightly import NightlyOptions, run_nightly

    def note(text: str) -> None:
        err.print(text, highlight=False, markup=False, soft_wrap=True)

    try:
        result = run_nightly(
            NightlyOptions(
                source=source or os.environ.get(SOURCE_ENV) or DEFAULT_SOURCE,
                ref=ref,
                out_dir=out_dir,
                keep=keep,
                cache_dir=cache_dir,
                use_cache=not no_cache,
                jobs=jobs,
                wait=wait,
                include=include,
                exclude=exclude,
                repo=repo,
            ),
            on_wait=note,
        )
    except ExtractorError as exc:
        fail(exc)
    m = result.manifest
    files = m["files"]
    note(f"{m['sha'][:12]} ({m['ref']}): {m['records']} record(s) -> {result.dataset_path}")
    note(
        f"files: {files['inScope']} in scope, {files['parsed']} parsed, {files['fromCache']} from cache, "
        f"{files['failed']} failed; {m['extractSeconds']:.1f}s extracting, {m['totalSeconds']:.1f}s in all"
    )
    if result.republished:
        note("dataset identical to the published one: republished with its changelog")
    if result.changelog_markdown is not None:
        since = m["previousSha"][:12]
        note(f"changelog since {since}: {result.changelog_summary} -> {result.changelog_markdown}")
    else:
        note("no changelog (no earlier dataset to compare with)")
    for text in result.notes:
        note(f"note: {text}")
    if result.pruned:
        note(f"pruned {len(result.pruned)} old file(s)")
    note(f"wrote {result.manifest_path}")


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
    top: Annotated[int, typer.Option("--top", "-n", min=1, help="How many matches to show per error.")] = 10,
    explain: Annotated[
        bool, typer.Option("--explain", help="Show how each candidate earned its score.")
    ] = False,
) -> None:
    """Find the sites that raise a runtime error: from a message, a traceback or a server log."""
    import orjson

    from extractor.config import DEFAULT_OUTPUT_DIR
    from extractor.datasets.match import choose_datasets, json_rows, print_search, search

    words = text or []
    try:
        if (not words or words == ["-"]) and sys.stdin.isatty():
            raise ExtractorError("input", "nothing to match: pass a message or pipe a traceback on stdin")
        # Logs may hold stray bytes; a replacement character beats a crash.
        query = (
            " ".join(words)
            if words and words != ["-"]
            else sys.stdin.buffer.read().decode("utf-8", "replace")
        )
        if not query.strip():
            raise ExtractorError("input", "nothing to match: pass a message or pipe a traceback on stdin")
        choice = choose_datasets(dataset, Path(DEFAULT_OUTPUT_DIR))
        result = search(choice, query, top)
    except ExtractorError as exc:
        fail(exc)
    found = any(g.matches for g in result.groups)
    if as_json:
        rows = json_rows(result, explain=explain)
        sys.stdout.write(orjson.dumps(rows, option=orjson.OPT_INDENT_2).decode() + "\n")
        print_search(err, result, tables=False, explain=False)
    else:
        # A pipe gets a readable width rather than rich's 80-column default.
        print_search(out, result, tables=True, explain=explain, width=None if out.is_terminal else 180)
    if not found:
        where = result.searched[0].path
        err.print(f"no match: no site in {where} fits this error", highlight=False, markup=False)
        raise typer.Exit(1)


_MATCH_OPTIONS = {"--dataset": 1, "-d": 1, "--top": 1, "-n": 1, "--json": 0, "--explain": 0, "--help": 0}


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


def main() -> None:
    """Console-script entry point."""
    try:
        app(args=match_argv(sys.argv[1:]))
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
