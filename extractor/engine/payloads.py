"""One target file to its outcome: parse, analyse, enrich, and the records without commit fields.

:func:`analyse_file` is a pure function of the file's bytes, its path, the repo name and what the
enrichment reads from the target's knowledge; it never raises. Its :class:`~extractor.types.Parsed`
outcome holds each record's *partial* fields: the site's own key in place of the id, and none of the
fields that depend on the analysed commit, which :func:`record_fields` adds when a run is assembled.
"""

from __future__ import annotations

import hashlib
import re
import sys
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

import orjson

from extractor.reasons import Reason
from extractor.records.model import SCHEMA_VERSION, ErrorRecord, permalink
from extractor.types import Failed, FileOutcome, Parsed

if TYPE_CHECKING:
    from extractor.analysis.facts import Site
    from extractor.analysis.resolver import OtherModules
    from extractor.prose.knowledge import Knowledge

Partial = dict[str, Any]
"""A record as a worker builds it: the site's key as ``id``, no commit fields."""

_SLUG_WORDS = 8
_SLUG_CHARS = 60
_WORD = re.compile(r"[a-z0-9]+")
# Commit fields used to validate a record in the worker, before the commit is attached.
_PROBE_SHA = "0" * 40
_PROBE_TIME = "2000-01-01T00:00:00.000Z"
_TOO_DEEP = "nesting too deep to analyse"


def analyse_file(
    path: str, data: bytes, repo: str, knowledge: Knowledge, modules: OtherModules | None = None
) -> FileOutcome:
    """One file's records without the commit-dependent fields; never raises.

    ``modules`` gives the other files of the target, where imported exception classes and helpers
    are read from.
    """
    try:
        return _analyse_file(path, data, repo, knowledge, modules, deep=False)
    except RecursionError:
        pass
    # Code nested deeper than the recursion limit allows the parser's tree building or our walkers
    # (a 1,000-branch elif chain, a long attribute chain in an f-string) is still code: do the same
    # work again on a stack made for it rather than lose the file's sites.
    try:
        return _on_deep_stack(lambda: _analyse_file(path, data, repo, knowledge, modules, deep=True))
    except RecursionError:
        return Failed(Reason.TOO_DEEP, _TOO_DEEP)


def _analyse_file(
    path: str, data: bytes, repo: str, knowledge: Knowledge, modules: OtherModules | None, *, deep: bool
) -> FileOutcome:
    """:func:`analyse_file`, except that running out of recursion raises (unless ``deep``)."""
    # Imported here: a warm run (everything cached) never needs the parser stack (libcst...).
    from extractor.analysis.analyse import analyse_with_resolver
    from extractor.analysis.handling import file_call_handling
    from extractor.analysis.parse import ParseFailure, parse_source
    from extractor.prose.knowledge import module_constants

    parsed = parse_source(path, data)
    if isinstance(parsed, ParseFailure):
        if parsed.too_deep and not deep:
            raise RecursionError(parsed.reason)
        return Failed(parsed.code, parsed.reason)
    try:
        sites, resolver = analyse_with_resolver(parsed, modules)
        constants = module_constants(parsed.tree, path, "\n".join(parsed.lines)) if sites else {}
        records = _records(sites, repo, knowledge, constants)
        facts = _facts_text(path, parsed.tree, file_call_handling(parsed, modules, resolver))
    except RecursionError:
        if not deep:
            raise
        return Failed(Reason.TOO_DEEP, _TOO_DEEP)
    except Exception as exc:  # one odd file must never stop a run
        return Failed(Reason.ANALYSIS_ERROR, f"analysis error: {type(exc).__name__}: {exc}")
    return Parsed(_utf8_clean(records), len(sites), facts)


def _facts_text(path: str, tree: Any, handling: dict[str, Any]) -> str | None:
    """The file's reach facts as JSON text, with how its calls in a ``try`` are handled
    (:func:`extractor.analysis.handling.call_handling`); None when they cannot be written."""
    from extractor.reach.file_index import file_facts

    try:
        plain = file_facts(path, tree).to_plain()
        if handling:
            plain["handling"] = handling
        return orjson.dumps(_utf8_clean(plain)).decode()
    except (TypeError, ValueError):
        return None


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


def _utf8_clean(value: Any) -> Any:
    """:func:`_utf8_safe` of ``value``, which is ``value`` itself unless JSON cannot carry it: the
    C encoder tells that at once, where the walk over every string took a tenth of a file's time."""
    try:
        orjson.dumps(value)
    except TypeError:
        return _utf8_safe(value)
    return value


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


def _records(sites: list[Site], repo: str, knowledge: Knowledge, constants: dict[str, str]) -> list[Partial]:
    from extractor.prose.device import DEVICE_KEY
    from extractor.prose.enrich import DEAD_KEY, Siblings, enrich
    from extractor.prose.handled import handled_by_own_function
    from extractor.prose.passed import PASSED_KEY
    from extractor.prose.reach import SURVIVORS_KEY

    seen: dict[str, int] = {}
    out: list[dict[str, Any]] = []
    siblings = Siblings(sites)
    for site in sites:
        prose = enrich(site, knowledge, constants, siblings=siblings)
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
        out[-1] = handled_by_own_function(out[-1], site)
        if prose.passed is not None:
            out[-1][PASSED_KEY] = prose.passed
        if prose.device is not None:
            out[-1][DEVICE_KEY] = prose.device
        if prose.dead:
            out[-1][DEAD_KEY] = True
        survivors = [a.text for a in site.guard.atoms if a.role == "survivor" and a.kind != "except"]
        if survivors:
            out[-1][SURVIVORS_KEY] = survivors
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
    return {
        # Keys with a leading ``_`` are for the run's assembly, not the record.
        **{k: v for k, v in partial.items() if not k.startswith("_")},
        **commit_fields(partial, path, repo, sha, analyzed_at),
    }


def commit_fields(
    partial: Mapping[str, Any], path: str, repo: str, sha: str, analyzed_at: str
) -> dict[str, Any]:
    """The fields :func:`record_fields` sets over the partial's (its ``_`` keys are still to drop)."""
    # Partials hold the site's key; the id adds repo and path, so a blob shared by two paths
    # still gives two distinct ids.
    rid = record_id(repo, path, partial["id"])
    return {
        # Records name the path they were found at.
        "filePath": path,
        "id": rid,
        "slug": f"{partial['slug']}-{rid[:6]}",
        "githubUrl": permalink(repo, sha, path, partial["sourceCodeStart"], partial["sourceCodeEnd"]),
        "analyzedSha": sha,
        "analyzedAt": analyzed_at,
        "schemaVersion": SCHEMA_VERSION,
    }


def check_outcome(outcome: FileOutcome, path: str, repo: str) -> FileOutcome:
    """The outcome if every record validates (commit fields stubbed), else a failure naming the first bad one."""
    from pydantic import ValidationError

    if not isinstance(outcome, Parsed):
        return outcome
    for partial in outcome.records:
        try:
            ErrorRecord.model_validate(record_fields(partial, path, repo, _PROBE_SHA, _PROBE_TIME))
        except (ValidationError, KeyError, TypeError) as exc:
            return Failed(
                Reason.INVALID_RECORD,
                f"invalid record at line {partial.get('lineNumber')}: {why_invalid(exc)}",
            )
    return outcome


def why_invalid(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "record"
        return f"{where}: {first.get('msg', '')}"
    return f"{type(exc).__name__}: {exc}"
