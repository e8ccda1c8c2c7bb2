"""Flags found by something other than their destination: how they are spelled on the command line
(``--x``), an alias, or what their help names.

Its own module so that the readers the knowledge module itself imports can use it. Each finder
scans a namespace's flags; a mapping that can answer a finder itself (``lookup``, as the pipeline's
recording one does) is asked instead, so that a file's cached result is kept under the one answer
it read rather than under every flag (:mod:`extractor.engine.reads`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from extractor.prose.declarations import FlagInfo

__all__ = ["FINDERS", "declared_flag", "find_flag"]


def _declared(flags: Mapping[str, FlagInfo], name: str) -> FlagInfo | None:
    return next((f for f in flags.values() if f.flag == name or name in f.aliases), None)


def _itself(flags: Mapping[str, FlagInfo], name: str) -> FlagInfo | None:
    return next((f for f in flags.values() if f.flag == name), None)


def _itself_last(flags: Mapping[str, FlagInfo], name: str) -> FlagInfo | None:
    found = None
    for f in flags.values():
        if f.flag == name:
            found = f
    return found


def _aliased(flags: Mapping[str, FlagInfo], dest: str) -> FlagInfo | None:
    return next((f for f in flags.values() if any(a[2:].replace("-", "_") == dest for a in f.aliases)), None)


def _abbreviated(flags: Mapping[str, FlagInfo], name: str) -> FlagInfo | None:
    return next(
        (f for f in flags.values() if any(n.startswith(name + "-") for n in (f.flag, *f.aliases))), None
    )


def _first(flags: Mapping[str, FlagInfo], _key: str) -> FlagInfo | None:
    return next(iter(flags.values()), None)


def _path_naming(flags: Mapping[str, FlagInfo], thing: str) -> FlagInfo | None:
    return next((f for f in flags.values() if f.flag.endswith("-path") and thing in f.help.lower()), None)


# name -> finder; the names are written into cache entries, so a renamed finder only costs a
# re-analysis of the entries that used it.
FINDERS: Mapping[str, Callable[[Mapping[str, FlagInfo], str], FlagInfo | None]] = MappingProxyType(
    {
        # the first flag spelled so, as its flag or an alias
        "declared": _declared,
        # the first flag spelled so itself, not as an alias
        "itself": _itself,
        # the last flag spelled so itself (a table keyed by spelling keeps the last)
        "itself-last": _itself_last,
        # the first flag with an alias that is the destination ``--tensor-parallel-size``
        "aliased": _aliased,
        # the first path flag (``--x-path``) whose help names the thing (``draft model``)
        "path-naming": _path_naming,
        # the first flag whose spelling (or an alias's) starts with the name and a dash: argparse
        # takes ``--dp`` for ``--dp-size``
        "abbreviated": _abbreviated,
        # the first flag of all, whatever the key: whether any flag is known at all
        "first": _first,
    }
)


def find_flag(finder: str, key: str, flags: Mapping[str, FlagInfo]) -> FlagInfo | None:
    """The flag of ``flags`` that finder ``finder`` (a key of :data:`FINDERS`) gives for ``key``."""
    look = getattr(flags, "lookup", None)
    if callable(look):
        return cast("FlagInfo | None", look(finder, key))
    return FINDERS[finder](flags, key)


def declared_flag(name: str, flags: Mapping[str, FlagInfo]) -> FlagInfo | None:
    """The first flag of ``flags`` spelled ``name`` on the command line (as its flag or an alias)."""
    return find_flag("declared", name, flags)
