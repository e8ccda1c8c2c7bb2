"""A flag found by how it is spelled on the command line (``--x``), not by its destination.

Its own module so that the readers the knowledge module itself imports can use it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from extractor.prose.declarations import FlagInfo

__all__ = ["declared_flag"]


def declared_flag(name: str, flags: Mapping[str, FlagInfo]) -> FlagInfo | None:
    """The first flag of ``flags`` spelled ``name`` on the command line (as its flag or an alias).

    A mapping that can answer this itself (``declared``, as the pipeline's recording one does)
    is asked: scanning the values reads every flag, and a file's cached result is kept under the
    flags it read.
    """
    look = getattr(flags, "declared", None)
    if callable(look):
        return cast("FlagInfo | None", look(name))
    return next((f for f in flags.values() if f.flag == name or name in f.aliases), None)
