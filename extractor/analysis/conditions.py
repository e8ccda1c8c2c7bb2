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
import dataclasses
from collections.abc import Iterable

from extractor.analysis.facts import AtomKind, AtomRole, Guard, GuardAtom, LocalBinding
from extractor.analysis.sites import Frame, RawSite, ScopeNode, block_of
from extractor.analysis.walk import branches, own_statements, statements_in

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
            # An elif is the If alone in orelse: the next frame adds its own test.
            return [_negative(stmt.test, "else")]
    if isinstance(stmt, ast.Try | ast.TryStar) and branch.startswith("handler:"):
        handler = stmt.handlers[int(branch.split(":")[1])]
        text = "except " + unparse(handler.type) if handler.type is not None else "except"
        return [GuardAtom(text, "except", None, False, handler.lineno)]
    if isinstance(stmt, ast.Match) and branch.startswith("case:"):
        return _case_atoms(stmt, int(branch.split(":")[1]))
    return []


def _case_atoms(stmt: ast.Match, k: int) -> list[GuardAtom]:
    atoms: list[GuardAtom] = []
    for i, case in enumerate(stmt.cases[: k + 1]):
        test = pattern_test(stmt.subject, case.pattern)
        if case.guard is not None:
            test = case.guard if test is None else ast.BoolOp(op=ast.And(), values=[test, case.guard])
        if test is None:
            continue
        # Built tests have no positions of their own: they sit where the pattern does.
        for node in ast.walk(test):
            if "lineno" in node._attributes and not hasattr(node, "lineno"):
                ast.copy_location(node, case.pattern)
        if i < k:
            atoms.append(_negative(test, "match"))
        else:
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


def guard_atoms(site: RawSite) -> list[GuardAtom]:
    """Every atom on the path to ``site`` inside its innermost scope, outermost first, each with
    its :data:`~extractor.analysis.facts.AtomRole`."""
    # (atom, where it came from, frame index): "exit"/"raised" for early exits (the leaving
    # branch returned / raised), "branch" for the branch taken, "assert" for the site's test.
    tagged: list[tuple[GuardAtom, str, int]] = []
    for fi, frame in enumerate(site.frames):
        for before in frame.block[: frame.index]:
            raising = _raising_tests(before)
            for a in early_exit_atoms(before):
                tagged.append((a, "raised" if a.negated and id(a.test) in raising else "exit", fi))
        if frame.stmt is site.node:
            if isinstance(site.node, ast.Assert):
                tagged.append((_negative(site.node.test, "assert"), "assert", fi))
            break
        tagged.extend((a, "branch", fi) for a in _branch_atoms(frame))
    return _with_roles(site, tagged)


def _raises(block: list[ast.stmt]) -> bool:
    if not block:
        return False
    last = block[-1]
    if isinstance(last, ast.Raise):
        return True
    return isinstance(last, ast.If) and _raises(last.body) and _raises(last.orelse)


def _raising_tests(stmt: ast.stmt) -> set[int]:
    """The tests of an ``if`` chain whose branch raises."""
    if not isinstance(stmt, ast.If):
        return set()
    branches, _orelse = _if_chain(stmt)
    return {id(test) for test, body in branches if _raises(body)}


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
    out: list[GuardAtom] = []
    for atom, source, fi in tagged:
        role: AtomRole = "gate"
        if source == "raised":
            role = "survivor"
        elif source == "assert":
            role = "deciding"
        elif source == "branch" and inner >= 0 and chain_start <= fi <= inner and atom.kind != "except":
            earlier = frames[fi].stmt
            # An elif after a branch that raised: ``not a`` only says that check passed.
            raised = atom.negated and isinstance(earlier, ast.If) and _raises(earlier.body) and fi < inner
            role = "survivor" if raised else "deciding"
        elif source == "exit" and fi > inner:
            role = "deciding"
        out.append(dataclasses.replace(atom, role=role))
    return out


# --------------------------------------------------------------------------- local bindings


def _assigned_names(stmt: ast.stmt) -> list[str]:
    targets: list[ast.expr] = []
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif (isinstance(stmt, ast.AnnAssign) and stmt.value is not None) or isinstance(stmt, ast.AugAssign):
        targets = [stmt.target]
    names: list[str] = []
    stack = list(targets)
    while stack:
        target = stack.pop()
        # Only names are bound: ``x.attr = v`` and ``x[k] = v`` change an object, not ``x``.
        if isinstance(target, ast.Name):
            names.append(target.id)
        elif isinstance(target, ast.Tuple | ast.List):
            stack.extend(target.elts)
        elif isinstance(target, ast.Starred):
            stack.append(target.value)
    return names


def scope_statements(scope: ScopeNode) -> Iterable[ast.stmt]:
    """Every statement of a scope's own body, nested blocks included, nested scopes excluded."""
    return own_statements(scope.body)


def assignments_before(scope: ScopeNode, line: int) -> dict[str, list[ast.stmt]]:
    """Assignments to plain names in ``scope`` that start before ``line``, in source order."""
    found: dict[str, list[ast.stmt]] = {}
    for stmt in scope_statements(scope):
        if stmt.lineno >= line:
            continue
        for name in _assigned_names(stmt):
            found.setdefault(name, []).append(stmt)
    for stmts in found.values():
        stmts.sort(key=lambda s: (s.lineno, s.col_offset))
    return found


def _names_read(nodes: Iterable[ast.AST]) -> list[str]:
    seen: list[str] = []
    for root in nodes:
        for node in ast.walk(root):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in seen:
                seen.append(node.id)
    return seen


def _exclusive_statements(site: RawSite) -> set[int]:
    """Statements in the branches the path to the site does not take (they never run before it)."""
    out: set[int] = set()
    for frame in site.frames[:-1]:
        stmt, branch = frame.stmt, frame.branch
        # A try body and its finally run on every path through the statement: no alternative.
        shared = ("body", "finalbody") if isinstance(stmt, ast.Try | ast.TryStar) else ()
        for name, block in branches(stmt):
            if name == branch or name in shared:
                continue
            for inner in block:
                out.update(id(s) for s in statements_in(inner))
    return out


def local_bindings(site: RawSite, atoms: list[GuardAtom]) -> list[LocalBinding]:
    """For each local name the guard reads, the last assignment that can run before it is read.

    Assignments in branches the path does not take, and those below the test that reads the
    name, are left out; the names those assignments read are followed one more level.
    """
    assigned = assignments_before(site.scope, site.node.lineno)
    excluded = _exclusive_statements(site)
    chosen: dict[int, tuple[str, ast.stmt]] = {}
    frontier: list[tuple[str, int]] = []
    for atom in atoms:
        if atom.test is not None:
            line = atom.line or site.node.lineno
            frontier.extend((name, line) for name in _names_read([atom.test]))
    for _ in range(2):
        next_frontier: list[tuple[str, int]] = []
        for name, before in frontier:
            stmts = [s for s in assigned.get(name, []) if s.lineno < before and id(s) not in excluded]
            if not stmts:
                continue
            # ``x += 1`` only makes sense after the assignment it updates: carry the run back to it.
            run = [stmts[-1]]
            while isinstance(run[-1], ast.AugAssign) and len(run) < len(stmts):
                run.append(stmts[-1 - len(run)])
            for stmt in run:
                if id(stmt) in chosen:
                    continue
                chosen[id(stmt)] = (name, stmt)
                value = getattr(stmt, "value", None)
                if value is not None:
                    next_frontier.extend((n, stmt.lineno) for n in _names_read([value]))
        frontier = next_frontier
    on_path = {id(s) for frame in site.frames for s in frame.block[: frame.index]}
    out = []
    for name, stmt in sorted(chosen.values(), key=lambda p: (p[1].lineno, p[1].col_offset)):
        value = getattr(stmt, "value", None)
        out.append(
            LocalBinding(
                name,
                unparse(stmt),
                value if isinstance(value, ast.expr) else None,
                stmt.lineno,
                always=id(stmt) in on_path,
            )
        )
    return out


def guard_of(site: RawSite) -> Guard:
    atoms = guard_atoms(site)
    bindings = local_bindings(site, atoms)
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
    "block_of",
    "early_exit_atoms",
    "guard_atoms",
    "guard_of",
    "innermost_guard_statement",
    "local_bindings",
    "negate",
    "pattern_test",
    "terminates",
]
