"""Plain facts of how a raise is handled: the ancestry of its class and what a handler does.

Kept apart from the readers (:mod:`extractor.analysis.exception_keys`,
:mod:`extractor.analysis.handler_outcome`) so that the whole-target step and the prose read them
without the parser stack.
"""

from __future__ import annotations

import builtins
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["BASE", "BUILTIN_EXC", "EXCEPTION", "Ancestry", "Outcome", "escape_plain"]

BUILTIN_EXC = {
    name: cls
    for name, cls in vars(builtins).items()
    if isinstance(cls, type) and issubclass(cls, BaseException) and name[:1].isupper()
}
EXCEPTION = "builtins:Exception"
BASE = "builtins:BaseException"


@dataclass(frozen=True)
class Ancestry:
    """The keys of a class and of every class it derives from; ``open`` when some base is unknown."""

    keys: frozenset[str]
    open: bool

    def caught_by(self, keys: tuple[str, ...] | None, bare: bool) -> bool | None:
        """Whether an ``except`` clause with ``keys`` (None: an expression nobody can read) catches it.

        None means "cannot tell": the clause names something that is not a readable class.
        """
        if bare:
            return True
        if keys is None:
            return None
        for key in keys:
            if key in self.keys or key == BASE:
                return True
            if key == EXCEPTION and self.open and not self.keys & _BASE_ONLY:
                return True
        return False


_BASE_ONLY = frozenset(
    f"builtins:{n}" for n, c in BUILTIN_EXC.items() if not issubclass(c, Exception) and n != "BaseException"
)


@dataclass(frozen=True)
class Outcome:
    """What a handler does, in plain data (JSON-ready through :meth:`to_plain`)."""

    kind: str
    """``reraise`` ``convert`` ``exit`` ``swallow`` ``mixed``."""
    level: str = ""
    """For a handler that logs: ``debug`` ``info`` ``warning`` ``error`` or ``print``."""
    logged: str = ""
    """The logged message as a template (``{e}`` for the caught error), when one is logged; for
    ``convert``, the message of the error raised instead."""
    then: str = ""
    """What runs after: ``return <value>``, ``continue``, ``break``, ``<name> = <value>``, or empty."""
    raised: str = ""
    """For ``convert``: the class raised instead, as written."""
    raised_key: str = ""
    """For ``convert``: that class's key (:mod:`extractor.analysis.exception_keys`)."""
    line: int = 0
    """The line of the ``except`` clause."""
    bound: str = ""
    """The name ``except ... as name`` binds, if any."""
    passed: str = ""
    """A call (not a log line) the handler hands the caught error to (``errors.append(e)``)."""
    reported: str = ""
    """For a handler that keeps the error in a name (``last_error = exc``): the later raise of the
    function that carries it, as ``line|Class|message`` (``raise RuntimeError(f"... {last_error}")``
    after a retry loop), else empty."""

    @property
    def carries(self) -> bool:
        """Whether what runs after hands the caught error on (``return error_response(str(e))``)."""
        return bool(self.bound) and re.search(rf"\b{re.escape(self.bound)}\b", self.then) is not None

    def to_plain(self) -> list[object]:
        return [
            self.kind, self.level, self.logged, self.then, self.raised, self.raised_key, self.line, self.bound,
            self.passed, self.reported,
        ]  # fmt: skip

    @classmethod
    def from_plain(cls, data: list[object]) -> Outcome:
        kind, level, logged, then, raised, raised_key, line, bound, passed, reported = (str(x) for x in data)
        return cls(kind, level, logged, then, raised, raised_key, int(line), bound, passed, reported)

    @property
    def report(self) -> tuple[int, str, str] | None:
        """``(line, class, message)`` of :attr:`reported`, when there is one."""
        line, _, rest = self.reported.partition("|")
        cls, _, message = rest.partition("|")
        return (int(line), cls, message) if line.isdigit() and cls else None


def escape_plain(site_class_key: str, ancestry: Ancestry) -> list[Any]:
    """What the whole-target step needs of a raise that leaves its function: its key, its ancestry."""
    return [site_class_key, sorted(ancestry.keys), int(ancestry.open)]
