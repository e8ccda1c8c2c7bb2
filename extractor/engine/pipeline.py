"""The extraction pipeline: source -> parse -> analyse -> enrich -> records, across processes.

Per-file work (:func:`analyse_file`) is a pure function of the file's bytes, its path, the repo
name and what the enrichment reads from the target's knowledge (flags, env vars). Its result (a
*payload*) is computed in worker processes and cached under a key made of the blob sha and the
path (the prose names the path, so a renamed file is analysed again). Everything that depends on
the analysed commit (``githubUrl``, ``analyzedSha``, ``analyzedAt``) is added afterwards, in
:func:`assemble`.

Speed (issue 7, see ``docs/performance.md``):

* A cached payload does not depend on the whole knowledge base: the worker records every answer
  the knowledge gave while the file was enriched (:class:`_RecordingKnowledge`), and the entry is
  reused as long as the current knowledge gives the same answers. An edit of ``server_args.py``
  therefore re-analyses only the files whose prose read what changed, not the whole tree.
* Records are validated with pydantic in the worker that computed them (with placeholder commit
  fields); :func:`assemble` validates one record per run in full (which checks the commit fields,
  the same for every record) and builds the others with ``model_construct``. A cached payload is
  only ever one that passed that validation: the cache namespace includes the code's fingerprint
  and every entry is checksummed (:mod:`extractor.engine.cache`).
* The knowledge base itself is cached by the blob shas of the files it is read from.
* Workers are forked as soon as files without any cache entry are known, before the knowledge is
  built: they import the analysis code and parse and analyse files meanwhile, and wait for the
  knowledge (published to a private temporary file) only when a file's prose needs it.
* Blobs are streamed from ``git cat-file`` to the workers, biggest first, while they are read.
* Long-lived objects are frozen for the cyclic garbage collector before the fork; by default its
  full collections re-scanned them and took 14% of a worker's time.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import io
import os
import pickle
import re
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import orjson

from extractor.analysis.context import permalink
from extractor.config import Scope
from extractor.errors import ExtractorError
from extractor.prose.knowledge import Knowledge, build_knowledge, is_knowledge_path
from extractor.records.model import SCHEMA_VERSION, ErrorRecord
from extractor.timefmt import build_time, iso_millis

if TYPE_CHECKING:
    from extractor.analysis.facts import Site
    from extractor.api import ExtractOptions, ExtractResult
    from extractor.engine.cache import ResultCache
    from extractor.prose.knowledge import FlagInfo
    from extractor.source.git import Target, TargetFile

Payload = dict[str, Any]
"""A file's outcome: ``{"status": "parsed", "records": [...], "sites": n}`` or ``{"status": "failed", "reason": ...}``."""

# 2: entries hold the knowledge answers before the payload and are keyed by blob and path.
PAYLOAD_VERSION = 2
_SLUG_WORDS = 8
_SLUG_CHARS = 60
_WORD = re.compile(r"[a-z0-9]+")
# Files handed to a worker at once: few enough to balance the load at the end of a run (files
# are sent biggest first), enough to amortise the inter-process round trip.
_BATCH_FILES = 8
_BATCH_BYTES = 256 * 1024
# Below this many files to analyse a pool costs more than it saves.
_MIN_PARALLEL = 8
# Commit fields used to validate a record in the worker, before the commit is attached.
_PROBE_SHA = "0" * 40
_PROBE_TIME = "2000-01-01T00:00:00.000Z"


# --------------------------------------------------------------------------- per file


def analyse_file(path: str, data: bytes, repo: str, knowledge: Knowledge) -> Payload:
    """One file's records without the commit-dependent fields; never raises."""
    try:
        return _analyse_file(path, data, repo, knowledge, deep=False)
    except RecursionError:
        pass
    # Code nested deeper than the recursion limit allows the parser's tree building or our walkers
    # (a 1,000-branch elif chain, a long attribute chain in an f-string) is still code: do the same
    # work again on a stack made for it rather than lose the file's sites.
    try:
        return _on_deep_stack(lambda: _analyse_file(path, data, repo, knowledge, deep=True))
    except RecursionError:
        return {"status": "failed", "reason": "nesting too deep to analyse"}


def _analyse_file(path: str, data: bytes, repo: str, knowledge: Knowledge, *, deep: bool) -> Payload:
    """:func:`analyse_file`, except that running out of recursion raises (unless ``deep``)."""
    # Imported here: a warm run (everything cached) never needs the parser stack (libcst...).
    from extractor.analysis.analyse import analyse
    from extractor.analysis.parse import ParseFailure, parse_source
    from extractor.prose.knowledge import module_constants

    parsed = parse_source(path, data)
    if isinstance(parsed, ParseFailure):
        if parsed.too_deep and not deep:
            raise RecursionError(parsed.reason)
        return {"status": "failed", "reason": parsed.reason}
    try:
        sites = analyse(parsed)
        constants = module_constants(parsed.tree) if sites else {}
        records = _records(sites, repo, knowledge, constants)
    except RecursionError:
        if not deep:
            raise
        return {"status": "failed", "reason": "nesting too deep to analyse"}
    except Exception as exc:  # one odd file must never stop a run
        return {"status": "failed", "reason": f"analysis error: {type(exc).__name__}: {exc}"}
    return {"status": "parsed", "records": _utf8_safe(records), "sites": len(sites)}


# Deep enough for any tree CPython's parser builds (its own stack stops it at 6,000 levels), with
# about 13 kB of C stack per Python frame for the calls that go through C (the parser's tree
# building, libcst's native parser and code generator).
_DEEP_RECURSION_LIMIT = 20_000
_DEEP_STACK_BYTES = 256 * 1024 * 1024

_T = TypeVar("_T")


def _on_deep_stack(fn: Callable[[], _T]) -> _T:
    """``fn()`` in a thread with a large stack and a raised recursion limit; its exception re-raised.

    Only for the rare file that overflows the default limit: the limit is the interpreter's, so
    it is raised only while this thread runs and the caller waits for it.
    """
    outcome: list[Any] = []

    def target() -> None:
        try:
            outcome.append((True, fn()))
        except BaseException as exc:  # handed back to the caller's thread
            outcome.append((False, exc))

    old_limit = sys.getrecursionlimit()
    try:
        old_size = threading.stack_size(_DEEP_STACK_BYTES)
    except (ValueError, RuntimeError):
        raise RecursionError("no thread with a larger stack available") from None
    try:
        sys.setrecursionlimit(max(old_limit, _DEEP_RECURSION_LIMIT))
        thread = threading.Thread(target=target, name="deep-analysis")
        try:
            thread.start()
        except RuntimeError:
            raise RecursionError("no thread with a larger stack available") from None
        thread.join()
    finally:
        threading.stack_size(old_size)
        sys.setrecursionlimit(old_limit)
    ok, value = outcome[0]
    if not ok:
        raise value
    return cast(_T, value)


def _utf8_safe(value: Any) -> Any:
    """``value`` with lone surrogates spelled as ``\\udXXX`` escapes, everything else unchanged.

    A ``"\\ud800"`` escape in the target's source is a lone surrogate in its message: JSON cannot
    carry it and the site's id hashes UTF-8, so it would stop the worker. As escape text the message
    stays readable, and in ``messagePattern`` the escape still matches that very character.
    """
    if isinstance(value, str):
        if value.isascii():
            return value
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
        return value
    if isinstance(value, list):
        return [_utf8_safe(v) for v in value]
    if isinstance(value, dict):
        return {k: _utf8_safe(v) for k, v in value.items()}
    return value


def _records(sites: list[Site], repo: str, knowledge: Knowledge, constants: dict[str, str]) -> list[Payload]:
    from extractor.prose.enrich import enrich

    seen: dict[str, int] = {}
    out = []
    for site in sites:
        prose = enrich(site, knowledge, constants)
        key = site_key(site)
        # Identical sites in one file (same scope, class, message and guard) are told apart by
        # their order among themselves only, so edits elsewhere never rename them.
        count = seen.get(key, 0)
        seen[key] = count + 1
        message = site.message
        start, end = site.window
        out.append(
            {
                "id": f"{key}\x00{count}",
                "repo": repo,
                "slug": slug_base(site),
                "errorCode": prose.errorCode,
                "errorMessage": message.template if message else "",
                "messagePattern": message.pattern if message else "",
                "errorType": prose.errorType,
                "errorClass": site.error_class,
                "httpStatus": site.http_status,
                "severity": prose.severity,
                "filePath": site.path,
                "lineNumber": site.line,
                "sourceCode": "\n".join(site.source_lines),
                "sourceCodeStart": start,
                "sourceCodeEnd": end,
                "documentation": prose.documentation,
                "triggerScenarios": prose.triggerScenarios,
                "commonSituations": prose.commonSituations,
                "solutions": list(prose.solutions),
                "exampleFix": prose.exampleFix,
                "handlingStrategy": prose.handlingStrategy,
                "validationCode": prose.validationCode,
                "typeGuard": prose.typeGuard,
                "tryCatchPattern": prose.tryCatchPattern,
                "preventionTips": list(prose.preventionTips),
                "tags": list(prose.tags),
                "backgroundTag": prose.backgroundTag,
            }
        )
    return out


def site_key(site: Site) -> str:
    """What identifies a site within its file independently of its line: scope, kind, class, message, guard."""
    template = site.message.template if site.message else ""
    return "\x1f".join([site.qualname, site.kind, site.error_class, template, site.guard.expression])


def record_id(repo: str, path: str, key: str) -> str:
    """16 hex digits from the repository, the file and the site's own key (never its line)."""
    return hashlib.sha256(f"{repo}\x1f{path}\x1f{key}".encode()).hexdigest()[:16]


def slug_base(site: Site) -> str:
    """Kebab-case words of the message (else class and scope); :func:`assemble` adds an id suffix."""
    text = ""
    if site.message is not None:
        text = "".join(p if isinstance(p, str) else " " for p in site.message.parts)
    words = _WORD.findall(text.lower())
    if len(words) < 2:
        words = _WORD.findall(f"{site.error_class} {site.qualname}".lower().replace("_", " ")) + words
    slug = ""
    for word in words[:_SLUG_WORDS]:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > _SLUG_CHARS:
            break
        slug = candidate
    return slug or "error"


def record_fields(
    partial: Mapping[str, Any], path: str, repo: str, sha: str, analyzed_at: str
) -> dict[str, Any]:
    """A payload record with the path- and commit-dependent fields filled in.

    Key order is irrelevant: validation and ``model_construct`` both lay fields out in schema order.
    """
    # Payloads hold the site's key; the id adds repo and path, so a blob shared by two paths
    # still gives two distinct ids.
    rid = record_id(repo, path, partial["id"])
    return {
        **partial,
        # Records name the path they were found at.
        "filePath": path,
        "id": rid,
        "slug": f"{partial['slug']}-{rid[:6]}",
        "githubUrl": permalink(repo, sha, path, partial["sourceCodeStart"], partial["sourceCodeEnd"]),
        "analyzedSha": sha,
        "analyzedAt": analyzed_at,
        "schemaVersion": SCHEMA_VERSION,
    }


def check_payload(payload: Payload, path: str, repo: str) -> Payload:
    """The payload if every record validates (commit fields stubbed), else a failure naming the first bad one."""
    from pydantic import ValidationError

    if payload.get("status") != "parsed":
        return payload
    for partial in payload["records"]:
        try:
            ErrorRecord.model_validate(record_fields(partial, path, repo, _PROBE_SHA, _PROBE_TIME))
        except (ValidationError, KeyError, TypeError) as exc:
            return {
                "status": "failed",
                "reason": f"invalid record at line {partial.get('lineNumber')}: {_why(exc)}",
            }
    return payload


def _why(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "record"
        return f"{where}: {first.get('msg', '')}"
    return f"{type(exc).__name__}: {exc}"


# --------------------------------------------------------------------------- knowledge reads

_MISSING = object()


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def _flag_digest(info: FlagInfo | None) -> str | None:
    # repr of a frozen dataclass holds every field, so any change to the flag changes it.
    return None if info is None else _digest(repr(info))


def _mapping_digest(flags: Mapping[str, FlagInfo]) -> str:
    return _digest(repr(sorted(flags.items())))


class _RecordingFlags(Mapping[str, "FlagInfo"]):
    """``Knowledge.flags_for(path)`` that records each lookup (and a digest of it all when iterated)."""

    def __init__(
        self, flags: Mapping[str, FlagInfo], reads: dict[tuple[str, str, str], Any], path: str
    ) -> None:
        self._flags = flags
        self._reads = reads
        self._path = path

    def _look(self, key: object) -> FlagInfo | None:
        if not isinstance(key, str):
            return None
        info = self._flags.get(key)
        self._reads[("f", self._path, key)] = _flag_digest(info)
        return info

    def __getitem__(self, key: str) -> FlagInfo:
        info = self._look(key)
        if info is None:
            raise KeyError(key)
        return info

    def get(self, key: str, default: Any = None) -> Any:
        info = self._look(key)
        return default if info is None else info

    def __contains__(self, key: object) -> bool:
        return self._look(key) is not None

    def _all(self) -> None:
        self._reads[("F", self._path, "")] = _mapping_digest(self._flags)

    def __iter__(self) -> Iterator[str]:
        self._all()
        return iter(self._flags)

    def __len__(self) -> int:
        self._all()
        return len(self._flags)


class _RecordingKnowledge:
    """Stands in for :class:`Knowledge` while one file is enriched and notes every answer it gives.

    ``namespace_of``, ``is_arg_class`` and ``flags_for(...)[key]`` are recorded one by one; any
    other use of the knowledge (an attribute this class does not know) records its whole
    fingerprint, so a new way of reading it is never missed, only less precise. ``source`` may be
    a function giving the knowledge: it is called on first use only, so a worker can parse and
    analyse a file before the parent has finished building the knowledge.
    """

    def __init__(self, source: Knowledge | Callable[[], Knowledge]) -> None:
        self._source = source
        self._resolved: Knowledge | None = source if isinstance(source, Knowledge) else None
        self.reads: dict[tuple[str, str, str], Any] = {}

    def _k(self) -> Knowledge:
        if self._resolved is None:
            self._resolved = cast("Callable[[], Knowledge]", self._source)()
        return self._resolved

    def namespace_of(self, path: str) -> str:
        answer = self._k().namespace_of(path)
        self.reads[("n", path, "")] = answer
        return answer

    def is_arg_class(self, path: str, class_name: str | None) -> bool:
        answer = self._k().is_arg_class(path, class_name)
        self.reads[("c", path, class_name or "")] = answer
        return answer

    def flags_for(self, path: str) -> Mapping[str, FlagInfo]:
        return _RecordingFlags(self._k().flags_for(path), self.reads, path)

    def env_of(self, name: str) -> Any:
        info = self._k().env_of(name)
        self.reads[("e", "", name)] = [info.kind, info.default] if info is not None else None
        return info

    def __getattr__(self, name: str) -> Any:
        if name in ("_source", "_resolved", "reads"):  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        knowledge = self._k()
        self.reads[("*", "", "")] = knowledge.fingerprint()
        return getattr(knowledge, name)

    def encoded(self) -> bytes:
        """The answers as one JSON line (sorted, so equal reads give equal bytes)."""
        try:
            return orjson.dumps(sorted([*k, v] for k, v in self.reads.items()))
        except orjson.JSONEncodeError:
            # A key orjson cannot write (a lone surrogate from a string literal): depend on it all.
            return orjson.dumps([["*", "", "", self._k().fingerprint()]])


def _answer(knowledge: Knowledge, kind: str, path: str, key: str) -> Any:
    if kind == "n":
        return knowledge.namespace_of(path)
    if kind == "c":
        return knowledge.is_arg_class(path, key or None)
    if kind == "f":
        return _flag_digest(knowledge.flags_for(path).get(key))
    if kind == "F":
        return _mapping_digest(knowledge.flags_for(path))
    if kind == "e":
        info = knowledge.env_of(key)
        return [info.kind, info.default] if info is not None else None
    if kind == "*":
        return knowledge.fingerprint()
    return _MISSING  # an unknown kind never matches


class _ReadsCheck:
    """Whether recorded answers still hold for this run's knowledge (answers memoised per run)."""

    def __init__(self, knowledge: Knowledge) -> None:
        self._knowledge = knowledge
        self._memo: dict[tuple[str, str, str], Any] = {}

    def holds(self, encoded: bytes) -> bool:
        try:
            reads = orjson.loads(encoded)
            for kind, path, key, answer in reads:
                memo_key = (kind, path, key)
                now = self._memo.get(memo_key, _MISSING)
                if now is _MISSING:
                    now = self._memo[memo_key] = _answer(self._knowledge, kind, path, key)
                if now != answer:
                    return False
        except (orjson.JSONDecodeError, TypeError, ValueError):
            return False
        return True


def _entry(reads: bytes, payload: bytes) -> bytes:
    # orjson never writes a raw newline, so the first one ends the answers.
    return reads + b"\n" + payload


def _split_entry(raw: bytes) -> tuple[bytes, bytes] | None:
    reads, sep, payload = raw.partition(b"\n")
    return (reads, payload) if sep else None


# --------------------------------------------------------------------------- workers

_worker_state: dict[str, Any] = {}


class _NoKnowledge(BaseException):  # a BaseException: analyse_file must not catch it
    """The parent gave up before publishing the knowledge: the file's work is abandoned, not cached."""


def _init_worker(
    repo: str, knowledge: Knowledge | Callable[[], Knowledge], cache: ResultCache | None
) -> None:
    _worker_state["repo"] = repo
    _worker_state["knowledge"] = knowledge
    _worker_state["cache"] = cache


def _init_forked(repo: str, cache: ResultCache | None, ready: Any, path: str) -> None:
    """A pool worker: imports the analysis code; the knowledge is read when a file first needs it."""
    known: list[Knowledge] = []

    def knowledge() -> Knowledge:
        if not known:
            ready.wait()  # set by _Workers.publish, also when the run is abandoned
            try:
                # Written by this run's parent into its own private temporary folder.
                with open(path, "rb") as fh:
                    known.append(pickle.load(fh))
            except OSError:
                raise _NoKnowledge from None
        return known[0]

    _init_worker(repo, knowledge, cache)
    import extractor.analysis.analyse
    import extractor.prose.enrich  # noqa: F401

    # Everything alive now lives as long as the worker: frozen, the cyclic collector never scans
    # it again (without this, full collections re-scan libcst's and pydantic's objects all run).
    gc.freeze()


def _work_one(key: str, path: str, data: bytes) -> tuple[str, bytes]:
    repo: str = _worker_state["repo"]
    recorder = _RecordingKnowledge(_worker_state["knowledge"])
    payload = check_payload(analyse_file(path, data, repo, cast(Knowledge, recorder)), path, repo)
    try:
        raw = orjson.dumps(payload)
    except orjson.JSONEncodeError as exc:  # e.g. a lone surrogate from a "\ud800" literal
        raw = orjson.dumps({"status": "failed", "reason": f"cannot encode the records: {exc}"})
    cache: ResultCache | None = _worker_state["cache"]
    if cache is not None:
        cache.put(key, _entry(recorder.encoded(), raw))
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


class _Workers:
    """Worker processes, forked as soon as the parent knows there is work for them.

    They start before the knowledge base is built: importing the analysis code takes them most of
    a second, and they can parse and analyse files (the bulk of the work) while the parent builds
    the knowledge; they wait for it only when a file's prose needs it (:meth:`publish`).
    """

    def __init__(self, jobs: int, repo: str, cache: ResultCache | None) -> None:
        ctx = get_context("fork") if hasattr(os, "fork") else get_context("spawn")
        self._folder = tempfile.mkdtemp(prefix="sglang-errors-knowledge-")
        self._path = os.path.join(self._folder, "knowledge.pickle")
        self._ready = ctx.Event()
        self._pending: set[Future[list[tuple[str, bytes]]]] = set()
        self._pool = ProcessPoolExecutor(
            max_workers=jobs,
            mp_context=ctx,
            initializer=_init_forked,
            initargs=(repo, cache, self._ready, self._path),
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
            self._pending.add(self._pool.submit(_work, batch))
            if batches is not None and n >= batches:
                return

    def publish(self, knowledge: Knowledge | None) -> None:
        """Let the workers read ``knowledge``; ``None`` abandons the files that need it."""
        if self._ready.is_set():
            return
        if knowledge is not None:
            tmp = self._path + ".tmp"
            with open(tmp, "wb") as fh:
                pickle.dump(knowledge, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self._path)
        self._ready.set()

    def results(self, tick: Callable[[], None]) -> Iterator[tuple[str, bytes]]:
        """Every submitted file's ``(key, payload)`` as batches finish."""
        try:
            while self._pending:
                finished, self._pending = wait(self._pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    for result in fut.result():
                        yield result
                        tick()
        except BrokenProcessPool as exc:
            raise ExtractorError(
                "--jobs", f"a worker process died ({exc}); try fewer jobs or more memory"
            ) from None

    def close(self, *, cancel: bool) -> None:
        """Stop the workers; on an error (or Ctrl-C) queued batches are dropped, not analysed."""
        self.publish(None)  # no worker may wait for a knowledge that will never come
        try:
            self._pool.shutdown(wait=True, cancel_futures=cancel)
        finally:
            shutil.rmtree(self._folder, ignore_errors=True)


def _feed(target: Target, todo: list[TargetFile]) -> Iterator[tuple[str, str, bytes]]:
    """``(file key, path, bytes)`` of ``todo``, biggest first (so one slow file does not finish
    the run alone; sizes come from the tree), read from git while they are handed out."""
    by_blob: dict[str, list[TargetFile]] = {}
    for f in sorted(todo, key=lambda f: (-f.size, f.path)):
        by_blob.setdefault(f.blob_sha, []).append(f)
    for blob, data in target.read_many(list(by_blob)):
        for f in by_blob[blob]:
            yield file_key(f), f.path, data


def _analyse_all(
    target: Target,
    todo: list[TargetFile],
    jobs: int,
    repo: str,
    knowledge: Knowledge,
    cache: ResultCache | None,
    tick: Callable[[], None],
) -> Iterator[tuple[str, bytes]]:
    """``(file key, payload)`` for each file, in ``jobs`` worker processes when that pays, else
    here; the order is not fixed."""
    if jobs <= 1 or len(todo) < _MIN_PARALLEL:
        _init_worker(repo, knowledge, cache)
        gc.freeze()  # as in a worker (see _init_forked)
        try:
            for key, path, data in _feed(target, todo):
                yield _work_one(key, path, data)
                tick()
        finally:
            gc.unfreeze()
        return
    workers = _Workers(jobs, repo, cache)
    finished = False
    try:
        workers.publish(knowledge)
        workers.submit(_feed(target, todo))
        yield from workers.results(tick)
        finished = True
    finally:
        workers.close(cancel=not finished)


def file_key(f: TargetFile) -> str:
    """What a payload is stored and looked up under: the blob and the path (the prose names the path)."""
    return hashlib.sha256(f"{f.blob_sha}\0{f.path}".encode("utf-8", "surrogateescape")).hexdigest()


# --------------------------------------------------------------------------- knowledge


class _KnowledgeUnpickler(pickle.Unpickler):
    """Loads only what a :class:`Knowledge` is made of: a cache file can never name other code."""

    _BUILTINS = frozenset({"frozenset", "set", "tuple", "dict", "list", "str", "int", "bool"})

    def find_class(self, module: str, name: str) -> Any:
        if module == "extractor.prose.knowledge" or (module == "builtins" and name in self._BUILTINS):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not part of a knowledge base")


def knowledge_cache(cache_dir: Path) -> ResultCache:
    """Where built knowledge bases are kept, keyed by the paths and blobs they were read from."""
    from extractor.engine.cache import ResultCache, code_fingerprint, make_namespace

    return ResultCache(cache_dir, make_namespace(code_fingerprint(), "knowledge-v1"))


def load_knowledge(target: Target, cache_dir: Path | None = None) -> Knowledge:
    """The target's flags and env vars, read from its own files at the analysed sha.

    With ``cache_dir``, the built knowledge is kept under the blob shas of the files it was
    read from, so a run at a commit that did not touch them skips reading and parsing them.
    """
    try:
        every = target.files(Scope(include=("**/*.py",), exclude=()))
    except Exception:  # knowledge is an enrichment, never a reason to fail
        return Knowledge.empty()
    wanted = sorted((f.path, f.blob_sha) for f in every if is_knowledge_path(f.path))
    store = key = None
    if cache_dir is not None:
        store = knowledge_cache(cache_dir)
        key = hashlib.sha256(orjson.dumps(wanted)).hexdigest()
        raw = store.get(key)
        if raw is not None:
            try:
                found = _KnowledgeUnpickler(io.BytesIO(raw)).load()
            except Exception:  # a stale or foreign entry is rebuilt
                found = None
            if isinstance(found, Knowledge):
                return found
    by_blob = {blob: path for path, blob in wanted}
    files = {by_blob[blob]: data for blob, data in target.read_many(by_blob)}
    knowledge = build_knowledge(files)
    if store is not None and key is not None:
        knowledge.fingerprint()  # computed once, stored with it
        with contextlib.suppress(pickle.PicklingError, TypeError, AttributeError):
            store.put(key, pickle.dumps(knowledge, protocol=pickle.HIGHEST_PROTOCOL))
    return knowledge


def namespace(options_scope: Scope) -> str:
    """The cache namespace of per-file payloads: the extractor's code, payload format and scope.

    The knowledge is not part of it: each entry carries the answers it read (see the module doc).
    """
    from extractor.engine.cache import code_fingerprint, make_namespace

    return make_namespace(code_fingerprint(), f"payload-v{PAYLOAD_VERSION}", options_scope.key())


# --------------------------------------------------------------------------- the run


def run_extraction(options: ExtractOptions, *, progress: bool = False) -> ExtractResult:
    """Open the target, analyse every in-scope file (cached or in workers) and assemble records."""
    from extractor.api import ExtractResult, ExtractStats, FileFailure
    from extractor.engine.cache import ResultCache, default_cache_dir
    from extractor.source.git import open_target

    started = time.perf_counter()
    moment = build_time()
    cache_dir = options.cache_dir or default_cache_dir()
    with open_target(options.source, options.sha, cache_dir=cache_dir) as target:
        files = target.files(options.scope)
        cache = ResultCache(cache_dir, namespace(options.scope)) if options.use_cache else None
        # A file with no cache entry at all is analysed whatever the knowledge says: when there
        # are enough of them for a pool, the workers start on them while the knowledge is built.
        absent = [f for f in files if cache is None or not os.path.exists(cache.path_for(file_key(f)))]
        workers = None
        if options.jobs > 1 and len(absent) >= _MIN_PARALLEL:
            workers = _Workers(options.jobs, options.scope.repo, cache)
        finished = False
        try:
            early = _feed(target, absent)
            if workers is not None:
                workers.submit(early, batches=2 * options.jobs)  # enough to keep them busy meanwhile
            knowledge = load_knowledge(target, cache_dir if options.use_cache else None)
            if workers is not None:
                workers.publish(knowledge)
                workers.submit(early)  # the rest, before this process reads the cache entries
            check = _ReadsCheck(knowledge)
            payloads: dict[str, bytes] = {}
            stale: list[TargetFile] = []  # entries whose knowledge answers no longer hold
            absent_keys = {file_key(f) for f in absent}
            for f in files:
                key = file_key(f)
                if key in absent_keys:
                    continue
                hit = cache.get(key) if cache is not None else None
                parts = _split_entry(hit) if hit is not None else None
                if parts is not None and check.holds(parts[0]):
                    payloads[key] = parts[1]
                else:
                    stale.append(f)
            todo_count = len(absent) + len(stale)
            with _progress(progress, todo_count) as tick:
                if workers is not None:
                    workers.submit(_feed(target, stale))
                    results = workers.results(tick)
                else:
                    results = _analyse_all(
                        target, absent + stale, options.jobs, options.scope.repo, knowledge, cache, tick
                    )
                for key, payload in results:
                    payloads[key] = payload
            finished = True
        finally:
            if workers is not None:
                workers.close(cancel=not finished)
        stats = ExtractStats(
            files_in_scope=len(files), files_parsed=todo_count, files_from_cache=len(files) - todo_count
        )
        records = assemble(files, payloads, target.sha, options.scope.repo, iso_millis(moment), stats)
        for path, why in target.skipped(options.scope):
            stats.failures.append(FileFailure(path, f"skipped: {why}"))
        stats.failures.sort(key=lambda f: f.path)
        stats.seconds = time.perf_counter() - started
        return ExtractResult(sha=target.sha, records=records, dataset_version=iso_millis(moment), stats=stats)


def assemble(
    files: Iterable[TargetFile],
    payloads: dict[str, bytes],
    sha: str,
    repo: str,
    analyzed_at: str,
    stats: Any,
    *,
    revalidate: bool = False,
) -> list[ErrorRecord]:
    """Records from per-file payloads (keyed by :func:`file_key`), with the commit-dependent fields, sorted.

    Payloads come from the workers, which validated every record with stub commit fields
    (:func:`check_payload`); here the first record is validated in full (its commit fields are
    every record's) and the rest are built without re-validation, unless ``revalidate``.
    """
    from pydantic import ValidationError

    from extractor.api import FileFailure

    records: list[ErrorRecord] = []
    probe = True
    for f in files:
        payload = orjson.loads(payloads[file_key(f)])
        if payload["status"] != "parsed":
            stats.failures.append(FileFailure(f.path, payload["reason"]))
            continue
        built: list[ErrorRecord] = []
        try:
            for partial in payload["records"]:
                fields = record_fields(partial, f.path, repo, sha, analyzed_at)
                if probe or revalidate:
                    built.append(ErrorRecord.model_validate(fields))
                    probe = False
                else:
                    built.append(ErrorRecord.model_construct(**fields))
        except ValidationError as exc:
            stats.failures.append(FileFailure(f.path, f"invalid record: {_why(exc)}"))
            continue
        stats.sites += payload["sites"]
        records.extend(built)
    records.sort(key=lambda r: (r.filePath, r.lineNumber, r.id))
    stats.records = len(records)
    return records


class _progress:
    """A rich progress bar on stderr when asked (a terminal), else nothing."""

    def __init__(self, enabled: bool, total: int) -> None:
        self.enabled = enabled and total > 0
        self.total = total
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> Callable[[], None]:
        if not self.enabled:
            return lambda: None
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self._bar = Progress(
            TextColumn("analysing"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), transient=True
        )
        self._bar.start()
        self._task = self._bar.add_task("files", total=self.total)
        bar, task = self._bar, self._task
        return lambda: bar.advance(task)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
