"""The extraction pipeline: source -> parse -> analyse -> enrich -> records, across processes.

A run (:func:`run_extraction`) opens the target at a commit, lists the files in scope, reuses each
file's cached outcome when the knowledge it read still gives the same answers
(:mod:`extractor.engine.reads`), analyses the others (:func:`~extractor.engine.payloads.analyse_file`,
in worker processes: :mod:`extractor.engine.workers`), and assembles the records (:func:`assemble`),
adding what depends on the analysed commit (``githubUrl``, ``analyzedSha``, ``analyzedAt``).

Speed (issue 7, see ``docs/performance.md``):

* Outcomes are cached under a key made of the blob sha and the path (the prose names the path, so a
  renamed file is analysed again), and survive knowledge edits that their prose did not read.
* Records are validated with pydantic in the worker that computed them (with placeholder commit
  fields); :func:`assemble` validates one record per run in full (which checks the commit fields,
  the same for every record) and builds the others unvalidated (``trusted_record``). A cached outcome is
  only ever one that passed that validation: the cache namespace includes the code's fingerprint
  and every entry is checksummed (:mod:`extractor.engine.cache`).
* A rerun at the commit, code and scope of the last run reads back that run's finished records
  (:mod:`extractor.engine.dataset_store`): the sha fixes every input but the build time.
* The knowledge base itself is cached by the blob shas of the files it is read from
  (:mod:`extractor.engine.knowledge_store`).
* Workers start on the files without any cache entry while the knowledge is built.
* The cyclic garbage collector is paused in this process for the run (:func:`_collector_paused`):
  the run only adds to a heap that lives until the records are written, and each full collection
  re-scanned all of it (the payloads, the reach facts, the records), which took more than half of
  the time spent after the workers finished. Workers (and files analysed in this process) keep
  the collector on: the analysis leaves cycles behind.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from extractor.config import Scope
from extractor.engine.commit_files import commit_files
from extractor.engine.dataset_store import DatasetStore
from extractor.engine.knowledge_store import knowledge_cache, load_knowledge
from extractor.engine.payloads import analyse_file, check_outcome, commit_fields, record_fields, why_invalid
from extractor.engine.reads import ReadsCheck, split_entry
from extractor.engine.side import in_child
from extractor.engine.workers import MIN_PARALLEL, Workers, analyse_all, feed, file_key
from extractor.prose.knowledge import Knowledge
from extractor.reasons import Reason
from extractor.records.model import ErrorRecord, trusted_record
from extractor.timefmt import build_time, iso_millis
from extractor.types import ExtractResult, ExtractStats, FileFailure, Parsed, RunOptions, outcome_from_plain

if TYPE_CHECKING:
    from extractor.reach.handled import RunHandling
    from extractor.source.git import TargetFile

__all__ = [
    "PAYLOAD_VERSION",
    "Knowledge",
    "analyse_file",
    "assemble",
    "check_outcome",
    "file_key",
    "knowledge_cache",
    "load_knowledge",
    "namespace",
    "run_extraction",
]

# 2: entries hold the knowledge answers before the payload and are keyed by blob and path.
# 3: outcomes carry a reason code.
# 4: parsed outcomes carry the file's reach facts.
# 5: the knowledge answers are recorded under named read kinds (engine/read_kinds.py).
# 6: flags found by a finder of prose/flag_spelling.py and the distributions are read one by one.
PAYLOAD_VERSION = 7


def namespace(options_scope: Scope) -> str:
    """The cache namespace of per-file payloads: the extractor's code, payload format and scope.

    The knowledge is not part of it: each entry carries the answers it read (see the module doc).
    """
    from extractor.engine.cache import code_fingerprint, make_namespace

    return make_namespace(code_fingerprint(), f"payload-v{PAYLOAD_VERSION}", options_scope.key())


def run_extraction(options: RunOptions, *, progress: bool = False) -> ExtractResult:
    """Open the target, analyse every in-scope file (cached or in workers) and assemble records."""
    from extractor.engine.cache import ResultCache, default_cache_dir
    from extractor.source.git import open_target

    started = time.perf_counter()
    moment = build_time()
    cache_dir = options.cache_dir or default_cache_dir()
    with _collector_paused(), open_target(options.source, options.sha, cache_dir=cache_dir) as target:
        datasets = DatasetStore(cache_dir, options.scope) if options.use_cache else None
        found = datasets.get(target.sha, iso_millis(moment)) if datasets is not None else None
        if found is not None:
            records, stats = found
            stats.seconds = time.perf_counter() - started
            return ExtractResult(
                sha=target.sha, records=records, dataset_version=iso_millis(moment), stats=stats
            )
        files = target.files(options.scope)
        modules = commit_files(target)
        cache = ResultCache(cache_dir, namespace(options.scope)) if options.use_cache else None
        # A file with no cache entry at all is analysed whatever the knowledge says: when there
        # are enough of them for a pool, the workers start on them while the knowledge is built.
        absent = [f for f in files if cache is None or not os.path.exists(cache.path_for(file_key(f)))]
        workers = None
        if options.jobs > 1 and len(absent) >= MIN_PARALLEL:
            workers = Workers(options.jobs, options.scope.repo, cache, modules)
        finished = False
        try:
            early = feed(target, absent)
            if workers is not None:
                workers.submit(early, batches=2 * options.jobs)  # enough to keep them busy meanwhile
            knowledge = load_knowledge(target, cache_dir if options.use_cache else None)
            if workers is not None:
                workers.publish(knowledge)
                workers.submit(early)  # the rest, before this process reads the cache entries
            check = ReadsCheck(knowledge, modules.blobs)
            payloads: dict[str, bytes] = {}
            stale: list[TargetFile] = []  # entries whose knowledge answers no longer hold
            absent_keys = {file_key(f) for f in absent}
            for f in files:
                key = file_key(f)
                if key in absent_keys:
                    continue
                hit = cache.get(key) if cache is not None else None
                parts = split_entry(hit) if hit is not None else None
                if parts is not None and check.holds(parts[0]):
                    payloads[key] = parts[1]
                else:
                    stale.append(f)
            todo_count = len(absent) + len(stale)
            with _progress(progress, absent + stale) as tick:
                if workers is not None:
                    workers.submit(feed(target, stale))
                    results = workers.results(tick)
                else:
                    results = analyse_all(
                        target,
                        absent + stale,
                        options.jobs,
                        options.scope.repo,
                        knowledge,
                        cache,
                        tick,
                        modules,
                    )
                for key, payload in results:
                    payloads[key] = payload
            finished = True
        finally:
            if workers is not None:
                workers.close(cancel=not finished)
            modules.close()
        stats = ExtractStats(
            files_in_scope=len(files), files_parsed=todo_count, files_from_cache=len(files) - todo_count
        )
        records = assemble(
            files,
            payloads,
            target.sha,
            options.scope.repo,
            iso_millis(moment),
            stats,
            knowledge=knowledge,
            cache_dir=cache_dir if options.use_cache else None,
            parallel=options.jobs > 1,
        )
        for path, reason, why in target.skipped(options.scope):
            stats.failures.append(FileFailure(path, f"skipped: {why}", reason))
        stats.failures.sort(key=lambda f: f.path)
        if datasets is not None:
            datasets.put(target.sha, records, stats)
        stats.seconds = time.perf_counter() - started
        return ExtractResult(sha=target.sha, records=records, dataset_version=iso_millis(moment), stats=stats)


def assemble(
    files: Iterable[TargetFile],
    payloads: dict[str, bytes],
    sha: str,
    repo: str,
    analyzed_at: str,
    stats: ExtractStats,
    *,
    revalidate: bool = False,
    knowledge: Knowledge | None = None,
    cache_dir: Path | None = None,
    parallel: bool = False,
) -> list[ErrorRecord]:
    """Records from per-file outcomes (orjson bytes keyed by :func:`file_key`), with the commit fields, sorted.

    Outcomes come from the workers, which validated every record with stub commit fields
    (:func:`check_outcome`); here the first record is validated in full (its commit fields are
    every record's) and the rest are built without re-validation, unless ``revalidate``.
    With ``parallel``, the callers' handling is computed in a child process meanwhile.
    """
    from pydantic import ValidationError

    # The reach and the callers' handling are only read here: a rerun that reads back its last
    # records (the warm path) never imports them.
    from extractor.engine.handled_store import handling_store
    from extractor.engine.reach_store import run_reach, site_scopes

    records: list[ErrorRecord] = []
    probe = True
    outcomes = [(f, outcome_from_plain(orjson.loads(payloads[file_key(f)]))) for f in files]
    # Reach is global (an edit to one file changes the reach of others): it is computed here, from
    # every file's cached facts, and never stored in a file's payload.
    store = handling_store(outcomes, cache_dir)
    handling = store.get()
    # The callers' handling is computed beside the reach, in a child, when there is a core for it.
    child = (
        in_child(lambda: orjson.dumps(store.compute().to_plain()))
        if handling is None and parallel and knowledge is not None
        else None
    )
    reach = None
    try:
        if knowledge is not None:
            reach, reused = run_reach(outcomes, knowledge, cache_dir)
            scopes = site_scopes(outcomes)
            stats.reach_from_cache, stats.reach_computed = (scopes, 0) if reused else (0, scopes)
    except BaseException:
        if child is not None:
            child.cancel()
        raise
    if child is not None:
        handling = _handling_from(child.result())
    if handling is None:
        handling = store.compute()
    for f, outcome in outcomes:
        if not isinstance(outcome, Parsed):
            stats.failures.append(FileFailure(f.path, outcome.text, outcome.reason))
            continue
        built: list[ErrorRecord] = []
        try:
            for partial in outcome.records:
                if reach is not None:
                    partial = reach.apply(f.path, partial)
                partial = handling.apply(f.path, partial)
                if probe or revalidate:
                    built.append(
                        ErrorRecord.model_validate(record_fields(partial, f.path, repo, sha, analyzed_at))
                    )
                    probe = False
                else:
                    # Keys that are no field (the ``_`` ones) are left out as the record is built.
                    built.append(
                        trusted_record({**partial, **commit_fields(partial, f.path, repo, sha, analyzed_at)})
                    )
        except ValidationError as exc:
            stats.failures.append(
                FileFailure(f.path, f"invalid record: {why_invalid(exc)}", Reason.INVALID_RECORD)
            )
            continue
        stats.sites += outcome.sites
        records.extend(built)
    records.sort(key=lambda r: (r.filePath, r.lineNumber, r.id))
    stats.records = len(records)
    return records


def _handling_from(raw: bytes | None) -> RunHandling | None:
    from extractor.reach.handled import RunHandling

    if raw is None:
        return None
    try:
        return RunHandling.from_plain(orjson.loads(raw))
    except orjson.JSONDecodeError:
        return None


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off in this process for the block, as it was afterwards.

    Objects are still freed by reference counting; only cycles wait for the next collection.
    Workers forked meanwhile set their own policy (see :mod:`extractor.engine.workers`).
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class _progress:
    """A rich progress bar on stderr when asked (a terminal), else nothing.

    The bar and its ETA advance by bytes, not files: a few giant files take most of a run, so a
    file count alone predicted minutes for a run of seconds. The text still counts files.
    """

    def __init__(self, enabled: bool, todo: list[TargetFile]) -> None:
        self.enabled = enabled and bool(todo)
        self.sizes = {file_key(f): max(f.size, 1) for f in todo}
        self.total = len(self.sizes)
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> Callable[[str], None]:
        if not self.enabled:
            return lambda key: None
        from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

        bar = Progress(
            TextColumn("analysing"),
            BarColumn(),
            TextColumn("{task.fields[done]}/{task.fields[files]} files"),
            TimeRemainingColumn(),
            transient=True,
        )
        task = bar.add_task("files", total=sum(self.sizes.values()), done=0, files=self.total)
        self._bar, self._task, sizes = bar, task, self.sizes
        done = [0]

        def tick(key: str) -> None:
            done[0] += 1
            bar.update(task, advance=sizes.get(key, 1), done=done[0])

        # Starting is the last step: a Ctrl-C once the bar shows but before this returns would
        # skip __exit__, and the bar, still drawn, would overwrite the "interrupted" message.
        try:
            bar.start()
        except BaseException:
            bar.stop()
            raise
        return tick

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
