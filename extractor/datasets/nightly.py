"""The nightly job: extract a ref into a folder of datasets, with a changelog and a manifest.

The folder (``DIR``) holds datasets ``sglang-errors-<sha12>-<datasetVersion>.jsonl``, their
changelogs, and ``manifest.json``, which names the current dataset and the few kept before it.
Readers trust only what the manifest names. A run writes everything new under names the previous
manifest does not use, validates the dataset before it gets its final name, replaces the manifest
atomically as the very last step of publishing, and only then prunes what no manifest names; so
a run killed at any moment (SIGKILL included) leaves the previous manifest and every file it names
untouched. ``DIR/.lock`` (``flock``) serialises runs on one folder; the kernel drops it when the
holder dies, so a killed run never blocks the next.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from extractor import __version__
from extractor.datasets.folder_lock import locked, pause
from extractor.datasets.manifest import (
    MANIFEST_NAME,
    MANIFEST_VERSION,
    is_own_file,
    named_files,
    read_manifest,
)
from extractor.datasets.publishing import compact, fresh_names, same_bytes, write_public, write_validated
from extractor.engine.cache import default_cache_dir
from extractor.errors import ExtractorError
from extractor.records.jsonl import dumps_line, read_dataset, sort_key
from extractor.records.model import SCHEMA_VERSION, ErrorRecord, schema_bytes
from extractor.timefmt import iso_millis

if TYPE_CHECKING:
    from extractor.api import ExtractOptions, ExtractResult

__all__ = [
    "MANIFEST_NAME",
    "NightlyOptions",
    "NightlyResult",
    "read_manifest",
    "run_nightly",
]

DEFAULT_KEEP = 7
# Result namespaces of older extractors are dropped from the cache once unused this long.
CACHE_PRUNE_DAYS = 30

# Temp files (".<name>.<random>.tmp") a killed run left behind.
_TEMP_RE = re.compile(r"^\.+(sglang-errors-|manifest\.json\.).*\.tmp$")


@dataclass(frozen=True)
class NightlyOptions:
    """One nightly run: the extraction options (built once; their sha is replaced by the
    resolved ``ref``) and what to do with the folder."""

    extract: ExtractOptions
    ref: str
    out_dir: Path
    keep: int = DEFAULT_KEEP
    wait: bool = False


@dataclass
class NightlyResult:
    """What a run published: the manifest it wrote and the files it names."""

    manifest: dict[str, Any]
    manifest_path: Path
    dataset_path: Path
    changelog_markdown: Path | None
    changelog_json: Path | None
    changelog_summary: str | None
    republished: bool = False
    """Nothing changed at the published sha: its dataset and changelog were kept, nothing new written."""
    pruned: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def run_nightly(
    options: NightlyOptions,
    *,
    extract: Callable[[ExtractOptions], ExtractResult] | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> NightlyResult:
    """Resolve, extract, validate, write dataset + changelog, replace the manifest, prune.

    Raises :class:`ExtractorError` when another run holds the folder (unless ``options.wait``),
    when the previous manifest is unreadable, or when the new dataset does not validate; in every
    case the previous manifest and the files it names are left as they were.
    """
    if options.keep < 1:
        raise ExtractorError("--keep", f"must be at least 1, got {options.keep}")
    if options.extract.cache_dir is None:
        # One default for the clone (source), the results (pipeline) and pruning (here).
        options = dataclasses.replace(
            options, extract=dataclasses.replace(options.extract, cache_dir=default_cache_dir())
        )
    if extract is None:
        from extractor.engine.pipeline import run_extraction

        extract = run_extraction
    folder = options.out_dir
    if folder.exists() and not folder.is_dir():
        raise ExtractorError(str(folder), "not a directory")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExtractorError(str(folder), f"cannot create the output folder ({exc.strerror or exc})") from exc
    started = time.monotonic()
    with locked(folder, wait=options.wait, on_wait=on_wait):
        pause("locked")
        _remove_stale_temps(folder)
        previous = read_manifest(folder)
        return _publish(options, folder, previous, started, extract)


def _publish(
    options: NightlyOptions,
    folder: Path,
    previous: dict[str, Any] | None,
    started: float,
    extract: Callable[[ExtractOptions], ExtractResult],
) -> NightlyResult:
    from extractor.source.git import open_target

    notes: list[str] = []
    base = options.extract
    with open_target(base.source, options.ref, cache_dir=base.cache_dir) as target:
        sha = target.sha
    extract_options = dataclasses.replace(base, sha=sha, pinned=False)
    result = extract(extract_options)
    if result.sha != sha:
        raise ExtractorError(options.ref, f"extraction ran at {result.sha}, expected {sha}")
    pause("extracted")

    records = sorted(result.records, key=sort_key)
    data = b"".join(dumps_line(r, result.dataset_version) for r in records)
    protected = named_files(previous)
    stem = f"sglang-errors-{sha[:12]}-{compact(result.dataset_version)}"
    [dataset_name] = fresh_names(folder, stem, [(".jsonl", data)], protected)
    dataset_path = folder / dataset_name
    # The same sha giving the very bytes already published (a rerun with nothing new upstream):
    # republish that dataset with its changelog and baseline, rather than replacing the last
    # real changelog with an empty "X to X" one.
    republished = (
        previous is not None
        and previous["sha"] == sha
        and previous["datasetFile"] == dataset_name
        and same_bytes(dataset_path, data)
    )
    if not republished and previous is not None and previous["sha"] == sha:
        # Without a fixed SOURCE_DATE_EPOCH a rerun differs from the published dataset only in its
        # time stamps: that is nothing new either, so the published dataset stays as it is.
        kept = _unchanged_dataset(folder / previous["datasetFile"], records)
        if kept is not None:
            republished, data, dataset_name = True, kept, previous["datasetFile"]
            dataset_path = folder / dataset_name
            result = dataclasses.replace(result, dataset_version=previous["datasetVersion"])
    if not republished:
        write_validated(dataset_path, data, len(records))

    changelog: dict[str, Any] | None = None
    md_path = json_path = None
    summary_text: str | None = None
    previous_sha = previous["sha"] if previous else None
    previous_file = previous["datasetFile"] if previous else None
    if republished and previous is not None:
        previous_sha, previous_file = previous.get("previousSha"), previous.get("previousDatasetFile")
        carried = previous.get("changelog")
        if isinstance(carried, dict) and all((folder / carried[k]).is_file() for k in ("markdown", "json")):
            changelog = carried
            md_path, json_path = folder / carried["markdown"], folder / carried["json"]
            summary_text = _summary_text(carried.get("summary"))
    elif previous is not None:
        old_path = folder / previous["datasetFile"]
        old = _read_previous_dataset(old_path, notes)
        if old is not None:
            renames = _renames(options, previous["sha"], sha, notes)
            md, js, summary, summary_text = _changelog(old, records, renames, previous["sha"], sha)
            log_stem = dataset_name.removesuffix(".jsonl") + ".changelog"
            md_name, json_name = fresh_names(folder, log_stem, [(".md", md), (".json", js)], protected)
            md_path, json_path = folder / md_name, folder / json_name
            write_public(md_path, md)
            write_public(json_path, js)
            changelog = {"markdown": md_name, "json": json_name, "summary": summary}

    stats = result.stats
    entry = {
        "sha": sha,
        "ref": options.ref,
        "datasetFile": dataset_name,
        "datasetVersion": result.dataset_version,
        "changelog": changelog,
    }
    # A republished dataset replaces its own older entry: each file is listed once.
    older = [h for h in (previous or {}).get("history", []) if isinstance(h, dict)]
    history = [entry, *[h for h in older if h.get("datasetFile") != dataset_name]][: options.keep]
    manifest: dict[str, Any] = {
        "manifestVersion": MANIFEST_VERSION,
        "tool": "sglang-errors",
        "toolVersion": __version__,
        "codeFingerprint": _code_fingerprint(),
        "schemaVersion": SCHEMA_VERSION,
        "schemaHash": hashlib.sha256(schema_bytes()).hexdigest(),
        "sha": sha,
        "ref": options.ref,
        "repo": extract_options.scope.repo,
        "datasetFile": dataset_name,
        "datasetSha256": hashlib.sha256(data).hexdigest(),
        "datasetBytes": len(data),
        "datasetVersion": result.dataset_version,
        "records": len(records),
        "sites": stats.sites,
        "files": {
            "inScope": stats.files_in_scope,
            "parsed": stats.files_parsed,
            "fromCache": stats.files_from_cache,
            "failed": len(stats.failures),
        },
        "failures": [
            {"path": f.path, "reason": f.reason} for f in sorted(stats.failures, key=lambda f: f.path)
        ],
        "previousSha": previous_sha,
        "previousDatasetFile": previous_file,
        "changelog": changelog,
        "history": history,
        "extractSeconds": round(stats.seconds, 3),
        "totalSeconds": round(time.monotonic() - started, 3),
        "generatedAt": iso_millis(datetime.now(UTC)),
    }
    manifest_path = folder / MANIFEST_NAME
    pause("before-manifest")
    write_public(manifest_path, _dump_json(manifest))
    pause("before-prune")
    pruned = _prune(folder, manifest)
    if base.use_cache:
        _prune_cache(base.cache_dir)
    return NightlyResult(
        manifest=manifest,
        manifest_path=manifest_path,
        dataset_path=dataset_path,
        changelog_markdown=md_path,
        changelog_json=json_path,
        changelog_summary=summary_text,
        republished=republished,
        pruned=pruned,
        notes=notes,
    )


# -- the manifest -----------------------------------------------------------------------------


def _dump_json(obj: object) -> bytes:
    return orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


def _unchanged_dataset(path: Path, records: list[ErrorRecord]) -> bytes | None:
    """The published dataset's bytes when its records equal ``records`` but for ``analyzedAt``."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    published = read_dataset(path)
    if published.problems or len(published.lines) != len(records):
        return None
    for line, record in zip(published.lines, records, strict=True):
        if line.record.model_copy(update={"analyzedAt": record.analyzedAt}) != record:
            return None
    return data


def _read_previous_dataset(path: Path, notes: list[str]) -> list[ErrorRecord] | None:
    if not path.is_file():
        notes.append(f"previous dataset {path.name} is missing; no changelog written")
        return None
    result = read_dataset(path)
    if result.problems:
        notes.append(
            f"previous dataset {path.name} has {len(result.problems)} bad line(s); no changelog written"
        )
        return None
    return result.records


def _renames(options: NightlyOptions, old_sha: str, new_sha: str, notes: list[str]) -> dict[str, str | None]:
    """Paths changed between the two commits (old path -> new path, ``None`` when deleted), as the
    ``diff`` command gets them, so the records of a renamed file pair with their old selves."""
    from extractor.source.git import open_target

    try:
        with open_target(options.extract.source, old_sha, cache_dir=options.extract.cache_dir) as old:
            return old.changed_paths(new_sha)
    except ExtractorError as exc:
        # e.g. the previous sha vanished in a force-push: the changelog still pairs by content.
        notes.append(f"renames since {old_sha[:12]} unknown ({exc.where}: {exc.what})")
        return {}


def _changelog(
    old: list[ErrorRecord], new: list[ErrorRecord], renames: dict[str, str | None], old_sha: str, new_sha: str
) -> tuple[bytes, bytes, dict[str, int], str]:
    """Markdown and JSON changelogs exactly as ``sglang-errors diff`` renders them, and a summary."""
    from extractor.datasets.diff import diff_records
    from extractor.render.diff import render_json, render_markdown, summary_line

    result = diff_records(
        old, new, renames=renames, from_sha=old_sha, to_sha=new_sha, old_label="previous dataset"
    )
    return render_markdown(result).encode(), render_json(result), result.summary(), summary_line(result)


def _summary_text(summary: object) -> str | None:
    if not isinstance(summary, dict):
        return None
    return ", ".join(f"{summary.get(k, 0)} {k}" for k in ("added", "removed", "changed", "unchanged"))


def _code_fingerprint() -> str:
    from extractor.engine.cache import code_fingerprint

    return code_fingerprint()


# -- pruning ----------------------------------------------------------------------------------


def _remove_stale_temps(folder: Path) -> None:
    # Only a run holding the lock writes here, so any temp file now is a killed run's leftover.
    for path in folder.iterdir():
        if _TEMP_RE.match(path.name):
            path.unlink(missing_ok=True)


def _prune(folder: Path, manifest: dict[str, Any]) -> list[Path]:
    """Delete datasets and changelogs the new manifest does not name; its history is the keep list."""
    keep = named_files(manifest)
    removed: list[Path] = []
    for path in sorted(folder.iterdir()):
        if is_own_file(path.name) and path.name not in keep and path.is_file():
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


def _prune_cache(cache_dir: Path | None) -> None:
    from extractor.engine.cache import prune_namespaces

    if cache_dir is not None:
        with contextlib.suppress(OSError):
            prune_namespaces(cache_dir, older_than_days=CACHE_PRUNE_DAYS)
