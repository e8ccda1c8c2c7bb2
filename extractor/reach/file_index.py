"""One file's contribution to the whole-target index, read from its syntax tree.

:func:`file_facts` walks a module once and keeps what reach needs (see :mod:`extractor.reach.facts`):
definitions, imports (also those inside functions, which optional backends use), bases, call
sites with the guard atoms of the ``if`` blocks around them (read by :mod:`extractor.reach.
guard_atoms`) and the ``try`` they sit in, registrations under string keys and the ``EntryClass``
declaration. It knows nothing of flags: deciding which atoms are user choices needs the target's
knowledge and happens later.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Iterable, Sequence

from extractor.analysis.flow import direct_binds
from extractor.analysis.walk import (
    NEW_SCOPE,
    called_name,
    child_blocks,
    heads,
    last_name,
    none_test,
    own_statements,
)
from extractor.prose.knowledge import is_knowledge_path
from extractor.reach.agreement import agreed_attribute
from extractor.reach.arguments import (
    bindable_names,
    literal_locals,
    name_bindings,
    passed_args,
    positional_params,
    self_assignments,
)
from extractor.reach.drafts import builds_draft, draft_architectures
from extractor.reach.facts import FACTORY, LITERAL, Atom, Call, Def, FileFacts, Registration
from extractor.reach.forced import forced_by_function, forced_by_table, set_by_function
from extractor.reach.guard_atoms import TYPED, GuardReader, class_flag_name, typed_params
from extractor.reach.holders import holder_getters
from extractor.reach.receiver_facts import (
    NodeMemo,
    Types,
    called_locals,
    class_attributes,
    expr_types,
    function_types,
    return_types,
)
from extractor.reach.syntax import (
    COLLECTORS,
    LEAVES,
    SCOPES,
    TESTS,
    TYPE_TESTS,
    class_name,
    f_string_ends,
    flat,
    gated,
    handler_names,
    is_class_name,
    node_fields,
    spelled_names,
)

__all__ = ["file_facts", "module_name"]


def module_name(path: str) -> str:
    """The dotted module a repo-relative path imports as (``python/sglang/x.py`` -> ``sglang.x``)."""
    parts = path.removesuffix(".py").split("/")
    if "python" in parts:
        parts = parts[len(parts) - parts[::-1].index("python") :]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(p for p in parts if p)


_DOTTED_MODULE = re.compile(r"^[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+$")


def _string_keys(node: ast.Dict) -> list[str] | None:
    """The keys of a dict literal when every one is a string and there are several."""
    keys = [k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    return keys if len(keys) == len(node.keys) and len(set(keys)) >= 2 else None


def _isinstance_returns(body: Sequence[ast.stmt]) -> list[ast.expr] | None:
    """The classes of ``if isinstance(x, A | B): return x`` when that is the only way a function
    returns anything but ``None`` (other statements may only bind names)."""
    classes: list[ast.expr] = []
    for i, stmt in enumerate(body):
        if isinstance(stmt, ast.Assign | ast.AnnAssign):
            continue
        if isinstance(stmt, ast.Return):
            none = stmt.value is None or (isinstance(stmt.value, ast.Constant) and stmt.value.value is None)
            return classes if none and i == len(body) - 1 and classes else None
        if not (isinstance(stmt, ast.If) and not stmt.orelse and len(stmt.body) == 1):
            return None
        test = stmt.test
        if not (
            isinstance(stmt.body[0], ast.Return)
            and isinstance(test, ast.Call)
            and isinstance(test.func, ast.Name)
            and test.func.id == "isinstance"
            and len(test.args) == 2
        ):
            return None
        found = _class_alternatives(test.args[1])
        if found is None:
            return None
        classes.extend(found)
    return classes or None


def _arch_returns(body: Sequence[ast.stmt]) -> list[str] | None:
    """The architecture names of ``return config.architectures[0] in ("XForCausalLM", ...)`` (or of
    a helper named for the architecture, or a name bound to either), when that test is all the
    function returns (or one conjunct of it); other statements may only bind names. Each config
    key another conjunct needs set follows, as ``.key`` (``and getattr(config, "index_topk", None)
    is not None``): only the checkpoints of those architectures whose config sets it pass."""
    names = _arch_names_returned(body)
    if not names:
        return names
    value = body[-1].value if isinstance(body[-1], ast.Return) else None
    parts = value.values if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.And) else []
    keys = [k for k in (_config_key_set(p) for p in parts) if k]
    return [*names, *(f".{k}" for k in dict.fromkeys(keys))]


def _value_tests_either(body: Sequence[ast.stmt]) -> list[str] | None:
    """``[a, b]`` of a body that is only ``return self.is_a() or self.is_b()``."""
    if not (len(body) == 1 and isinstance(body[0], ast.Return)):
        return None
    value = body[0].value
    if not (isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or)):
        return None
    names = []
    for part in value.values:
        if not (
            isinstance(part, ast.Call)
            and not part.args
            and not part.keywords
            and isinstance(part.func, ast.Attribute)
            and isinstance(part.func.value, ast.Name)
            and part.func.value.id == "self"
            and part.func.attr.startswith("is_")
        ):
            return None
        names.append(part.func.attr[3:])
    return names


_Step = tuple[str, ast.expr]
"""One thing that holds on the way to a ``return``: ``("yes", test)``, ``("no", test)`` (the test
failed) or ``("value", returned)``; read as atoms only once every way has some (most have none)."""


class _NoTruth(Exception):
    """A true value is returned with nothing held: the function's truth says nothing."""


def _true_paths(body: Sequence[ast.stmt], held: list[_Step], out: list[list[_Step]]) -> bool:
    """Add to ``out`` what holds at each ``return`` of a true value in ``body``, entered with
    ``held``; whether ``body`` always leaves (returns or raises) by its end."""
    for stmt in body:
        if isinstance(stmt, ast.Return):
            value = stmt.value
            if not (value is None or (isinstance(value, ast.Constant) and not value.value)):
                way = held if isinstance(value, ast.Constant) else [*held, ("value", value)]
                if not way:
                    raise _NoTruth
                out.append(way)
            return True
        if isinstance(stmt, ast.Raise):
            return True
        if isinstance(stmt, ast.If):
            yes: list[_Step] = [*held, ("yes", stmt.test)]
            no: list[_Step] = [*held, ("no", stmt.test)]
            left = _true_paths(stmt.body, yes, out)
            right = _true_paths(stmt.orelse, no, out) if stmt.orelse else False
            if left and right:
                return True
            if left:
                held = no  # ``if not args.enable_x: return False``: what follows has the flag on
            elif right:
                held = yes
        else:
            # A loop, ``with``, ``try`` or ``match``: each block is entered with what holds here.
            for block in child_blocks(stmt):
                _true_paths(block, held, out)
    return False


def _step_atoms(step: _Step, guards: GuardReader) -> list[Atom]:
    kind, node = step
    if kind == "yes":
        return guards.atoms_of(node, {}, {})
    if kind == "no":
        return guards.negated_atoms(node, {}, {})
    # What a returned value tests counts, not the calls that merely compute it
    # (``return out.transpose(0, 1)``).
    return [a for a in guards.atoms_of(node, {}, {}) if a[0] != "t"]


def _config_key_set(node: ast.expr) -> str | None:
    """``k`` of a test that a config sets key ``k``: ``getattr(c, "k", None) is not None``,
    ``hasattr(c, "k")``, ``c.k is not None``, a helper ``_hf_attr(c, "k")`` read the same way."""
    tested = none_test(node)
    if tested is not None and tested[1]:
        node = tested[0]
        if isinstance(node, ast.Attribute):
            recv = node.value
            last = recv.id if isinstance(recv, ast.Name) else getattr(recv, "attr", "")
            return node.attr if "config" in last.lower() else None
    if not (isinstance(node, ast.Call) and len(node.args) >= 2):
        return None
    key = node.args[1]
    if not (isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.isidentifier()):
        return None
    # ``getattr``, ``hasattr``, or a helper that reads an attribute (``_hf_attr``).
    return key.value if "attr" in called_name(node).lower() else None


def _arch_names_returned(body: Sequence[ast.stmt]) -> list[str] | None:
    bound: dict[str, ast.expr] = {}
    for i, stmt in enumerate(body):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            bound[stmt.targets[0].id] = stmt.value
            continue
        if not (isinstance(stmt, ast.Return) and stmt.value is not None and i == len(body) - 1):
            return None
        value = stmt.value
        parts = value.values if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.And) else [value]
        for part in parts:
            if not (isinstance(part, ast.Compare) and len(part.ops) == 1):
                continue
            if not isinstance(part.ops[0], ast.In | ast.Eq):
                continue
            subject = part.left
            if isinstance(subject, ast.Name) and subject.id in bound:
                subject = bound[subject.id]
            if not _reads_architecture(subject):
                continue
            right = part.comparators[0]
            items = right.elts if isinstance(right, ast.Tuple | ast.List | ast.Set) else [right]
            names = [e.value for e in items if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if (
                names
                and len(names) == len(items)
                and all(n.isidentifier() and n[:1].isupper() for n in names)
            ):
                return names
        return None
    return None


def _reads_architecture(node: ast.expr) -> bool:
    """``config.architectures[0]``, ``(cfg.architectures or [None])[0]``, ``_hf_arch(config)``."""
    if isinstance(node, ast.Subscript):
        node = node.value
        if isinstance(node, ast.BoolOp):
            node = node.values[0]
        return isinstance(node, ast.Attribute) and node.attr == "architectures"
    if isinstance(node, ast.Call):
        return "arch" in called_name(node).lower()
    return False


def _class_alternatives(node: ast.expr) -> list[ast.expr] | None:
    if isinstance(node, ast.Tuple):
        parts = [_class_alternatives(e) for e in node.elts]
        return None if any(p is None for p in parts) else [c for p in parts if p for c in p]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = _class_alternatives(node.left), _class_alternatives(node.right)
        return None if left is None or right is None else left + right
    return [node] if isinstance(node, ast.Name | ast.Attribute) else None


def file_facts(path: str, tree: ast.Module) -> FileFacts:
    """The index facts of one parsed file; never raises on odd but valid code."""
    builder = _Builder(path, tree)
    builder.run()
    return builder.facts


# A module of the target spelled as a string, or the leading text of an f-string that builds one.
_DYNAMIC_MODULE = re.compile(r"^(?:sglang|sgl_kernel)(?:\.[A-Za-z_]\w*)+$")
_DYNAMIC_PREFIX = re.compile(r"^(?:sglang|sgl_kernel)(?:\.[A-Za-z_]\w*)+\.$")


def _unset_params(func: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...]:
    """:attr:`Def.unset` of a function."""
    args = func.args
    positional = [*args.posonlyargs, *args.args]
    pairs = [
        *zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True),
        *((a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None),
    ]
    out = []
    for arg, default in pairs:
        if isinstance(default, ast.Constant) and default.value is None:
            out.append(arg.arg)
        elif isinstance(default, ast.Constant) and default.value is False:
            out.append(f"{arg.arg}=")
    return tuple(out)


def _required_params(func: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...]:
    """:attr:`Def.required` of a function."""
    positional = [*func.args.posonlyargs, *func.args.args]
    return tuple(a.arg for a in positional[: len(positional) - len(func.args.defaults)])


def _rebound_params(
    func: ast.FunctionDef | ast.AsyncFunctionDef, params: Sequence[str]
) -> tuple[tuple[str, int], ...]:
    """:attr:`Def.rebound` of a function: of ``params``, those its own statements assign (``x =
    ...``, ``x += ...``, ``for x in ...``, ``with ... as x``), each with the first such line. An
    assignment only made where the parameter was given (``if x is not None: x = int(x)``) keeps
    it given, and does not count; nor does one of ``None``, which gives it nothing."""
    wanted = {p.rstrip("=") for p in params}
    first: dict[str, int] = {}
    blocks: list[tuple[list[ast.stmt], frozenset[str]]] = [(func.body, frozenset())] if wanted else []
    while blocks:
        body, given = blocks.pop()
        for stmt in body:
            if isinstance(stmt, NEW_SCOPE):
                continue
            if isinstance(stmt, ast.If):
                name, is_given = _given_test(stmt.test)
                inside = given | {name} if name and is_given else given
                outside = given | {name} if name and not is_given else given
                blocks.extend(((stmt.body, inside), (stmt.orelse, outside)))
                continue
            value = getattr(stmt, "value", None)
            if isinstance(value, ast.Constant) and value.value is None:
                continue
            for target in _assigned_targets(stmt):
                for node in ast.walk(target):
                    if isinstance(node, ast.Name) and node.id in wanted and node.id not in given:
                        first[node.id] = min(first.get(node.id, stmt.lineno), stmt.lineno)
            blocks.extend((block, given) for block in child_blocks(stmt))
    return tuple(sorted(first.items()))


def _given_test(test: ast.expr) -> tuple[str, bool]:
    """``(name, True)`` for ``x is not None`` or ``x``, ``(name, False)`` for ``x is None`` or
    ``not x``: the tests that tell whether a parameter was given; ``("", False)`` for others."""
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    inner = test.operand if isinstance(test, ast.UnaryOp) and negated else test
    if isinstance(inner, ast.Name):
        return inner.id, not negated
    if (
        isinstance(inner, ast.Compare)
        and isinstance(inner.left, ast.Name)
        and len(inner.ops) == 1
        and isinstance(inner.ops[0], ast.Is | ast.IsNot)
        and isinstance(inner.comparators[0], ast.Constant)
        and inner.comparators[0].value is None
    ):
        return inner.left.id, isinstance(inner.ops[0], ast.IsNot) != negated
    return "", False


def _assigned_targets(stmt: ast.stmt) -> list[ast.expr]:
    """The targets a statement assigns (tuples whole)."""
    if isinstance(stmt, ast.Assign):
        return list(stmt.targets)
    if isinstance(stmt, ast.AugAssign) or (isinstance(stmt, ast.AnnAssign) and stmt.value is not None):
        return [stmt.target]
    if isinstance(stmt, ast.For | ast.AsyncFor):
        return [stmt.target]
    if isinstance(stmt, ast.With | ast.AsyncWith):
        return [i.optional_vars for i in stmt.items if i.optional_vars is not None]
    return []


def _falsy(node: ast.expr) -> bool:
    """A literal that tests false (``False``, ``0``, ``""``) other than ``None``."""
    return isinstance(node, ast.Constant) and node.value is not None and not node.value


def _given(call: ast.Call) -> str:
    """:attr:`Call.given` of ``call``."""
    out: list[str] = []
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            out.append("*")
            break
        if not (isinstance(arg, ast.Constant) and arg.value is None):
            out.append(f"!{i}" if _falsy(arg) else str(i))
    for kw in call.keywords:
        if kw.arg is None:
            out.append("**")
        elif not (isinstance(kw.value, ast.Constant) and kw.value.value is None):
            out.append(f"!={kw.arg}" if _falsy(kw.value) else f"={kw.arg}")
    return ",".join(out)


def _is_type_checking(test: ast.expr) -> bool:
    """``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``): a block that never runs."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


# Methods of a dict that hand out its values.
_TABLE_READS = frozenset({"get", "values", "items", "__getitem__"})


class _Builder:
    def __init__(self, path: str, tree: ast.Module) -> None:
        self.tree = tree
        self.facts = FileFacts(path=path, module=module_name(path))
        self.is_package = path.endswith("__init__.py")
        self._atom_ids: dict[Atom, int] = {}
        self._self_tests: list[tuple[str, ...]] = []
        self._true_locals: dict[tuple[str, str], tuple[list[Atom] | None, tuple[int, ...]]] = {}
        """Per (function, local): the atoms every store of a true value in it sits under (None once
        nothing is sure), and the guards of its first store."""
        self._calls: list[Call] = []
        self._called: dict[str, frozenset[str]] = {}
        """Per function: its locals that hold a definition and are only called (:func:`called_locals`)."""
        self._picked: dict[tuple[str, str], list[int]] = {}
        """(function, such a local) -> the indices in ``_calls`` of the references its store keeps."""
        self._spent: set[int] = set()
        """References turned into the calls of their local: each call says what it passes."""
        self.guards = GuardReader(self.facts.imports)
        self._types: dict[str, Types] = {}
        """Typed local names of each function, by qualname."""
        self._method_types: dict[int, Types] = {}
        self._nodes: NodeMemo = {}
        """Each function's own nodes, walked once for its types, its returns and its class's attributes."""
        self._bindable: dict[str, dict[str, str]] = {}
        self._import_guards: dict[str, dict[str, list[tuple[int, ...]]]] = {}
        self._tables: dict[str, list[tuple[str, str]]] = {}
        self._type_checking = 0
        self._mentions: set[str] = set()
        """Depth of ``if TYPE_CHECKING:`` blocks around the statement walked: imports there never run."""
        """Module-level dicts of definitions by string key: name -> (key, the definition's name)."""
        """name -> the target an import binds it to -> the guards of each such import."""
        """Per function: its parameters (``n``) and the globals it declares (``g``)."""
        # Names a value may refer to a definition by: the module's own, then nested ones as met.
        self._def_names = {
            s.name for s in tree.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        }
        # The module's own named tuples: a function handed to one is a field value, run only where
        # the field is called (``ops.fused(...)``, tied by name), not where the tuple is built.
        self._records = {
            s.name
            for s in tree.body
            if isinstance(s, ast.ClassDef) and any(last_name(b) == "NamedTuple" for b in s.bases)
        }

    # ----------------------------------------------------------------- entry

    def run(self) -> None:
        self._collect_imports(s for s in flat(self.tree.body) if isinstance(s, ast.Import | ast.ImportFrom))
        self._module_aliases(self.tree.body)
        self._module_level(self.tree.body)
        self._block(self.tree.body, "<module>", "", "", [], None, {}, {})
        for getter, dest in holder_getters(self.tree, self.guards):
            self.facts.tests.append(("p", getter, str(self._atom(("a", dest, "args")))))
        # Other assignments of an attribute matter only where some method stores a test in it.
        tested = {row[2] for row in self._self_tests if row[0] in ("s", "x")}
        self.facts.tests.extend(row for row in self._self_tests if row[2] in tested)
        # Call heads are resolved once every import is known: one inside a function may come
        # after a call that uses it in another function.
        imports = self.facts.imports
        for i, call in enumerate(self._calls):
            if i in self._spent:
                continue
            # ``get_pool_cls()`` (a factory's value called) resolves as ``get_pool_cls`` does.
            made = FACTORY if call.callee.endswith(FACTORY) else ""
            head, dot, rest = call.callee.removesuffix(made).partition(".")
            target = imports.get(head)
            if target is not None:
                call = call._replace(callee=f"{target}{dot}{rest}{made}")
                extra = [i for i in self._guards_of_import(head, target) if i not in call.guards]
                if extra:
                    call = call._replace(guards=[*call.guards, *extra])
            if call.recv:
                call = call._replace(recv=self._imported(call.recv))
            self.facts.calls.setdefault(call.callee.rpartition(".")[2], []).append(call)
        self.facts.defs = [
            dataclasses.replace(
                d,
                attrs=tuple((a, self._imported(e)) for a, e in d.attrs),
                returns=self._imported(d.returns),
            )
            if d.attrs or d.returns
            else d
            for d in self.facts.defs
        ]
        if "ArgumentParser" in self.facts.calls and not is_knowledge_path(self.facts.path):
            self._own_parser()
        self.facts.mentions = sorted(self._mentions.difference(self.facts.calls))

    def _self_test(
        self,
        stmt: ast.Assign | ast.AnnAssign,
        qual: str,
        guards: list[int],
        local: dict[str, tuple[str, str]],
        aliases: dict[str, list[Atom]],
    ) -> None:
        """``self.x = <test>`` (``_is_cuda and envs.SGLANG_X.get()``) as ``("s", method, x, atom
        indexes...)``; another value stored in ``x`` as ``("S", method, x)``, a false constant as
        ``("F", method, x)``; ``x.y = True`` on another object as ``("x", method, y, ...)`` and
        another value there as ``("X", method, y)`` (see :attr:`FileFacts.tests`)."""
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
        if isinstance(stmt, ast.AnnAssign):
            target = stmt.target
        value = stmt.value
        if not isinstance(target, ast.Attribute) or value is None:
            return
        on_self = isinstance(target.value, ast.Name) and target.value.id == "self"
        if isinstance(value, ast.Constant) and not value.value:
            if on_self:
                self._self_tests.append(("F", qual, target.attr))
            return
        if isinstance(value, ast.Constant) and value.value is True:
            # ``if envs.SGLANG_X.get() and is_sm100(): self.use_x = True``: true only where the
            # tests around the store hold.
            here = tuple(str(i) for i in guards)
            self._self_tests.append(("s" if on_self else "x", qual, target.attr, *here))
            return
        if not on_self:
            self._self_tests.append(("X", qual, target.attr))
            return
        atoms = (
            self.guards.atoms_of(value, local, aliases)
            if isinstance(value, ast.BoolOp | ast.Compare | ast.Call)
            else []
        )
        # ``self.runner = Runner(self)`` builds an object: no test, though its call reads like one.
        if atoms and not any(a[0] == "t" and a[1].rpartition(".")[2][:1].isupper() for a in atoms):
            self._self_tests.append(("s", qual, target.attr, *(str(self._atom(a)) for a in atoms)))
        else:
            self._self_tests.append(("S", qual, target.attr))

    def _own_parser(self) -> None:
        """A script that parses its own command line: its ``args.dtype`` is its own ``--dtype``,
        no launch flag, so no value read from it is passed on as one."""
        for calls in self.facts.calls.values():
            for i, call in enumerate(calls):
                if any(a[1] == "f" for a in call.args):
                    calls[i] = call._replace(args=[a for a in call.args if a[1] != "f"])
        self.facts.attrs = [a for a in self.facts.attrs if len(a) != 4 or a[2] != "f"]
        self.facts.binds = [b for b in self.facts.binds if b[2] != "f"]

    def _imported(self, expr: str) -> str:
        """A type expression with the file's imports applied to each alternative's head."""
        out = []
        for alt in expr.split("|"):
            head, dot, rest = alt.partition(".")
            name = head.removesuffix("()")
            target = self.facts.imports.get(name)
            out.append(f"{target}{head[len(name) :]}{dot}{rest}" if target is not None else alt)
        return "|".join(sorted(set(out)))

    def _atom(self, atom: Atom) -> int:
        found = self._atom_ids.get(atom)
        if found is None:
            found = self._atom_ids[atom] = len(self.facts.atoms)
            self.facts.atoms.append(atom)
        return found

    # ----------------------------------------------------------------- imports and names

    def _collect_imports(self, nodes: Iterable[ast.AST]) -> None:
        imports = self.facts.imports
        for node in nodes:
            for name, target, alias in self._bindings(node):
                if name == "*":
                    # Kept as ``*0``, ``*1`` ... (no name spells so): a name the file does not
                    # define or import is looked up in these modules, in order.
                    stars = [k for k in imports if k.startswith("*")]
                    if target not in (imports[k] for k in stars):
                        imports[f"*{len(stars)}"] = target
                    continue
                if alias:
                    imports.setdefault(name, target)
                    continue
                old = imports.setdefault(name, target)
                if old != target and self._own(target) and not self._own(old):
                    # Alternatives (``try``/``if``) bind one name: the target's own module is
                    # the one whose code can be followed.
                    imports[name] = target

    def _module_aliases(self, body: list[ast.stmt]) -> None:
        """``other_name = some_function`` at module level: a second name of a definition (of this
        module, or imported), followed like an import. A name bound more than once is left out."""
        bound: dict[str, int] = {}
        found: dict[str, str] = {}
        for stmt in flat(body):
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
                continue
            target, value = stmt.targets[0], stmt.value
            if not isinstance(target, ast.Name):
                continue
            bound[target.id] = bound.get(target.id, 0) + 1
            dotted = self.raw_dotted(value) if isinstance(value, ast.Name | ast.Attribute) else None
            if not dotted or dotted.startswith(("?", "self.", "cls.")):
                continue
            head, dot, rest = dotted.partition(".")
            if head in self.facts.imports:
                found[target.id] = f"{self.facts.imports[head]}{dot}{rest}"
            elif head in self._def_names and not rest:
                found[target.id] = f"{self.facts.module}.{head}"
        for name, full in found.items():
            if bound[name] == 1 and name not in self._def_names:
                self.facts.imports.setdefault(name, full)

    def _bindings(self, node: ast.AST) -> list[tuple[str, str, bool]]:
        """``(name, dotted target, plain import)`` for each name an import statement binds."""
        out: list[tuple[str, str, bool]] = []
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    out.append((alias.asname, alias.name, True))
                else:
                    head = alias.name.split(".")[0]
                    out.append((head, head, True))
        elif isinstance(node, ast.ImportFrom):
            package = self.facts.module if self.is_package else self.facts.module.rpartition(".")[0]
            base = node.module or ""
            if node.level:
                pkg = package.split(".") if package else []
                up = pkg[: len(pkg) - (node.level - 1)] if node.level > 1 else pkg
                base = ".".join([*up, base] if base else up)
            for alias in node.names:
                if alias.name == "*":
                    if base:
                        out.append(("*", base, True))
                    continue
                name = alias.asname or alias.name
                out.append((name, f"{base}.{alias.name}" if base else alias.name, False))
        return out

    def _import_ran(self, node: ast.AST, qual: str, guards: list[int]) -> None:
        """Keep the guards an import statement sits under, per name it binds, and where it runs."""
        bindings = self._bindings(node)
        # A call through a bound name runs only where the import that bound its target ran
        # (``if _is_cuda: from x import f``).
        for name, target, _plain in bindings:
            if name != "*":
                self._import_guards.setdefault(name, {}).setdefault(target, []).append(tuple(guards))
        if self._type_checking:
            return
        # The module's own top-level code runs where the statement does (first time only, which
        # is any of those places). ``from a.b import c``: module ``a.b``, or ``a.b.c`` if a module.
        ids = [str(i) for i in guards]
        modules = (
            [a.name for a in node.names] if isinstance(node, ast.Import) else [t for _, t, _ in bindings]
        )
        self.facts.imported.extend((qual, m, *ids) for m in modules)

    def _guards_of_import(self, name: str, target: str) -> list[int]:
        """The guards every binding of ``name`` to ``target`` sits under (none when one is bare)."""
        found = self._import_guards.get(name, {}).get(target)
        if not found:
            return []
        common = set(found[0]).intersection(*found[1:])
        return [i for i in found[0] if i in common]

    def _own(self, dotted: str) -> bool:
        return dotted.partition(".")[0] == self.facts.module.partition(".")[0]

    def raw_dotted(self, node: ast.expr) -> str | None:
        """Dotted text of a called expression, its head not yet resolved; None when nothing is known."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name):
            head = node.id
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super":
            head = "super()"
        elif parts:
            head = "?"
        else:
            return None
        parts.append(head)
        return ".".join(reversed(parts))

    def _module_level(self, body: Sequence[ast.stmt]) -> None:
        for stmt, platform in gated(body, self.guards.platform):
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and stmt.decorator_list:
                self.facts.forced.extend((n, v, *a) for n, v, a in forced_by_function(stmt))
                self.facts.sets.extend((n, v, how, *a) for n, v, how, a in set_by_function(stmt))
                continue
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                call = stmt.value
                if (
                    isinstance(call.func, ast.Attribute)
                    and call.func.attr == "update"
                    and isinstance(call.func.value, ast.Name)
                    and len(call.args) == 1
                    and isinstance(call.args[0], ast.Dict)
                    and not call.keywords
                ):
                    # ``TABLE.update({"k": Cls})``: more entries of the table, often for one platform.
                    self._dict_registry(call.func.value.id, call.args[0], platform)
                else:
                    self._lazy_registration(call)
                continue
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target, value = stmt.targets[0], stmt.value
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                target, value = stmt.target, stmt.value
            else:
                continue
            if isinstance(target, ast.Name):
                if target.id == "EntryClass":
                    self._entry(value)
                    continue
                if isinstance(value, ast.Dict):
                    self._dict_registry(target.id, value, platform)
                    self.facts.forced.extend((n, v, *a) for n, v, a in forced_by_table(value))
                subject = self.guards.subject(value, {})
                if subject is not None:
                    self.guards.module_subjects[target.id] = subject
                atoms = self.guards.atoms_of(value, {}, {})
                if atoms:
                    self.guards.module_aliases[target.id] = atoms

    def _entry(self, value: ast.expr) -> None:
        items = value.elts if isinstance(value, ast.List | ast.Tuple) else [value]
        names = []
        for item in items:
            if isinstance(item, ast.Name):
                names.append(item.id)
            elif isinstance(item, ast.Constant) and isinstance(item.value, str):
                names.append(item.value)
        self.facts.entry = tuple(names)

    def _lazy_registration(self, call: ast.Call) -> None:
        # ``Factory.register_backend("key", "pkg.mod", "Class")``: the class is imported by name
        # when the key is asked for, so the key is its only way in.
        texts = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if len(texts) != 3 or len(call.args) != 3:
            return
        key, module, cls = texts
        if not (_DOTTED_MODULE.match(module) and cls.isidentifier() and cls[:1].isupper()):
            return
        func = call.func
        registry = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if registry:
            self.facts.registrations.append(Registration(f"{module}.{cls}", registry, (key,)))

    def _dict_registry(self, name: str, value: ast.Dict, platform: str) -> None:
        """The definitions ``{"key": Cls}`` registers, on ``platform`` alone when one is given."""
        by_target: dict[str, list[str]] = {}
        entries: list[tuple[str, str]] = []
        for key, item in zip(value.keys, value.values, strict=True):
            if isinstance(item, ast.Call):
                item = item.func
            if not isinstance(item, ast.Name | ast.Attribute):
                continue
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                text = key.value
                target = self.guards.dotted(item)
                if not target.startswith("?"):
                    by_target.setdefault(target, []).append(text)
            elif isinstance(key, ast.Name):
                # ``{ATTENTION: AttentionLayer}``: a constant of the config's vocabulary; its name
                # stands for the key (no flag's choice is spelled so), and registers nothing.
                text = key.id
            else:
                continue
            raw = self.raw_dotted(item)
            if raw is not None:
                entries.append((text, raw))
        if entries:
            self._tables.setdefault(name, []).extend(entries)
        for target, keys in by_target.items():
            self.facts.registrations.append(Registration(target, name, tuple(keys), platform))

    # ----------------------------------------------------------------- the walk

    def _block(
        self,
        stmts: Sequence[ast.stmt],
        qual: str,
        prefix: str,
        owner: str,
        guards: list[int],
        catches: tuple[str, ...] | None,
        local: dict[str, tuple[str, str]],
        aliases: dict[str, list[Atom]],
    ) -> None:
        for stmt in stmts:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}.{stmt.name}" if prefix else stmt.name
                if not owner:
                    self._def_names.add(stmt.name)
                types = self._method_types.pop(id(stmt), None)
                types = function_types(stmt, self._nodes) if types is None else types
                self._types[name] = types
                self._bindable[name] = bindable_names(stmt)
                self._called[name] = called_locals(stmt, self._nodes)
                for word_local, said in literal_locals(stmt).items():
                    self.facts.binds.extend((name, f"n:{word_local}", LITERAL, w) for w in said)
                returns = "|".join(sorted(return_types(stmt, types, self._nodes)))
                unset, required = _unset_params(stmt), _required_params(stmt)
                self.facts.defs.append(
                    Def(
                        name,
                        "f",
                        stmt.lineno,
                        owner,
                        (),
                        tuple(guards),
                        positional_params(stmt),
                        returns=returns,
                        unset=unset,
                        decorated=bool(stmt.decorator_list),
                        required=required,
                        rebound=_rebound_params(stmt, (*unset, *required)),
                    )
                )
                self._decorators(stmt, name, qual, guards, catches, local, aliases)
                if owner and any(last_name(d) == "abstractmethod" for d in stmt.decorator_list):
                    self.facts.abstract.append(name)
                if not prefix or prefix == owner:
                    self._test_facts(stmt, name)
                # ``decoder_layer_type=Glm4DecoderLayer``: a definition named as a parameter's default
                # is what the body builds or calls through that parameter when no caller gives one.
                for default in (*stmt.args.defaults, *stmt.args.kw_defaults):
                    if isinstance(default, ast.Name | ast.Attribute):
                        self._reference(default, name, [], self._types.get(name, {}))
                typed = typed_params(stmt)
                flag = class_flag_name(owner.rpartition(".")[2]) if owner else None
                if flag and stmt.args.args and f"{TYPED}{stmt.args.args[0].arg}" not in typed:
                    # A method of a class named after a flag (an enum of its values): ``self.is_x()``.
                    typed[f"{TYPED}{stmt.args.args[0].arg}"] = (flag, "enum")
                self._block(stmt.body, name, f"{name}.<locals>", "", [], None, typed, {})
            elif isinstance(stmt, ast.ClassDef):
                name = f"{prefix}.{stmt.name}" if prefix else stmt.name
                bases = tuple(b for b in (self.guards.dotted(x) for x in stmt.bases) if not b.startswith("?"))
                methods = [s for s in stmt.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)]
                by_name = {}
                for method in methods:
                    self._method_types[id(method)] = by_name[method.name] = function_types(
                        method, self._nodes
                    )
                attrs = tuple(
                    (a, "|".join(sorted(e)))
                    for a, e in sorted(class_attributes(stmt, by_name, self._nodes).items())
                )
                self.facts.defs.append(Def(name, "c", stmt.lineno, owner, bases, tuple(guards), attrs=attrs))
                self._decorators(stmt, name, qual, guards, catches, local, aliases)
                self._block(stmt.body, name, name, name, list(guards), catches, {}, {})
            elif isinstance(stmt, ast.If):
                agreed = agreed_attribute(stmt)
                if agreed is not None and agreed not in self.facts.agreed:
                    self.facts.agreed.append(agreed)
                for arch in draft_architectures(stmt):
                    if arch not in self.facts.drafts:
                        self.facts.drafts.append(arch)
                self._expr(stmt.test, qual, guards, catches, local, aliases)
                if qual != "<module>":
                    self.facts.binds.extend(
                        (qual, *bound) for bound in name_bindings(stmt, self._bindable.get(qual))
                    )
                here = [self._atom(a) for a in self.guards.atoms_of(stmt.test, local, aliases)]
                checking = _is_type_checking(stmt.test)
                self._type_checking += checking
                self._block(stmt.body, qual, prefix, owner, guards + here, catches, local, aliases)
                self._type_checking -= checking
                # An ``else`` runs where the test failed: what that surely means (a variable turned
                # off, a flag left unset) holds there, as it does after an early return.
                failed = [self._atom(a) for a in self.guards.negated_atoms(stmt.test, local, aliases)]
                otherwise = guards + [i for i in failed if i not in guards]
                self._block(stmt.orelse, qual, prefix, owner, otherwise, catches, local, aliases)
                if not stmt.orelse and stmt.body and isinstance(stmt.body[-1], ast.Return | ast.Raise):
                    # ``if not args.enable_x: return``: what follows runs only when the test failed.
                    failed = [self._atom(a) for a in self.guards.negated_atoms(stmt.test, local, aliases)]
                    guards = guards + [i for i in failed if i not in guards]
            elif isinstance(stmt, ast.Try | ast.TryStar):
                caught: list[str] = []
                for handler in stmt.handlers:
                    caught.extend(handler_names(handler.type))
                inner = tuple(caught) if all(h.type is not None for h in stmt.handlers) else ()
                body_catches = inner if stmt.handlers else catches
                self._block(stmt.body, qual, prefix, owner, guards, body_catches, local, aliases)
                for handler in stmt.handlers:
                    self._block(handler.body, qual, prefix, owner, guards, catches, local, aliases)
                self._block(stmt.orelse, qual, prefix, owner, guards, catches, local, aliases)
                self._block(stmt.finalbody, qual, prefix, owner, guards, catches, local, aliases)
            elif isinstance(stmt, ast.For | ast.AsyncFor | ast.While | ast.With | ast.AsyncWith):
                for expr in heads(stmt):
                    self._expr(expr, qual, guards, catches, local, aliases)
                self._block(stmt.body, qual, prefix, owner, guards, catches, local, aliases)
                self._block(getattr(stmt, "orelse", []), qual, prefix, owner, guards, catches, local, aliases)
            elif isinstance(stmt, ast.Match):
                self._expr(stmt.subject, qual, guards, catches, local, aliases)
                for case in stmt.cases:
                    self._block(case.body, qual, prefix, owner, guards, catches, local, aliases)
            else:
                if qual != "<module>" and isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                    self._local_alias(stmt.targets[0], stmt.value, local, aliases, guards, qual)
                if isinstance(stmt, ast.Assign):
                    self._subscript_registry(stmt)
                if (
                    qual == "<module>"
                    and isinstance(stmt, ast.Assign | ast.AnnAssign)
                    and isinstance(stmt.value, ast.Dict)
                ):
                    self._member_table(stmt.value, guards)
                if qual != "<module>":
                    self.facts.attrs.extend((qual, *kept) for kept in self_assignments(stmt))
                if qual != "<module>" and isinstance(stmt, ast.Assign | ast.AnnAssign):
                    self._self_test(stmt, qual, guards, local, aliases)
                if qual != "<module>":
                    self.facts.binds.extend(
                        (qual, *bound) for bound in name_bindings(stmt, self._bindable.get(qual))
                    )
                if isinstance(stmt, ast.Assign) and owner and qual == owner and len(stmt.targets) == 1:
                    self._class_list(owner, stmt.targets[0], stmt.value)
                if isinstance(stmt, ast.AnnAssign) and owner and qual == owner:
                    self._field_action(stmt, qual, guards)
                    if stmt.value is not None:
                        self._class_list(owner, stmt.target, stmt.value)
                if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                    continue  # a docstring: the names it spells are prose, not uses
                before = len(self._calls)
                self._expr(stmt, qual, guards, catches, local, aliases)
                self._mark_stored(stmt, before)
                self._mark_picked(stmt, qual, before)

    def _test_facts(self, func: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> None:
        """What a module-level function's (or a method's) true value says, when its body says it plainly."""
        # A docstring and the imports a function makes for itself do not change what it returns.
        body = [
            s
            for s in func.body
            if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
            and not isinstance(s, ast.Import | ast.ImportFrom)
        ]
        params = set(positional_params(func)) | {a.arg for a in func.args.kwonlyargs}
        archs = _arch_returns(body)
        if archs:
            # ``return config.architectures[0] in (...)``: true only for those checkpoints.
            self.facts.tests.append(("a", name, *archs))
            return
        either = _value_tests_either(body)
        if either:
            # ``return self.is_a() or self.is_b()``: true for the members either test is true for.
            self.facts.tests.append(("o", name, *either))
            return
        if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
            # ``return args.enable_x and _is_cuda``: true only where every atom holds. An atom of a
            # parameter names the caller's value, which this function cannot tell.
            atoms = [
                a
                for a in self.guards.atoms_of(body[0].value, {}, {})
                if not (a[0] in ("a", "v", "i") and a[2] in ("name", "self") and a[1] in params)
            ]
            if atoms:
                self.facts.tests.append(("p", name, *(str(self._atom(a)) for a in atoms)))
            return
        classes = _isinstance_returns(body)
        if classes:
            dotted = [self.guards.dotted(c) for c in classes]
            if not any(d.startswith("?") for d in dotted):
                self.facts.tests.append(("c", name, *sorted(set(dotted))))
            return
        held = self._true_returns(func, params)
        if held:
            self.facts.tests.append(("p", name, *(str(self._atom(a)) for a in held)))

    def _true_returns(self, func: ast.FunctionDef | ast.AsyncFunctionDef, params: set[str]) -> list[Atom]:
        """The atoms every ``return`` of a true value in ``func`` sits under, of the tests around it
        and the early exits before it (``if not args.enable_x: return False``): what the function
        returning something true says. A ``return`` of ``False``, ``None`` or nothing, a ``raise``
        and falling off the end say nothing true. Names the function binds itself are its own."""
        ways: list[list[_Step]] = []
        try:
            _true_paths(func.body, [], ways)
        except _NoTruth:
            return []
        if not ways:
            return []
        atoms: dict[tuple[str, int], list[Atom]] = {}

        def held(way: list[_Step]) -> list[Atom]:
            out: list[Atom] = []
            for step in way:
                key = (step[0], id(step[1]))
                if key not in atoms:
                    atoms[key] = _step_atoms(step, self.guards)
                out.extend(atoms[key])
            return out

        common = list(dict.fromkeys(held(ways[0])))
        for way in ways[1:]:
            if not common:
                break
            these = set(held(way))
            common = [a for a in common if a in these]
        if not common:
            return []
        named = [a for a in common if a[0] in ("a", "v", "i") and a[2] in ("name", "self")]
        if not named:
            return common
        local = params | {n for stmt in own_statements(func.body) for n in direct_binds(stmt)}
        return [a for a in common if not (a in named and a[1] in local)]

    def _local_alias(
        self,
        target: ast.expr,
        value: ast.expr,
        local: dict[str, tuple[str, str]],
        aliases: dict[str, list[Atom]],
        guards: Sequence[int] = (),
        qual: str = "",
    ) -> None:
        if not isinstance(target, ast.Name):
            return
        key = (qual, target.id)
        if isinstance(value, ast.Constant) and type(value.value) is bool:
            # ``use_x = False`` ... ``if envs.SGLANG_X.get() and is_sm90(): use_x = True``: the
            # local is true only where the tests around its true stores all hold.
            if value.value:
                local.pop(target.id, None)  # no longer only the value of what it was read from
                self._local_truth(key, [self.facts.atoms[i] for i in guards], guards, aliases)
            elif key in self._true_locals and tuple(guards) == self._true_locals[key][1]:
                self._true_locals.pop(key)  # false again, on every path: what came before is gone
                aliases.pop(target.id, None)
            return
        subject = self.guards.subject(value, local) if isinstance(value, ast.Attribute | ast.Call) else None
        if subject is not None and subject[1] != "other":
            local[target.id] = subject
        atoms = self.guards.atoms_of(value, local, aliases)
        if key in self._true_locals:
            # Whatever the value, the store is reached only where its guards hold.
            self._local_truth(key, [*atoms, *(self.facts.atoms[i] for i in guards)], guards, aliases)
        elif atoms:
            aliases[target.id] = atoms
            self._true_locals[key] = ([*atoms, *(self.facts.atoms[i] for i in guards)], tuple(guards))

    def _local_truth(
        self, key: tuple[str, str], here: list[Atom], guards: Sequence[int], aliases: dict[str, list[Atom]]
    ) -> None:
        """A store that makes local ``key`` true only where ``here`` holds: on the path of the
        first store it replaces what came before; inside a branch of its own, the local is true
        where either is, so only what both say is kept."""
        found = self._true_locals.get(key)
        if found is None or tuple(guards) == found[1]:
            held: list[Atom] | None = here
            base = tuple(guards)
        else:
            held = [a for a in found[0] if a in here] if found[0] is not None else None
            base = found[1]
        self._true_locals[key] = (held, base)
        if held:
            aliases[key[1]] = held
        else:
            aliases.pop(key[1], None)

    def _member_table(self, table: ast.Dict, guards: list[int]) -> None:
        """``{ComponentType.MAMBA: MambaComponent, ...}`` at module level: a table keyed by enum
        members, which no flag's string picks from, builds its classes for whoever reads it. Each
        class is taken as run by the module (no registration says more of it), so that its
        subclasses' ways in alone do not make it look narrower than it is."""
        if not table.keys or not all(isinstance(k, ast.Attribute) for k in table.keys):
            return
        for value in table.values:
            if isinstance(value, ast.Name) and is_class_name(value.id) and isinstance(value.ctx, ast.Load):
                self._calls.append(
                    Call("<module>", value.id, value.lineno, list(guards), None, recv="", ref=True)
                )

    def _subscript_registry(self, stmt: ast.Assign) -> None:
        target = stmt.targets[0]
        if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)):
            return
        key = target.slice
        if (
            isinstance(key, ast.Constant)
            and isinstance(key.value, str)
            and isinstance(stmt.value, ast.Name | ast.Attribute)
        ):
            dotted = self.guards.dotted(stmt.value)
            if not dotted.startswith("?"):
                self.facts.registrations.append(Registration(dotted, target.value.id, (key.value,)))

    def _class_list(self, owner: str, target: ast.expr, value: ast.expr) -> None:
        # ``models = [LlavaForConditionalGeneration, ...]`` in a class body (annotated or not): the
        # class declares the classes it serves; :mod:`extractor.reach.selectors` decides whether
        # they are architectures.
        if not (isinstance(target, ast.Name) and isinstance(value, ast.List | ast.Tuple) and value.elts):
            return
        names = [e.id if isinstance(e, ast.Name) else getattr(e, "attr", "") for e in value.elts]
        if all(n[:1].isupper() for n in names):
            self.facts.registrations.append(Registration(owner, target.id, tuple(names)))

    def _decorators(
        self,
        node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef,
        name: str,
        qual: str,
        guards: list[int],
        catches: tuple[str, ...] | None,
        local: dict[str, tuple[str, str]],
        aliases: dict[str, list[Atom]],
    ) -> None:
        for deco in node.decorator_list:
            self._expr(deco, qual, guards, catches, local, aliases)
            if isinstance(deco, ast.Name | ast.Attribute):
                # ``@wrap``: ``wrap(f)`` runs where the definition does (at import, for one at
                # the top of a module or a class).
                callee = self.raw_dotted(deco)
                if callee is not None:
                    caught = None if catches is None else list(catches)
                    self._calls.append(Call(qual, callee, deco.lineno, list(guards), caught, [], ""))
            if not isinstance(deco, ast.Call):
                continue
            keys = tuple(
                a.value for a in deco.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
            )
            if not keys:
                continue
            func = deco.func
            if (
                isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                and qual == "<module>"
                and (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")) == "custom_op"
            ):
                # ``@torch.library.custom_op("ns::x")``: only ``torch.ops.ns.x(...)`` runs it, no registry.
                self.facts.ops.append((keys[0].rpartition("::")[2], name))
                continue
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name | ast.Attribute):
                registry = (
                    self.guards.dotted(func.value).rpartition(".")[2]
                    if not func.attr.startswith("register_")
                    else func.attr
                )
            else:
                registry = self.guards.dotted(func).rpartition(".")[2]
            self.facts.registrations.append(Registration(name, registry, keys))

    def _expr(
        self,
        node: ast.AST,
        qual: str,
        guards: list[int],
        catches: tuple[str, ...] | None,
        local: dict[str, tuple[str, str]],
        aliases: dict[str, list[Atom]],
    ) -> None:
        # The flag says whether a name there is a value (a reference may be kept) or a receiver.
        stack: list[tuple[ast.AST, list[int], bool]] = [(node, guards, True)]
        calls = self._calls
        types = self._types.get(qual, {})
        caught = None if catches is None else list(catches)
        mentions = self._mentions
        # A function that spells its own name (``_lib_function("nvmlDeviceGetX")`` in
        # ``nvmlDeviceGetX``, the C symbol it wraps) does not call itself by it.
        own = qual.rpartition(".")[2]
        while stack:
            here, gs, value = stack.pop()
            kind = type(here)
            if kind is ast.Constant:
                assert isinstance(here, ast.Constant)
                if type(here.value) is str:
                    mentions.update(n for n in spelled_names(here.value) if n != own)
                continue
            if kind is ast.JoinedStr:
                assert isinstance(here, ast.JoinedStr)
                mentions.update(f_string_ends(here))
            if kind is ast.Attribute:
                assert isinstance(here, ast.Attribute)
                mentions.add(here.attr)
                if value:
                    self._reference(here, qual, gs, types)
                inner = here.value
                if isinstance(inner, ast.Name) and here.attr in _TABLE_READS:
                    self._table_use(inner, qual, gs, types)
                stack.append((inner, gs, False))
                continue
            if kind is ast.Name:
                assert isinstance(here, ast.Name)
                mentions.add(here.id)
                if value:
                    self._reference(here, qual, gs, types)
                    self._table_use(here, qual, gs, types)
                continue
            if kind is ast.Call:
                assert isinstance(here, ast.Call)
                func = here.func
                callee = self.raw_dotted(func)
                action = None
                # ``getattr(x, "m")`` hands out the method, to be called where we cannot see;
                # ``hasattr`` only tests for it.
                if (
                    isinstance(func, ast.Name)
                    and func.id == "getattr"
                    and len(here.args) >= 2
                    and isinstance(here.args[1], ast.Constant)
                    and isinstance(here.args[1].value, str)
                    and here.args[1].value not in self.facts.named
                ):
                    self.facts.named.append(here.args[1].value)
                self._dynamic_modules(here)
                if here.keywords:
                    self._custom_op(here)
                    action = self._argparse_action(here, qual, gs)
                    if callee is not None and builds_draft(here, callee) and qual not in self.facts.drafting:
                        self.facts.drafting.append(qual)
                if type(func) is ast.Name and (qual, func.id) in self._picked:
                    self._picked_calls(here, func.id, qual, gs, caught)
                if type(func) is ast.Call and (factory := self.raw_dotted(func.func)) is not None:
                    # ``get_pool_cls(device)(size, layout)``: the class the factory returns is
                    # built with these arguments (:meth:`TargetIndex.build` files it under it).
                    calls.append(
                        Call(
                            qual,
                            f"{factory}{FACTORY}",
                            here.lineno,
                            list(gs),
                            caught,
                            passed_args(here),
                            "",
                            given=_given(here),
                        )
                    )
                if callee is not None:
                    calls.append(
                        Call(
                            qual,
                            callee,
                            here.lineno,
                            list(gs),
                            caught,
                            passed_args(here),
                            self._receiver(func, types),
                            given=_given(here),
                        )
                    )
                stack.append((func.value if isinstance(func, ast.Attribute) else func, gs, False))
                # ``isinstance(x, Foo)`` tests a class; it does not hand it to anyone. A named
                # tuple of the module keeps what it is given as fields.
                passes = not (
                    isinstance(func, ast.Name) and (func.id in TYPE_TESTS or func.id in self._records)
                )
                if isinstance(func, ast.Attribute) and func.attr in COLLECTORS:
                    # ``types.append(FooBackend)``: classes gathered for a later type test; a
                    # class built from such a list is built from a name we cannot follow anyway.
                    passes = passes and not any(class_name(a) for a in here.args)
                stack.extend((a, gs, passes) for a in here.args if type(a) not in LEAVES or passes)
                stack.extend(
                    (k.value, gs, passes)
                    for k in here.keywords
                    if (type(k.value) not in LEAVES or passes) and k.value is not action
                )
                continue
            if kind is ast.Dict and value and qual != "<module>":
                assert isinstance(here, ast.Dict)
                keys = _string_keys(here)
                if keys is not None:
                    # A table of definitions by choice string built in a function (``{"fa3":
                    # self._make_fa3, ...}[name]()``): each one runs only under its key.
                    for key, item in zip(keys, here.values, strict=True):
                        stack.append((item, [*gs, self._atom(("k", key, *sorted(set(keys))))], True))
                    continue
            if (kind is ast.List or kind is ast.Tuple or kind is ast.Set) and value:
                assert isinstance(here, ast.List | ast.Tuple | ast.Set)
                if len(here.elts) >= 2 and all(class_name(e) for e in here.elts):
                    # ``[FooBackend, BarBackend]``: a set of types to test against, built by no one.
                    continue
            if kind is ast.IfExp:
                assert isinstance(here, ast.IfExp)
                stack.append((here.test, gs, False))
                extra = [self._atom(a) for a in self.guards.atoms_of(here.test, local, aliases)]
                stack.append((here.body, gs + extra, True))
                stack.append((here.orelse, gs, True))
                continue
            if kind in SCOPES:
                continue
            if kind is ast.Import or kind is ast.ImportFrom:
                self._collect_imports((here,))
                self._import_ran(here, qual, gs)
                continue
            if kind is ast.AnnAssign:
                assert isinstance(here, ast.AnnAssign)
                if here.value is not None:
                    stack.append((here.value, gs, True))
                continue
            value = value and kind not in TESTS
            for field_name in node_fields(kind):
                held = getattr(here, field_name, None)
                for c in held if type(held) is list else (held,):
                    if isinstance(c, ast.Name):
                        mentions.add(c.id)
                        if value:
                            self._reference(c, qual, gs, types)
                            self._table_use(c, qual, gs, types)
                    elif type(c) is ast.Constant and type(c.value) is str:
                        mentions.update(spelled_names(c.value))
                    elif isinstance(c, ast.AST) and type(c) not in LEAVES:
                        stack.append((c, gs, value))

    def _dynamic_modules(self, call: ast.Call) -> None:
        """Module names a call spells as a string (or an f-string's leading text): the module may
        be imported by name there, which no import statement shows."""
        for arg in call.args:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                if _DYNAMIC_MODULE.match(arg.value) and arg.value not in self.facts.dynamic:
                    self.facts.dynamic.append(arg.value)
            elif isinstance(arg, ast.JoinedStr) and arg.values:
                head = arg.values[0]
                if isinstance(head, ast.Constant) and isinstance(head.value, str):
                    prefix = head.value
                    if _DYNAMIC_PREFIX.match(prefix) and prefix not in self.facts.dynamic:
                        self.facts.dynamic.append(prefix)

    def _action_class(self, qual: str, dest: str, value: ast.expr, guards: list[int]) -> None:
        """An argparse action class runs only when its flag is on the command line: the class is
        named there under that flag's test, whatever guards the declaration sits under."""
        if not (isinstance(value, ast.Name | ast.Attribute) and class_name(value)):
            return
        dotted = self.raw_dotted(value)
        if dotted is None or not dest.isidentifier():
            return
        given = self._atom(("a", dest, "args"))
        self._calls.append(Call(qual, dotted, value.lineno, [*guards, given], None, recv="", ref=True))

    def _field_action(self, stmt: ast.AnnAssign, qual: str, guards: list[int]) -> None:
        # ``dest: Annotated[T, Arg(action=SomeAction)] = None``: a flag declared as a field.
        if not isinstance(stmt.target, ast.Name):
            return
        # Any other callable it hands over (``type_parser=parse_size``) is a value someone calls.
        for node in ast.walk(stmt.annotation):
            if isinstance(node, ast.Call):
                for kw in node.keywords:
                    if kw.arg == "action":
                        self._action_class(qual, stmt.target.id, kw.value, guards)
                    elif isinstance(kw.value, ast.Name | ast.Attribute):
                        self._reference(kw.value, qual, guards, {})

    def _argparse_action(self, call: ast.Call, qual: str, guards: list[int]) -> ast.expr | None:
        """The ``action=`` class of ``parser.add_argument("--x", action=C)``, kept as named under the
        flag's test; None when the call declares no such action."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "add_argument"):
            return None
        action = next((kw.value for kw in call.keywords if kw.arg == "action"), None)
        if action is None or not isinstance(action, ast.Name | ast.Attribute):
            return None
        dest = next(
            (
                kw.value.value
                for kw in call.keywords
                if kw.arg == "dest" and isinstance(kw.value, ast.Constant)
            ),
            None,
        )
        if not isinstance(dest, str):
            longs = [
                a.value
                for a in call.args
                if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("--")
            ]
            if not longs:
                return None
            dest = longs[0][2:].replace("-", "_")
        self._action_class(qual, dest, action, guards)
        return action

    def _custom_op(self, call: ast.Call) -> None:
        # ``register(op_name="x", op_func=f)``: the op ``torch.ops.<namespace>.x`` runs ``f``.
        named = {k.arg: k.value for k in call.keywords if k.arg in ("op_name", "op_func")}
        name, func = named.get("op_name"), named.get("op_func")
        if name is None and call.args:
            name = call.args[0]
        if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
            return
        if isinstance(func, ast.Name | ast.Attribute):
            target = self.guards.dotted(func)
            if not target.startswith("?"):
                self.facts.ops.append((name.value, target))

    def _receiver(self, func: ast.expr, types: Types) -> str:
        """The type expression of a call's head: a typed local, or the value of an inner call."""
        node = func
        while isinstance(node, ast.Attribute):
            node = node.value
        if isinstance(node, ast.Name):
            found = types.get(node.id)
        elif isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id == "super"):
            found = expr_types(node, types)
        else:
            return ""
        return "|".join(sorted(found)) if found else ""

    def _mark_stored(self, stmt: ast.stmt, since: int) -> None:
        """``self.x = self.m`` (or a name): the reference kept since call ``since`` is stored in ``x``."""
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            return
        target, value = stmt.targets[0], stmt.value
        if not (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == "self"
            and isinstance(value, ast.Name | ast.Attribute)
        ):
            return
        dotted = self.raw_dotted(value)
        for i in range(since, len(self._calls)):
            call = self._calls[i]
            if call.ref and call.callee == dotted and call.line == value.lineno:
                self._calls[i] = call._replace(stored=target.attr)

    def _mark_picked(self, stmt: ast.stmt, qual: str, since: int) -> None:
        """``ccu = conv_update if fast else conv_update_triton``: the references kept since call
        ``since`` are what the calls of the local ``ccu`` run (see :meth:`_picked_calls`)."""
        if not (
            isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
        ):
            return
        name = stmt.targets[0].id
        if name in self._called.get(qual, ()):
            refs = [i for i in range(since, len(self._calls)) if self._calls[i].ref]
            if refs:
                self._picked[(qual, name)] = refs

    def _picked_calls(
        self, call: ast.Call, head: str, qual: str, gs: list[int], caught: list[str] | None
    ) -> None:
        """A call of a local that holds a picked definition calls each one the local may hold,
        with the call's own arguments: a parameter no such call passes is never given."""
        refs = self._picked.get((qual, head))
        if refs is None:
            return
        self._spent.update(refs)
        for i in refs:
            ref = self._calls[i]
            guards = [*ref.guards, *(g for g in gs if g not in ref.guards)]
            self._calls.append(
                Call(qual, ref.callee, call.lineno, guards, caught, passed_args(call), "", given=_given(call))
            )

    def _table_use(self, node: ast.Name, qual: str, gs: list[int], types: Types) -> None:
        """A function that reads a module-level table of definitions (``LAYER_TYPES[kind](...)``)
        hands out each entry under its key: the entries run where it runs, each one only for its
        key (a flag's choice when the keys are that flag's, else a value no user picks)."""
        entries = self._tables.get(node.id)
        if entries is None or qual == "<module>" or node.id in types or not isinstance(node.ctx, ast.Load):
            return
        keys = sorted({k for k, _ in entries})
        for key, dotted in entries:
            guard = self._atom(("K", node.id, key, *keys))
            self._calls.append(Call(qual, dotted, node.lineno, [*gs, guard], None, recv="", ref=True))

    def _reference(self, node: ast.Name | ast.Attribute, qual: str, gs: list[int], types: Types) -> None:
        """Keep a definition named as a value: a class (``CamelCase``) or an imported or ``self`` name."""
        if qual == "<module>":
            return  # module-level names (``EntryClass = X``, tables) run nothing; registrations cover them
        if isinstance(node, ast.Name):
            if not isinstance(node.ctx, ast.Load) or node.id in types:
                return
            name = node.id
            if not (name in self.facts.imports or name in self._def_names or is_class_name(name)):
                return
            dotted = name
        else:
            if not isinstance(node.ctx, ast.Load):
                return
            dotted = self.raw_dotted(node) or ""
            head, _, last = dotted.partition(".")
            if not last or (head in ("self", "cls") and "." in last):
                return
            if head not in ("self", "cls") and head not in self.facts.imports and head not in self._def_names:
                return
        self._calls.append(Call(qual, dotted, node.lineno, list(gs), None, recv="", ref=True))
