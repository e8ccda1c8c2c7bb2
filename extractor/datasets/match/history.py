"""Matching across the datasets a nightly folder keeps: a message from an older sglang found in
the dataset of its own version, reported as the current record that ``diff`` pairs it with."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from extractor.datasets.match.ranking import Matcher
from extractor.datasets.match.results import Match, MatchGroup, distinct_groups
from extractor.datasets.match.selection import DatasetChoice
from extractor.records.model import ErrorRecord


@dataclass(frozen=True)
class Searched:
    """One dataset a search read: where, which sglang sha, how many records."""

    path: Path
    sha: str | None
    records: int


@dataclass(frozen=True)
class SearchResult:
    groups: list[MatchGroup]
    searched: list[Searched]
    """The current dataset first, then each older one the search read."""


def dataset_sha(matcher: Matcher) -> str | None:
    shas = {r.analyzedSha for r in matcher.records}
    return shas.pop() if len(shas) == 1 else None


def search(
    choice: DatasetChoice,
    text: str,
    top: int | None = 10,
    *,
    load: Callable[[Path], Matcher] = Matcher.from_path,
) -> SearchResult:
    """Rank ``text`` against the current dataset and every older one of ``choice``.

    An error whose best site in an older dataset scores above its best in the current one (its
    message changed since, or its site moved) is reported as the current record that
    :func:`~extractor.datasets.diff.diff_records` pairs with that older one, or as the older
    record itself when the site is gone; its reasons say which dataset it was found in.
    """
    current = load(choice.current)
    searched = [Searched(choice.current, dataset_sha(current), len(current.records))]
    groups = current.rank_groups(text, top)
    for path in choice.older:
        older = load(path)
        sha = dataset_sha(older)
        searched.append(Searched(path, sha, len(older.records)))
        older_groups = older.rank_groups(text, top)
        pairs: dict[str, tuple[ErrorRecord, str]] | None = None
        for key, group in older_groups.items():
            mine = groups.get(key)
            if not group.matches or (
                mine and mine.matches and mine.matches[0].score >= group.matches[0].score
            ):
                continue
            if pairs is None:
                pairs = _pairs(older.records, current.records)
            mapped = [_mapped(m, pairs, sha) for m in group.matches]
            groups[key] = MatchGroup(group.label, _merge(mapped, mine.matches if mine else [], top))
    return SearchResult(distinct_groups(dict(sorted(groups.items()))), searched)


def _pairs(old: list[ErrorRecord], new: list[ErrorRecord]) -> dict[str, tuple[ErrorRecord, str]]:
    """Older record id -> the current record diff pairs it with, and how it paired them."""
    from extractor.datasets.diff import diff_records

    result = diff_records(old, new)
    out = {a.id: (b, "unchanged") for a, b in result.unchanged}
    out.update({c.old.id: (c.new, c.paired_by) for c in result.changed})
    return out


def _mapped(m: Match, pairs: dict[str, tuple[ErrorRecord, str]], sha: str | None) -> Match:
    where = f"{m.record.filePath}:{m.record.lineNumber}"
    version = f"the dataset of {sha[:12]}" if sha else "an older dataset"
    paired = pairs.get(m.record.id)
    if paired is None:
        why = (*m.why, f"found as {where} in {version}; that site is gone from the current dataset")
        return replace(m, why=why, via=m.record)
    record, how = paired
    why = (*m.why, f"found as {where} in {version}; diff pairs it with this record ({how})")
    return replace(m, record=record, why=why, via=m.record)


def _merge(mapped: list[Match], mine: list[Match], top: int | None) -> list[Match]:
    """Both lists by score, each current record once (its best showing)."""
    best: dict[str, Match] = {}
    for m in [*mapped, *mine]:
        if m.record.id not in best or m.score > best[m.record.id].score:
            best[m.record.id] = m
    ranked = sorted(
        best.values(), key=lambda m: (-m.score, m.record.filePath, m.record.lineNumber, m.record.id)
    )
    return ranked if top is None else ranked[:top]
