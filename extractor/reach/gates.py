"""Selectors in a site's own guard: the user choices its enclosing ``if`` blocks test.

The caller chains (:mod:`extractor.reach.paths`) stop at the site's function; the ``if`` blocks
inside it that lead to the site select code the same way (``if view.attention_backend ==
"trtllm_mla": ... raise``). This reads them from the guard as the site finder wrote it (one
expression, each atom in the direction that leads to the site), so nothing per site has to be
cached: only conjuncts that must hold count (never a negation, but of an environment read, which
leaves the variable off), and an ``or`` of tests of several flags (``a == "x" or b == "x"``) gives
one alternative per flag.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping

from extractor.prose.flag_spelling import declared_flag
from extractor.prose.knowledge import FlagInfo, Knowledge
from extractor.reach.facts import Atom
from extractor.reach.guard_atoms import platform_word
from extractor.reach.selectors import ENV_OFF, Selector, atom_selector, disjoint_archs

__all__ = ["gate_alternatives", "tidy", "with_gates"]

_MAX_ALTERNATIVES = 3
_MAX_EXPRESSION = 4000


Resolve = Callable[[Atom], "Selector | None"]
"""The selector of an atom the flags alone do not name (``self.x`` filled from a flag), or None."""

Read = Callable[[ast.expr], "frozenset[Selector]"]
"""The selectors a test this module's own reading does not know needs (an environment read, a value
test of a flag's accessor ``get_x_backend().is_y()``), read as the callers' guards are."""


def gate_alternatives(
    expression: str, path: str, knowledge: Knowledge, resolve: Resolve | None = None, read: Read | None = None
) -> tuple[frozenset[Selector], ...]:
    """Alternatives of selectors the guard ``expression`` requires (``()``: none)."""
    if not expression or expression == "True" or len(expression) > _MAX_EXPRESSION:
        return ()
    try:
        tree = ast.parse(expression, mode="eval")
    except (SyntaxError, ValueError, RecursionError):
        return ()
    flags = knowledge.flags_for(path)
    alts: list[frozenset[Selector]] = [frozenset()]
    for conjunct in _conjuncts(tree.body):
        options = _options(conjunct, flags, knowledge, resolve, read)
        if not options:
            continue
        grown = [a | o for a in alts for o in options]
        if len(set(grown)) > _MAX_ALTERNATIVES:
            continue  # too many ways to say simply; the other conjuncts still hold
        alts = grown
    kept = sorted({a for a in alts if a}, key=lambda a: sorted(a))
    return tuple(kept) if len(kept) == len(alts) else ()


def _conjuncts(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        return [c for v in node.values for c in _conjuncts(v)]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = node.operand
        if isinstance(inner, ast.UnaryOp) and isinstance(inner.op, ast.Not):
            return _conjuncts(inner.operand)  # ``not not x``
        if isinstance(inner, ast.BoolOp) and isinstance(inner.op, ast.Or):
            # ``not (not self.enable_x or not y)``, the path past an early return: each one failed.
            return [c for v in inner.values for c in _conjuncts(ast.UnaryOp(ast.Not(), v))]
    return [node]


def _options(
    node: ast.expr,
    flags: Mapping[str, FlagInfo],
    knowledge: Knowledge,
    resolve: Resolve | None = None,
    read: Read | None = None,
) -> list[frozenset[Selector]]:
    """One selector set per way the conjunct can hold; ``[]`` when it says nothing sure."""
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
        out: list[frozenset[Selector]] = []
        for value in node.values:
            one = _options(value, flags, knowledge, resolve, read)
            if not one:
                return []  # a way through that selects nothing: the ``or`` requires nothing
            out.extend(one)
        merged = _merge(out)
        return merged if len(merged) <= _MAX_ALTERNATIVES else []
    atom = _atom(node)
    if atom is None:
        # A negation reads as nothing, but for an environment read: ``not envs.SGLANG_X.get()``.
        found = read(node) if read is not None else frozenset()
        return [found] if len(found) == 1 else []
    sel = atom_selector(atom, flags, knowledge)
    if sel is None and resolve is not None:
        sel = resolve(atom)
    if sel is None and read is not None and atom[0] == "a" and atom[2] == "self":
        # ``if self.use_x:`` where the class stores a test of a flag there: read as a caller's is.
        stored = read(node)
        return [stored] if stored else []
    if sel is None or (atom[0] == "a" and sel[0] == "flag" and _always_true(sel[1], flags)):
        return []
    return [frozenset({sel})]


_FALSY_DEFAULTS = frozenset({"", "0", "0.0", "false", "none", "[]", "{}", "()", "''", '""'})


def _always_true(flag: str, flags: Mapping[str, FlagInfo]) -> bool:
    """Whether a truth or ``is not None`` test of valued ``flag`` passes on a launch that does not
    give it (``self.pp_size is not None`` with a default of 1): such a test selects nothing."""
    info = declared_flag(flag, flags)
    return info is not None and not info.is_bool and info.default.lower() not in _FALSY_DEFAULTS


def _merge(options: list[frozenset[Selector]]) -> list[frozenset[Selector]]:
    """``x == "a" or x == "b"``: one flag with both values."""
    by_flag: dict[tuple[str, str], set[str]] = {}
    rest: list[frozenset[Selector]] = []
    for option in options:
        sel = next(iter(option)) if len(option) == 1 else None
        if sel is not None and sel[0] == "flag" and sel[2]:
            by_flag.setdefault((sel[0], sel[1]), set()).update(sel[2])
        elif option not in rest:
            rest.append(option)
    merged = [frozenset({(k, n, tuple(sorted(v)))}) for (k, n), v in sorted(by_flag.items())]
    return merged + rest


def _subject(node: ast.expr) -> tuple[str, str] | None:
    if isinstance(node, ast.Attribute):
        recv = node.value
        if isinstance(recv, ast.Name) and recv.id == "self":
            return node.attr, "self"
        return node.attr, "args" if "args" in ast.unparse(recv).lower() else "other"
    if isinstance(node, ast.Name):
        return node.id, "name"
    return None


def _atom(node: ast.expr) -> Atom | None:
    platform = platform_word(node, features=True)  # a conjunct that must hold: never negated
    if platform is not None:
        return ("p", platform)
    if isinstance(node, ast.Call):
        return None
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        op, right = node.ops[0], node.comparators[0]
        subject = _subject(node.left)
        if subject is None:
            return None
        if isinstance(op, ast.IsNot) and isinstance(right, ast.Constant) and right.value is None:
            return ("a", *subject)
        if isinstance(op, ast.Eq | ast.In):
            values = _literals(right)
            return ("v", *subject, *values) if values else None
        return None
    if isinstance(node, ast.Attribute):
        subject = _subject(node)
        return None if subject is None else ("a", *subject)
    return None


def _literals(node: ast.expr) -> list[str]:
    items = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else [node]
    out = []
    for item in items:
        if isinstance(item, ast.Constant) and isinstance(item.value, str) and item.value:
            out.append(item.value)
        else:
            return []
    return out


def with_gates(
    reach: tuple[frozenset[Selector], ...], gates: tuple[frozenset[Selector], ...]
) -> tuple[frozenset[Selector], ...]:
    """The callers' alternatives joined with the guard's; a flag in both keeps the common values."""
    if not gates:
        return reach
    out: list[frozenset[Selector]] = []
    for outer in reach or (frozenset(),):
        for inner in gates:
            joined = _join(outer, inner)
            if joined is not None and joined not in out:
                out.append(joined)
    kept = [c for c in out if not any(k < c for k in out)]
    if not kept or len(kept) > _MAX_ALTERNATIVES:
        return reach
    return tuple(sorted(kept, key=lambda c: sorted(c)))


def _join(a: frozenset[Selector], b: frozenset[Selector]) -> frozenset[Selector] | None:
    out = set(a)
    for sel in b:
        if sel[0] == "env" and any(
            s[0] == "env" and s[1] == sel[1] and _env_clash(s[2], sel[2]) for s in out
        ):
            return None  # a variable both off and on: this way in never reaches the site
        same = [s for s in out if s[0] == sel[0] == "flag" and s[1] == sel[1]]
        if not same:
            out.add(sel)
            continue
        (old,) = same[:1]
        if not sel[2]:
            continue
        if not old[2]:
            out.discard(old)
            out.add(sel)
            continue
        common = tuple(v for v in old[2] if v in sel[2])
        if not common:
            return None  # both cannot hold: this way in never reaches the site
        out.discard(old)
        out.add((old[0], old[1], common))
    return frozenset(out)


def _env_clash(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Whether one variable cannot hold both: left off (or set to 0) and set."""
    off = (ENV_OFF, ("0",))
    return a != b and (a in off or b in off)


def tidy(reach: tuple[frozenset[Selector], ...]) -> tuple[frozenset[Selector], ...]:
    """One selector per flag in each alternative: a registry's keys and a guard's test of the same
    flag on one chain both hold, so only their common values do. An alternative that cannot hold
    (no common value, two platforms) shows a way in the index missed: then nothing is said."""
    out: list[frozenset[Selector]] = []
    for conj in reach:
        joined: frozenset[Selector] | None = frozenset()
        for sel in sorted(conj):
            joined = _join(joined, frozenset({sel})) if joined is not None else None
        if joined is not None and (
            len({s[1] for s in joined if s[0] == "platform"}) > 1 or disjoint_archs(joined)
        ):
            joined = None  # one process, one platform, one checkpoint: a chain needing two is a lost way in
        if joined is not None and joined not in out:
            out.append(joined)
    if len(out) == len(reach) and all(a == b for a, b in zip(out, reach, strict=True)):
        return reach
    # A way in that cannot hold means one was missed: nothing sure is left to say.
    return tuple(sorted(out, key=lambda c: sorted(c))) if len(out) == len(reach) else ()
