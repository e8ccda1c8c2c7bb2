"""Finding the flag and environment reads in a site's guard.

Which reads count as a *flag* (the value of a command-line flag): an attribute ``x`` for which the
site's namespace declares a flag with destination ``x``, read from

* a server-args object: a name ``args`` / ``cli_args`` / ``parsed_args`` / ``cmd_args`` or any name
  or attribute containing ``server_args`` (``server_args.x``, ``self.server_args.x``,
  ``model_runner.server_args.x``, ``global_server_args_dict["x"]``, ``getattr(server_args, "x")``);
* a call ``get_server_args()`` / ``get_global_server_args()`` or any zero-argument ``get_*()``
  accessor followed by at most two group attributes (``get_exec().mamba.x``,
  ``get_spec().speculative_algorithm``, ``get_flags().capture.enable_torch_compile``): sglang's
  runtime config groups are seeded from the server args;
* ``self.x`` only inside a class that declares flags (``ServerArgs`` and its mixins);
* a name ``server_args_x`` (a parameter that carries field ``x``);
* a zero-argument getter named after a multi-word destination, ``get_moe_runner_backend()``
  (sglang's module-level accessors for values initialised from the server args).

A bare ``self.x`` or ``config.x`` elsewhere is *not* a flag even when ``x`` happens to be a flag
destination: model and layer objects reuse names such as ``tp_size`` and ``dtype`` for their own
state, and calling those flags would send users to the command line for an internal invariant.
"""

from __future__ import annotations

import ast
import contextlib
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from extractor.analysis.facts import GuardAtom, Site
from extractor.analysis.walk import called_name, dotted_name
from extractor.prose.knowledge import ENV_NAME_RE, FlagInfo, Knowledge

_ARGS_NAMES = frozenset({"args", "cli_args", "parsed_args", "cmd_args"})
_SERVER_ARGS_CALL_RE = re.compile(r"^get_(global_)?server_args$")
_ACCESSOR_RE = re.compile(r"^get_[a-z][a-z0-9_]*$")
_ENV_RECEIVER_RE = re.compile(r"(^|_)envs$")
_ENV_HELPER_SKIP_RE = re.compile(
    r"^_?(set|del|update|temp|mock|init|destroy|cleanup|override|scoped|patch|unset|inject)"
)
# The deepest binding chain followed (``a = f(b)``, ``b = server_args.x``): enough for sglang's
# helpers, small enough that a self-referencing chain cannot loop.
BINDING_DEPTH = 3
FLAG_BINDING_DEPTH = 2


def _is_server_args_name(name: str) -> bool:
    return name in _ARGS_NAMES or "server_args" in name


# What another server told this one (``info.attn_cp_size`` of a prefill server's bootstrap
# record): the message may name the field, but it is that server's launch, not this one's. Such
# a value is a parameter typed, or a local built, as another server's info, or is named so.
_PEER_TYPE_RE = re.compile(r"(?:Prefill|Decode|Peer|Remote|Bootstrap)\w*Info\b")
_PEER_NAME_RE = re.compile(r"(?:^|_)(?:peer|remote)(?:_|$)|^(?:prefill|decode|bootstrap)_info$")


def is_peer(node: ast.expr, ctx: ReadContext) -> bool:
    """Whether ``node`` holds what another server reported."""
    if isinstance(node, ast.Name):
        return node.id in ctx.peers or bool(_PEER_NAME_RE.search(node.id))
    return isinstance(node, ast.Attribute) and bool(_PEER_NAME_RE.search(node.attr))


def _peers(site: Site, bindings: Mapping[str, Sequence[ast.expr]]) -> frozenset[str]:
    typed = {p.name for p in site.params if _PEER_TYPE_RE.search(p.annotation)}
    built = {
        name
        for name, values in bindings.items()
        if any(isinstance(v, ast.Call) and _PEER_TYPE_RE.search(called_name(v)) for v in values)
    }
    return frozenset(typed | built)


def _is_args_receiver(node: ast.expr, ctx: ReadContext | None = None, depth: int = 0) -> bool:
    """Whether ``node.x`` reads a server-args value."""
    if isinstance(node, ast.Name):
        if _is_server_args_name(node.id):
            return True
        if node.id == "self":
            return bool(ctx and ctx.self_is_args)
        # ``view = resolved_view(server_args)`` / ``sa = self.server_args``: the local is the args.
        if ctx is not None and depth < BINDING_DEPTH:
            values = ctx.bindings.get(node.id, ())
            return len(values) == 1 and _is_args_receiver(values[0], ctx, depth + 1)
        return False
    if isinstance(node, ast.Attribute):
        if _is_server_args_name(node.attr):
            return True
        # get_exec().mamba / get_flags().capture: one or two group hops above an accessor call.
        inner: ast.expr = node
        for _ in range(2):
            if not isinstance(inner, ast.Attribute):
                break
            inner = inner.value
            if isinstance(inner, ast.Call):
                return _is_accessor_call(inner)
        return False
    if isinstance(node, ast.Call):
        if _is_accessor_call(node) or _SERVER_ARGS_CALL_RE.match(called_name(node)):
            return True
        # A resolved view of the args: ``resolved_view(server_args)``, ``self._resolved()``.
        name = called_name(node)
        if "resolved" in name or name.endswith("atom_view"):
            if len(node.args) == 1 and not node.keywords:
                return _is_args_receiver(node.args[0], ctx, depth + 1)
            if not node.args and isinstance(node.func, ast.Attribute):
                return _is_args_receiver(node.func.value, ctx, depth + 1)
        return False
    return False


def _is_accessor_call(node: ast.Call) -> bool:
    name = called_name(node)
    if _SERVER_ARGS_CALL_RE.match(name):
        return True
    return not node.args and not node.keywords and bool(_ACCESSOR_RE.match(name))


def _is_os_environ(node: ast.expr) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr == "environ" and isinstance(node.value, ast.Name) and node.value.id == "os"
    return isinstance(node, ast.Name) and node.id == "environ"


def _never(name: str) -> bool:
    return False


@dataclass
class ReadContext:
    """What a read lookup needs about the site."""

    flags: Mapping[str, FlagInfo]
    self_is_args: bool
    bindings: Mapping[str, Sequence[ast.expr]]
    """Local name -> the values assigned to it."""
    attr_bindings: Mapping[str, Sequence[ast.expr]]
    """Dotted target (``self.tp_size``) -> the values assigned to it."""
    constants: Mapping[str, str]
    attr_roots: frozenset[str]
    """First names of the dotted ``attr_bindings`` targets (``self``)."""
    module_values: Mapping[str, ast.expr]
    named: frozenset[str] = frozenset()
    """Multi-word flag destinations the site's message names (``kv-cache-dtype``): a read of
    that attribute on any receiver (a resolved view, a parameter) is the flag's value."""
    peers: frozenset[str] = frozenset()
    """Local names that hold what another server reported (:func:`is_peer`)."""
    config_attrs: Mapping[str, str] = field(default_factory=dict)
    """``self.`` attribute -> the model config key the site's class's constructor copies into it
    (:func:`extractor.prose.config_fields.config_attributes`)."""
    env_on: Callable[[str], bool] = _never
    """Whether an environment variable is a boolean that is on unless turned off (looked up one
    name at a time: a file's cached result is kept under what it read)."""
    """Module-level name -> its value (``FLA_CI_ENV = os.getenv("FLA_CI_ENV") == "1"``)."""


def _str_value(node: ast.expr | None, ctx: ReadContext) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        # A local ``key = "SGLANG_X"`` first, then a module-level constant.
        local = ctx.bindings.get(node.id, ())
        if len(local) == 1:
            v = local[0]
            return v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else None
        return ctx.constants.get(node.id)
    return None


def _env_name(node: ast.expr | None, ctx: ReadContext) -> str | None:
    s = _str_value(node, ctx)
    if s and ENV_NAME_RE.match(s):
        return s
    return None


def flag_of_node(node: ast.AST, ctx: ReadContext) -> FlagInfo | None:
    """The flag whose value ``node`` itself is (not a sub-expression of it)."""
    if isinstance(node, ast.Name):
        # A parameter named after the field it carries: ``server_args_kv_cache_dtype``.
        if node.id.startswith("server_args_"):
            return ctx.flags.get(node.id[len("server_args_") :])
        # A name the function assigns is what it was assigned (``page_size = v.shape[1]``), even
        # when the message calls it by the flag's name.
        return ctx.flags.get(node.id) if node.id in ctx.named and node.id not in ctx.bindings else None
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
        info = ctx.flags.get(node.attr)
        if info is None:
            return None
        if _is_args_receiver(node.value, ctx):
            return info
        return info if node.attr in ctx.named and not is_peer(node.value, ctx) else None
    if isinstance(node, ast.Subscript):
        recv = node.value
        if isinstance(recv, ast.Name | ast.Attribute) and "server_args" in (
            recv.id if isinstance(recv, ast.Name) else recv.attr
        ):
            key = _str_value(node.slice, ctx)
            if key is not None:
                return ctx.flags.get(key)
        return None
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and node.args
        and "server_args" in (dotted_name(node.func.value) or "")
    ):
        # global_server_args_dict.get("x", default)
        key = _str_value(node.args[0], ctx)
        return ctx.flags.get(key) if key is not None else None
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        # ``get_moe_runner_backend()``: a getter named after a multi-word flag destination
        # returns that flag's (parsed) value.
        name = called_name(node)
        if name.startswith("get_") and "_" in name[4:]:
            return ctx.flags.get(name[4:])
        return None
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("getattr", "hasattr")
        and len(node.args) >= 2
    ):
        recv = node.args[0]
        key = _str_value(node.args[1], ctx)
        if key is not None and _is_args_receiver(recv, ctx):
            return ctx.flags.get(key)
    return None


def env_of_node(node: ast.AST, ctx: ReadContext) -> str | None:
    """The environment variable whose value ``node`` itself reads."""
    if isinstance(node, ast.Attribute):
        recv = node.value
        recv_name = (
            recv.id if isinstance(recv, ast.Name) else recv.attr if isinstance(recv, ast.Attribute) else ""
        )
        if _ENV_RECEIVER_RE.search(recv_name) and ENV_NAME_RE.match(node.attr):
            return node.attr
        return None
    if isinstance(node, ast.Subscript) and _is_os_environ(node.value):
        return _env_name(node.slice, ctx)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In | ast.NotIn):
        if _is_os_environ(node.comparators[0]):
            return _env_name(node.left, ctx)
        return None
    if isinstance(node, ast.Call):
        f = node.func
        first = node.args[0] if node.args else None
        if first is None:
            for kw in node.keywords:
                if kw.arg in ("name", "key", "env", "var", "env_var", "envvar"):
                    first = kw.value
        if (
            isinstance(f, ast.Attribute)
            and f.attr in ("get", "pop", "setdefault")
            and _is_os_environ(f.value)
        ):
            return _env_name(first, ctx)
        name = called_name(node)
        if name in ("getenv", "environ_get") or (
            "env" in name.lower() and not _ENV_HELPER_SKIP_RE.match(name) and name not in ("Env", "envs")
        ):
            return _env_name(first, ctx)
    return None


@dataclass
class Reads:
    flags: list[FlagInfo] = field(default_factory=list)
    envs: list[str] = field(default_factory=list)

    def add_flag(self, info: FlagInfo) -> None:
        if info not in self.flags:
            self.flags.append(info)

    def add_env(self, name: str) -> None:
        if name not in self.envs:
            self.envs.append(name)


# Builtins whose result is computed from their arguments alone: ``min(server_args.x, 8)`` still
# carries the flag's value.
_PURE_BUILTINS = frozenset(
    {
        "min",
        "max",
        "abs",
        "int",
        "float",
        "str",
        "bool",
        "len",
        "round",
        "sum",
        "any",
        "all",
        "tuple",
        "list",
        "set",
        "frozenset",
        "sorted",
        "getattr",
        "divmod",
        "pow",
    }
)


def _children(node: ast.AST, strict: bool) -> list[ast.AST]:
    """Sub-nodes to search. In ``strict`` mode (a binding's value) the arguments of a call that
    takes several are skipped: ``result = run(batch, server_args.model_path)`` does not make a
    guard on ``result`` a guard on ``--model-path``, while ``algo = from_string(server_args.x)``
    does."""
    if strict and isinstance(node, ast.Call):
        n_args = len(node.args) + len(node.keywords)
        transparent = isinstance(node.func, ast.Name) and node.func.id in _PURE_BUILTINS
        if not transparent and (n_args != 1 or any(isinstance(a, ast.Starred) for a in node.args)):
            return [node.func]
    return list(ast.iter_child_nodes(node))


# The only node types that can themselves be a flag or env read (or a name bound to one).
_READ_NODES = (ast.Attribute, ast.Subscript, ast.Call, ast.Compare, ast.Name)


def _collect(
    expr: ast.AST,
    ctx: ReadContext,
    out: Reads,
    depth: int = 0,
    seen: frozenset[str] = frozenset(),
    strict: bool = False,
) -> None:
    stack: list[ast.AST] = [expr]
    while stack:
        node = stack.pop()
        if not isinstance(node, _READ_NODES):
            stack.extend(reversed(_children(node, strict)))
            continue
        info = flag_of_node(node, ctx)
        if info is not None:
            out.add_flag(info)
            continue
        env = env_of_node(node, ctx)
        if env is not None:
            out.add_env(env)
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if depth < BINDING_DEPTH and node.id in ctx.bindings and node.id not in seen:
                for value in ctx.bindings[node.id]:
                    _collect(value, ctx, out, depth + 1, seen | {node.id}, strict=True)
            elif depth < BINDING_DEPTH and node.id in ctx.module_values and node.id not in seen:
                _collect(ctx.module_values[node.id], ctx, out, depth + 1, seen | {node.id}, strict=True)
            continue
        if isinstance(node, ast.Attribute) and ctx.attr_bindings and depth < BINDING_DEPTH:
            key = dotted_name(node)
            if key is not None and key in ctx.attr_bindings and key not in seen:
                for value in ctx.attr_bindings[key]:
                    _collect(value, ctx, out, depth + 1, seen | {key}, strict=True)
                continue
        # Reverse so the stack pops children in source order (flags are listed in reading order).
        stack.extend(reversed(_children(node, strict)))


_TARGET_RE = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*(?::[^=]*)?=(?!=)")


def read_context(site: Site, knowledge: Knowledge, constants: Mapping[str, str] | None) -> ReadContext:
    bindings: dict[str, list[ast.expr]] = {}
    attr_bindings: dict[str, list[ast.expr]] = {}
    for b in site.guard.bindings:
        # A flag read three assignments back is too far from the tested value to name it
        # (``size = param.numel() * ...`` is not ``--ep-num-redundant-experts``); those
        # bindings serve the origin of data (a parser's parameter), not the flag reads.
        if b.value is None or b.depth > FLAG_BINDING_DEPTH:
            continue
        m = _TARGET_RE.match(b.source)
        target = m.group(1) if m else b.name
        if "." in target:
            # ``self.tp_size = ...`` binds the attribute, not ``self``.
            attr_bindings.setdefault(target, []).append(b.value)
        else:
            bindings.setdefault(b.name, []).append(b.value)
    # Not ``constants or {}``: a ModuleConstants without string entries is falsy but may
    # still carry module-level expressions.
    consts: Mapping[str, str] = constants if constants is not None else {}
    flags = knowledge.flags_for(site.path)
    own = getattr(consts, "script_flags", None)
    if own:
        # A tool script parses its own command line: ``args.x`` there is its own ``--x``. Looked
        # through, not copied: a copy reads every flag, and a file's cached result is kept under
        # the flags it read.
        flags = _Overlay(own, flags)
    return ReadContext(
        flags=flags,
        self_is_args=knowledge.is_arg_class(site.path, site.in_class),
        bindings=bindings,
        attr_bindings=attr_bindings,
        config_attrs=getattr(consts, "config_attrs", {}).get((site.in_class or "").rsplit(".", 1)[-1], {}),
        constants=consts,
        attr_roots=frozenset(k.split(".", 1)[0] for k in attr_bindings),
        module_values=getattr(consts, "exprs", {}),
        named=_message_dests(site, flags),
        peers=_peers(site, bindings),
        env_on=lambda name: (info := knowledge.env_of(name)) is not None and info.on_by_default,
    )


class _Overlay(Mapping[str, FlagInfo]):
    """``{**under, **over}`` without the copy: a lookup asks ``over`` first, then ``under`` (and
    iterating gives the dict's order)."""

    def __init__(self, over: Mapping[str, FlagInfo], under: Mapping[str, FlagInfo]) -> None:
        self._over = over
        self._under = under

    def __getitem__(self, key: str) -> FlagInfo:
        found = self._over.get(key)
        return found if found is not None else self._under[key]

    def __iter__(self) -> Iterator[str]:
        yield from self._under
        yield from (k for k in self._over if k not in self._under)

    def __len__(self) -> int:
        return sum(1 for _ in self)


_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Anchored at a word start so a long run of letters is scanned once, not once per position.
_WORD_RE = re.compile(r"(?<![a-z0-9_-])[a-z][a-z0-9]*(?:[_-][a-z0-9]+)+")
# Flags are named near the start of a message; a generated giant is not read to its end.
_MESSAGE_SCAN = 4000


def _message_dests(site: Site, flags: Mapping[str, FlagInfo]) -> frozenset[str]:
    if site.message is None:
        return frozenset()
    # Placeholders are the code's own names (``{fuseep_mode}``), not flags the message names.
    text = re.sub(r"\{[^{}]*\}", " ", site.message.template[:_MESSAGE_SCAN]).lower()
    words = {w.replace("-", "_") for w in _WORD_RE.findall(text)}
    return frozenset(w for w in words if w in flags)


def _may_read(text: str, ctx: ReadContext) -> bool:
    """A cheap test on the atom's text: can it read a flag or env var at all? Every read goes
    through an identifier that names args/env/an accessor, ``self`` in an args class, or a
    local/module name bound to something (most atoms mention none of these)."""
    for ident in _IDENT_RE.findall(text):
        if "args" in ident or "env" in ident or ident.startswith("get_"):
            return True
        if ident in ctx.bindings or ident in ctx.module_values or ident in ctx.attr_roots:
            return True
        if (ident == "self" and ctx.self_is_args) or ident in ctx.named:
            return True
    return False


def _atom_reads(atom: GuardAtom, ctx: ReadContext) -> Reads:
    out = Reads()
    if atom.test is not None and _may_read(atom.text, ctx):
        with contextlib.suppress(RecursionError):
            _collect(atom.test, ctx, out)
    return out


def site_reads(site: Site, ctx: ReadContext) -> tuple[list[Reads], Reads]:
    per_atom = [_atom_reads(a, ctx) for a in site.guard.atoms]
    return per_atom, merged_reads(per_atom)


def merged_reads(each: Iterable[Reads]) -> Reads:
    """The flags and variables of ``each``, in reading order, each once."""
    total = Reads()
    for r in each:
        for f in r.flags:
            total.add_flag(f)
        for e in r.envs:
            total.add_env(e)
    return total


def guard_flags(site: Site, knowledge: Knowledge, constants: Mapping[str, str] | None = None) -> list[str]:
    """The flags (``--like-this``) whose values the site's guard reads, in reading order."""
    try:
        _, total = site_reads(site, read_context(site, knowledge, constants))
    except Exception:
        return []
    return [f.flag for f in total.flags]


def guard_env_vars(site: Site, knowledge: Knowledge, constants: Mapping[str, str] | None = None) -> list[str]:
    """The environment variables the site's guard reads, in reading order."""
    try:
        _, total = site_reads(site, read_context(site, knowledge, constants))
    except Exception:
        return []
    return list(total.envs)
