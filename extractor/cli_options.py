"""The options several commands share, spelled once: the target, scope, cache and output format."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from extractor.config import DEFAULT_EXCLUDE, DEFAULT_INCLUDE, DEFAULT_SHA, SOURCE_ENV
from extractor.render.formats import OutputFormat

if TYPE_CHECKING:
    from extractor.api import ExtractOptions

SourceOpt = Annotated[
    str | None,
    typer.Option(
        "--source",
        metavar="URL|PATH",
        help=f"Git URL, local clone or bare mirror of sglang (env {SOURCE_ENV}; default: the public repository).",
        show_default=False,
    ),
]
ShaOpt = Annotated[
    str | None,
    typer.Option(
        "--sha",
        metavar="COMMIT",
        help=f"Commit-ish to analyse (HEAD, a branch, tag or sha); default: the pinned {DEFAULT_SHA}.",
        show_default=False,
    ),
]
IncludeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--include",
        metavar="GLOB",
        help=f"Files to analyse; repeatable; replaces {', '.join(DEFAULT_INCLUDE)}.",
        show_default=False,
    ),
]
ExcludeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--exclude",
        metavar="GLOB",
        help=f"Files to skip; repeatable; added to {', '.join(DEFAULT_EXCLUDE)}.",
        show_default=False,
    ),
]
RepoOpt = Annotated[
    str | None,
    typer.Option(
        "--repo",
        metavar="OWNER/NAME",
        help="Repository named in `repo` and `githubUrl` (default: sgl-project/sglang).",
    ),
]
JobsOpt = Annotated[
    int | None,
    typer.Option("--jobs", "-j", min=1, metavar="N", help="Worker processes (default: the usable cores)."),
]
CacheDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--cache-dir",
        metavar="DIR",
        help="Where clones and per-file results are cached (default: $XDG_CACHE_HOME/sglang-errors).",
    ),
]
NoCacheOpt = Annotated[bool, typer.Option("--no-cache", help="Neither read nor write per-file results.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Same as --format json.")]
DatasetOpt = Annotated[
    Path | None,
    typer.Option(
        "--dataset",
        "-d",
        metavar="FILE",
        help="Dataset to read, - for stdin (default: the newest under output/).",
    ),
]


def format_option(*choices: OutputFormat) -> Any:
    names = "|".join(choices)
    return typer.Option(
        "--format", "-f", metavar=names, help=f"Output format: {names} (default {choices[0]})."
    )


def extract_options(
    source: str | None,
    sha: str | None,
    include: list[str] | None,
    exclude: list[str] | None,
    repo: str | None,
    jobs: int | None,
    cache_dir: Path | None,
    no_cache: bool,
) -> ExtractOptions:
    from extractor import api

    return api.ExtractOptions.build(
        source=source,
        sha=sha,
        include=include,
        exclude=exclude,
        repo=repo,
        jobs=jobs,
        cache_dir=cache_dir,
        use_cache=not no_cache,
        settings=api.project_settings(Path.cwd()),
        environ=True,
    )
