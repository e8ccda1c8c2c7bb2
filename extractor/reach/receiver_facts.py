"""What a receiver may be, read from one file: the types a call's object is known to have.

A call ``self.runner.backend.forward()`` or ``pool.load()`` names its receiver only by a local
name or an attribute; which class's method runs is read later, across the target, from the type
*expressions* kept here:

* a dotted name (``pkg.mod.Foo``, ``self.runner``): an instance of that class, or the value of
  that attribute;
* a part ending in ``()`` (``make_pool()``, ``pkg.Foo()``, ``self.build().pool``): the value a
  call returns: an instance for a class, the return type of a function;
* alternatives joined by ``|`` (``x = A() if c else B()``).

They come from parameter, attribute and return annotations (``Optional`` and ``X | None`` unwrapped,
strings parsed), assignments (``x = Foo(...)``, ``self.x = param``), ``with ... as x`` and the values a
function returns. Heads stay as written here; the file's imports are applied once all are known.
"""

from __future__ import annotations

import ast

from extractor.analysis.walk import dotted_name, inner_nodes

__all__ = [
    "MAX_ALTERNATIVES",
    "NodeMemo",
    "called_locals",
    "class_attributes",
    "expr_types",
    "function_types",
    "own_nodes",
    "return_types",
]

MAX_ALTERNATIVES = 4
"""More ways than this to fill one name, and the name is left untyped: a guess would spread."""

Types = dict[str, set[str]]

_WRAPPERS = frozenset({"Optional", "Union", "Annotated", "Final", "ClassVar"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def annotation_types(node: ast.expr | None) -> set[str]:
    """The classes an annotation allows (``Optional[A]``, ``A | None``, ``"A"``); empty for the rest."""
    if node is None:
        return set()
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            parsed = ast.parse(node.value, mode="eval").body
        except (SyntaxError, ValueError):
            return set()
        return annotation_types(parsed)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return annotation_types(node.left) | annotation_types(node.right)
    if isinstance(node, ast.Subscript):
        head = dotted_name(node.value)
        if head is None or head.rpartition(".")[2] not in _WRAPPERS:
            return set()  # ``list[A]``, ``type[A]``: not an instance of A
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if head.endswith("Annotated"):
            items = items[:1]
        return {t for i in items for t in annotation_types(i)}
    name = dotted_name(node) if isinstance(node, ast.Name | ast.Attribute) else None
    if name is None or name == "None" or not name.rpartition(".")[2][:1].isupper():
        return set()  # builtins and typing names (``int``, ``dict``) are lower case or not ours
    return {name}


def expr_types(node: ast.expr, types: Types) -> set[str]:
    """Type expressions of the value of ``node``, given the typed local names."""
    if isinstance(node, ast.Await):
        return expr_types(node.value, types)
    if isinstance(node, ast.IfExp):
        return expr_types(node.body, types) | expr_types(node.orelse, types)
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
        return {t for v in node.values for t in expr_types(v, types)}
    if isinstance(node, ast.Call):
        return {f"{t}()" for t in _chain(node.func, types)}
    if isinstance(node, ast.Name | ast.Attribute):
        return _chain(node, types)
    return set()


def _chain(node: ast.expr, types: Types) -> set[str]:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    rest = ".".join(reversed(parts))
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id == "super":
            return set()
        heads = expr_types(node, types)
    elif isinstance(node, ast.Name):
        heads = types.get(node.id, {node.id})
    else:
        return set()
    return {f"{h}.{rest}" if rest else h for h in heads}


NodeMemo = dict[int, list[ast.AST]]
"""id of a function or class body's owner -> its own nodes: one walk serves every reader of it."""


def own_nodes(node: ast.FunctionDef | ast.AsyncFunctionDef, memo: NodeMemo | None = None) -> list[ast.AST]:
    """The nodes of a function body outside nested functions and classes (kept in ``memo``)."""
    if memo is not None:
        found = memo.get(id(node))
        if found is None:
            found = memo[id(node)] = _own_nodes(node.body)
        return found
    return _own_nodes(node.body)


def _own_nodes(body: list[ast.stmt]) -> list[ast.AST]:
    # ``ast.iter_child_nodes``'s order, without the leaves (names, constants, operators), which
    # no reader of these nodes looks for (this walk was a tenth of a run).
    out: list[ast.AST] = []
    todo: list[ast.AST] = list(reversed(body))
    scopes = _SCOPES
    while todo:
        node = todo.pop()
        out.append(node)
        todo.extend([c for c in inner_nodes(node) if not isinstance(c, scopes)])
    return out


def called_locals(
    func: ast.FunctionDef | ast.AsyncFunctionDef, memo: NodeMemo | None = None
) -> frozenset[str]:
    """The locals of ``func`` that hold a definition picked by name and are only ever called:
    ``ccu = conv_update if fast else conv_update_triton`` then ``ccu(x, w)``. Each is bound once,
    to a name, an attribute or a conditional of those, and every other mention of it is the head
    of a call in ``func`` itself, so what each call passes is what the definitions get."""
    nodes = own_nodes(func, memo)
    bound: dict[str, int] = {}
    for node in nodes:
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.For | ast.With | ast.NamedExpr):
            for target in _stored_names(node):
                bound[target] = bound.get(target, 0) + (
                    2 if not (isinstance(node, ast.Assign) and _picks_definition(node.value)) else 1
                )
    called = {
        n.func.id
        for n in nodes
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and bound.get(n.func.id) == 1
    }
    if not called:
        return frozenset()
    # Rare enough (a local picked among definitions, then called) to walk the whole body again
    # for the mentions, nested scopes included: one there may hand the local on, and a call
    # there is another function's, whose arguments this one's facts do not hold.
    nested = {
        id(inner)
        for scope in ast.walk(func)
        if scope is not func and isinstance(scope, _SCOPES)
        for inner in ast.walk(scope)
    }
    heads = {id(n.func) for n in nodes if isinstance(n, ast.Call) and id(n) not in nested}
    for n in ast.walk(func):
        if isinstance(n, ast.Name) and n.id in called and isinstance(n.ctx, ast.Load) and id(n) not in heads:
            called.discard(n.id)
    params = {a.arg for a in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs)}
    return frozenset(called - params)


def _stored_names(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Assign):
        targets: list[ast.expr] = list(node.targets)
    elif isinstance(node, ast.AnnAssign | ast.AugAssign | ast.For | ast.NamedExpr):
        targets = [node.target]
    else:
        assert isinstance(node, ast.With)
        targets = [item.optional_vars for item in node.items if item.optional_vars is not None]
    return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]


def _picks_definition(value: ast.expr) -> bool:
    if isinstance(value, ast.IfExp):
        return _picks_definition(value.body) and _picks_definition(value.orelse)
    return isinstance(value, ast.Name | ast.Attribute)


def function_types(func: ast.FunctionDef | ast.AsyncFunctionDef, memo: NodeMemo | None = None) -> Types:
    """Typed local names of a function: annotated parameters, then what its assignments bind."""
    types: Types = {}
    args = func.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    for arg in every:
        if arg is not None and arg.arg not in ("self", "cls"):
            # An untyped parameter is still local: it must not be read as a global of that name.
            types[arg.arg] = annotation_types(arg.annotation)
    annotated = {k for k, v in types.items() if v}
    bound: dict[str, list[ast.expr]] = {}
    for node in own_nodes(func, memo):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found = annotation_types(node.annotation)
            if found:
                types[node.target.id] = found
                annotated.add(node.target.id)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, []).append(node.value)
                elif isinstance(target, ast.Tuple | ast.List):
                    types.update((e.id, set()) for e in target.elts if isinstance(e, ast.Name))
        elif isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                if isinstance(item.optional_vars, ast.Name):
                    bound.setdefault(item.optional_vars.id, []).append(item.context_expr)
        elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
            types.update((n.id, set()) for n in ast.walk(node.target) if isinstance(n, ast.Name))
    for name in bound:
        if name not in annotated:
            types[name] = set()
    # Twice, so that ``b = a.make()`` after ``a = Foo()`` sees a's type whatever the order.
    for _ in range(2):
        for name, values in bound.items():
            if name in annotated:
                continue
            types[name] = set()  # ``x = x.next()`` reads the name being bound: unknown
            found = {t for v in values for t in expr_types(v, types)}
            types[name] = found if len(found) <= MAX_ALTERNATIVES else set()
    return types


def return_types(
    func: ast.FunctionDef | ast.AsyncFunctionDef, types: Types, memo: NodeMemo | None = None
) -> set[str]:
    """What a function returns: its annotation when it names a class, else the values it returns."""
    found = annotation_types(func.returns)
    if found:
        return found
    out: set[str] = set()
    for node in own_nodes(func, memo):
        if isinstance(node, ast.Return) and node.value is not None:
            out |= expr_types(node.value, types)
    return out if len(out) <= MAX_ALTERNATIVES else set()


def _is_property(node: ast.expr) -> bool:
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name in ("property", "cached_property")


def class_attributes(
    cls: ast.ClassDef, method_types: dict[str, Types], memo: NodeMemo | None = None
) -> dict[str, set[str]]:
    """``self.x`` types of a class: class-body annotations, properties' return types, then
    assignments in its methods."""
    attrs: dict[str, set[str]] = {}
    for stmt in cls.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            found = annotation_types(stmt.annotation)
            if found:
                attrs[stmt.target.id] = found
    for stmt in cls.body:
        if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        types = method_types.get(stmt.name, {})
        if any(_is_property(d) for d in stmt.decorator_list):
            # ``@property def runner(self) -> Runner``: ``self.runner`` is what it returns.
            found = return_types(stmt, types, memo)
            if found:
                attrs.setdefault(stmt.name, set()).update(found)
            continue
        for node in own_nodes(stmt, memo):
            target: ast.expr
            if isinstance(node, ast.AnnAssign):
                target, value, found = node.target, node.value, annotation_types(node.annotation)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value, found = node.targets[0], node.value, set()
            else:
                continue
            if not (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
            ):
                continue
            if not found and value is not None:
                found = expr_types(value, types)
            if found:
                attrs.setdefault(target.attr, set()).update(found)
    return {k: v for k, v in attrs.items() if len(v) <= MAX_ALTERNATIVES}
