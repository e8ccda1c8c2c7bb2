"""The plain data one file contributes to the whole-target index.

Everything here is built from a syntax tree by :mod:`extractor.reach.file_index`, is cached per
blob as JSON (``to_plain`` / ``from_plain``: lists, strings and ints only, never pickle) and is
read back by :mod:`extractor.reach.target_index`. Names follow the site finder's qualnames
(``Class.method``, ``outer.<locals>.inner``, ``<module>``), so a record's scope finds its node.

A guard *atom* is the raw, knowledge-free shape of one conjunct of a test that may select code:

* ``["a", name, recv]``: an attribute or name read (``server_args.enable_x``: ``enable_x``) whose
  receiver kind ``recv`` is ``args`` (an args/config object), ``self``, ``name`` (a bare name),
  ``other``, or ``enum`` (a value of a class named after the choice: ``MoeRunnerBackend.X``, or
  ``backend.is_x()`` on a parameter annotated with that class);
* ``["v", name, recv, values...]``: the same compared with string literals (``== "x"``, ``in (...)``,
  ``get_x().is_y()``);
* ``["i", name, recv, values...]``: a value test method (``backend.is_deep_gemm()``, or an ``or`` of
  such tests of one value): the values are only
  trusted where the flag declares it among its choices;
* ``["e", NAME, values...]``: an environment variable read (set, or compared equal to one of
  the string values);
* ``["p", word]``: a platform test (``is_hip()``, ``_is_npu``, ``torch.version.hip``);
* ``["k", key, keys...]``: a value stored under ``key`` in a dict literal keyed by ``keys`` (the
  table runs the one entry its lookup picks);
* ``["K", table, key, keys...]``: the same for a module-level table read in a function: such a
  table is a registry of its own, judged by its name too;
* ``["t", callee]``: a call's value taken as true or as not None (``if f(x):``, ``if f(x) is not
  None:``, ``if cfg := f(x):``): what it means is read from the called function's
  :attr:`FileFacts.tests`.

Which of them are user-level selectors is decided later, against the target's flag knowledge.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

__all__ = ["FACTORY", "FACTS_VERSION", "LITERAL", "Call", "Def", "FileFacts", "Registration"]

FACTS_VERSION = 65
"""Bumped whenever the shape or meaning of the facts changes (part of the payload format)."""

LITERAL = "l"
"""The kind of an argument (or a local's value) that is one of some one-word strings, each
recorded as its own ``[slot, "l", word]`` (``"cross" if shared else "self"``)."""

Atom = tuple[str, ...]


@dataclass(frozen=True)
class Def:
    """A function, method or class defined in the file."""

    qualname: str
    kind: str
    """``f`` (function or method) or ``c`` (class)."""
    line: int
    owner: str
    """The class a method is defined in (its qualname), else ``""``."""
    bases: tuple[str, ...] = ()
    """For a class: its bases as dotted names with the file's imports applied."""
    guards: tuple[int, ...] = ()
    """Atoms (indexes into :attr:`FileFacts.atoms`) of the ``if`` blocks the definition sits in."""
    params: tuple[str, ...] = ()
    """For a function: its positional parameters in order (``self`` included)."""
    attrs: tuple[tuple[str, str], ...] = ()
    """For a class: ``(attribute, type expression)`` of what its methods store in ``self.x``
    (see :mod:`extractor.reach.receiver_facts`)."""
    returns: str = ""
    """For a function: the type expression of what it returns (``""``: unknown)."""
    unset: tuple[str, ...] = ()
    """For a function: the parameters whose default is ``None`` (``name``) or ``False`` (``name=``):
    left out by a call, they are not given."""
    decorated: bool = False
    """Whether it has a decorator: one may register it, and whoever holds the registry calls it."""
    required: tuple[str, ...] = ()
    """For a function: the positional parameters without a default."""
    rebound: tuple[tuple[str, int], ...] = ()
    """For a function: ``(parameter, line)`` of each of :attr:`unset` and :attr:`required` its own
    statements assign, with the first line that does (``if out is None: out = torch.empty(...)``):
    past that line it holds a value whether a call gave one or not."""


FACTORY = "()"
"""The end of :attr:`Call.callee` for a call of what a call returns (``get_pool_cls(x)(size)``):
the callee is the factory's dotted name with this appended."""


class Call(NamedTuple):
    """One call site: who calls what, under which guards and inside which ``try``.

    A tuple, so that the plain form (a JSON list) turns back into one without per-field work.
    """

    caller: str
    callee: str
    """Dotted text of the called expression with imports applied (``self.x``, ``pkg.mod.f``)."""
    line: int
    guards: Sequence[int] = ()
    catches: Sequence[str] | None = None
    """The exception names of the innermost enclosing ``try`` (``[]`` for a bare except), else None."""
    args: Sequence[Sequence[str]] = ()
    """Arguments that may carry a flag's value (:func:`extractor.reach.arguments.passed_args`)."""
    recv: str = ""
    """The type expression of the callee's head when it is a typed local or a call's value (``?``)."""
    ref: bool = False
    """A definition named as a value (``{"k": Foo}``, ``return Foo``, ``target=self.loop``), not called:
    whoever holds it may call it later, so it counts as a way in, but never as a caught call."""
    stored: str = ""
    """For a reference assigned to ``self.x`` (``self.get_fn = self._get_v2``): ``x``. Its ways in
    are the calls of ``self.x(...)``, under the assignment's guards too."""
    given: str = ""
    """The arguments it passes other than a literal ``None``, comma-separated: positions
    (``0``), keywords (``=score_mod``), and ``*`` / ``**`` for an unpacked sequence or mapping.
    A literal that tests false is marked ``!`` (``!=validate``, ``!2``): given, but no truth test passes."""


@dataclass(frozen=True)
class Registration:
    """A definition stored under string keys: ``@register("k")``, ``{"k": Cls}``, or a class-body
    list of class names (``models = [XForCausalLM]``: the keys are those names)."""

    target: str
    """The registered definition: a qualname of this file or a dotted imported name."""
    registry: str
    """The decorator's or the dict's name (``register_attention_backend``, ``QUANT_METHODS``)."""
    keys: tuple[str, ...]
    platform: str = ""
    """The platform a module-level gate registers it on alone (``if is_npu(): TABLE.update(...)``)."""


@dataclass
class FileFacts:
    """What one file defines, imports, calls, registers and declares as model entry classes."""

    path: str
    module: str
    imports: dict[str, str] = field(default_factory=dict)
    defs: list[Def] = field(default_factory=list)
    calls: dict[str, list[Any]] = field(default_factory=dict)
    """Call sites filed under the last name they call (``f`` for ``mod.f(...)``): each a
    :class:`Call` when built, a plain list when read back (``Call._make`` turns it into one)."""
    registrations: list[Registration] = field(default_factory=list)
    atoms: list[Atom] = field(default_factory=list)
    entry: tuple[str, ...] = ()
    """``EntryClass`` names: the architectures (or pipelines) a checkpoint picks this file by."""
    attrs: list[tuple[str, ...]] = field(default_factory=list)
    """``self.x = <value>`` in a method: ``(method qualname, x, kind, value)`` for values that may
    carry a flag (:func:`extractor.reach.arguments.value_source`)."""
    binds: list[tuple[str, ...]] = field(default_factory=list)
    """Names a function binds to a value that may carry a flag: ``(qualname, token, kind, value)``,
    token ``n:x`` for a parameter given a new value (``if x is None: x = _DEFAULT``) and ``g:X`` for
    a module global it declares ``global`` (a setter: ``_X = enable``)."""
    ops: list[tuple[str, str]] = field(default_factory=list)
    """Custom ops: ``(op name, function)`` of ``register_op(op_name="x", op_func=f)`` or of a
    function decorated ``@torch.library.custom_op("ns::x")``, the function as a dotted name with the
    file's imports applied; ``torch.ops.<namespace>.x(...)`` runs it."""
    tests: list[tuple[str, ...]] = field(default_factory=list)
    """What a module-level function's value says when it is true (or not None): ``("p", qualname,
    atom indexes...)`` for a predicate that only returns a test (``return args.enable_x``), its
    atoms, or whose every return of a true value sits under tests (``if args.enable_x: ... return
    True``, or after ``if not args.enable_x: return False``), the atoms they share; ``("c",
    qualname, class names...)`` for a function that returns something only when
    ``isinstance(x, C)`` holds for one of the classes (``None`` otherwise); ``("a", qualname,
    architectures..., .keys...)`` for one that returns whether the checkpoint's architecture is one
    of those (and, for each ``.key``, whether its config sets that key); ``("o", qualname, x...)``
    for a method that returns ``self.is_x() or ...``: true where any of those value tests is;
    ``("s", method qualname, x, atom indexes...)`` for ``self.x = <test>`` in a method, the atoms
    every way of that test being true implies (for ``self.x = True``, the tests around the store),
    with ``("S", method qualname, x)`` for each other value a method stores in such an ``x`` and
    ``("F", method qualname, x)`` for a false constant; ``("x", method qualname, y, atom
    indexes...)`` and ``("X", method qualname, y)`` the same for ``obj.y = True`` and another value
    stored on an object other than ``self`` (``self.experts.use_y = True``)."""
    agreed: list[str] = field(default_factory=list)
    """Attributes (flag destinations) filled from a derived value when not given, and refused when a
    given value disagrees with it (:mod:`extractor.reach.agreement`)."""
    drafts: list[str] = field(default_factory=list)
    """Architectures a checkpoint is renamed to when loaded as a draft (:mod:`extractor.reach.drafts`)."""
    drafting: list[str] = field(default_factory=list)
    """Functions that build a draft (``is_draft_worker=True``), by qualname."""
    forced: list[tuple[str, ...]] = field(default_factory=list)
    """Settings the file forces for architectures: ``(setting, value, architecture...)``
    (:mod:`extractor.reach.forced`)."""
    sets: list[tuple[str, ...]] = field(default_factory=list)
    """Settings a function registered for architectures writes for them: ``(setting, values, how,
    architecture...)`` (:func:`extractor.reach.forced.set_by_function`)."""
    abstract: list[str] = field(default_factory=list)
    """Methods declared ``@abstractmethod``, by qualname: their body runs only through an override's
    ``super()`` call."""
    named: list[str] = field(default_factory=list)
    """Attribute names looked up by string (``getattr(x, "name", None)``): a method of that name
    may run though no call spells it. ``hasattr`` only tests for one, and runs nothing."""
    imported: list[tuple[str, ...]] = field(default_factory=list)
    """Import statements that run: ``(qualname or <module>, dotted module or name, guard atom
    indexes...)``; one under ``if TYPE_CHECKING:`` is left out."""
    dynamic: list[str] = field(default_factory=list)
    """Module names (or name prefixes ending in ``.``) a call spells as a string
    (``import_module("sglang.x")``, ``register("k", "sglang.x", "C")``): imported where no import
    statement shows it."""
    mentions: list[str] = field(default_factory=list)
    """Names the file spells other than as the last name of a call: attributes and names it reads,
    the identifier words of its strings (docstrings aside), and the fixed ends of its f-strings
    (``forward_*`` of ``getattr(self, f"forward_{key}")``, ``*_communicator``). A function whose
    name no file calls or mentions is run by nothing in the target."""

    def to_plain(self) -> dict[str, Any]:
        """JSON-ready lists and strings; :meth:`from_plain` rebuilds the same facts."""
        return {
            "v": FACTS_VERSION,
            "path": self.path,
            "module": self.module,
            "imports": dict(sorted(self.imports.items())),
            "defs": [
                [
                    d.qualname,
                    d.kind,
                    d.line,
                    d.owner,
                    list(d.bases),
                    list(d.guards),
                    list(d.params),
                    [list(a) for a in d.attrs],
                    d.returns,
                    list(d.unset),
                    d.decorated,
                    list(d.required),
                    [list(r) for r in d.rebound],
                ]
                for d in self.defs
            ],
            "calls": {
                name: [
                    [
                        c[0],
                        c[1],
                        c[2],
                        list(c[3]),
                        None if c[4] is None else list(c[4]),
                        [list(a) for a in c[5]],
                        c[6],
                        c[7],
                        c[8],
                        c[9],
                    ]
                    for c in calls
                ]
                for name, calls in sorted(self.calls.items())
            },
            "regs": [[r.target, r.registry, list(r.keys), r.platform] for r in self.registrations],
            "atoms": [list(a) for a in self.atoms],
            "entry": list(self.entry),
            "attrs": [list(a) for a in self.attrs],
            "binds": [list(b) for b in self.binds],
            "ops": [list(o) for o in self.ops],
            "agreed": list(self.agreed),
            "drafts": list(self.drafts),
            "drafting": list(self.drafting),
            "forced": [list(f) for f in self.forced],
            "sets": [list(f) for f in self.sets],
            "tests": [list(t) for t in self.tests],
            "abstract": list(self.abstract),
            "named": list(self.named),
            "imported": [list(i) for i in self.imported],
            "dynamic": list(self.dynamic),
            "mentions": list(self.mentions),
        }

    @classmethod
    def from_plain(cls, data: dict[str, Any]) -> FileFacts | None:
        """Facts from :meth:`to_plain` output; None when the data is of another version or shape."""
        if not isinstance(data, dict) or data.get("v") != FACTS_VERSION:
            return None
        try:
            return cls(
                path=str(data["path"]),
                module=str(data["module"]),
                imports={str(k): str(v) for k, v in data["imports"].items()},
                defs=[
                    Def(
                        q,
                        k,
                        int(n),
                        o,
                        tuple(b),
                        tuple(g),
                        tuple(p),
                        tuple((str(x), str(y)) for x, y in a),
                        str(r),
                        tuple(str(u) for u in un),
                        bool(dec),
                        tuple(str(x) for x in req),
                        tuple((str(x), int(y)) for x, y in reb),
                    )
                    for q, k, n, o, b, g, p, a, r, un, dec, req, reb in data["defs"]
                ],
                calls=_calls(data["calls"]),
                registrations=[Registration(t, r, tuple(k), str(p)) for t, r, k, p in data["regs"]],
                atoms=[tuple(str(x) for x in a) for a in data["atoms"]],
                entry=tuple(data["entry"]),
                attrs=[tuple(str(x) for x in a) for a in data["attrs"]],
                binds=[tuple(str(x) for x in b) for b in data["binds"]],
                ops=[(str(n), str(t)) for n, t in data["ops"]],
                agreed=[str(a) for a in data["agreed"]],
                drafts=[str(a) for a in data["drafts"]],
                drafting=[str(a) for a in data["drafting"]],
                forced=[tuple(str(x) for x in f) for f in data["forced"]],
                sets=[tuple(str(x) for x in f) for f in data["sets"]],
                tests=[tuple(str(x) for x in t) for t in data["tests"]],
                abstract=[str(q) for q in data["abstract"]],
                named=[str(n) for n in data["named"]],
                imported=[tuple(str(x) for x in i) for i in data["imported"]],
                dynamic=[str(d) for d in data["dynamic"]],
                mentions=[str(m) for m in data["mentions"]],
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            return None


def _calls(plain: Any) -> dict[str, list[Any]]:
    # Kept plain (checked only for shape): most are never resolved, so never looked at again.
    if not isinstance(plain, dict) or not all(isinstance(v, list) for v in plain.values()):
        raise ValueError("calls are a mapping of lists")
    return {str(k): v for k, v in plain.items()}
