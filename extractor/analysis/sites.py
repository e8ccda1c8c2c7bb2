"""Find every ``raise`` and ``assert`` site of a module, with its scope and the block path to it.

One walk over the statement tree records, for each site, the chain of blocks from the innermost
scope's body down to the site (:class:`Frame`), which is all the guard analysis needs: the ``if``
branches and ``except`` handlers it sits in, and the statements that run before it in each block.

Which sites make a record follows the census our labels use: every ``raise`` with an exception,
except the re-raise of the name an enclosing ``except ... as name`` bound; every ``assert``, with or
without a message (a bare ``assert`` fails with an empty message: what the user sees is the asserted
test in the traceback). Beyond the census, an error the server *returns* instead of raising is a site too:
``return self.create_error_response(msg, ...)`` (and the streaming form, returned or yielded), since
that is the error an API client sees.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from extractor.analysis.walk import branches

ScopeNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Module


@dataclass(frozen=True)
class Frame:
    """One level of block nesting on the way to a site.

    ``block[index]`` is ``stmt``, the statement that contains the site (or is the site, in the last
    frame); ``branch`` names which of ``stmt``'s blocks the path enters next: ``body``, ``orelse``,
    ``finalbody``, ``handler:<k>`` or ``case:<k>`` (empty in the last frame).
    """

    block: list[ast.stmt]
    index: int
    stmt: ast.stmt
    branch: str


@dataclass
class RawSite:
    """A site as the walk finds it, before messages and guards are worked out."""

    node: ast.Raise | ast.Assert | ast.Return | ast.Expr
    frames: list[Frame]
    qualname: str
    scope: ScopeNode
    class_name: str | None
    class_node: ast.ClassDef | None
    handler_names: frozenset[str] = field(default_factory=frozenset)


_EMPTY: frozenset[str] = frozenset()

ERROR_RESPONSE_FUNCS = re.compile(r"(?:^|[._])create(?:_streaming)?_error_response$")
"""Builders of the error responses sglang's HTTP server returns (``self.create_error_response``)."""


def error_response_call(stmt: ast.stmt) -> ast.Call | None:
    """The ``create_error_response(...)`` call a ``return`` or ``yield`` statement hands back, if any."""
    value: ast.expr | None = None
    if isinstance(stmt, ast.Return):
        value = stmt.value
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Yield):
        value = stmt.value.value
    if isinstance(value, ast.Await):
        value = value.value
    if isinstance(value, ast.Call) and ERROR_RESPONSE_FUNCS.search(ast.unparse(value.func)):
        return value
    return None


class SiteFinder:
    """Walks a module's statements and collects :class:`RawSite` objects in source order."""

    def __init__(self, module: ast.Module) -> None:
        self.module = module
        self.sites: list[RawSite] = []

    def run(self) -> list[RawSite]:
        self._block(self.module.body, [], "<module>", "", self.module, None, _EMPTY)
        self.sites.sort(key=lambda s: (s.node.lineno, s.node.col_offset))
        return self.sites

    def _block(
        self,
        stmts: list[ast.stmt],
        frames: list[Frame],
        qualname: str,
        prefix: str,
        scope: ScopeNode,
        class_node: ast.ClassDef | None,
        handlers: frozenset[str],
    ) -> None:
        """Walk ``stmts``; ``qualname`` names this scope, ``prefix`` is what nested names start with."""
        class_name = class_node.name if class_node is not None else None
        for index, stmt in enumerate(stmts):
            here = [*frames, Frame(stmts, index, stmt, "")]
            if isinstance(stmt, ast.Raise):
                if stmt.exc is None:
                    continue
                if isinstance(stmt.exc, ast.Name) and stmt.exc.id in handlers:
                    continue
                self.sites.append(RawSite(stmt, here, qualname, scope, class_name, class_node, handlers))
            elif isinstance(stmt, ast.Assert):
                self.sites.append(RawSite(stmt, here, qualname, scope, class_name, class_node, handlers))
            elif isinstance(stmt, ast.Return | ast.Expr):
                if error_response_call(stmt) is not None:
                    self.sites.append(RawSite(stmt, here, qualname, scope, class_name, class_node, handlers))
            elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}.{stmt.name}" if prefix else stmt.name
                # A new scope: conditions never cross a function boundary. Handler names do carry
                # over: a closure inside ``except E as e`` that raises ``e`` still re-raises it.
                self._block(stmt.body, [], name, f"{name}.<locals>", stmt, class_node, handlers)
            elif isinstance(stmt, ast.ClassDef):
                name = f"{prefix}.{stmt.name}" if prefix else stmt.name
                self._block(
                    stmt.body, [*frames, Frame(stmts, index, stmt, "body")], name, name, scope, stmt, handlers
                )
            else:
                for branch, child, extra in _child_blocks(stmt):
                    self._block(
                        child,
                        [*frames, Frame(stmts, index, stmt, branch)],
                        qualname,
                        prefix,
                        scope,
                        class_node,
                        handlers | extra,
                    )


def _child_blocks(stmt: ast.stmt) -> Iterator[tuple[str, list[ast.stmt], frozenset[str]]]:
    # A handler's block also carries the name its ``except ... as name`` binds.
    for branch, block in branches(stmt):
        bound = _EMPTY
        if branch.startswith("handler:") and isinstance(stmt, ast.Try | ast.TryStar):
            name = stmt.handlers[int(branch.split(":")[1])].name
            bound = frozenset([name]) if name else _EMPTY
        yield branch, block, bound


def find_sites(module: ast.Module) -> list[RawSite]:
    """Every site of ``module`` that makes a record, in source order."""
    return SiteFinder(module).run()


def block_of(frame: Frame) -> list[ast.stmt]:
    """The block of ``frame.stmt`` that ``frame.branch`` names."""
    stmt, branch = frame.stmt, frame.branch
    if branch.startswith("handler:") and isinstance(stmt, ast.Try | ast.TryStar):
        return stmt.handlers[int(branch.split(":")[1])].body
    if branch.startswith("case:") and isinstance(stmt, ast.Match):
        return stmt.cases[int(branch.split(":")[1])].body
    value = getattr(stmt, branch, None)
    return value if isinstance(value, list) else []
