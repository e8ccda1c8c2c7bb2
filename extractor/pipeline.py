"""The extraction pipeline: source -> parse -> analyse -> enrich -> records, across processes.

Per-file work (:func:`analyse_file`) is a pure function of the file's bytes, its path, the repo name
and the target's knowledge (flags, env vars), so its result is cached by blob sha and computed in
worker processes. Everything that depends on the analysed commit (``githubUrl``, ``analyzedSha``,
``analyzedAt``) is added afterwards, in :func:`assemble`.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from typing import TYPE_CHECKING, Any

import orjson

from extractor.analyse import analyse
from extractor.config import Scope
from extractor.context import permalink
from extractor.enrich import enrich
from extractor.facts import Site
from extractor.knowledge import Knowledge, build_knowledge, is_knowledge_path, module_constants
from extractor.models import SCHEMA_VERSION, ErrorRecord
from extractor.parse import ParseFailure, parse_source
from extractor.timefmt import build_time, iso_millis

if TYPE_CHECKING:
    from extractor.api import ExtractOptions, ExtractResult
    from extractor.source import Target, TargetFile

Payload = dict[str, Any]
"""A file's outcome: ``{"status": "parsed", "records": [...], "sites": n}`` or ``{"status": "failed", "reason": ...}``."""

PAYLOAD_VERSION = 1
_SLUG_WORDS = 8
_SLUG_CHARS = 60
_WORD = re.compile(r"[a-z0-9]+")


# --------------------------------------------------------------------------- per file


def analyse_file(path: str, data: bytes, repo: str, knowledge: Knowledge) -> Payload:
    """One file's records without the commit-dependent fields; never raises."""
    parsed = parse_source(path, data)
    if isinstance(parsed, ParseFailure):
        return {"status": "failed", "reason": parsed.reason}
    try:
        sites = analyse(parsed)
        constants = module_constants(parsed.tree) if sites else {}
        records = _records(sites, repo, knowledge, constants)
    except RecursionError:
        return {"status": "failed", "reason": "nesting too deep to analyse"}
    except Exception as exc:  # noqa: BLE001 - one odd file must never stop a run
        return {"status": "failed", "reason": f"analysis error: {type(exc).__name__}: {exc}"}
    return {"status": "parsed", "records": _utf8_safe(records), "sites": len(sites)}


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


# --------------------------------------------------------------------------- workers

_worker_state: dict[str, Any] = {}


def _init_worker(repo: str, knowledge: Knowledge) -> None:
    _worker_state["repo"] = repo
    _worker_state["knowledge"] = knowledge


def _work(item: tuple[str, str, bytes]) -> tuple[str, bytes]:
    blob, path, data = item
    payload = analyse_file(path, data, _worker_state["repo"], _worker_state["knowledge"])
    return blob, orjson.dumps(payload)


def _run_parallel(
    items: list[tuple[str, str, bytes]], jobs: int, repo: str, knowledge: Knowledge, tick: Callable[[], None]
) -> Iterator[tuple[str, bytes]]:
    if jobs <= 1 or len(items) < 8:
        _init_worker(repo, knowledge)
        for item in items:
            yield _work(item)
            tick()
        return
    # Big files first so one slow file does not finish the run alone.
    ordered = sorted(items, key=lambda i: -len(i[2]))
    ctx = get_context("fork") if hasattr(os, "fork") else get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_init_worker, initargs=(repo, knowledge)) as pool:
        for result in pool.map(_work, ordered, chunksize=4):
            yield result
            tick()


# --------------------------------------------------------------------------- the run


def load_knowledge(target: Target) -> Knowledge:
    """The target's flags and env vars, read from its own files at the analysed sha."""
    try:
        every = target.files(Scope(include=("**/*.py",), exclude=()))
    except Exception:  # noqa: BLE001 - knowledge is an enrichment, never a reason to fail
        return Knowledge.empty()
    wanted = [f for f in every if is_knowledge_path(f.path)]
    files: dict[str, bytes] = {}
    by_blob = {f.blob_sha: f.path for f in wanted}
    for blob, data in target.read_many(by_blob):
        files[by_blob[blob]] = data
    return build_knowledge(files)


def namespace(options_scope: Scope, knowledge: Knowledge) -> str:
    from extractor.cache import code_fingerprint, make_namespace

    return make_namespace(code_fingerprint(), f"payload-v{PAYLOAD_VERSION}", options_scope.key(), knowledge.fingerprint())


def run_extraction(options: ExtractOptions, *, progress: bool = False) -> ExtractResult:
    """Open the target, analyse every in-scope file (cached or in workers) and assemble records."""
    from extractor.api import ExtractResult, ExtractStats, FileFailure
    from extractor.cache import ResultCache, default_cache_dir
    from extractor.source import open_target

    started = time.perf_counter()
    moment = build_time()
    cache_dir = options.cache_dir or default_cache_dir()
    with open_target(options.source, options.sha, cache_dir=cache_dir) as target:
        files = target.files(options.scope)
        knowledge = load_knowledge(target)
        cache = ResultCache(cache_dir, namespace(options.scope, knowledge)) if options.use_cache else None
        payloads: dict[str, bytes] = {}
        todo: list[TargetFile] = []
        for f in files:
            hit = cache.get(f.blob_sha) if cache is not None else None
            if hit is not None:
                payloads[f.blob_sha] = hit
            else:
                todo.append(f)
        from_cache = len(files) - len(todo)
        paths = {f.blob_sha: f.path for f in todo}
        items = [(blob, paths[blob], data) for blob, data in target.read_many(list(paths))]
        with _progress(progress, len(items)) as tick:
            for blob, payload in _run_parallel(items, options.jobs, options.scope.repo, knowledge, tick):
                payloads[blob] = payload
                if cache is not None:
                    cache.put(blob, payload)
        stats = ExtractStats(files_in_scope=len(files), files_parsed=len(todo), files_from_cache=from_cache)
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
) -> list[ErrorRecord]:
    """Records from per-file payloads, with the commit-dependent fields filled in, sorted."""
    from extractor.api import FileFailure

    records: list[ErrorRecord] = []
    for f in files:
        payload = orjson.loads(payloads[f.blob_sha])
        if payload["status"] != "parsed":
            stats.failures.append(FileFailure(f.path, payload["reason"]))
            continue
        stats.sites += payload["sites"]
        for partial in payload["records"]:
            # The same blob can sit at two paths; records name the path they were found at.
            fields = dict(partial)
            fields["filePath"] = f.path
            # Payloads hold the site's key; the id adds repo and path, so a blob shared by two
            # paths still gives two distinct ids.
            fields["id"] = rid = record_id(repo, f.path, partial["id"])
            fields["slug"] = f"{partial['slug']}-{rid[:6]}"
            fields["githubUrl"] = permalink(repo, sha, f.path, partial["sourceCodeStart"], partial["sourceCodeEnd"])
            fields["analyzedSha"] = sha
            fields["analyzedAt"] = analyzed_at
            fields["schemaVersion"] = SCHEMA_VERSION
            ordered = {name: fields[name] for name in ErrorRecord.model_fields}
            records.append(ErrorRecord.model_validate(ordered))
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
