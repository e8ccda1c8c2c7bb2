"""Raises that every caller catches: the whole-target half of :mod:`extractor.analysis.handling`.

A worker marks each record whose raise leaves its own function with the raised class's key and
ancestry (the record's private ``_escapes`` field), and each file's facts carry, for every call in
a ``try``, the clauses around it and what each does (``handling``). Here the callers of the site's
function come from the :class:`~extractor.reach.target_index.TargetIndex`; the raise counts as
handled by its callers only when

* the function has at least one caller and every call filed under its name resolves somewhere
  (a call nobody can tie to a definition may be one more caller, outside any ``try``),
* every call of that name in every caller sits in a ``try`` whose first matching clause
  swallows the error, converts it into another class or exits (re-raising hands it to the next
  ``try`` out, as in the caller's own function),

and then the record says so (:func:`extractor.prose.handled.with_handling`). Anything else leaves
the record as the worker wrote it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from extractor.analysis.exception_keys import Ancestry
from extractor.analysis.handler_outcome import Outcome
from extractor.prose.handled import Catcher, with_handling
from extractor.reach.facts import Call, FileFacts
from extractor.reach.file_index import module_name
from extractor.reach.target_index import TargetIndex

__all__ = ["ESCAPES", "RunHandling"]

ESCAPES = "_escapes"
"""The private field of a worker's record that :class:`RunHandling` reads and drops."""

_MAX_CALLS = 400  # a name called more often than this is too common to account for every call


class RunHandling:
    """The callers' handling of every escaping raise of one run, applied as records are assembled."""

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
        self._memo: dict[tuple[str, str, str], list[Catcher] | None] = {}

    def apply(self, path: str, partial: Mapping[str, Any]) -> dict[str, Any]:
        """``partial`` without its private field, described as handled when every caller handles it."""
        out = dict(partial)
        escape = out.pop(ESCAPES, None)
        if not isinstance(escape, list) or len(escape) != 3:
            return out
        qualname = str(out.get("id", "")).split("\x1f", 1)[0]
        if qualname == "<module>":
            return out
        own_key, keys, is_open = escape
        memo = (path, qualname, orjson.dumps(escape).decode())
        if memo not in self._memo:
            self._memo[memo] = self._catchers(
                path, qualname, own_key, Ancestry(frozenset(keys), bool(is_open))
            )
        catchers = self._memo[memo]
        return with_handling(out, catchers, own=False) if catchers else out

    def _all_resolved(self, name: str) -> bool:
        count = 0
        index = self.index
        for f, calls in index._calls_by_name.get(name, ()):
            for call in calls:
                count += 1
                if count > _MAX_CALLS:
                    return False
                targets, _ = index._targets(f.module, f, Call._make(call))
                if not targets and call[1].split(".", 1)[0] not in f.imports:
                    return False
        return True

    def _catchers(self, path: str, qualname: str, own_key: str, ancestry: Ancestry) -> list[Catcher] | None:
        node = f"{module_name(path)}:{qualname}"
        name = qualname.rpartition(".")[2]
        edges = self.index.callers(node)
        if not edges or not self._all_resolved(name):
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
                return None
            found = None
            for chain in chains:
                found = _first_catch(chain, own_key, ancestry)
                if found is None:
                    return None
            assert found is not None
            clause, outcome = found
            out[(edge.path, caller)] = Catcher(caller, edge.path, clause, outcome)
        return [out[k] for k in sorted(out)]


def _first_catch(chain: list[Any], own_key: str, ancestry: Ancestry) -> tuple[str, Outcome] | None:
    """The clause that ends the raise in one call's ``try`` chain (outermost first), else None."""
    for clauses in reversed(chain):
        for keys, bare, plain_outcome, text in clauses:
            hit = ancestry.caught_by(None if keys is None else tuple(keys), bool(bare))
            if hit is None:
                return None
            if not hit:
                continue
            outcome = Outcome.from_plain(plain_outcome)
            if outcome.kind == "convert" and outcome.raised_key == own_key:
                break  # raised again as the same class: the next ``try`` out gets it
            if outcome.kind == "mixed":
                return None
            if outcome.kind == "reraise":
                break
            return str(text), outcome
    return None
