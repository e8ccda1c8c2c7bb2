"""The library API: every CLI command is one call here.

``extract`` reads the target at a sha from git objects, analyses each in-scope file (in parallel,
reusing cached per-file results), and assembles schema-v2 records; ``validate`` checks a dataset
file line by line; ``write_schema`` regenerates the committed JSON Schema; ``diff_files`` /
``diff_commits``, ``nightly``, ``match``, ``show``, ``stats`` and ``cache_info`` / ``cache_clean``
are the dataset tools. Options are built once (:meth:`ExtractOptions.build`) and passed on.

A path of ``-`` means stdin (for a dataset read) or stdout (for a file written).
"""

from __future__ import annotations

import dataclasses
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from extractor.config import (
    DEFAULT_EXCLUDE,
    DEFAULT_INCLUDE,
    DEFAULT_OUTPUT_DIR,
    DEFAULT_REPO,
    DEFAULT_SHA,
    DEFAULT_SOURCE,
    SOURCE_ENV,
    ProjectSettings,
    Scope,
    project_settings,
)
from extractor.errors import ExtractorError
from extractor.records.jsonl import LineProblem, atomic_write_bytes, dumps_line, read_dataset, sort_key
from extractor.records.model import ErrorRecord, schema_bytes

# The run's result types live in extractor.types; they are part of this surface too.
from extractor.types import ExtractResult as ExtractResult
from extractor.types import ExtractStats as ExtractStats
from extractor.types import FileFailure as FileFailure

if TYPE_CHECKING:
    from extractor.datasets.diff import DiffResult
    from extractor.datasets.match import SearchResult
    from extractor.datasets.nightly import NightlyResult
    from extractor.datasets.stats import DatasetStats
    from extractor.engine.cache_usage import CacheUsage
    from extractor.site.build import SiteReport

STDIO = "-"
Note = Callable[[str], None]

__all__ = [
    "ExtractOptions",
    "ExtractResult",
    "ExtractStats",
    "FileFailure",
    "ValidationReport",
    "build_site",
    "cache_clean",
    "cache_info",
    "diff_commits",
    "diff_files",
    "extract",
    "match",
    "nightly",
    "project_settings",
    "schema_bytes",
    "show",
    "stats",
    "validate",
    "write_result",
    "write_schema",
]


def _usable_cores() -> int:
    """Cores this process may run on (a container's limit, not the host's count)."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):
        return os.cpu_count() or 1


@dataclass(frozen=True)
class ExtractOptions:
    """Everything one extraction depends on."""

    source: str = DEFAULT_SOURCE
    sha: str = DEFAULT_SHA
    scope: Scope = field(default_factory=Scope)
    jobs: int = 1
    cache_dir: Path | None = None
    use_cache: bool = True
    # Whether ``sha`` is the built-in pin (no --sha, no setting): its absence gets a hint.
    pinned: bool = field(default=False, compare=False)

    @classmethod
    def build(
        cls,
        *,
        source: str | None = None,
        sha: str | None = None,
        include: list[str] | None = None,
        exclude: list[str] | None = None,
        repo: str | None = None,
        jobs: int | None = None,
        cache_dir: Path | None = None,
        use_cache: bool = True,
        settings: ProjectSettings | None = None,
        environ: bool = False,
    ) -> ExtractOptions:
        """Options from CLI-shaped values: ``include`` replaces the default globs, ``exclude`` adds to them.

        Each value comes from the argument when given, else (with ``environ``) the environment
        (``SGLANG_ERRORS_SOURCE``), else ``settings`` (``[tool.sglang-errors]``), else the default.
        """
        settings = settings or ProjectSettings()
        env_source = os.environ.get(SOURCE_ENV) or None if environ else None
        chosen_source = source or env_source or _settings_source(settings) or DEFAULT_SOURCE
        chosen_sha = sha or settings.sha
        scope = Scope(
            include=tuple(include) if include else (settings.include or DEFAULT_INCLUDE),
            exclude=DEFAULT_EXCLUDE + tuple(exclude or settings.exclude or ()),
            repo=repo or settings.repo or DEFAULT_REPO,
        )
        if "/" not in scope.repo or scope.repo.count("/") != 1 or not all(scope.repo.split("/")):
            raise ExtractorError("--repo", f"expected owner/name, got {scope.repo!r}")
        return cls(
            source=chosen_source,
            sha=chosen_sha or DEFAULT_SHA,
            scope=scope,
            jobs=jobs or settings.jobs or _usable_cores(),
            cache_dir=cache_dir,
            use_cache=use_cache,
            pinned=chosen_sha is None,
        )


def _settings_source(settings: ProjectSettings) -> str | None:
    """The table's ``source``; a relative path is relative to its ``pyproject.toml``."""
    from extractor.source.git import is_url

    if settings.source is None or settings.path is None:
        return settings.source
    if is_url(settings.source) or Path(settings.source).expanduser().is_absolute():
        return settings.source
    return str(settings.path.parent / settings.source)


def default_output_path(sha: str) -> Path:
    return Path(DEFAULT_OUTPUT_DIR) / f"sglang-errors-{sha[:12]}.jsonl"


def extract(options: ExtractOptions, *, progress: bool = False, on_note: Note | None = None) -> ExtractResult:
    """Analyse the target at ``options.sha`` and return its records, sorted and with unique ids.

    A failure leaves no cache folder it created behind and says what to try (``--sha HEAD`` when
    the pinned sha is not in a local clone, ``--source`` when the public repository is out of
    reach); a scope that matches no file is an error naming the globs. ``on_note`` hears about
    a work tree whose uncommitted changes are not read.
    """
    from extractor.engine.cache import default_cache_dir
    from extractor.engine.pipeline import run_extraction
    from extractor.hints import explain, missing_dirs, remove_empty, scope_is_empty, worktree_note

    created = missing_dirs(options.cache_dir or default_cache_dir())
    try:
        result = run_extraction(options, progress=progress)
    except ExtractorError as exc:
        remove_empty(created)
        raise explain(exc, options) from None
    except BaseException:
        remove_empty(created)
        raise
    if result.stats.files_in_scope == 0:
        raise scope_is_empty(options, result.sha)
    if on_note is not None:
        note = worktree_note(options.source, result.sha, options.scope)
        if note:
            on_note(note)
    return result


def write_result(result: ExtractResult, path: Path) -> int:
    """Write the dataset atomically (``-``: to stdout); the previous file at ``path`` survives any failure."""
    ordered = sorted(result.records, key=sort_key)
    write_bytes(path, (dumps_line(r, result.dataset_version) for r in ordered))
    return len(ordered)


def write_bytes(path: Path, chunks: Iterator[bytes] | list[bytes]) -> None:
    """``chunks`` to stdout for ``-``, else atomically to ``path``."""
    if str(path) == STDIO:
        out = sys.stdout.buffer
        for chunk in chunks:
            out.write(chunk)
        out.flush()
        return
    try:
        atomic_write_bytes(path, chunks)
    except IsADirectoryError as exc:
        raise ExtractorError(str(path), "is a directory") from exc
    except OSError as exc:
        raise ExtractorError(str(path), f"cannot write ({exc.strerror or exc})") from exc


@contextmanager
def readable(path: Path) -> Iterator[Path]:
    """``path`` itself, or for ``-`` a private copy of stdin (so a dataset can be piped in)."""
    if str(path) != STDIO:
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="sglang-errors-stdin-") as folder:
        copy = Path(folder) / "stdin.jsonl"
        copy.write_bytes(sys.stdin.buffer.read())
        yield copy


@dataclass
class ValidationReport:
    good: int
    problems: list[LineProblem]


def validate(path: Path) -> ValidationReport:
    """Check every line of a dataset: JSON, shape and types, unique ids, patterns, source windows."""
    if str(path) != STDIO:
        if path.is_dir():
            raise ExtractorError(str(path), "is a directory, not a dataset file")
        if not path.exists():
            raise ExtractorError(str(path), "no such dataset file")
    with readable(path) as real:
        result = read_dataset(real)
    problems = [dataclasses.replace(p, path=str(path)) for p in result.problems]
    if not result.lines and not problems:
        problems.append(LineProblem(str(path), 0, "empty dataset"))
    return ValidationReport(good=len(result.lines), problems=problems)


def load(path: Path) -> list[ErrorRecord]:
    """Every record of a dataset that must be entirely valid (``-``: stdin)."""
    from extractor.records.jsonl import load_records

    if str(path) != STDIO and not path.exists():
        raise ExtractorError(str(path), "no such dataset file")
    with readable(path) as real:
        try:
            return load_records(real)
        except ExtractorError as exc:
            raise ExtractorError(exc.where.replace(str(real), str(path)), exc.what) from None


def write_schema(path: Path) -> None:
    write_bytes(path, [schema_bytes()])


def schema_is_current(path: Path) -> bool:
    if str(path) == STDIO:
        return sys.stdin.buffer.read() == schema_bytes()
    try:
        return path.read_bytes() == schema_bytes()
    except FileNotFoundError:
        return False


# -- the dataset tools ------------------------------------------------------------------------


def diff_files(old: Path, new: Path) -> DiffResult:
    """Diff two dataset files (either may be ``-``)."""
    from extractor.datasets.diff import diff_records

    if str(old) == STDIO and str(new) == STDIO:
        raise ExtractorError("diff", "only one side can be read from stdin (-)")
    return diff_records(load(old), load(new), old_label=str(old), new_label=str(new))


def diff_commits(
    options: ExtractOptions, from_ref: str, to_ref: str, *, progress: bool = False
) -> DiffResult:
    """Extract the target at both commits with ``options`` (its sha aside) and diff them."""
    from extractor.datasets.diff import diff_commits as run

    return run(options, from_ref, to_ref, extract=lambda o: extract(o, progress=progress))


def nightly(
    options: ExtractOptions,
    *,
    ref: str,
    out_dir: Path,
    keep: int | None = None,
    wait: bool = False,
    progress: bool = False,
    on_wait: Note | None = None,
) -> NightlyResult:
    """One nightly run of ``ref`` into ``out_dir`` with ``options`` (its sha aside; see
    :mod:`extractor.datasets.nightly`)."""
    from extractor.datasets.nightly import DEFAULT_KEEP, NightlyOptions, run_nightly

    run = NightlyOptions(
        extract=options, ref=ref, out_dir=out_dir, keep=DEFAULT_KEEP if keep is None else keep, wait=wait
    )
    return run_nightly(run, extract=lambda o: extract(o, progress=progress), on_wait=on_wait)


def newest_dataset(folder: Path | None = None) -> Path:
    """The newest dataset under ``folder`` (default ``output/``) by its ``analyzedAt``: what
    ``match``/``show``/``stats`` read when no dataset is named."""
    from extractor.datasets.match import newest_dataset as newest

    return newest(folder or Path(DEFAULT_OUTPUT_DIR))


def match(dataset: Path | None, query: str, *, top: int = 10) -> SearchResult:
    """The sites that best explain a runtime error text, one group per distinct error, best first.

    ``dataset`` is a file, a nightly folder (its current dataset, then the older ones it keeps)
    or ``None`` for the newest dataset in ``output/``.
    """
    from extractor.datasets.match import choose_datasets, search

    return search(choose_datasets(dataset, Path(DEFAULT_OUTPUT_DIR)), query, top)


def show(dataset: Path, key: str) -> ErrorRecord:
    """The one record of ``dataset`` whose id or slug is ``key`` (an id prefix of 6+ digits too)."""
    from extractor.datasets.stats import find_record

    return find_record(load(dataset), key, where=str(dataset))


def stats(dataset: Path, against: Path | None = None) -> DatasetStats:
    """Counts of ``dataset`` by subsystem, class, cause kind and flag (and the change from ``against``)."""
    from extractor.datasets.stats import dataset_stats

    old = load(against) if against is not None else None
    return dataset_stats(load(dataset), old, label=str(dataset), against=str(against) if against else None)


def cache_info(cache_dir: Path | None = None) -> CacheUsage:
    """What the cache holds: clones and result namespaces, their sizes and when last used."""
    from extractor.engine.cache import default_cache_dir
    from extractor.engine.cache_usage import usage

    return usage(cache_dir or default_cache_dir())


def cache_clean(
    cache_dir: Path | None = None, *, older_than_days: float | None = None, dry_run: bool = False
) -> CacheUsage:
    """Delete the cache (or only what was unused for ``older_than_days``); return what went."""
    from extractor.engine.cache import default_cache_dir
    from extractor.engine.cache_usage import clean

    return clean(cache_dir or default_cache_dir(), older_than_days=older_than_days, dry_run=dry_run)


def build_site(source: Path, out: Path, *, jobs: int | None = None) -> SiteReport:
    """Write the static error catalogue of a dataset file or nightly folder into ``out``."""
    try:
        from extractor.site.build import build_site as build
    except ImportError as exc:
        raise ExtractorError(
            "site", f"needs the site extra ({exc.name} is missing): pip install 'sglang-errors[site]'"
        ) from exc
    return build(source, out, jobs=jobs or _usable_cores())
