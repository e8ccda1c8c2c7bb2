"""Raises that every caller catches: the whole-target half of :mod:`extractor.analysis.handling`.

A worker marks each record whose raise leaves its own function with the raised class's key and
ancestry (the record's private ``_escapes`` field), and each file's facts carry, for every call in
a ``try``, the clauses around it and what each does (``handling``). Here the callers of the site's
function come from the :class:`~extractor.reach.target_index.TargetIndex`; the raise counts as
handled by its callers only when

* the function has at least one caller and every call filed under its name resolves somewhere
  or ends the raise as below (a call nobody can tie to a definition may be one more caller),
* every call of that name in every caller sits in a ``try`` whose first matching clause
  swallows the error, converts it into another class or exits (re-raising hands it to the next
  ``try`` out, as in the caller's own function),

and then the record says so (:func:`extractor.prose.handled.with_handling`). Anything else leaves
the record as the worker wrote it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson

from extractor.analysis.handled_facts import Ancestry, Outcome
from extractor.prose.handled import Catcher, with_handling
from extractor.reach.facts import Call, FileFacts
from extractor.reach.file_index import module_name
from extractor.reach.target_index import TargetIndex
from extractor.types import FileOutcome, Parsed

__all__ = ["ESCAPES", "RunHandling", "ends_raise", "run_handling"]

ESCAPES = "_escapes"
"""The private field of a worker's record that :class:`RunHandling` reads and drops."""

_MAX_UP = 2  # callers of callers followed when a caller does not catch the raise itself
_MAX_CALLS = 400  # a name called more often than this is too common to account for every call


class RunHandling:
    """The callers' handling of every escaping raise of one run, applied as records are assembled."""

    def __init__(self, table: Mapping[str, Mapping[str, list[Catcher]]]) -> None:
        self.table = table
        """path -> site key (qualname and escape) -> the callers that handle it."""

    def apply(self, path: str, partial: Mapping[str, Any]) -> dict[str, Any]:
        """``partial`` without its private field, described as handled when every caller handles it."""
        out = dict(partial)
        escape = out.pop(ESCAPES, None)
        by_key = self.table.get(path) if escape is not None else None
        catchers = by_key.get(_site_key(out, escape)) if by_key else None
        if not catchers:
            return out
        return with_handling(out, catchers, own=False, callee=str(out.get("id", "")).split("\x1f", 1)[0])

    def to_plain(self) -> dict[str, Any]:
        """JSON-ready: only handled sites are kept."""
        return {
            path: {
                k: [[c.scope, c.path, c.clause, c.outcome.to_plain()] for c in cs]
                for k, cs in sorted(by.items())
            }
            for path, by in sorted(self.table.items())
        }

    @classmethod
    def from_plain(cls, data: Any) -> RunHandling | None:
        """What :meth:`to_plain` wrote, or None for anything else."""
        try:
            return cls(
                {
                    str(path): {
                        str(k): [Catcher(str(a), str(b), str(c), Outcome.from_plain(o)) for a, b, c, o in cs]
                        for k, cs in by.items()
                    }
                    for path, by in data.items()
                }
            )
        except (TypeError, ValueError, AttributeError):
            return None


def _site_key(partial: Mapping[str, Any], escape: Any) -> str:
    qualname = str(partial.get("id", "")).split("\x1f", 1)[0]
    return f"{qualname}\x1f{orjson.dumps(escape).decode()}"


def run_handling(outcomes: Sequence[tuple[object, FileOutcome]]) -> RunHandling:
    """Which escaping raises of the run every caller handles, from the records and facts of ``outcomes``."""
    parsed = [(f, o) for f, o in outcomes if isinstance(o, Parsed)]
    escaping = [(o, p) for _, o in parsed for p in o.records if isinstance(p.get(ESCAPES), list)]
    if not escaping:
        return RunHandling({})
    finder = _CallerFinder(o.facts for _, o in parsed if o.facts is not None)
    table: dict[str, dict[str, list[Catcher]]] = {}
    memo: dict[tuple[str, str], list[Catcher] | None] = {}
    for f, o in parsed:
        path = str(getattr(f, "path", ""))
        for partial in o.records:
            escape = partial.get(ESCAPES)
            if not isinstance(escape, list) or len(escape) != 3:
                continue
            qualname = str(partial.get("id", "")).split("\x1f", 1)[0]
            if qualname == "<module>":
                continue
            key = _site_key(partial, escape)
            if (path, key) not in memo:
                own_key, keys, is_open = escape
                ancestry = Ancestry(frozenset(keys), bool(is_open))
                memo[(path, key)] = finder.catchers(path, qualname, str(own_key), ancestry)
            catchers = memo[(path, key)]
            if catchers:
                table.setdefault(path, {})[key] = catchers
    return RunHandling(table)


class _CallerFinder:
    """The whole-target index with each file's handling facts beside it."""

    def __init__(self, plain_facts: Iterable[str]) -> None:
        facts: list[FileFacts] = []
        self.handling: dict[str, Mapping[str, Any]] = {}
        for text in plain_facts:
            try:
                plain = orjson.loads(text)
            except orjson.JSONDecodeError:
                continue
            f = FileFacts.from_plain(plain)
            if f is None:
                continue
            facts.append(f)
            found = plain.get("handling")
            if isinstance(found, dict):
                self.handling[f.path] = found
        self.index = TargetIndex.build(facts)

    def _all_resolved_or_handled(self, name: str, own_key: str, ancestry: Ancestry) -> bool:
        """Whether each call of ``name`` resolves somewhere, or, where none can be tied to a
        definition (it may be one more caller), sits in a ``try`` that ends the raise too."""
        count = 0
        index = self.index
        for f, calls in index._calls_by_name.get(name, ()):
            for call in calls:
                count += 1
                if count > _MAX_CALLS:
                    return False
                targets, _ = index._targets(f.module, f, Call._make(call))
                if targets or call[1].split(".", 1)[0] in f.imports:
                    continue
                chains = self.handling.get(f.path, {}).get(str(call[0]), {}).get(name)
                if not chains or any(_first_catch(c, own_key, ancestry) is None for c in chains):
                    return False
        return True

    def catchers(
        self, path: str, qualname: str, own_key: str, ancestry: Ancestry, depth: int = 0
    ) -> list[Catcher] | None:
        """The callers that end the raise; a caller that calls outside any ``try`` hands it to its
        own callers, which must then all end it (up to :data:`_MAX_UP` levels)."""
        node = f"{module_name(path)}:{qualname}"
        name = qualname.rpartition(".")[2]
        edges = self.index.callers(node)
        if not edges or not self._all_resolved_or_handled(name, own_key, ancestry):
            return None
        out: dict[tuple[str, str], Catcher] = {}
        for edge in edges:
            caller = edge.caller.partition(":")[2]
            if (edge.path, caller) in out:
                continue
            if edge.path == path and caller == qualname:
                return None  # recursion: the outermost call is what matters, and it is not here
            chains = self.handling.get(edge.path, {}).get(caller, {}).get(name)
            if not chains:
                # No ``try`` around the call: the raise leaves the caller as it is.
                up = (
                    self.catchers(edge.path, caller, own_key, ancestry, depth + 1)
                    if depth < _MAX_UP
                    else None
                )
                if up is None:
                    return None
                for c in up:
                    out.setdefault((c.path, c.scope), c)
                continue
            found = None
            for chain in chains:
                found = _first_catch(chain, own_key, ancestry)
                if found is None:
                    return None
            assert found is not None
            clause, outcome = found
            out[(edge.path, caller)] = Catcher(caller, edge.path, clause, outcome)
        return [out[k] for k in sorted(out)]


def ends_raise(
    handling: Mapping[str, Mapping[str, Any]], path: str, caller: str, name: str, escape: Any
) -> bool:
    """Whether every call of ``name`` in ``caller`` (of ``path``) sits in a ``try`` that ends a raise
    described by ``escape`` (a record's ``_escapes``): swallowed, converted or exiting there, so
    the user never sees that error come out of this caller."""
    if not isinstance(escape, list) or len(escape) != 3:
        return False
    own_key, keys, is_open = escape
    chains = handling.get(path, {}).get(caller, {}).get(name)
    if not chains:
        return False
    ancestry = Ancestry(frozenset(keys), bool(is_open))
    return all(_first_catch(c, str(own_key), ancestry) is not None for c in chains)


def _first_catch(chain: list[Any], own_key: str, ancestry: Ancestry) -> tuple[str, Outcome] | None:
    """The clause that ends the raise in one call's ``try`` chain (outermost first), else None."""
    for clauses in reversed(chain):
        for keys, bare, plain_outcome, text, *split in clauses:
            hit = ancestry.caught_by(None if keys is None else tuple(keys), bool(bare))
            if hit is None:
                return None
            if not hit:
                continue
            if split:
                # The handler branches on the error's class first: the way this one takes.
                tested, yes, no = split[0]
                taken = ancestry.caught_by(tuple(tested), False)
                plain_outcome = plain_outcome if taken is None else yes if taken else no
            outcome = Outcome.from_plain(plain_outcome)
            if outcome.kind == "convert" and outcome.raised_key == own_key:
                break  # raised again as the same class: the next ``try`` out gets it
            if outcome.kind == "mixed":
                return None
            if outcome.kind == "reraise":
                break
            return str(text), outcome
    return None
