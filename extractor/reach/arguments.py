"""Flags that reach a function under another name: through its parameters and ``self`` attributes.

A check ``if io_backend == ...: raise`` in a method is about the command line when its callers
pass ``io_backend=server_args.hicache_io_backend``, or pass on a parameter or attribute that
carries it (``self.io_backend``, set in ``__init__`` from a parameter its constructions fill from
the server args). :func:`passed_args` and :func:`self_assignments` record the raw shape of those
values per file; :class:`PassedFlags` follows them over the whole-target index.

A value *source* is ``("f", dest)`` (an attribute of an args object: ``server_args.dest``),
``("n", name)`` (a bare name: a parameter of the caller, when it is one), ``("s", attr)``
(``self.attr``), ``("o", "recv.attr")`` (an attribute of a settings object named after its class,
``model_config.quantization``: what ``ModelConfig`` stores in ``self.quantization``) or ``("w",
group)`` (the size of a process group, ``get_tp_world_size()``: the flag that sizes it, see
:mod:`extractor.prose.world_size`) or ``("r", field)`` (a field of the client's request:
``req.sampling_params.top_k``, ``request.tools``). Literals and computed values carry no flag and
are not recorded.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from extractor.analysis.config_read import config_read
from extractor.analysis.walk import called_name, getattr_read, last_name, own_statements
from extractor.prose.knowledge import FlagInfo, Knowledge
from extractor.prose.world_size import flag_for_group, group_of
from extractor.reach.facts import LITERAL, Call, FileFacts
from extractor.reach.guard_atoms import ACCESSOR, ENV_READERS, reader_default
from extractor.reach.target_index import TargetIndex

__all__ = [
    "CONFIG_SOURCE",
    "ENV_SOURCE",
    "REQUEST_SOURCE",
    "PassedFlags",
    "bindable_names",
    "literal_locals",
    "literal_words",
    "name_bindings",
    "passed_args",
    "positional_params",
    "self_assignments",
    "value_source",
    "value_sources",
]

# Deep enough for a constructor that keeps a parameter on ``self`` for a method that hands it to
# another object's method; short enough that a loose name match cannot wander far.
MAX_DEPTH = 5
_MAX_FLAGS = 3


def _args_receiver(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return "args" in node.id.lower()
    if isinstance(node, ast.Attribute):
        return "args" in node.attr.lower()
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        # ``get_server_args().enable_x``: the process-wide args object, read through its getter.
        return _args_receiver(node.func)
    return False


ENV_SOURCE = "env"
"""The namespace of the :class:`FlagInfo` a value read from an environment variable stands for
(its ``flag`` is the variable's name): :meth:`PassedFlags.of` leaves those out, and
:meth:`PassedFlags.env_of` gives their names."""


def _env_read(node: ast.expr) -> str | None:
    """``envs.SGLANG_X.get()``, ``os.getenv("X")``, ``os.environ.get("X")``,
    ``get_bool_env_var("X")``: the variable read."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Name):
        first = node.args[0] if node.args else None
        if func.id in ENV_READERS and isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value
        return None
    if not isinstance(func, ast.Attribute):
        return None
    if func.attr == "get" and not node.args and isinstance(func.value, ast.Attribute):
        name = func.value.attr
        return name if name.isupper() and name.startswith("SGL") else None
    first = node.args[0] if node.args else None
    if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
        return None
    head = func.value
    if func.attr == "getenv" and isinstance(head, ast.Name) and head.id == "os":
        return first.value
    if func.attr == "get" and isinstance(head, ast.Attribute) and head.attr == "environ":
        return first.value
    return None


def _env_default(node: ast.expr) -> str | None:
    """The literal default an environment read gives (``os.getenv("X", "1")``,
    ``get_int_env_var("X", 128)``), as text; None when it names none, it is no literal or a bool."""
    value = reader_default(node)
    return None if value is None or isinstance(value, bool) else str(value)


CONFIG_SOURCE = "config"
"""The namespace of the :class:`FlagInfo` a value read from the model's config stands for (its
``flag`` is the config key): :meth:`PassedFlags.of` leaves those out, and
:meth:`PassedFlags.config_of` gives their keys."""


REQUEST_SOURCE = "request"
"""The namespace of the :class:`FlagInfo` a field of the client's request stands for (its ``flag``
is the field's name): :meth:`PassedFlags.of` leaves those out, and :meth:`PassedFlags.request_of`
gives their names."""

# What holds the client's own request: its sampling parameters (``req.sampling_params``, a
# diffusion ``batch.sampling_params``) and an API handler's ``request``. A scheduler's ``req``
# also holds the server's bookkeeping, so it is not one.
# ``recv_req``: what the scheduler received from the API (a weight update, a profile start),
# filled from the client's request; a bare ``req`` is the scheduler's own bookkeeping.
_REQUEST_HOLDERS = frozenset({"sampling_params", "request", "recv_req"})


def _request_field(node: ast.expr) -> str | None:
    """``sampling_params.top_k``, ``getattr(req.sampling_params, "top_k", None)``,
    ``request.tools``: the field of the client's request read."""
    node = getattr_read(node) or node
    if not isinstance(node, ast.Attribute) or node.attr.startswith("_") or not node.attr.isidentifier():
        return None
    recv = node.value
    if isinstance(recv, ast.Name) and recv.id in _REQUEST_HOLDERS:
        return node.attr
    if isinstance(recv, ast.Attribute) and recv.attr == "sampling_params":
        return node.attr
    return None


def value_source(node: ast.expr) -> tuple[str, str] | None:
    """What ``node`` carries, when it may be a flag's value unchanged."""
    env = _env_read(node)
    if env is not None:
        # ``get_int_env_var("X", 128)``: the reader's own default is what an unset variable gives.
        default = _env_default(node)
        return ("e", f"{env}={default}" if default is not None else env)
    key = config_read(node)
    if key is not None:
        return ("c", key)
    field_name = _request_field(node)
    if field_name is not None:
        return ("r", field_name)
    group = group_of(node) if isinstance(node, ast.Call | ast.Attribute) else None
    if group is not None:
        return ("w", group)
    if (
        isinstance(node, ast.Call)
        and len(node.args) == 1
        and not node.keywords
        and _ENUM_OF.match(called_name(node))
        and (last_name(node.func.value) if isinstance(node.func, ast.Attribute) else "")[:1].isupper()
    ):
        # ``Kind.from_string(server_args.cp_strategy)``: the flag's choice as a member of its enum.
        return value_source(node.args[0])
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        # ``get_linear_attn_decode_backend()``: the accessor of the value the flag set.
        m = ACCESSOR.match(called_name(node))
        return ("f", m.group(1)) if m else None
    if isinstance(node, ast.Name):
        return ("n", node.id)
    if isinstance(node, ast.Attribute):
        if isinstance(node.value, ast.Name) and node.value.id == "self":
            return ("s", node.attr)
        if _args_receiver(node.value):
            return ("f", node.attr)
        recv = last_name(node.value)
        if _OBJECT_RE.match(recv) and not node.attr.startswith("_"):
            # ``model_config.quantization``: an attribute of the one object a settings class
            # named like the receiver builds (``ModelConfig``), read as that class's ``self.x``.
            return ("o", f"{recv}.{node.attr}")
    return None


TRUE_STORE = "T"
"""The kind of a binding of a name to ``True``: the name then holds no flag's value alone."""
# Class methods that turn a choice's string into a member of its enum.
_ENUM_OF = re.compile(r"^(?:from_str(?:ing)?|from_name|parse|of)$")
# Receivers named after one settings object: ``model_config``, ``self.load_config``.
_OBJECT_RE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*_config$")


def value_sources(node: ast.expr) -> list[tuple[str, str]]:
    """:func:`value_source` of ``node``, or of each side of a conditional expression (``args.draft_x
    if is_draft else args.x``): either may be what it carries, the ``else`` side first (the
    special case is usually the one the test names)."""
    if isinstance(node, ast.IfExp):
        return list(dict.fromkeys([*value_sources(node.orelse), *value_sources(node.body)]))
    src = value_source(node)
    return [src] if src is not None else []


_LITERAL_WORD = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,39}$")


def literal_words(node: ast.expr) -> tuple[str, ...] | None:
    """The one-word strings ``node`` may be, when it can be nothing else (a literal, or a
    conditional expression of such); None otherwise."""
    if isinstance(node, ast.IfExp):
        body, orelse = literal_words(node.body), literal_words(node.orelse)
        return None if body is None or orelse is None else tuple(dict.fromkeys([*body, *orelse]))
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and _LITERAL_WORD.match(node.value):
        return (node.value,)
    return None


def passed_args(call: ast.Call) -> list[list[str]]:
    """``[slot, kind, value]`` for each argument with a source: slot ``"0"``, ``"1"``... for
    positional arguments (before any ``*args``), ``"=name"`` for keywords. A slot may have more
    than one source (:func:`value_sources`); an argument that can only be some words has one
    :data:`LITERAL` row per word."""
    out: list[list[str]] = []
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            break
        out.extend([str(i), *src] for src in _arg_sources(arg))
    for kw in call.keywords:
        if kw.arg is None:
            continue
        out.extend([f"={kw.arg}", *src] for src in _arg_sources(kw.value))
    return out


def _arg_sources(arg: ast.expr) -> list[tuple[str, str]]:
    words = literal_words(arg)
    return [(LITERAL, w) for w in words] if words is not None else value_sources(arg)


def literal_locals(func: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, tuple[str, ...]]:
    """Locals of ``func`` (not its parameters) that every assignment gives one of some one-word
    strings: ``kind = "cross" if shared else "self"``, handed on as ``Attention(kind=kind)``."""
    args = func.args
    params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg] if a}
    words: dict[str, list[str]] = {}
    spoiled: set[str] = set(params)
    for stmt in own_statements(func.body):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name, found = stmt.targets[0].id, literal_words(stmt.value)
            if found is None:
                spoiled.add(name)
            else:
                words.setdefault(name, []).extend(found)
            continue
        targets: list[ast.expr] = []
        if isinstance(stmt, ast.Assign):
            targets.extend(stmt.targets)
        elif isinstance(stmt, ast.AugAssign | ast.AnnAssign | ast.For | ast.AsyncFor):
            targets.append(stmt.target)
        elif isinstance(stmt, ast.With | ast.AsyncWith):
            targets.extend(i.optional_vars for i in stmt.items if i.optional_vars is not None)
        for target in targets:
            spoiled.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return {n: tuple(dict.fromkeys(ws)) for n, ws in words.items() if n not in spoiled}


def positional_params(func: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...]:
    return tuple(a.arg for a in [*func.args.posonlyargs, *func.args.args])


def self_assignments(stmt: ast.stmt) -> list[tuple[str, str, str]]:
    """``(attr, kind, value)`` of ``self.attr = <source>``, one per source."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target, value = stmt.targets[0], stmt.value
    elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        target, value = stmt.target, stmt.value
    else:
        return []
    if not (
        isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"
    ):
        return []
    return [(target.attr, *src) for src in value_sources(value) if src != ("s", target.attr)]


def bindable_names(func: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, str]:
    """Names whose new value a caller's flag may reach through: parameters and the locals a
    plain assignment binds (``n``: ``backend = get_x_backend()`` handed on as ``f(backend)``),
    and the module globals the function declares ``global`` (``g``)."""
    args = func.args
    out = {a.arg: "n" for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    # ``global`` is a statement: the function's own statements hold every one that is its own
    # (walking every expression node too was a tenth of a file's time).
    for stmt in own_statements(func.body):
        if isinstance(stmt, ast.Global):
            out.update(dict.fromkeys(stmt.names, "g"))
        elif (
            isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
        ):
            out.setdefault(stmt.targets[0].id, "n")
        elif isinstance(stmt, ast.If | ast.While):
            for name, _value in _tested_bindings(stmt.test):
                out.setdefault(name, "n")
    return out


def _tested_bindings(test: ast.expr) -> list[tuple[str, ast.expr]]:
    """``(name, value)`` of each ``name := value`` a test binds at its top or in its ``and``s."""
    out: list[tuple[str, ast.expr]] = []
    todo = [test]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            out.append((node.target.id, node.value))
        elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
            todo.extend(reversed(node.values))
    return out


def name_bindings(stmt: ast.stmt, bindable: dict[str, str] | None) -> list[tuple[str, str, str]]:
    """``(token, kind, value)`` of ``x = <source>`` (or a test's ``x := <source>``) for ``x`` a
    parameter, local or declared global, one per source."""
    if not bindable:
        return []
    if isinstance(stmt, ast.If | ast.While):
        # ``if pr := envs.SGLANG_X.get(): apply(pr)``: the name holds the value where it is used.
        pairs = _tested_bindings(stmt.test)
    elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        pairs = [(stmt.targets[0].id, stmt.value)]
    else:
        return []
    return [
        (f"{bindable[name]}:{name}", *src)
        for name, value in pairs
        if name in bindable
        for src in (
            [(TRUE_STORE, "True")]
            if isinstance(value, ast.Constant) and value.value is True
            else value_sources(value)
        )
        if src != ("n", name)
    ]


@dataclass
class PassedFlags:
    """The flags a parameter or ``self`` attribute of a definition carries, over every caller."""

    index: TargetIndex
    knowledge: Knowledge
    _memo: dict[tuple[str, str, str, str], tuple[FlagInfo, ...]] = field(default_factory=dict)
    _busy: set[tuple[str, str, str, str]] = field(default_factory=set)
    _attrs: dict[str, list[tuple[FileFacts, tuple[str, ...]]]] | None = None
    _supers: dict[str, list[tuple[FileFacts, Call]]] | None = None
    """Class node -> the ``super().__init__(...)`` calls its methods make (built on first use)."""
    _cut: bool = False
    """Whether the value being looked up met one already on the stack (a cycle) or the depth
    bound: such a result may lack sources, and is reused only where it was cut the same way."""
    _hits: set[tuple[str, str, str, str]] = field(default_factory=set)
    _partial: dict[
        tuple[str, str, str, str], tuple[int, tuple[FlagInfo, ...], frozenset[tuple[str, str, str, str]]]
    ] = field(default_factory=dict)
    """Cut results: the depth they were found at, and the lookups on the stack that cut them."""

    def of(self, module: str, qualname: str, token: str) -> tuple[FlagInfo, ...]:
        """Flags behind ``token`` (``n:name`` or ``s:attr``) as read in ``qualname`` of ``module``."""
        return tuple(
            i
            for i in self._token_sources(module, qualname, token)
            if i.namespace not in (ENV_SOURCE, CONFIG_SOURCE, REQUEST_SOURCE)
        )

    def request_of(self, module: str, qualname: str, token: str) -> tuple[str, ...]:
        """The fields of the client's request behind ``token`` (as :meth:`of` has it)."""
        found = self._token_sources(module, qualname, token)
        return tuple(dict.fromkeys(i.flag for i in found if i.namespace == REQUEST_SOURCE))

    def config_of(self, module: str, qualname: str, token: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """The model config attributes behind ``token`` (as :meth:`of` has it), each with the
        config.json keys it is read from (:meth:`json_keys`)."""
        found = self._token_sources(module, qualname, token)
        attrs = (i.flag for i in found if i.namespace == CONFIG_SOURCE)
        return tuple((a, self.json_keys(a)) for a in dict.fromkeys(attrs))

    def _token_sources(self, module: str, qualname: str, token: str) -> tuple[FlagInfo, ...]:
        """Every source behind ``token`` (``n:name`` or ``s:attr``), of any namespace."""
        kind, _, name = token.partition(":")
        if kind not in ("n", "s") or not name:
            return ()
        return self._source(module, qualname, kind, name, 0)

    def json_keys(self, attr: str) -> tuple[str, ...]:
        """The config.json keys of config attribute ``attr``: a config class of the target that sets
        ``self.attr`` in its constructor from a parameter of another name (``self.ngram_n =
        emb_neighbor_num``, that parameter itself filled from ``oe_neighbor_num`` when not given)
        reads it under that name; ``(attr,)`` otherwise."""
        keys: list[str] = []
        for af, (method, _attr, kind, value) in self._assignments(attr):
            owner = self.index.owner_class(af.module, method)
            if owner is None or not owner.endswith("Config") or not method.endswith(".__init__"):
                continue
            if kind != "n" or value == attr:
                continue
            keys.append(value)
            keys.extend(
                v for q, bound, k, v in af.binds if q == method and bound == f"n:{value}" and k == "n"
            )
        return tuple(dict.fromkeys(keys)) or (attr,)

    def env_of(self, module: str, qualname: str, token: str) -> tuple[str, ...]:
        """The environment variables behind ``token`` (as :meth:`of` has it), when no flag is."""
        return tuple(i.flag for i in self.env_infos_of(module, qualname, token))

    def env_infos_of(self, module: str, qualname: str, token: str) -> tuple[FlagInfo, ...]:
        """:meth:`env_of` as the variables' infos, each with the default an unset one reads as."""
        return tuple(i for i in self._token_sources(module, qualname, token) if i.namespace == ENV_SOURCE)

    def _source(self, module: str, qual: str, kind: str, name: str, depth: int) -> tuple[FlagInfo, ...]:
        f = self.index.files.get(module)
        if f is None:
            return ()
        if kind == "f":
            info = self.knowledge.flags_for(f.path).get(name)
            return (info,) if info is not None else ()
        if kind == "e":
            # The reader's default, else the registry's: what an unset variable reads as.
            var, _, default = name.partition("=")
            env = self.knowledge.env_of(var)
            default = default or (env.default if env is not None else "")
            return (FlagInfo(var, "", ENV_SOURCE, default=default),)
        if kind == "c":
            return (FlagInfo(name, "", CONFIG_SOURCE),)
        if kind == "r":
            return (FlagInfo(name, "", REQUEST_SOURCE),)
        if kind == LITERAL:
            return ()
        if kind == "w":
            info = flag_for_group(name, self.knowledge.flags_for(f.path))
            return (dataclasses.replace(info, via_group=True),) if info is not None else ()
        if kind == "o":
            recv, _, attr = name.partition(".")
            cls = self._class_named(recv, module)
            if cls is None or depth >= MAX_DEPTH:
                return ()
            return tuple(dict.fromkeys(self._class_attr(cls, attr, depth)))[:_MAX_FLAGS]
        if depth >= MAX_DEPTH:
            self._cut = True
            return ()
        key = (module, qual, kind, name)
        if key in self._memo:
            return self._memo[key]
        partial = self._partial.get(key)
        if partial is not None and partial[0] <= depth and partial[2] <= self._busy:
            self._cut = True
            self._hits |= partial[2]
            return partial[1]
        if key in self._busy:
            self._cut = True
            self._hits.add(key)
            return ()
        outer_cut, self._cut = self._cut, False
        outer_hits, self._hits = self._hits, set()
        self._busy.add(key)
        try:
            found = self._param(f, qual, name, depth) if kind == "n" else self._attr(f, qual, name, depth)
        finally:
            self._busy.discard(key)
        out = tuple(dict.fromkeys(found))[:_MAX_FLAGS]
        self._hits.discard(key)  # a cycle back to this lookup is complete here
        if self._cut:
            self._partial[key] = (depth, out, frozenset(self._hits))
        else:
            self._memo[key] = out
        self._cut = self._cut or outer_cut
        self._hits = outer_hits | self._hits
        return out

    # ----------------------------------------------------------------- parameters

    def _param(self, f: FileFacts, qual: str, name: str, depth: int) -> list[FlagInfo]:
        node = f"{f.module}:{qual}"
        d = self.index.defs.get(node)
        # A new value given in the function (``if x is None: x = _ENABLE_X``) carries its flags too.
        local = d is None or d.kind != "f" or name not in d.params
        out = self._bound(f, qual, f"n:{name}", depth, local)
        if d is None or d.kind != "f" or name not in d.params:
            if out:
                return out
            outer, sep, _ = qual.rpartition(".<locals>.")
            enclosing = self.index.defs.get(f"{f.module}:{outer}") if sep else None
            if enclosing is not None and enclosing.kind == "f" and name in enclosing.params:
                # A nested function reads its enclosing function's parameter (a closure): what
                # that function's callers pass.
                return list(self._source(f.module, outer, "n", name, depth + 1))
            # Not a parameter: a module global, which setters (``global _X; _X = enable``) fill.
            return self._bound(f, None, f"g:{name}", depth)
        params = list(d.params)
        if d.owner and params and params[0] in ("self", "cls"):
            params = params[1:]
        pos = params.index(name) if name in params else -1
        short = qual.rpartition(".")[2]
        if short == "__init__" and d.owner:
            target, callee_name = f"{f.module}:{d.owner}", d.owner.rpartition(".")[2]
        else:
            target, callee_name = node, short
        if callee_name.startswith("__"):
            return []
        # A positional argument means this parameter only when every definition of the name
        # puts the same parameter there (one interface, several implementations).
        same_slot = self._same_slot(callee_name, pos, name)
        for cf, call in [*self._calls(callee_name), *self._super_inits(target, short)]:
            if call.callee != "super().__init__" and not self._may_call(cf, call, target, callee_name):
                continue
            # A call that resolves to this very definition fills its positions whatever other
            # definitions of the name take there.
            positional = pos >= 0 and (same_slot or self.index.pins(cf, call, target))
            for slot, kind, value in call.args:
                if slot == f"={name}" or (positional and slot == str(pos)):
                    out.extend(self._source(cf.module, call.caller, kind, value, depth + 1))
        return out

    def _bound(
        self, f: FileFacts, qual: str | None, token: str, depth: int, local: bool = False
    ) -> list[FlagInfo]:
        out: list[FlagInfo] = []
        for where, bound, kind, value in f.binds:
            if bound == token and (qual is None or where == qual):
                if kind == TRUE_STORE:
                    if local:
                        # ``x = args.enable_y`` and elsewhere ``x = True``: no flag's value alone
                        # (a parameter given ``True`` when left out still carries its callers').
                        return []
                    continue
                out.extend(self._source(f.module, where, kind, value, depth + 1))
        return out

    def _super_inits(self, cls: str, short: str) -> list[tuple[FileFacts, Call]]:
        """The ``super().__init__(...)`` calls of the classes derived directly from class node
        ``cls`` (for its ``__init__``): a subclass hands its own arguments on to the base's."""
        if short != "__init__":
            return []
        if self._supers is None:
            self._supers = {}
            for cf, call in self._calls("__init__"):
                if call.callee == "super().__init__":
                    owner = self.index.owner_class(cf.module, call.caller)
                    if owner is not None:
                        self._supers.setdefault(owner, []).append((cf, call))
        return [found for sub in self.index.subclasses.get(cls, []) for found in self._supers.get(sub, [])]

    def _same_slot(self, name: str, pos: int, param: str) -> bool:
        if pos < 0:
            return False
        for node in self.index.by_name.get(name, []):
            d = self.index.defs[node]
            if d.kind == "c":
                init = self.index.methods.get(node, {}).get("__init__")
                d = self.index.defs[init] if init is not None else d
            params = list(d.params)
            if d.owner and params and params[0] in ("self", "cls"):
                params = params[1:]
            if len(params) <= pos or params[pos] != param:
                return False
        return True

    def _calls(self, name: str) -> list[tuple[FileFacts, Call]]:
        out = []
        for cf, calls in self.index.calls_named(name):
            for raw in calls:
                call = Call._make(raw)
                if call.args:
                    out.append((cf, call))
        return out

    def _may_call(self, cf: FileFacts, call: Call, target: str, name: str) -> bool:
        """Whether ``call`` may run ``target``: it resolves to it, or it resolves to nothing and
        ``name`` is not a definition the call's own file or its imports pin elsewhere."""
        parts = call.callee.split(".")
        if parts[0] not in ("self", "cls", "super()", "?"):
            found = self.index.resolve_dotted(call.callee, cf, call.caller)
            if found is not None:
                return found == target
            if len(parts) == 1:
                return len(self.index.by_name.get(name, [])) == 1
        return True

    def runs_when_built(self, module: str, qual: str) -> bool:
        """``qual`` is an ``__init__`` or an ``__init__`` of the target calls it on ``self``."""
        if qual.rpartition(".")[2] == "__init__":
            return True
        return any(
            e.confident and e.caller.rpartition(".")[2] == "__init__"
            for e in self.index.callers(f"{module}:{qual}")
        )

    def same_object(self, module: str, qual: str, other_module: str, other: str) -> bool:
        mine = self.index.owner_class(module, qual)
        theirs = self.index.owner_class(other_module, other)
        return mine is not None and theirs is not None and theirs in self._lineage(mine)

    # ----------------------------------------------------------------- attributes

    def _attr(self, f: FileFacts, qual: str, name: str, depth: int) -> list[FlagInfo]:
        cls = self.index.owner_class(f.module, qual)
        if cls is None:
            return []
        if self.knowledge.is_arg_class(f.path, cls.rpartition(":")[2]):
            # ``self`` is the server args object (a method of ServerArgs or of a mixin of it).
            info = self.knowledge.flags_for(f.path).get(name)
            return [info] if info is not None else []
        classes = self._lineage(cls)
        out = self._class_attr(cls, name, depth)
        if not out:
            # A field without an assignment (a dataclass or a config model): what the
            # constructions pass for it by keyword.
            for node in sorted(classes):
                short = node.rpartition(":")[2].rpartition(".")[2]
                for cf, call in self._calls(short):
                    if not self._may_call(cf, call, node, short):
                        continue
                    for slot, kind, value in call.args:
                        if slot == f"={name}":
                            out.extend(self._source(cf.module, call.caller, kind, value, depth + 1))
        return out

    def _class_attr(self, cls: str, name: str, depth: int) -> list[FlagInfo]:
        """What the methods of class node ``cls`` (and its bases) store in ``self.name``, or in the
        attribute a property of that name returns (``return self._name``)."""
        classes = self._lineage(cls)
        out: list[FlagInfo] = []
        for af, (method, _attr, kind, value) in self._assignments(name):
            owner = self.index.owner_class(af.module, method)
            if owner in classes:
                out.extend(self._source(af.module, method, kind, value, depth + 1))
        if not out and depth < MAX_DEPTH:
            held = self._returned_attribute(cls, name)
            if held is not None and held != name:
                out = self._class_attr(cls, held, depth + 1)
        return out

    def _returned_attribute(self, cls: str, name: str) -> str | None:
        """The attribute method ``name`` of class node ``cls`` (or a base) returns and does nothing
        else with (a property ``return self._name``), when its body says so plainly."""
        method = self.index.lookup_method(cls, name)
        if method is None:
            return None
        module, _, qual = method.partition(":")
        f = self.index.files.get(module)
        d = self.index.defs.get(method)
        if f is None or d is None or not d.decorated:
            return None
        for test in f.tests:
            if test[0] == "p" and test[1] == qual and len(test) == 3:
                atom = f.atoms[int(test[2])]
                if atom[0] == "a" and atom[2] == "self" and len(atom) == 3:
                    return atom[1]
        return None

    def _class_named(self, recv: str, module: str) -> str | None:
        """The one class node whose name is ``recv`` in CamelCase (``model_config``: ``ModelConfig``),
        of those in the same package as ``module`` (``sglang.srt``) when there are several."""
        name = "".join(part[:1].upper() + part[1:] for part in recv.split("_"))
        found = [n for n in self.index.by_name.get(name, []) if self.index.defs[n].kind == "c"]
        if len(found) > 1:
            package = ".".join(module.split(".")[:2]) + "."
            found = [n for n in found if n.startswith(package)]
        return found[0] if len(found) == 1 else None

    def _lineage(self, cls: str) -> set[str]:
        seen: set[str] = set()
        todo = [cls]
        while todo:
            c = todo.pop()
            if c in seen:
                continue
            seen.add(c)
            todo.extend(self.index.bases.get(c, []))
        return seen

    def _assignments(self, attr: str) -> list[tuple[FileFacts, tuple[str, ...]]]:
        if self._attrs is None:
            table: dict[str, list[tuple[FileFacts, tuple[str, ...]]]] = {}
            for _, af in sorted(self.index.files.items()):
                for a in af.attrs:
                    if len(a) == 4:
                        table.setdefault(a[1], []).append((af, a))
            self._attrs = table
        return self._attrs.get(attr, [])


def tokens_of(spec: Sequence[Sequence[str]]) -> list[str]:
    """The subject tokens (``n:x``, ``s:x``) of a pending spec's constraints, in order."""
    return list(dict.fromkeys(str(c[0]) for c in spec if c))
