"""The resolver: what the exception a ``raise`` raises is, read the way a reader of the file would.

``raise X(...)`` and ``raise pkg.X(...)`` as written; ``raise err`` where ``err = X(...)`` earlier in
the scope as ``X``; ``raise exc_cls(msg)`` where ``exc_cls = X`` as ``X``; ``raise _bad_request(msg)``
where ``_bad_request`` is a function (or ``self._error`` a method) of the same file that returns
``X(...)`` as ``X``, with the message that call builds from the arguments passed. A class of the same
file whose ``__init__`` or ``__str__`` shapes the message is read by
:mod:`extractor.analysis.exception_classes`.

A name a message is held in is followed through the statements that run before the site
(:class:`~extractor.analysis.flow.ScopeFlow`): one sure value is read as that value, a few values
that branches decide become a :class:`~extractor.analysis.messages.parts.Choice` (template ``{name}``,
pattern matching each value).
"""

from __future__ import annotations

import ast
import re
from collections import OrderedDict
from dataclasses import dataclass, field, replace

from extractor.analysis import exception_classes
from extractor.analysis.facts import GuardAtom, Raised
from extractor.analysis.flow import FULL_WALKS, UNKNOWN, ScopeFlow, State, TextHints, Value, direct_binds
from extractor.analysis.http_status import HTTP_CLASSES, code_of, http_message, status_of
from extractor.analysis.imports import Imported, TargetFiles, imports_of, module_paths
from extractor.analysis.messages.exception_str import message_from_args
from extractor.analysis.messages.expressions import MessageContext
from extractor.analysis.messages.parts import Choice
from extractor.analysis.messages.patterns import make_message
from extractor.analysis.parse import ParsedFile, parse_source
from extractor.analysis.raised_names import called_class, name_raised
from extractor.analysis.sites import Frame, RawSite, ScopeNode
from extractor.analysis.walk import FunctionNode, every_statement, own_returns, own_statements

_MESSAGE_KWARGS = ("message", "msg", "detail", "reason", "description")
_EXCEPTION_NAME = re.compile(r"(Error|Exception|Exit|Interrupt|Warning|Failure|Timeout)$")
MAX_DEPTH = 4
_MAX_HOPS = 3  # re-exports followed from module to module


@dataclass
class ModuleIndex:
    """Module-level facts used while resolving sites: functions, classes and constants."""

    functions: dict[str, FunctionNode] = field(default_factory=dict)
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    constants: dict[str, ast.expr] = field(default_factory=dict)

    @classmethod
    def of(cls, module: ast.Module, hints: TextHints = FULL_WALKS) -> ModuleIndex:
        index = cls()
        for stmt in module.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                index.functions[stmt.name] = stmt
            elif isinstance(stmt, ast.ClassDef):
                index.classes[stmt.name] = stmt
            elif isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        index.constants[target.id] = stmt.value
        # A module name bound more than once (in any block of the module, or by a function that
        # declares it ``global``) holds no one sure value.
        counts: dict[str, int] = {}
        for stmt in own_statements(module.body):
            for name in direct_binds(stmt, hints):
                counts[name] = counts.get(name, 0) + 1
        # ``global`` is a statement: a walk of the statements finds every one (the whole tree's
        # expressions need not be visited).
        for node in every_statement(module.body) if hints.global_ else ():
            if isinstance(node, ast.Global):
                for name in node.names:
                    counts[name] = counts.get(name, 0) + 2
        for name, count in counts.items():
            if count > 1:
                index.constants.pop(name, None)
        return index


def _is_static(func: FunctionNode) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in func.decorator_list)


class Resolver:
    """Resolves what the raise statements of one parsed file raise, and what their names hold."""

    def __init__(self, parsed: ParsedFile, modules: OtherModules | None = None) -> None:
        self.parsed = parsed
        self.modules = modules
        self.imports = imports_of(parsed.tree) if modules is not None else {}
        self._own_imports: dict[str, Imported] | None = None
        self.hints = TextHints.of(parsed.lines)
        self.index = ModuleIndex.of(parsed.tree, self.hints)
        self._flows: dict[int, ScopeFlow] = {}
        self._enclosing: dict[int, frozenset[str]] = {}
        self._index_scopes(parsed.tree.body, frozenset())
        self._contexts: dict[tuple[int, int], MessageContext] = {}
        self.class_facts: dict[int, tuple[tuple[str, ...], ...]] = {}
        """Per class node: what :func:`extractor.analysis.config_attrs.config_attributes` found."""
        self.module_ctx = MessageContext(parsed, self._module_lookup)

    # -- scopes and names ------------------------------------------------------------------

    def _index_scopes(self, body: list[ast.stmt], outer: frozenset[str]) -> None:
        # Names local to enclosing functions: a closure reading one must not see a module constant.
        for stmt in own_statements(body):
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                self._enclosing[id(stmt)] = outer
                inner = outer | {n for s in own_statements(stmt.body) for n in direct_binds(s, self.hints)}
                a = stmt.args
                inner |= {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
                self._index_scopes(stmt.body, inner)
            elif isinstance(stmt, ast.ClassDef):
                self._index_scopes(stmt.body, outer)

    def flow(self, scope: ScopeNode) -> ScopeFlow:
        found = self._flows.get(id(scope))
        if found is None:
            found = ScopeFlow(scope, self._enclosing.get(id(scope), frozenset()), self.hints)
            self._flows[id(scope)] = found
        return found

    def _module_lookup(self, name: str) -> tuple[ast.expr, MessageContext] | None:
        value = self.index.constants.get(name)
        return (value, self.module_ctx) if value is not None else None

    def context_at(self, scope: ScopeNode, frames: list[Frame] | None) -> MessageContext:
        """A context whose names hold what they hold when the last frame's statement runs."""
        if frames is None:
            return self.module_ctx
        key = (id(scope), id(frames[-1].stmt))
        found = self._contexts.get(key)
        if found is not None:
            return found
        flow = self.flow(scope)
        memo: dict[str, State | None] = {}

        def state(name: str) -> State | None:
            if name not in memo:
                memo[name] = flow.values(name, frames)
            return memo[name]

        def value_ctx(value: Value) -> MessageContext:
            return self.context_at(scope, flow.frames_to(value[1]))

        def lookup(name: str) -> tuple[ast.expr, MessageContext] | None:
            s = state(name)
            if s is None:
                if isinstance(scope, ast.Module) or name in flow.enclosing_locals:
                    return None
                return self._module_lookup(name)
            if len(s) == 1 and s[0] is not UNKNOWN:
                return s[0][0], value_ctx(s[0])
            return None

        def choices(name: str) -> list[tuple[ast.expr, MessageContext]] | None:
            s = state(name)
            if not s or len(s) < 2 or UNKNOWN in s:
                return None
            return [(v[0], value_ctx(v)) for v in s]

        ctx = MessageContext(self.parsed, lookup, choices)
        self._contexts[key] = ctx
        return ctx

    # -- what a raise raises ----------------------------------------------------------------

    def raised(self, raw: RawSite, atoms: list[GuardAtom]) -> Raised:
        """What the ``raise`` statement of ``raw`` raises (``atoms``: its guard)."""
        assert isinstance(raw.node, ast.Raise) and raw.node.exc is not None
        exc = raw.node.exc
        ctx = self.context_at(raw.scope, raw.frames)
        if isinstance(exc, ast.Call):
            made = self.from_call(exc, ctx, raw.class_node, 0)
            func = exc.func
            if (
                isinstance(func, ast.Name)
                and made.error_class == func.id
                and self.flow(raw.scope).is_local(func.id)
            ):
                # ``raise exc_type(msg)`` with a class nobody can tell: never the variable's name.
                return replace(made, error_class=called_class(self, func, raw))
            return made
        if isinstance(exc, ast.Name | ast.Attribute):
            return name_raised(self, exc, raw, atoms)
        return Raised(ctx.src(exc))

    def class_like(
        self, func: ast.expr, ctx: MessageContext, class_node: ast.ClassDef | None, strict: bool = True
    ) -> bool:
        """Whether calling ``func`` builds an exception (``strict``: its name says so)."""
        if self._helper(func, class_node) is not None:
            return True
        text = self._class_text(func, ctx)
        if text in self.index.classes:
            return True
        if self.modules is not None and (text[:1].isupper() or "." in text or text in self.imports):
            found = self.foreign(text)
            if found is not None:
                return True
        last = text.rsplit(".", 1)[-1]
        if not last[:1].isupper():
            return False
        return not strict or bool(_EXCEPTION_NAME.search(last) or last in HTTP_CLASSES)

    def _class_text(self, func: ast.expr, ctx: MessageContext) -> str:
        # ``exc_cls = ValueError`` earlier in the scope: ``exc_cls(...)`` raises a ValueError.
        if isinstance(func, ast.Name) and func.id not in self.index.classes:
            resolved = ctx.resolve(func.id)
            if resolved is not None and isinstance(resolved[0], ast.Name | ast.Attribute):
                return resolved[1].src(resolved[0])
        return ctx.src(func)

    def from_call(
        self, call: ast.Call, ctx: MessageContext, class_node: ast.ClassDef | None, depth: int
    ) -> Raised:
        helper = self._helper(call.func, class_node)
        if helper is not None and depth < MAX_DEPTH:
            built = self.from_helper(helper, call, ctx, class_node, depth)
            if built is not None:
                return built
        cls_name = self._class_text(call.func, ctx)
        custom = self.index.classes.get(cls_name)
        if custom is not None and depth < MAX_DEPTH:
            made = exception_classes.from_class(self, custom, cls_name, call, ctx, depth)
            if made is not None:
                return made
        elif helper is None and depth < MAX_DEPTH:
            # A class or a helper another module of the target defines, read from its own tree.
            found = self.foreign(cls_name)
            if found is not None:
                other, node = found
                if isinstance(node, ast.ClassDef):
                    made = exception_classes.from_class(other, node, cls_name, call, ctx, depth)
                else:
                    made = other.from_helper(node, call, ctx, None, depth)
                if made is not None:
                    return made
        return self.builtin(cls_name, call, ctx)

    # -- other modules ---------------------------------------------------------------------

    def foreign(self, text: str, hops: int = 0) -> tuple[Resolver, ast.ClassDef | FunctionNode] | None:
        """The class or function ``text`` (``Name`` or ``module.Name``) names in another module."""
        if self.modules is None or hops > _MAX_HOPS:
            return None
        head, _, attr = text.rpartition(".")
        if head:
            module = self._module_named(head)
            return module.definition(attr, hops + 1) if module is not None else None
        imported = self.imports.get(text)
        if imported is None or imported.name is None:
            return None
        module = self.modules.resolver_for(module_paths(self.parsed.path, imported.module, imported.level))
        return module.definition(imported.name, hops + 1) if module is not None else None

    def own_imports(self) -> dict[str, Imported]:
        """The names the module's imports bind, read once (also when no other module is known)."""
        if self.modules is not None:
            return self.imports  # read at construction already
        if self._own_imports is None:
            self._own_imports = imports_of(self.parsed.tree)
        return self._own_imports

    def imported_text(self, name: str, hops: int = 0) -> str | None:
        """The string constant ``name`` holds when the module imports it from another module of
        the target (``from .utils import CAPTURE_HINT``), followed through re-exports."""
        if self.modules is None or hops > _MAX_HOPS:
            return None
        imported = self.imports.get(name)
        if imported is None or imported.name is None:
            return None
        module = self.modules.resolver_for(module_paths(self.parsed.path, imported.module, imported.level))
        if module is None:
            return None
        value = module.index.constants.get(imported.name)
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return value.value
        return module.imported_text(imported.name, hops + 1) if value is None else None

    def definition(self, name: str, hops: int) -> tuple[Resolver, ast.ClassDef | FunctionNode] | None:
        """The module-level class or function ``name`` of this module, or the one it imports."""
        node: ast.ClassDef | FunctionNode | None = self.index.classes.get(name) or self.index.functions.get(
            name
        )
        if node is not None:
            return self, node
        return self.foreign(name, hops)

    def _module_named(self, dotted: str) -> Resolver | None:
        """The module an attribute chain's head names: ``errors`` of ``import a.errors as errors``,
        ``from a import errors`` or ``import a.errors`` (written ``a.errors``)."""
        assert self.modules is not None
        first, _, rest = dotted.partition(".")
        imported = self.imports.get(first)
        if imported is None:
            return None
        if imported.name is None:
            module = f"{imported.module}.{rest}" if rest else imported.module
            return self.modules.resolver_for(module_paths(self.parsed.path, module, imported.level))
        if rest:
            return None
        # ``from a import errors``: a submodule of ``a`` (a name ``a`` defines is no module).
        inner = f"{imported.module}.{imported.name}" if imported.module else imported.name
        return self.modules.resolver_for(module_paths(self.parsed.path, inner, imported.level))

    def builtin(self, cls_name: str, call: ast.Call, ctx: MessageContext) -> Raised:
        status = status_of(call, ctx)
        base = cls_name.rsplit(".", 1)[-1]
        if base in HTTP_CLASSES:
            return Raised(cls_name, http_message(call, ctx, status), status, code_of(call))
        args: list[ast.expr] = list(call.args)
        if not args:
            for kw in call.keywords:
                if kw.arg in _MESSAGE_KWARGS:
                    args = [kw.value]
                    break
        return Raised(cls_name, message_from_args(cls_name, args, ctx), status, code_of(call))

    def _helper(self, func: ast.expr, class_node: ast.ClassDef | None) -> FunctionNode | None:
        if isinstance(func, ast.Name):
            return self.index.functions.get(func.id)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            owner: ast.ClassDef | None = None
            if func.value.id in ("self", "cls"):
                owner = class_node
            elif func.value.id in self.index.classes:
                owner = self.index.classes[func.value.id]
            if owner is not None:
                # The method may come from a base class defined in the same module.
                for node in exception_classes.class_chain(self.index.classes, owner)[0]:
                    for stmt in node.body:
                        if (
                            isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef)
                            and stmt.name == func.attr
                        ):
                            return stmt
        return None

    def bind(
        self, func: FunctionNode, call: ast.Call, ctx: MessageContext, skip_first: bool
    ) -> dict[str, tuple[ast.expr, MessageContext]] | None:
        """The callee's parameters bound to the call's arguments (defaults where none is passed)."""
        a = func.args
        positional = [p.arg for p in (*a.posonlyargs, *a.args)]
        if skip_first and positional:
            positional = positional[1:]
        kwonly = [p.arg for p in a.kwonlyargs]
        if any(isinstance(x, ast.Starred) for x in call.args) or any(kw.arg is None for kw in call.keywords):
            return None
        if len(call.args) > len(positional) and a.vararg is None:
            return None
        bound: dict[str, tuple[ast.expr, MessageContext]] = {}
        for name, arg in zip(positional, call.args, strict=False):
            bound[name] = (arg, ctx)
        for kw in call.keywords:
            assert kw.arg is not None
            if kw.arg in positional or kw.arg in kwonly:
                bound[kw.arg] = (kw.value, ctx)
            elif a.kwarg is None:
                return None
        defaults = dict(zip(positional[len(positional) - len(a.defaults) :], a.defaults, strict=False))
        defaults.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None})
        for name, default in defaults.items():
            bound.setdefault(name, (default, self.module_ctx))
        # A parameter the callee reassigns no longer holds what the caller passed.
        flow = self.flow(func)
        return {k: v for k, v in bound.items() if k not in flow.local_names}

    def callee_context(
        self, func: FunctionNode, stmt: ast.stmt, bound: dict[str, tuple[ast.expr, MessageContext]]
    ) -> MessageContext:
        base = self.context_at(func, self.flow(func).frames_to(stmt))
        return MessageContext(self.parsed, base.lookup, base.choices, dict(bound))

    def from_helper(
        self,
        helper: FunctionNode,
        call: ast.Call,
        ctx: MessageContext,
        class_node: ast.ClassDef | None,
        depth: int,
    ) -> Raised | None:
        skip = isinstance(call.func, ast.Attribute) and not _is_static(helper)
        bound = self.bind(helper, call, ctx, skip)
        returns = own_returns(helper)
        if bound is None or not returns:
            return None
        results: list[Raised] = []
        for ret in returns:
            assert ret.value is not None
            rctx = self.callee_context(helper, ret, bound)
            value: ast.expr = ret.value
            if isinstance(value, ast.Name):
                resolved = rctx.resolve(value.id)
                if resolved is None:
                    return None
                value, rctx = resolved
            # Whatever a raised helper returns is an exception: any class-shaped name will do.
            if not isinstance(value, ast.Call) or not self.class_like(
                value.func, rctx, class_node, strict=False
            ):
                return None
            results.append(self.from_call(value, rctx, class_node, depth + 1))
        if len({r.error_class for r in results}) != 1:
            return None
        first = results[0]
        messages = [r.message for r in results]
        message = first.message
        if len({m.template if m else None for m in messages}) > 1:
            options = tuple(m.parts for m in messages if m is not None)
            message = make_message([Choice(source=ctx.src(call), options=options)])
        statuses = {r.status for r in results}
        status = first.status if len(statuses) == 1 else None
        return Raised(first.error_class, message, status, first.code or code_of(call))


_KEPT_MODULES = 128


class OtherModules:
    """Resolvers of the target's other files, read through ``files`` and kept by path and blob."""

    def __init__(self, files: TargetFiles) -> None:
        self.files = files
        self._kept: OrderedDict[tuple[str, str], Resolver | None] = OrderedDict()

    def resolver_for(self, paths: list[str]) -> Resolver | None:
        """The resolver of the first of ``paths`` that exists (``None``: none does, or it does not parse)."""
        for path in paths:
            blob = self.files.blob_of(path)
            if blob is None:
                continue
            key = (path, blob)
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
            parsed = parse_source(path, self.files.read_blob(blob))
            found = Resolver(parsed, self) if isinstance(parsed, ParsedFile) else None
            self._kept[key] = found
            if len(self._kept) > _KEPT_MODULES:
                self._kept.popitem(last=False)
            return found
        return None
