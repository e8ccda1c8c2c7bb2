"""Receiver types across the target: which classes a type expression of one file may stand for.

The expressions are those :mod:`extractor.reach.receiver_facts` keeps. Each is read from its head
(``self``/``cls``: the class of the method it was written in; else the longest prefix naming a
definition through the file's imports) along its parts: a method of a class, the type stored in
an attribute (looked up through the bases, like an attribute read), a call (an instance for a
class, the return type of a function). Results are memoised; expressions that refer to each
other, or nest deeper than :data:`MAX_DEPTH`, end as unknown rather than loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from extractor.reach.target_index import TargetIndex

__all__ = ["MAX_DEPTH", "ReceiverTypes"]

MAX_DEPTH = 6

Value = tuple[str, str]
"""``("inst", class node)``: an instance of it or of a class derived from it; ``("new", class
node)``: an instance built by calling that very class; ``("def", node)``: the definition itself;
``("ext", dotted name)``: an instance of a class of another package that no class of the target
derives from (none of its methods is the target's)."""

_OPEN_MODULES = frozenset({"typing", "typing_extensions", "collections", "abc", "builtins", "types"})
"""Modules whose names say nothing of the class an object has (``typing.Any``, a protocol)."""


class ReceiverTypes:
    """Classes of type expressions, resolved against one :class:`TargetIndex`."""

    def __init__(self, index: TargetIndex) -> None:
        self.index = index
        self._memo: dict[tuple[str, str, str], frozenset[Value]] = {}
        self._busy: set[tuple[str, str, str]] = set()
        self._tops = frozenset(m.partition(".")[0] for m in index.files)
        # An outside class a target class derives from (``torch.nn.Module``) may hold the target's
        # own instances; only its last name is compared, as bases are spelled many ways.
        self._derived_from = frozenset(
            b.rpartition(".")[2] for d in index.defs.values() if d.kind == "c" for b in d.bases
        )

    def classes(
        self, expr: str, module: str, scope: str, self_cls: str = "", depth: int = 0
    ) -> frozenset[str]:
        """Class nodes whose instances ``expr`` (written in ``scope`` of ``module``) may hold."""
        return frozenset(n for k, n in self.instances(expr, module, scope, self_cls, depth) if k != "ext")

    def instances(
        self, expr: str, module: str, scope: str, self_cls: str = "", depth: int = 0
    ) -> frozenset[Value]:
        """What ``expr`` may hold, as ``("inst", class)`` (that class or one derived from it) or
        ``("new", class)`` (built by calling that very class)."""
        key = (expr, module, self_cls or scope)
        found = self._memo.get(key)
        if found is not None:
            return found
        if key in self._busy or depth > MAX_DEPTH:
            return frozenset()
        self._busy.add(key)
        try:
            out: set[Value] = set()
            for alt in expr.split("|"):
                if alt:
                    out |= self._alternative(alt.split("."), module, scope, self_cls, depth)
        finally:
            self._busy.discard(key)
        # ``self.x: Optional[X] = None`` then ``self.x = X(...)``: the declared type is the very
        # class that is built, not a promise of a class derived from it.
        out -= {("inst", n) for k, n in out if k == "new"}
        self._memo[key] = frozenset(out)
        return self._memo[key]

    def _alternative(
        self, parts: list[str], module: str, scope: str, self_cls: str, depth: int
    ) -> set[Value]:
        values, start = self._head(parts, module, scope, self_cls, depth)
        for part in parts[start:]:
            if not values:
                return set()
            name = part.removesuffix("()")
            values = self._step(values, name, depth)
            if part.endswith("()"):
                values = self._call(values, depth)
        defs = self.index.defs
        return {(k, n) if k != "def" else ("inst", n) for k, n in values if k != "def" or defs[n].kind == "c"}

    def _head(
        self, parts: list[str], module: str, scope: str, self_cls: str, depth: int
    ) -> tuple[set[Value], int]:
        head = parts[0].removesuffix("()")
        if head in ("self", "cls"):
            cls = self_cls or self.index.owner_class(module, scope)
            return ({("inst", cls)} if cls else set()), 1
        f = self.index.files.get(module)
        if f is None:
            return set(), len(parts)
        # The longest prefix that names a definition; a call may only end it.
        for cut in range(len(parts), 0, -1):
            if any(p.endswith("()") for p in parts[: cut - 1]):
                continue
            node = self.index.resolve_dotted(".".join(p.removesuffix("()") for p in parts[:cut]), f, scope)
            if node is None:
                continue
            values: set[Value] = {("def", node)}
            if parts[cut - 1].endswith("()"):
                values = self._call(values, depth)
            return values, cut
        outside = self._outside(parts)
        return ({("ext", outside)} if outside else set()), len(parts)

    def _outside(self, parts: list[str]) -> str:
        """The dotted name when ``parts`` name a class of another package (``mori.io.IOEngine``, or
        a call of it) that no target class derives from; else ``""``."""
        if any(p.endswith("()") for p in parts[:-1]):
            return ""
        names = [p.removesuffix("()") for p in parts]
        if len(names) < 2 or names[0] in self._tops or names[0] in _OPEN_MODULES:
            return ""
        if not names[-1][:1].isupper() or names[-1] in self._derived_from:
            return ""
        return ".".join(names)

    def _step(self, values: set[Value], name: str, depth: int) -> set[Value]:
        index = self.index
        out: set[Value] = set()
        for kind, node in values:
            if kind == "ext":
                continue  # what another package's object holds is not read
            d = index.defs[node]
            if d.kind != "c":
                continue
            method = index.lookup_method(node, name)
            # A property is typed among the attributes (what it returns), not called.
            if method is not None and not self._attribute(node, name):
                out.add(("def", method))
                continue
            inner = f"{node}.{name}"
            if kind == "def" and inner in index.defs:
                out.add(("def", inner))
                continue
            # Otherwise a class named without a call is an annotation: an instance of it.
            for owner, expr in self._attribute(node, name):
                module, _, qual = owner.partition(":")
                out.update(self.instances(expr, module, qual, owner, depth + 1))
        return out

    def _attribute(self, cls: str, name: str) -> list[tuple[str, str]]:
        """``(class, expression)`` of the first class in ``cls``'s bases that types ``self.name``."""
        todo, seen = [cls], set()
        while todo:
            here = todo.pop(0)
            if here in seen:
                continue
            seen.add(here)
            expr = self.index.attrs.get(here, {}).get(name)
            if expr:
                return [(here, expr)]
            todo.extend(self.index.bases.get(here, []))
        return []

    def _call(self, values: set[Value], depth: int) -> set[Value]:
        index = self.index
        out: set[Value] = set()
        for kind, node in values:
            if kind != "def":
                continue
            d = index.defs[node]
            if d.kind == "c":
                out.add(("new", node))
            elif d.returns:
                module, _, qual = node.partition(":")
                out.update(self.instances(d.returns, module, qual, "", depth + 1))
        return out
