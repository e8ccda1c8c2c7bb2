"""The catalogue a site is drawn from: records with what each names, grouped every way a page needs.

A dataset file gives the records; a nightly folder gives the dataset its manifest names as
current, plus the kept versions and their changelogs (:mod:`extractor.site.versions`).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from extractor.errors import ExtractorError
from extractor.records.jsonl import read_dataset
from extractor.records.model import ErrorRecord
from extractor.records.subsystem import subsystem
from extractor.site.mentions import Mentions, env_names_read, read_mentions, scope_of
from extractor.site.versions import Version, read_nightly

__all__ = ["Catalogue", "Entry", "Knob", "build_catalogue", "load_catalogue", "page_name"]

_RELATED_LIMIT = 12


def page_name(text: str) -> str:
    """A file name for a page about ``text``: letters, digits, ``_``, ``.``, ``-`` only."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-.")
    return name or "_"


@dataclass
class Entry:
    """One record and what the pages say about it."""

    record: ErrorRecord
    subsystem: str
    scope: str
    mentions: Mentions
    same_scope: list[Entry] = field(default_factory=list)
    same_knobs: list[Entry] = field(default_factory=list)
    page: str = ""

    @property
    def href(self) -> str:
        return f"errors/{self.page or self.record.slug}.html"


@dataclass
class Knob:
    """A flag or an environment variable, and every record that names it."""

    name: str
    kind: str  # "flag" or "env"
    page: str
    help: str = ""
    entries: list[Entry] = field(default_factory=list)

    def by_subsystem(self) -> list[tuple[str, list[Entry]]]:
        groups: dict[str, list[Entry]] = defaultdict(list)
        for e in self.entries:
            groups[e.subsystem].append(e)
        return sorted(groups.items())


@dataclass
class Catalogue:
    """Everything one site shows."""

    entries: list[Entry]
    flags: dict[str, Knob]
    envs: dict[str, Knob]
    subsystems: dict[str, list[Entry]]
    subsystem_pages: dict[str, str]
    sha: str
    repo: str
    dataset_version: str
    source_name: str
    versions: list[Version] = field(default_factory=list)

    def counts_by_subsystem(self) -> list[tuple[str, int]]:
        return sorted(((name, len(es)) for name, es in self.subsystems.items()), key=lambda x: (-x[1], x[0]))


def _unique_pages(names: list[str]) -> dict[str, str]:
    """A page name per name; two names that clean to the same page get a numbered suffix."""
    pages: dict[str, str] = {}
    used: Counter[str] = Counter()
    for name in sorted(names):
        base = page_name(name).lower()
        used[base] += 1
        pages[name] = base if used[base] == 1 else f"{base}-{used[base]}"
    return pages


def build_catalogue(
    records: list[ErrorRecord], *, dataset_version: str, source_name: str, versions: list[Version]
) -> Catalogue:
    """Group ``records`` for the pages: by subsystem, scope, flag and variable, with related records."""
    known_envs = frozenset(n for r in records for n in env_names_read(r))
    entries = [
        Entry(
            record=r,
            subsystem=subsystem(r.filePath),
            scope=scope_of(r),
            mentions=read_mentions(r, known_envs),
        )
        for r in records
    ]
    # Slugs carry a short id suffix, so two records rarely share one; when they do, each page
    # also carries its record's full id rather than one page hiding the other.
    slugs = Counter(e.record.slug for e in entries)
    for e in entries:
        e.page = e.record.slug if slugs[e.record.slug] == 1 else f"{e.record.slug}-{e.record.id}"
    subsystems: dict[str, list[Entry]] = defaultdict(list)
    by_scope: dict[tuple[str, str], list[Entry]] = defaultdict(list)
    flags: dict[str, Knob] = {}
    envs: dict[str, Knob] = {}
    for e in entries:
        subsystems[e.subsystem].append(e)
        by_scope[(e.record.filePath, e.scope)].append(e)
        for name in e.mentions.flags:
            knob = flags.setdefault(name, Knob(name, "flag", ""))
            knob.entries.append(e)
            if not knob.help and name in e.mentions.flag_help:
                knob.help = e.mentions.flag_help[name]
        for name in e.mentions.envs:
            envs.setdefault(name, Knob(name, "env", "")).entries.append(e)
    # Flag names are case-sensitive but file systems may not be: pages are lower-cased and
    # kept apart by suffix when two names collide.
    for pages, knobs, folder in (
        (_unique_pages([n.removeprefix("--") for n in flags]), flags, "flags"),
        (_unique_pages(list(envs)), envs, "env"),
    ):
        for name, knob in knobs.items():
            knob.page = f"{folder}/{pages[name.removeprefix('--')]}.html"
    for e in entries:
        if e.scope != "<module>":
            e.same_scope = [o for o in by_scope[(e.record.filePath, e.scope)] if o is not e][:_RELATED_LIMIT]
        # A record listed under the same function is not listed again under the same flags.
        e.same_knobs = _same_knobs(e, flags, envs, skip={id(o) for o in e.same_scope})
    return Catalogue(
        entries=entries,
        flags=dict(sorted(flags.items())),
        envs=dict(sorted(envs.items())),
        subsystems=dict(sorted(subsystems.items())),
        subsystem_pages={k: f"subsystems/{v}.html" for k, v in _unique_pages(list(subsystems)).items()},
        sha=records[0].analyzedSha if records else "",
        repo=records[0].repo if records else "",
        dataset_version=dataset_version,
        source_name=source_name,
        versions=versions,
    )


def _same_knobs(
    entry: Entry, flags: dict[str, Knob], envs: dict[str, Knob], *, skip: set[int]
) -> list[Entry]:
    """Other records naming the most of this one's flags and variables; same subsystem first."""
    shared: Counter[int] = Counter()
    others: dict[int, Entry] = {}
    for name in entry.mentions.flags:
        for o in flags[name].entries:
            shared[id(o)] += 1
            others[id(o)] = o
    for name in entry.mentions.envs:
        for o in envs[name].entries:
            shared[id(o)] += 1
            others[id(o)] = o
    for key in (id(entry), *skip):
        shared.pop(key, None)
    ranked = sorted(
        shared,
        key=lambda k: (
            -shared[k],
            others[k].subsystem != entry.subsystem,
            others[k].record.filePath,
            others[k].record.lineNumber,
        ),
    )
    return [others[k] for k in ranked[:_RELATED_LIMIT]]


def _read_records(path: Path) -> tuple[list[ErrorRecord], str]:
    result = read_dataset(path)
    if result.problems:
        first = result.problems[0]
        more = f" (and {len(result.problems) - 1} more problems)" if len(result.problems) > 1 else ""
        raise ExtractorError(f"{first.path}:{first.line}", first.what + more)
    if not result.lines:
        raise ExtractorError(str(path), "empty dataset: no record to show")
    return result.records, result.lines[0].datasetVersion


def load_catalogue(source: Path) -> Catalogue:
    """The catalogue of a dataset file, or of the current dataset of a nightly folder."""
    if source.is_dir():
        nightly = read_nightly(source)
        records, version = _read_records(nightly.current)
        return build_catalogue(
            records, dataset_version=version, source_name=nightly.current.name, versions=nightly.versions
        )
    if not source.is_file():
        raise ExtractorError(str(source), "no such dataset file or nightly folder")
    records, version = _read_records(source)
    return build_catalogue(records, dataset_version=version, source_name=source.name, versions=[])
