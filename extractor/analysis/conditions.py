"""The guard path to a site: every atom that must hold for it to run, outermost first.

Rules (the ones our labels follow, see ``shared/eval/LABELING.md``), inside the innermost scope:

* an ``if`` body contributes its test, split into ``and`` atoms; an ``else`` branch ``not (test)``;
  an ``elif`` body the negation of every earlier test, then its own test;
* a statement before the site whose branches all exit (``return``/``raise``/``continue``/``break``)
  but one contributes the path into that one branch (``if c: return`` gives ``not c``);
* an enclosing ``except E`` handler contributes the atom ``except E``;
* a ``match`` case contributes its pattern as the equivalent comparison, after the negations of
  the earlier cases;
* an ``assert`` contributes ``not (test)``; loops and earlier asserts contribute nothing.

Atoms are printed the way ``ast.unparse`` prints them, negations as
``ast.unparse(ast.parse("not (" + test + ")"))`` does.
"""

from __future__ import annotations

import ast
import bisect
import dataclasses
from collections.abc import Iterable

from extractor.analysis.bindings import case_bindings, local_bindings
from extractor.analysis.facts import AtomKind, AtomRole, Guard, GuardAtom
from extractor.analysis.sites import Frame, RawSite, block_of, error_response_call
from extractor.analysis.walk import NEW_SCOPE, child_blocks, own_statements

_EXIT_CALLS = {"sys.exit", "exit", "quit", "os._exit"}


def unparse(node: ast.AST) -> str:
    return ast.unparse(node)


def negate(node: ast.expr) -> str:
    """``not (test)`` as ``ast.unparse`` prints it."""
    return unparse(ast.UnaryOp(op=ast.Not(), operand=node))


def split_and(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        out: list[ast.expr] = []
        for value in node.values:
            out.extend(split_and(value))
        return out
    return [node]


def _positive(test: ast.expr, kind: AtomKind) -> list[GuardAtom]:
    line = getattr(test, "lineno", 0)
    return [GuardAtom(unparse(t), kind, t, False, getattr(t, "lineno", line)) for t in split_and(test)]


def _negative(test: ast.expr, kind: AtomKind) -> GuardAtom:
    return GuardAtom(negate(test), kind, test, True, getattr(test, "lineno", 0))


def terminates(block: list[ast.stmt]) -> bool:
    """Whether every path through ``block`` leaves it (return, raise, continue, break, exit())."""
    if not block:
        return False
    last = block[-1]
    if isinstance(last, ast.Return | ast.Raise | ast.Continue | ast.Break):
        return True
    if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call):
        return unparse(last.value.func) in _EXIT_CALLS
    if isinstance(last, ast.If):
        return terminates(last.body) and terminates(last.orelse)
    if isinstance(last, ast.With | ast.AsyncWith):
        return terminates(last.body)
    if isinstance(last, ast.Try | ast.TryStar):
        if last.finalbody and terminates(last.finalbody):
            return True
        return (terminates(last.body) or terminates(last.orelse)) and all(
            terminates(h.body) for h in last.handlers
        )
    return False


def _if_chain(stmt: ast.If) -> tuple[list[tuple[ast.expr, list[ast.stmt]]], list[ast.stmt]]:
    """``if/elif/.../else`` as a list of (test, body) and the final else block."""
    branches: list[tuple[ast.expr, list[ast.stmt]]] = []
    node: ast.If = stmt
    while True:
        branches.append((node.test, node.body))
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            node = node.orelse[0]
            continue
        return branches, node.orelse


def early_exit_atoms(stmt: ast.stmt) -> list[GuardAtom]:
    """Atoms that hold after an ``if`` chain some of whose branches leave the block.

    The tests before the first branch that falls through are negated (``if c: return`` gives
    ``not c``); when that is the only branch left that falls through, its own test holds too.
    When several remain and some later branch leaves, which of them ran is one ``or`` atom.
    """
    if not isinstance(stmt, ast.If):
        return []
    branches, orelse = _if_chain(stmt)
    entries: list[tuple[ast.expr | None, bool]] = [(test, not terminates(body)) for test, body in branches]
    entries.append((None, not terminates(orelse)))
    falls = [f for _, f in entries]
    if not any(falls) or all(falls):
        return []
    j = falls.index(True)
    atoms = [_negative(test, "early-exit") for test, _ in entries[:j] if test is not None]
    rest = entries[j:]
    if all(f for _, f in rest):
        return atoms
    first = rest[0][0]
    if sum(1 for _, f in rest if f) == 1:
        if first is not None:
            atoms.extend(_positive(first, "early-exit"))
        return atoms
    # Several branches fall through and some between them leave: one of the survivors ran.
    # (Branches are exclusive, so only the leaving ones before a survivor need negating.)
    terms: list[ast.expr] = []
    for k, (test, f) in enumerate(rest):
        if not f:
            continue
        conj: list[ast.expr] = [
            ast.UnaryOp(op=ast.Not(), operand=t)
            for t, falls_too in rest[:k]
            if t is not None and not falls_too
        ]
        if test is not None:
            conj.append(test)
        terms.append(conj[0] if len(conj) == 1 else ast.BoolOp(op=ast.And(), values=conj))
    either = ast.BoolOp(op=ast.Or(), values=terms)
    atoms.append(GuardAtom(unparse(either), "early-exit", either, False, stmt.lineno))
    return atoms


def _branch_atoms(frame: Frame) -> list[GuardAtom]:
    stmt, branch = frame.stmt, frame.branch
    if isinstance(stmt, ast.If):
        if branch == "body":
            return _positive(stmt.test, "if")
        if branch == "orelse":
            # An elif is the If alone in orelse: the next frame adds its own test. Printed once
            # per statement: every site below a long elif chain reads the same negations.
            memo: GuardAtom | None = getattr(stmt, _ELSE_ATOM, None)
            if memo is None:
                memo = _negative(stmt.test, "else")
                setattr(stmt, _ELSE_ATOM, memo)
            return [memo]
    if isinstance(stmt, ast.Try | ast.TryStar) and branch.startswith("handler:"):
        handler = stmt.handlers[int(branch.split(":")[1])]
        text = "except " + unparse(handler.type) if handler.type is not None else "except"
        return [GuardAtom(text, "except", None, False, handler.lineno)]
    if isinstance(stmt, ast.Match) and branch.startswith("case:"):
        return _case_atoms(stmt, int(branch.split(":")[1]))
    return []


def _case_tests(stmt: ast.Match) -> list[ast.expr | None]:
    """Each case's pattern (and guard) as one test, built once per ``match`` statement."""
    memo: list[ast.expr | None] | None = getattr(stmt, _CASE_TESTS, None)
    if memo is not None:
        return memo
    memo = []
    for case in stmt.cases:
        test = pattern_test(stmt.subject, case.pattern)
        if case.guard is not None:
            test = case.guard if test is None else ast.BoolOp(op=ast.And(), values=[test, case.guard])
        if test is not None:
            # Built tests have no positions of their own: they sit where the pattern does.
            for node in ast.walk(test):
                if "lineno" in node._attributes and not hasattr(node, "lineno"):
                    ast.copy_location(node, case.pattern)
        memo.append(test)
    setattr(stmt, _CASE_TESTS, memo)
    return memo


def _case_negations(stmt: ast.Match) -> list[GuardAtom | None]:
    """``not (case test)`` of each case, printed once per ``match`` statement."""
    memo: list[GuardAtom | None] | None = getattr(stmt, _CASE_NEGATIONS, None)
    if memo is None:
        memo = [None if t is None else _negative(t, "match") for t in _case_tests(stmt)]
        setattr(stmt, _CASE_NEGATIONS, memo)
    return memo


def _case_atoms(stmt: ast.Match, k: int) -> list[GuardAtom]:
    # Only the nearest earlier cases are negated (see MAX_SIBLING_ATOMS); the guard stays linear
    # in the size of the statement however many cases it has.
    negations = _case_negations(stmt)
    atoms = [a for a in negations[max(0, k - MAX_SIBLING_ATOMS) : k] if a is not None]
    test = _case_tests(stmt)[k]
    if test is not None:
        atoms.extend(_positive(test, "match"))
    return atoms


def pattern_test(subject: ast.expr, pattern: ast.pattern) -> ast.expr | None:
    """A ``match`` pattern as the equivalent test on the subject; ``None`` for a wildcard or capture."""
    if isinstance(pattern, ast.MatchValue):
        return ast.Compare(left=subject, ops=[ast.Eq()], comparators=[pattern.value])
    if isinstance(pattern, ast.MatchSingleton):
        return ast.Compare(left=subject, ops=[ast.Is()], comparators=[ast.Constant(pattern.value)])
    if isinstance(pattern, ast.MatchOr):
        values = [p.value for p in pattern.patterns if isinstance(p, ast.MatchValue)]
        if len(values) == len(pattern.patterns):
            return ast.Compare(
                left=subject, ops=[ast.In()], comparators=[ast.Tuple(elts=values, ctx=ast.Load())]
            )
        tests = [pattern_test(subject, p) for p in pattern.patterns]
        if any(t is None for t in tests):
            return None
        return ast.BoolOp(op=ast.Or(), values=[t for t in tests if t is not None])
    if isinstance(pattern, ast.MatchClass):
        return ast.Call(func=ast.Name("isinstance", ast.Load()), args=[subject, pattern.cls], keywords=[])
    if isinstance(pattern, ast.MatchAs) and pattern.pattern is not None:
        return pattern_test(subject, pattern.pattern)
    return None


# Atoms that come from siblings of the path (earlier early exits, the ``else`` of earlier ``elif``
# tests, earlier ``match`` cases) are kept for the nearest ones only. Without a bound a function of
# n guarded raises has guards of n²/2 atoms in all (10,000 raises: 50 million). No site of the
# pinned target has more than 27 such atoms; the atoms of the path itself are always kept.
MAX_SIBLING_ATOMS = 32
# A scope with more sites than this shares one budget of sibling atoms among them, so that a
# generated function with thousands of guarded raises still gives guards of a few atoms each.
_SCOPE_SIBLING_BUDGET = 16_384
_EARLY_EXITS = "_sge_early_exits"
_CASE_TESTS = "_sge_case_tests"
_CASE_NEGATIONS = "_sge_case_negations"
_SITE_COUNT = "_sge_site_count"
_ELSE_ATOM = "_sge_else_atom"
_ABOVE_ELSE_RUN = "_sge_above_else_run"


def _early_exits(block: list[ast.stmt]) -> tuple[list[int], list[list[tuple[GuardAtom, str]]]]:
    """Indexes of the statements of ``block`` that give early-exit atoms, and their atoms.

    Computed once per block (kept on its first statement), so that the sites of a long block
    share the work instead of each re-reading every statement before it.
    """
    memo: tuple[list[int], list[list[tuple[GuardAtom, str]]]] | None = getattr(block[0], _EARLY_EXITS, None)
    if memo is None:
        indexes: list[int] = []
        found: list[list[tuple[GuardAtom, str]]] = []
        for i, stmt in enumerate(block):
            atoms = early_exit_atoms(stmt)
            if atoms:
                raising = _raising_tests(stmt)
                indexes.append(i)
                found.append(
                    [(a, "raised" if a.negated and id(a.test) in raising else "exit") for a in atoms]
                )
        memo = (indexes, found)
        setattr(block[0], _EARLY_EXITS, memo)
    return memo


def _is_sibling(atom: GuardAtom) -> bool:
    return atom.kind == "early-exit" or (atom.negated and atom.kind in ("else", "match"))


def sibling_limit(site: RawSite) -> int:
    """How many sibling atoms a site's guard keeps (:data:`MAX_SIBLING_ATOMS`, less in a huge scope)."""
    sites = getattr(site.scope, _SITE_COUNT, 0)
    if sites * MAX_SIBLING_ATOMS <= _SCOPE_SIBLING_BUDGET:
        return MAX_SIBLING_ATOMS
    return max(2, _SCOPE_SIBLING_BUDGET // sites)


def count_sites(sites: Iterable[RawSite]) -> None:
    """Note how many sites each scope holds (read by :func:`sibling_limit`)."""
    for site in sites:
        setattr(site.scope, _SITE_COUNT, getattr(site.scope, _SITE_COUNT, 0) + 1)


def guard_atoms(site: RawSite) -> list[GuardAtom]:
    """Every atom on the path to ``site`` inside its innermost scope, outermost first, each with
    its :data:`~extractor.analysis.facts.AtomRole`.

    Of the sibling atoms (see :data:`MAX_SIBLING_ATOMS`) only the nearest ones are kept: the
    guard is then a weaker but still necessary condition of reaching the site. The frames are
    read from the site outwards, so the siblings past the limit are never even printed.
    """
    limit = sibling_limit(site)
    frames = site.frames
    end = len(frames) - 1
    if frames and frames[end].stmt is not site.node:
        end = next((i for i, f in enumerate(frames) if f.stmt is site.node), end)
    # (atom, where it came from, frame index): "exit"/"raised" for early exits (the leaving
    # branch returned / raised), "branch" for the branch taken, "assert" for the site's test.
    kept: list[tuple[GuardAtom, str, int]] = []
    siblings = 0

    def keep(atoms: Iterable[tuple[GuardAtom, str]], fi: int) -> None:
        nonlocal siblings
        for atom, source in atoms:
            if _is_sibling(atom):
                if siblings >= limit:
                    continue
                siblings += 1
            kept.append((atom, source, fi))

    pos = end
    while pos >= 0:
        frame = frames[pos]
        if siblings >= limit and _is_else_frame(frame):
            # Past the limit an ``else`` frame gives nothing (its atom is a sibling) and neither do
            # its early exits: jump over the whole run of them, as the sites before did.
            pos = _skip_else_run(frames, pos)
            continue
        if frame.stmt is site.node:
            if isinstance(site.node, ast.Assert):
                kept.append((_negative(site.node.test, "assert"), "assert", pos))
        else:
            keep(((a, "branch") for a in reversed(_branch_atoms(frame))), pos)
        if frame.index and siblings < limit:
            indexes, found = _early_exits(frame.block)
            stop = bisect.bisect_left(indexes, frame.index)
            for exits in reversed(found[max(0, stop - limit) : stop]):
                keep(reversed(exits), pos)
                if siblings >= limit:
                    break
        pos -= 1
    kept.reverse()
    return _with_roles(site, kept)


def _is_else_frame(frame: Frame) -> bool:
    return frame.branch == "orelse" and isinstance(frame.stmt, ast.If)


def _skip_else_run(frames: list[Frame], pos: int) -> int:
    """The position of the nearest frame above ``pos`` that is not an ``else`` frame (or -1).

    Frames above a statement are the same for every site below it, so the answer is kept on each
    ``if`` passed: the sites of a long ``elif`` chain each take a step or two, not the whole chain.
    """
    passed: list[ast.stmt] = []
    while pos >= 0 and _is_else_frame(frames[pos]):
        known: int | None = getattr(frames[pos].stmt, _ABOVE_ELSE_RUN, None)
        if known is not None:
            pos = known
            break
        passed.append(frames[pos].stmt)
        pos -= 1
    for stmt in passed:
        setattr(stmt, _ABOVE_ELSE_RUN, pos)
    return pos


def _raises(block: list[ast.stmt]) -> bool:
    """Whether the block ends in an error: a ``raise``, or the error response an HTTP handler
    returns (``return self.create_error_response(...)``), which is a check of its own."""
    if not block:
        return False
    last = block[-1]
    if isinstance(last, ast.Raise) or error_response_call(last) is not None:
        return True
    return isinstance(last, ast.If) and _raises(last.body) and _raises(last.orelse)


def _raising_tests(stmt: ast.stmt) -> set[int]:
    """The tests of an ``if`` chain whose branch raises."""
    if not isinstance(stmt, ast.If):
        return set()
    branches, _orelse = _if_chain(stmt)
    return {id(test) for test, body in branches if _raises(body)}


def _always_false(test: ast.expr) -> bool:
    """``assert False`` / ``assert 0`` / ``assert not True``: a raise spelled as an assert."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return isinstance(test.operand, ast.Constant) and bool(test.operand.value)
    return isinstance(test, ast.Constant) and not test.value


def after_loop(raw: RawSite) -> ast.For | ast.AsyncFor | ast.While | None:
    """The loop whose failing on every pass the site follows, None when none: the innermost loop
    whose ``else`` holds the site, or a loop before the site in its function that returns on
    success and never breaks (``for _ in range(n): if ok(): return True`` and then ``raise``): the
    code after it runs only when no pass returned."""
    for frame in reversed(raw.frames):
        if isinstance(frame.stmt, ast.ClassDef):
            return None  # a class body's statements run once, at its definition
        if frame is not raw.frames[-1] and isinstance(frame.stmt, ast.For | ast.AsyncFor | ast.While):
            return frame.stmt if frame.branch == "orelse" else None
        for stmt in reversed(frame.block[: frame.index]):
            if isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
                return stmt if _returns_without_break(stmt) else None
    return None


def _returns_without_break(loop: ast.For | ast.AsyncFor | ast.While) -> bool:
    """Whether a loop's own body (nested loops' ``break`` aside) returns somewhere and never breaks."""
    returns = False
    todo: list[ast.stmt] = list(loop.body)
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, ast.Break):
            return False
        returns = returns or isinstance(stmt, ast.Return)
        if isinstance(stmt, NEW_SCOPE):
            continue
        if isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
            # A nested loop's ``break`` ends that loop only; its ``return`` still leaves this one.
            todo.extend(s for s in own_statements(stmt.body) if isinstance(s, ast.Return))
            continue
        todo.extend(s for block in child_blocks(stmt) for s in block)
    return returns


def _with_roles(site: RawSite, tagged: list[tuple[GuardAtom, str, int]]) -> list[GuardAtom]:
    frames = site.frames
    # The innermost if/match holding the site, and the frames of its elif chain.
    inner = next(
        (k for k in range(len(frames) - 2, -1, -1) if isinstance(frames[k].stmt, ast.If | ast.Match)),
        -1,
    )
    chain_start = inner
    while (
        chain_start > 0
        and isinstance(frames[chain_start - 1].stmt, ast.If)
        and frames[chain_start - 1].branch == "orelse"
        and frames[chain_start - 1].stmt.orelse == [frames[chain_start].stmt]  # type: ignore[attr-defined]
    ):
        chain_start -= 1
    # A site inside an ``except`` handler is decided by the error its ``try`` caught, together
    # with the early exits before it (``if is_cuda(): return "cuda"`` ... then a lookup that failed);
    # an ``if`` around the ``try`` only selects the path.
    handler = max((fi for atom, _, fi in tagged if atom.kind == "except" and fi > inner), default=-1)
    # An assert decides by its own test: the ``if`` around it only selects the path
    # (``if impl == "x": assert is_npu()``), unless the assert always fails (``assert False``).
    asserted = isinstance(site.node, ast.Assert) and not _always_false(site.node.test)
    # A raise after a loop that returns on success is decided by the loop failing on every pass;
    # an early exit before the loop only selects the path into it.
    loop = after_loop(site)
    out: list[GuardAtom] = []
    for atom, source, fi in tagged:
        role: AtomRole = "gate"
        if source == "raised":
            role = "survivor"
        elif source == "assert":
            role = "deciding"
        elif (
            source == "branch"
            and inner >= 0
            and chain_start <= fi <= inner
            and atom.kind != "except"
            and not asserted
            and handler < 0
        ):
            earlier = frames[fi].stmt
            # An elif after a branch that raised: ``not a`` only says that check passed.
            raised = atom.negated and isinstance(earlier, ast.If) and _raises(earlier.body) and fi < inner
            role = "survivor" if raised else "deciding"
        elif (
            source == "exit" and fi > inner and not asserted and (loop is None or atom.line > loop.lineno)
        ) or (atom.kind == "except" and fi == handler):
            # An early exit before a bare raise decides it (``if is_cuda(): return``, then
            # ``raise``); before an assert it only selects the path the assert's own test decides.
            role = "deciding"
        out.append(dataclasses.replace(atom, role=role))
    return out


def guard_of(site: RawSite) -> Guard:
    atoms = guard_atoms(site)
    bindings = local_bindings(site, atoms)
    # Names a case pattern binds are set by the match itself, not by an assignment: without
    # these, the validation code would read names nothing defines.
    captured = case_bindings(site, atoms)
    if captured:
        names = {b.name for b in captured}
        bindings = [b for b in bindings if b.name not in names] + captured
    handlers = tuple(a.text[len("except ") :] for a in atoms if a.kind == "except" and a.text != "except")
    return Guard(atoms=tuple(atoms), bindings=tuple(bindings), handlers=handlers)


def innermost_guard_statement(site: RawSite) -> ast.stmt | None:
    """The innermost ``if``/``try``/``match`` on the path (the statement a reader sees as the guard)."""
    for frame in reversed(site.frames[:-1]):
        if isinstance(frame.stmt, ast.If | ast.Match | ast.Try | ast.TryStar):
            return frame.stmt
        if isinstance(frame.stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return None
    return None


__all__ = [
    "MAX_SIBLING_ATOMS",
    "after_loop",
    "block_of",
    "count_sites",
    "early_exit_atoms",
    "guard_atoms",
    "guard_of",
    "innermost_guard_statement",
    "local_bindings",
    "negate",
    "pattern_test",
    "sibling_limit",
    "terminates",
]
