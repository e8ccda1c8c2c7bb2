"""Worker processes: files in, outcomes out, each outcome cached with the knowledge reads behind it.

Workers are forked as soon as files without any cache entry are known, before the knowledge is
built: they import the analysis code and parse and analyse files meanwhile, and wait for the
knowledge (published to a file without a name) only when a file's prose needs it. Blobs are
streamed from ``git cat-file`` to them, biggest first, while they are read. Long-lived objects are
frozen for the cyclic garbage collector before the fork; by default its full collections re-scanned
them and took 14% of a worker's time. The analysis leaves cycles behind, so workers keep the
collector on even though the parent pauses its own (a full collection after each file measured
slower than the collector's own schedule). An outcome crosses back as orjson bytes.
"""

from __future__ import annotations

import gc
import hashlib
import os
import signal
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from typing import TYPE_CHECKING, Any, cast

import orjson

from extractor.engine.knowledge_store import knowledge_from_plain, knowledge_to_plain
from extractor.engine.lifeline import Lifeline
from extractor.engine.payloads import analyse_file, check_outcome
from extractor.engine.reads import RecordingKnowledge, entry
from extractor.errors import ExtractorError
from extractor.prose.knowledge import Knowledge
from extractor.reasons import Reason
from extractor.types import Failed

if TYPE_CHECKING:
    from extractor.engine.cache import ResultCache
    from extractor.engine.commit_files import CommitFiles
    from extractor.source.git import Target, TargetFile

# Files handed to a worker at once: few enough to balance the load at the end of a run (files
# are sent biggest first), enough to amortise the inter-process round trip.
_BATCH_FILES = 8
_BATCH_BYTES = 256 * 1024
# Below this many files to analyse a pool costs more than it saves.
MIN_PARALLEL = 8
# How long the parent waits on the pool at once: a Ctrl-C held off meanwhile is acted on after this.
_POLL_SECONDS = 0.2

_worker_state: dict[str, Any] = {}


class _NoKnowledge(BaseException):  # a BaseException: analyse_file must not catch it
    """The parent gave up before publishing the knowledge: the file's work is abandoned, not cached."""


def _init_worker(
    repo: str,
    knowledge: Knowledge | Callable[[], Knowledge],
    cache: ResultCache | None,
    files: CommitFiles | None = None,
) -> None:
    from extractor.analysis.resolver import OtherModules

    _worker_state["repo"] = repo
    _worker_state["knowledge"] = knowledge
    _worker_state["cache"] = cache
    _worker_state["files"] = files
    _worker_state["modules"] = OtherModules(files) if files is not None else None


def _init_forked(
    repo: str,
    cache: ResultCache | None,
    ready: Any,
    published: int,
    lifeline: Lifeline,
    files: CommitFiles | None,
) -> None:
    """A pool worker: imports the analysis code; the knowledge is read when a file first needs it."""
    lifeline.hold()
    # Ctrl-C reaches the whole foreground process group: the parent stops the pool and says so
    # once; a worker's own KeyboardInterrupt traceback would only scribble over the terminal.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    known: list[Knowledge] = []

    def knowledge() -> Knowledge:
        if not known:
            ready.wait()  # set by Workers.publish, also when the run is abandoned
            try:
                raw = _read_all(published)
                if not raw:
                    raise _NoKnowledge
                known.append(knowledge_from_plain(raw))
            except (OSError, ValueError):
                raise _NoKnowledge from None
        return known[0]

    _init_worker(repo, knowledge, cache, files)
    import extractor.analysis.analyse
    import extractor.prose.enrich  # noqa: F401

    # Everything alive now lives as long as the worker: frozen, the cyclic collector never scans
    # it again (without this, full collections re-scan libcst's and pydantic's objects all run).
    gc.freeze()
    gc.enable()  # the parent pauses its own collector for the run; forked now, ours was paused too


def _read_all(fd: int) -> bytes:
    size = os.fstat(fd).st_size
    chunks, offset = [], 0
    while offset < size:
        chunk = os.pread(fd, size - offset, offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _work_one(key: str, path: str, data: bytes) -> tuple[str, bytes]:
    repo: str = _worker_state["repo"]
    recorder = RecordingKnowledge(_worker_state["knowledge"])
    files: CommitFiles | None = _worker_state.get("files")
    if files is not None:
        files.reads = recorder.reads  # the other modules this file reads are part of its answers
    try:
        outcome = analyse_file(path, data, repo, cast(Knowledge, recorder), _worker_state.get("modules"))
    finally:
        if files is not None:
            files.reads = None
    outcome = check_outcome(outcome, path, repo)
    try:
        raw = orjson.dumps(outcome.to_plain())
    except orjson.JSONEncodeError as exc:  # e.g. a lone surrogate from a "\ud800" literal
        raw = orjson.dumps(Failed(Reason.UNENCODABLE, f"cannot encode the records: {exc}").to_plain())
    cache: ResultCache | None = _worker_state["cache"]
    if cache is not None:
        cache.put(key, entry(recorder.encoded(), raw))
    return key, raw


def _work(batch: list[tuple[str, str, bytes]]) -> list[tuple[str, bytes]]:
    return [_work_one(key, path, data) for key, path, data in batch]


def _batches(items: Iterable[tuple[str, str, bytes]]) -> Iterator[list[tuple[str, str, bytes]]]:
    batch: list[tuple[str, str, bytes]] = []
    size = 0
    for item in items:
        batch.append(item)
        size += len(item[2])
        if len(batch) >= _BATCH_FILES or size >= _BATCH_BYTES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


class _HeldInterrupt:
    """Ctrl-C held off while this process runs the pool's own locking code, raised once it returns.

    ``concurrent.futures`` locks each future in plain Python (``wait`` acquires them one by one and
    releases them one by one): a KeyboardInterrupt raised between two of those steps leaves a lock
    held for good, and the pool's manager thread, which takes every queued future's lock to cancel
    it, then blocks ``shutdown`` forever. Inside, SIGINT only records itself; the KeyboardInterrupt
    is raised on leaving, where no lock of the pool is held. Only the main thread receives signals,
    and a handler someone else installed (or SIG_IGN) is left alone.
    """

    def __init__(self) -> None:
        self.pending = False
        self._previous: Any = None

    def _record(self, signum: int, frame: object) -> None:
        self.pending = True

    def __enter__(self) -> _HeldInterrupt:
        if (
            threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler
        ):
            self._previous = signal.signal(signal.SIGINT, self._record)
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None
        if self.pending:
            self.pending = False
            if exc_type is None:
                raise KeyboardInterrupt


class Workers:
    """Worker processes, forked as soon as the parent knows there is work for them.

    They start before the knowledge base is built: importing the analysis code takes them most of
    a second, and they can parse and analyse files (the bulk of the work) while the parent builds
    the knowledge; they wait for it only when a file's prose needs it (:meth:`publish`).
    """

    def __init__(
        self, jobs: int, repo: str, cache: ResultCache | None, files: CommitFiles | None = None
    ) -> None:
        try:
            with _HeldInterrupt():
                self._start(jobs, repo, cache, files)
        except KeyboardInterrupt:  # held off while forking: the caller never gets a pool to close
            if getattr(self, "_pool", None) is not None:
                self.close(cancel=True)
            raise

    def _start(self, jobs: int, repo: str, cache: ResultCache | None, files: CommitFiles | None) -> None:
        ctx = get_context("fork") if hasattr(os, "fork") else get_context("spawn")
        # The knowledge is handed over in a file that has no name from the start: the forked
        # workers share its descriptor, and nothing is left on disk however the run ends.
        fd, path = tempfile.mkstemp(prefix="sglang-errors-knowledge-")
        os.unlink(path)
        self._published = fd
        self._lifeline = Lifeline()
        self._ready = ctx.Event()
        self._pending: set[Future[list[tuple[str, bytes]]]] = set()
        self._pool = ProcessPoolExecutor(
            max_workers=jobs,
            mp_context=ctx,
            initializer=_init_forked,
            initargs=(repo, cache, self._ready, self._published, self._lifeline, files),
        )
        # Fork now (submit forks every worker when the start method is fork), before any git
        # reader process or thread exists. Frozen objects are never scanned by the workers'
        # collector, and their pages are not copied into each worker by it either.
        gc.freeze()
        try:
            self._pool.submit(int)
        finally:
            gc.unfreeze()  # in this process only; the workers keep theirs frozen

    def submit(self, items: Iterable[tuple[str, str, bytes]], *, batches: int | None = None) -> None:
        """Hand out files in batches (all of ``items``, or only the first ``batches`` batches of it)."""
        for n, batch in enumerate(_batches(items), 1):
            with _HeldInterrupt():
                self._pending.add(self._pool.submit(_work, batch))
            if batches is not None and n >= batches:
                return

    def publish(self, knowledge: Knowledge | None) -> None:
        """Let the workers read ``knowledge``; ``None`` abandons the files that need it."""
        if self._ready.is_set():
            return
        if knowledge is not None:
            try:
                raw = knowledge_to_plain(knowledge)
            except TypeError:
                raw = b""  # the files that need it are abandoned, as when the run fails
            view = memoryview(raw)
            while view:
                view = view[os.write(self._published, view) :]
        with _HeldInterrupt():  # a multiprocessing condition, as easily left half-notified
            self._ready.set()

    def results(self, tick: Callable[[str], None]) -> Iterator[tuple[str, bytes]]:
        """Every submitted file's ``(key, payload)`` as batches finish."""
        try:
            while self._pending:
                with _HeldInterrupt():
                    finished, self._pending = wait(
                        self._pending, timeout=_POLL_SECONDS, return_when=FIRST_COMPLETED
                    )
                    batches = [fut.result() for fut in finished]
                for batch in batches:
                    for result in batch:
                        yield result
                        tick(result[0])
        except BrokenProcessPool as exc:
            raise ExtractorError(
                "--jobs", f"a worker process died ({exc}); try fewer jobs or more memory"
            ) from None

    def close(self, *, cancel: bool) -> None:
        """Stop the workers; on an error (or Ctrl-C) queued batches are dropped, not analysed."""
        self.publish(None)  # no worker may wait for a knowledge that will never come
        try:
            with _HeldInterrupt():
                self._pool.shutdown(wait=True, cancel_futures=cancel)
        finally:
            os.close(self._published)
            self._lifeline.close()


def feed(target: Target, todo: list[TargetFile]) -> Iterator[tuple[str, str, bytes]]:
    """``(file key, path, bytes)`` of ``todo``, biggest first (so one slow file does not finish
    the run alone; sizes come from the tree), read from git while they are handed out."""
    by_blob: dict[str, list[TargetFile]] = {}
    for f in sorted(todo, key=lambda f: (-f.size, f.path)):
        by_blob.setdefault(f.blob_sha, []).append(f)
    for blob, data in target.read_many(list(by_blob)):
        for f in by_blob[blob]:
            yield file_key(f), f.path, data


def analyse_all(
    target: Target,
    todo: list[TargetFile],
    jobs: int,
    repo: str,
    knowledge: Knowledge,
    cache: ResultCache | None,
    tick: Callable[[str], None],
    files: CommitFiles | None = None,
) -> Iterator[tuple[str, bytes]]:
    """``(file key, payload)`` for each file, in ``jobs`` worker processes when that pays, else
    here; the order is not fixed."""
    if not todo:
        return  # nothing to analyse: a warm run never imports the parser stack
    if jobs <= 1 or len(todo) < MIN_PARALLEL:
        _init_worker(repo, knowledge, cache, files)
        gc.freeze()  # as in a worker (see _init_forked)
        paused = not gc.isenabled()
        gc.enable()  # the analysis leaves cycles behind, which the run's pause would keep
        try:
            for key, path, data in feed(target, todo):
                yield _work_one(key, path, data)
                tick(key)
        finally:
            if paused:
                gc.disable()
            gc.unfreeze()
        return
    workers = Workers(jobs, repo, cache, files)
    finished = False
    try:
        workers.publish(knowledge)
        workers.submit(feed(target, todo))
        yield from workers.results(tick)
        finished = True
    finally:
        workers.close(cancel=not finished)


def file_key(f: TargetFile) -> str:
    """What a payload is stored and looked up under: the blob and the path (the prose names the path)."""
    return hashlib.sha256(f"{f.blob_sha}\0{f.path}".encode("utf-8", "surrogateescape")).hexdigest()
