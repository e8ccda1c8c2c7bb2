"""Pair the records of two dataset versions and say which were added, removed and changed.

Pairing runs in stages, each only over the records the earlier stages left unpaired:

1. **id**: ids are stable across edits that only shift lines, so most records pair here.
   Then **exact**: same file (through renames), class, message and guard, by dictionary lookup.
2. **same file, same class**: the old record's file (through the git rename map, when there is
   one) and ``errorClass`` must match; candidates are scored on message similarity
   (``difflib`` ratio), the similarity of the normalised source window (stripped, non-blank
   lines) and whether the guard (``validationCode``) is unchanged. A reworded message or a
   function moved within a file lands here.
3. **same file, any class**: an informative message, unchanged or nearly so, whose class
   changed (``assert`` turned into ``raise ValueError``).
4. **same class, same message, any file**: a function moved to another file; the source window
   or the guard must agree as well, so two unrelated sites sharing a stock message do not pair.

Candidates are bucketed by key before anything is compared, so the cost grows with the size of
the buckets of *unpaired* records, never with old x new.

A pair is **unchanged** when no compared field differs; which fields are compared, and how
generated prose is compared position-free, is :mod:`extractor.datasets.compared_fields`.

With ``--from/--to`` the paths git reports unchanged are known, and a same-id pair in such a file
is unchanged by definition (see ``trust_unchanged_files`` of :func:`diff_records`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import Path
from typing import TYPE_CHECKING, Any

from extractor.datasets.compared_fields import CONTENT_FIELDS, LOCATION_FIELDS, PROSE_FIELDS, changed_fields
from extractor.errors import ExtractorError
from extractor.records.jsonl import load_records, sort_key
from extractor.records.model import ErrorRecord
from extractor.records.subsystem import subsystem

if TYPE_CHECKING:
    from extractor.api import ExtractOptions, ExtractResult

__all__ = [
    "CONTENT_FIELDS",
    "LOCATION_FIELDS",
    "PROSE_FIELDS",
    "Change",
    "DiffResult",
    "diff_commits",
    "diff_files",
    "diff_records",
    "subsystem",
]

# A message shorter than this ("", "bad", "{x}") says too little to pair on by itself.
_INFORMATIVE_MESSAGE = 12
# Stage 2 scoring weights and acceptance threshold (see _same_file_accept).
_W_MESSAGE, _W_CODE, _W_GUARD = 0.55, 0.30, 0.15
_ACCEPT_SCORE = 0.5
# An informative message this close to another in the same file is the same site reworded,
# whatever its surroundings did; across a class change it must be closer still.
_SAME_MESSAGE = 0.8
_SAME_MESSAGE_OTHER_CLASS = 0.85


@dataclass(frozen=True)
class Change:
    """One record present in both versions whose content differs."""

    old: ErrorRecord
    new: ErrorRecord
    fields: tuple[str, ...]
    paired_by: str
    """How the pair was found: ``id``, ``exact``, ``similar``, ``class-changed`` or ``moved-file``."""


@dataclass
class DiffResult:
    """Everything :func:`diff_records` found, each list in a deterministic order."""

    from_sha: str | None
    to_sha: str | None
    added: list[ErrorRecord]
    removed: list[ErrorRecord]
    changed: list[Change]
    unchanged: list[tuple[ErrorRecord, ErrorRecord]] = field(repr=False)

    @property
    def has_differences(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    def summary(self) -> dict[str, int]:
        return {
            "added": len(self.added),
            "removed": len(self.removed),
            "changed": len(self.changed),
            "unchanged": len(self.unchanged),
        }

    def to_json(self) -> dict[str, Any]:
        """The documented JSON shape; records as the datasets hold them."""
        return {
            "from": self.from_sha,
            "to": self.to_sha,
            "summary": self.summary(),
            "added": [r.model_dump(mode="json") for r in self.added],
            "removed": [r.model_dump(mode="json") for r in self.removed],
            "changed": [
                {
                    "old": c.old.model_dump(mode="json"),
                    "new": c.new.model_dump(mode="json"),
                    "fields": list(c.fields),
                }
                for c in self.changed
            ],
        }


# -- pairing ---------------------------------------------------------------------------------


@dataclass
class _Sig:
    """What similarity looks at, computed once per unpaired record."""

    index: int
    record: ErrorRecord
    message: str
    code: tuple[str, ...]
    guard: str

    @property
    def informative(self) -> bool:
        return len(self.message) >= _INFORMATIVE_MESSAGE


def _sig(index: int, record: ErrorRecord) -> _Sig:
    code = tuple(line for line in (raw.strip() for raw in record.sourceCode.splitlines()) if line)
    return _Sig(index, record, record.errorMessage, code, record.validationCode.strip())


@dataclass(frozen=True)
class _Score:
    message: float
    code: float
    guard: bool

    @property
    def total(self) -> float:
        return _W_MESSAGE * self.message + _W_CODE * self.code + _W_GUARD * self.guard


def _ratio(matcher: SequenceMatcher[Any], a: Sequence[Any], b: Sequence[Any]) -> float:
    if a == b:
        return 1.0
    matcher.set_seqs(a, b)
    return matcher.ratio()


def _message_ratio(
    matcher: SequenceMatcher[str], a: str, b: str, good_enough: Callable[[float], bool]
) -> float:
    """The messages' ``difflib`` ratio, or a cheap upper bound of it when even that is not ``good_enough``.

    Comparing long messages character by character is the costly part of pairing; the bounds
    (lengths, then character counts) settle most hopeless candidates without it.
    """
    if a == b:
        return 1.0
    matcher.set_seqs(a, b)
    bound = matcher.real_quick_ratio()
    if not good_enough(bound):
        return bound
    bound = matcher.quick_ratio()
    if not good_enough(bound):
        return bound
    return matcher.ratio()


_Accept = Callable[[_Sig, _Sig, _Score], bool]


def _same_file_accept(a: _Sig, b: _Sig, s: _Score) -> bool:
    if not (a.informative or b.informative):
        # Bare or tiny messages ("raise NotImplementedError") pair only on their surroundings.
        return s.code >= 0.6
    return (a.informative and b.informative and s.message >= _SAME_MESSAGE) or s.total >= _ACCEPT_SCORE


def _always(a: _Sig, b: _Sig, s: _Score) -> bool:
    return True  # the bucket key is the evidence; scores only order the candidates


def _class_changed_accept(a: _Sig, b: _Sig, s: _Score) -> bool:
    return s.message >= _SAME_MESSAGE_OTHER_CLASS


def _moved_file_accept(a: _Sig, b: _Sig, s: _Score) -> bool:
    if not (a.informative or b.informative):
        return s.code >= 0.8
    return s.code >= 0.5 or (s.guard and s.code >= 0.3)


def _match_buckets(
    olds: dict[Any, list[_Sig]],
    news: dict[Any, list[_Sig]],
    accept: _Accept,
    taken_old: set[int],
    taken_new: set[int],
) -> list[tuple[_Sig, _Sig]]:
    """Greedy best-first pairing inside each bucket; every record pairs at most once overall."""
    pairs: list[tuple[_Sig, _Sig]] = []
    msg_matcher: SequenceMatcher[str] = SequenceMatcher(None, autojunk=False)
    code_matcher: SequenceMatcher[str] = SequenceMatcher(None, autojunk=False)
    for key in sorted(olds.keys() & news.keys(), key=repr):
        left = [s for s in olds[key] if s.index not in taken_old]
        right = [s for s in news[key] if s.index not in taken_new]
        if not left or not right:
            continue
        candidates: list[tuple[float, int, int, _Sig, _Sig]] = []
        for b in right:
            for a in left:
                code = _ratio(code_matcher, a.code, b.code)
                guard = bool(a.guard) and a.guard == b.guard

                # Every acceptance rule is monotone in the message ratio, so a candidate that
                # fails with an upper bound of it fails with the ratio itself.
                def good_enough(
                    message: float, a: _Sig = a, b: _Sig = b, code: float = code, guard: bool = guard
                ) -> bool:
                    return accept(a, b, _Score(message, code, guard))

                message = _message_ratio(msg_matcher, a.message, b.message, good_enough)
                score = _Score(message, code, guard)
                if accept(a, b, score):
                    candidates.append((-score.total, a.index, b.index, a, b))
        candidates.sort(key=lambda c: (c[0], c[1], c[2]))
        for _, ia, ib, a, b in candidates:
            if ia in taken_old or ib in taken_new:
                continue
            taken_old.add(ia)
            taken_new.add(ib)
            pairs.append((a, b))
    return pairs


def _check_unique(records: Sequence[ErrorRecord], label: str) -> None:
    seen: set[str] = set()
    for record in records:
        if record.id in seen:
            raise ExtractorError(label, f"duplicate id {record.id} ({record.filePath}:{record.lineNumber})")
        seen.add(record.id)


def _dataset_sha(records: Sequence[ErrorRecord]) -> str | None:
    """The sha a dataset describes: the ``analyzedSha`` most of its records carry."""
    counts = Counter(r.analyzedSha for r in records)
    if not counts:
        return None
    return min(counts, key=lambda sha: (-counts[sha], sha))


def diff_records(
    old: Sequence[ErrorRecord],
    new: Sequence[ErrorRecord],
    *,
    renames: Mapping[str, str | None] | None = None,
    from_sha: str | None = None,
    to_sha: str | None = None,
    old_label: str = "old",
    new_label: str = "new",
    trust_unchanged_files: bool = False,
) -> DiffResult:
    """Pair ``old`` with ``new`` and classify every record exactly once.

    ``renames`` maps a path in the old version to its path in the new one (``None`` for a
    deleted file), as ``git diff --find-renames`` reports it; records of a renamed file then pair
    as if the file had kept its name. ``from_sha``/``to_sha`` default to the ``analyzedSha`` the
    records carry. Ids must be unique on each side (:class:`ExtractorError` names the side).

    With ``trust_unchanged_files`` (only when ``renames`` is git's *complete* list of paths that
    differ between the two commits, as in :func:`diff_commits`), two records with the same id in
    the same file that git reports unchanged are unchanged by definition: the site's code is
    byte-identical, and any difference in their prose comes from knowledge read in *other* files
    (a flag's help text in the server-args module), which is not a change to this error.
    """
    _check_unique(old, old_label)
    _check_unique(new, new_label)
    changed_paths = renames or {}
    rename_map = {k: v for k, v in changed_paths.items() if v is not None}

    changes: list[Change] = []
    unchanged: list[tuple[ErrorRecord, ErrorRecord]] = []

    def settle(a: ErrorRecord, b: ErrorRecord, how: str) -> None:
        fields = changed_fields(a, b)
        if fields:
            changes.append(Change(a, b, fields, how))
        else:
            unchanged.append((a, b))

    # Stage 1: by id.
    new_by_id = {r.id: r for r in new}
    left: list[_Sig] = []
    for i, record in enumerate(old):
        match = new_by_id.pop(record.id, None)
        if match is None:
            left.append(_sig(i, record))
        elif (
            trust_unchanged_files
            and record.filePath == match.filePath
            and record.filePath not in changed_paths
        ):
            unchanged.append((record, match))
        else:
            settle(record, match, "id")
    right = [_sig(i, r) for i, r in enumerate(new) if r.id in new_by_id]

    taken_old: set[int] = set()
    taken_new: set[int] = set()
    if left and right:

        def home(sig: _Sig) -> str:
            return rename_map.get(sig.record.filePath, sig.record.filePath)

        stages: list[tuple[str, Callable[[_Sig, bool], Any], _Accept]] = [
            # Same place, class, message and guard: a dictionary lookup, so a dataset whose ids
            # all changed (a new id scheme) pairs in linear time before any scoring.
            (
                "exact",
                lambda s, is_old: (
                    home(s) if is_old else s.record.filePath,
                    s.record.errorClass,
                    s.message,
                    s.guard,
                ),
                _always,
            ),
            (
                "similar",
                lambda s, is_old: (home(s) if is_old else s.record.filePath, s.record.errorClass),
                _same_file_accept,
            ),
            (
                "class-changed",
                lambda s, is_old: (home(s) if is_old else s.record.filePath) if s.informative else None,
                _class_changed_accept,
            ),
            ("moved-file", lambda s, is_old: (s.record.errorClass, s.message), _moved_file_accept),
        ]
        for how, key_of, accept in stages:
            olds = _bucket((s for s in left if s.index not in taken_old), key_of, True)
            news = _bucket((s for s in right if s.index not in taken_new), key_of, False)
            for a, b in _match_buckets(olds, news, accept, taken_old, taken_new):
                settle(a.record, b.record, how)

    removed = sorted((s.record for s in left if s.index not in taken_old), key=sort_key)
    added = sorted((s.record for s in right if s.index not in taken_new), key=sort_key)
    changes.sort(key=lambda c: (sort_key(c.new), c.old.id))
    unchanged.sort(key=lambda p: sort_key(p[1]))
    return DiffResult(
        from_sha=from_sha if from_sha is not None else _dataset_sha(old),
        to_sha=to_sha if to_sha is not None else _dataset_sha(new),
        added=added,
        removed=removed,
        changed=changes,
        unchanged=unchanged,
    )


def _bucket(sigs: Iterable[_Sig], key: Callable[[_Sig, bool], Any], is_old: bool) -> dict[Any, list[_Sig]]:
    """Group by ``key``; a key of ``None`` leaves the record out of this stage."""
    buckets: dict[Any, list[_Sig]] = defaultdict(list)
    for sig in sigs:
        k = key(sig, is_old)
        if k is not None:
            buckets[k].append(sig)
    return buckets


# -- entry points ----------------------------------------------------------------------------


def diff_files(old_path: Path, new_path: Path) -> DiffResult:
    """Diff two dataset files; any unusable line raises :class:`ExtractorError` naming ``file:line``."""
    old = load_records(old_path)
    new = load_records(new_path)
    return diff_records(old, new, old_label=str(old_path), new_label=str(new_path))


def diff_commits(
    options: ExtractOptions,
    from_ref: str,
    to_ref: str,
    *,
    extract: Callable[[ExtractOptions], ExtractResult],
) -> DiffResult:
    """Extract the target at both commits (``options`` with each side's sha) and diff them.

    Both commit-ishes are resolved before anything is extracted, so a typo fails at once.
    Renames come from git (``changed_paths`` between the two resolved shas), so a renamed file's
    records pair with their old selves; records of files git reports unchanged pair by id
    without comparing their prose (``trust_unchanged_files``).
    """
    import dataclasses

    from extractor.source.git import open_target

    where, cache_dir = options.source, options.cache_dir
    with open_target(where, from_ref, cache_dir=cache_dir) as old_target:
        with open_target(where, to_ref, cache_dir=cache_dir) as new_target:
            old_sha, new_sha = old_target.sha, new_target.sha
        renames = old_target.changed_paths(new_sha)
    old = extract(dataclasses.replace(options, sha=old_sha, pinned=False))
    new = extract(dataclasses.replace(options, sha=new_sha, pinned=False))
    return diff_records(
        old.records,
        new.records,
        renames=renames,
        from_sha=old.sha,
        to_sha=new.sha,
        trust_unchanged_files=True,
        old_label=f"{from_ref} ({old.sha[:12]})",
        new_label=f"{to_ref} ({new.sha[:12]})",
    )
