"""Exception classes known by name: Python's built-ins plus the ``class X(Base):`` lines of the records."""

from __future__ import annotations

import builtins
import re
from collections.abc import Sequence

from extractor.records.model import ErrorRecord


def _builtin_parents() -> dict[str, set[str]]:
    parents: dict[str, set[str]] = {}
    for name in dir(builtins):
        obj = getattr(builtins, name)
        if isinstance(obj, type) and issubclass(obj, BaseException):
            parents[name] = {b.__name__ for b in obj.__bases__ if issubclass(b, BaseException)}
    return parents


BUILTIN_PARENTS = _builtin_parents()
_CLASS_DEF_RE = re.compile(r"^[ \t]*class[ \t]+(\w+)[ \t]*\(([^)]*)\)[ \t]*:", re.MULTILINE)
_EXC_NAME_RE = re.compile(
    r"[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Warning|Failure|Fault|Timeout|Expired)|[A-Z]\w*Error\w*"
)


def last_name(dotted: str) -> str:
    """``sglang.srt.x.MyError`` -> ``MyError``."""
    return dotted.rsplit(".", 1)[-1]


class ClassHierarchy:
    """Exception classes known by name, with the parents that could be learned."""

    def __init__(self, records: Sequence[ErrorRecord]) -> None:
        self.parents: dict[str, set[str]] = {k: set(v) for k, v in BUILTIN_PARENTS.items()}
        self.known: set[str] = set(self.parents)
        for record in records:
            self.known.add(last_name(record.errorClass))
            if "class" not in record.sourceCode:
                continue
            for m in _CLASS_DEF_RE.finditer(record.sourceCode):
                bases = {last_name(b.split("[")[0].strip()) for b in m.group(2).split(",")}
                bases = {b for b in bases if b and "=" not in b and b.isidentifier()}
                if bases:
                    self.parents.setdefault(m.group(1), set()).update(bases)
        self._ancestors: dict[str, frozenset[str]] = {}

    def ancestors(self, name: str) -> frozenset[str]:
        """Every known ancestor of ``name`` (not ``name`` itself)."""
        cached = self._ancestors.get(name)
        if cached is not None:
            return cached
        seen: set[str] = set()
        stack = list(self.parents.get(name, ()))
        while stack:
            cur = stack.pop()
            if cur in seen or cur == name:
                continue
            seen.add(cur)
            stack.extend(self.parents.get(cur, ()))
        result = frozenset(seen)
        self._ancestors[name] = result
        return result

    def relation(self, query: str, record: str) -> float:
        """1 same class, 0.5 one derives from the other, -0.5 unrelated, 0 when unknowable."""
        if query == record:
            return 1.0
        if record in self.ancestors(query) or query in self.ancestors(record):
            # A generic base (Exception) says little; only a specific shared line counts fully.
            return 0.2 if {query, record} & {"Exception", "BaseException"} else 0.5
        if query not in self.parents or record not in self.parents:
            return 0.0  # one's ancestry is unknown (a helper's name, a class defined elsewhere)
        return -0.5

    def looks_like_class(self, dotted: str) -> bool:
        """Whether a name seen outside a traceback is an exception class worth trusting."""
        name = last_name(dotted)
        return name in self.known or bool(_EXC_NAME_RE.fullmatch(name))
