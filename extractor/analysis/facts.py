"""What the analysis knows about one site, handed from the analysis stages to enrichment.

These are plain frozen dataclasses: :mod:`extractor.analysis.sites` fills the location and class,
:mod:`extractor.analysis.messages` the message, :mod:`extractor.analysis.conditions` the guard, and
:mod:`extractor.analysis.context` the source window; :mod:`extractor.prose.enrich` turns them into prose.
"""

from __future__ import annotations

import ast
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from extractor.analysis.handling import Handled

SiteKind = Literal["raise", "assert", "response"]
AtomKind = Literal[
    "if", "else", "elif-negated", "early-exit", "assert", "except", "match", "while", "ternary"
]
AtomRole = Literal["deciding", "gate", "survivor"]
"""What an atom does for the site: ``deciding`` is the test of the ``if`` (with its ``elif``
chain) or ``match`` that holds the raise, an assert's test, or, with neither, the early exits that
dispatch away before it; a ``gate`` only selects the code path (enclosing branches, handlers);
a ``survivor`` is the negation of an earlier check that raised (``if c: raise`` gives ``not c``)."""


@dataclass(frozen=True)
class Message:
    """The message a site raises with.

    ``template`` writes every dynamic part as ``{source text}`` (conversion and format spec kept);
    ``pattern`` is a Python regex that full-matches every runtime rendering; ``parts`` holds the
    literal pieces and dynamic expressions in order (``str`` for literal text, ``Placeholder``
    for dynamic parts), so other stages can reason about it.
    """

    template: str
    pattern: str
    parts: tuple[str | Placeholder, ...] = ()


@dataclass(frozen=True)
class Raised:
    """What a raise statement raises: class as written, message, HTTP status, error code."""

    error_class: str
    message: Message | None = None
    status: int | None = None
    code: str | None = None

    def __post_init__(self) -> None:
        # Python reads identifiers NFKC-normalised: ``raise ＶalueError`` raises the builtin.
        if not self.error_class.isascii():
            object.__setattr__(self, "error_class", unicodedata.normalize("NFKC", self.error_class))


@dataclass(frozen=True)
class Placeholder:
    """A dynamic part of a message: its source text as written, e.g. ``dtype!r`` or ``x:.2f``.

    ``prefix`` is literal text the runtime prints before the value: for a self-documenting
    ``{x=}`` it is ``x=``.
    """

    source: str
    prefix: str = ""


@dataclass(frozen=True)
class GuardAtom:
    """One atom of the guard that must hold for the site to run.

    ``text`` is the atom as ``ast.unparse`` prints it in the direction that leads to the site
    (``not x > 0`` for an else branch); ``test`` is the positive expression as written in the
    code (``None`` for an ``except`` atom) and ``negated`` says whether the site runs when it is
    false. ``line`` is where the test sits.
    """

    text: str
    kind: AtomKind
    test: ast.expr | None
    negated: bool
    line: int
    role: AtomRole = "deciding"


@dataclass(frozen=True)
class LocalBinding:
    """An assignment in the enclosing function to a name the guard reads, as source text."""

    name: str
    source: str
    value: ast.expr | None
    line: int
    always: bool = True
    """Whether the assignment runs on every path to the site (not inside a branch of its own)."""
    depth: int = 1
    """How many assignments back from the guard it was found (1: the guard reads its name)."""


@dataclass(frozen=True)
class Param:
    """A parameter of the site's function: its annotation as written (``""`` when none) and
    the expressions the callers in the same file pass for it."""

    name: str
    annotation: str = ""
    passed: tuple[str, ...] = ()


@dataclass(frozen=True)
class Guard:
    """The whole guard path to a site inside its enclosing function (or module)."""

    atoms: tuple[GuardAtom, ...] = ()
    bindings: tuple[LocalBinding, ...] = ()
    handlers: tuple[str, ...] = ()
    """The exception types of enclosing ``except`` handlers, as written (``jinja2.TemplateError``)."""
    ruled_out: tuple[GuardAtom, GuardAtom] | None = None
    """A deciding atom and the path atom that requires its opposite: the site cannot run
    (:mod:`extractor.analysis.ruled_out`)."""
    asserted: tuple[GuardAtom, ...] = ()
    """What the ``assert`` statements that run before the site on every path to it require: they
    passed when the site is reached (no guard atoms: a fix must only keep them passing)."""

    @property
    def handler_atoms(self) -> list[str]:
        """The ``except E`` atoms, outermost first."""
        return [a.text for a in self.atoms if a.kind == "except"]

    @property
    def expression(self) -> str:
        """The whole guard as one Python expression (``True`` when unconditional)."""
        parts = [a.text for a in self.atoms if a.kind != "except"]
        return and_join(parts) if parts else "True"

    def validation_code(self) -> str:
        """Assignments of the local names the guard reads, then the guard as one expression.

        Enclosing ``except`` handlers cannot be written as an expression; they lead as comments.
        """
        lines = [f"# reached in: {h}" for h in self.handler_atoms]
        lines.extend(b.source for b in self.bindings)
        lines.append(self.expression)
        return "\n".join(lines)


def and_join(parts: Sequence[str]) -> str:
    """Python conditions joined by ``and``, each kept one operand of the whole."""
    if len(parts) == 1:
        return parts[0]
    return " and ".join(_paren_for_and(p) for p in parts)


def _paren_for_and(text: str) -> str:
    # An atom that is itself an ``or`` chain, a lambda or a conditional expression needs
    # parentheses to stay one operand of the joined ``and``.
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return f"({text})"
    if isinstance(node, ast.Lambda | ast.IfExp | ast.NamedExpr):
        return f"({text})"
    # An ``and`` chain joins the whole as it is: ``a and (b and c)`` reads as ``a and b and c``.
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
        return f"({text})"
    return text


@dataclass(frozen=True)
class Site:
    """One ``raise`` or ``assert`` with everything the analysis learned about it."""

    path: str
    kind: SiteKind
    line: int
    end_line: int
    error_class: str
    """As written (``ValueError``, ``errors.MMError``); ``AssertionError`` for asserts."""
    qualname: str
    """``Class.method``, ``function``, ``outer.<locals>.inner`` or ``<module>``."""
    message: Message | None
    guard: Guard
    http_status: int | None
    statement: str
    """The complete raise/assert statement as written."""
    comments: tuple[str, ...] = ()
    """Comment lines directly above the innermost guard (or the site), without ``#``."""
    window: tuple[int, int] = (0, 0)
    """First and last line of ``sourceCode``."""
    source_lines: tuple[str, ...] = field(default=(), repr=False)
    """Lines window[0]..window[1] of the file."""
    error_code: str | None = None
    is_async: bool = False
    in_class: str | None = None
    class_bases: tuple[str, ...] = ()
    """The last names of the bases the site's class names (``PretrainedConfig``), as written."""
    handled: Handled | None = field(default=None, repr=False)
    """Whether its own function catches the raise (:mod:`extractor.analysis.handling`)."""
    doc: str = ""
    """The first paragraph of the docstring of the site's function."""
    class_doc: str = ""
    """The first paragraph of the docstring of the site's class."""
    params: tuple[Param, ...] = ()
    """The parameters of the site's function (see :func:`extractor.analysis.docstrings.parameters`)."""
    message_constants: tuple[tuple[str, str], ...] = ()
    """String constants the message prints that another module of the target defines, as
    ``(name, text)``: the template keeps ``{NAME}``, but the user reads the text (advice included)."""
    passes_on: str | None = None
    """The name an enclosing ``except ... as name`` binds, when the raise hands that caught error on
    (in its message, or as ``raise ... from name``): the error to fix is then the caught one."""
    after_loop: int = 0
    """The line of the ``for``/``while`` whose failing on every pass the site follows (0 when
    none): the loop's ``else`` holds the site (it runs when no ``break`` ended the loop), or the
    loop returns on success and the site comes after it."""
    loop_over: str = ""
    """What that loop goes through, when it is a ``for`` over candidates (``self.specs[op]``,
    ``families``): none of them matched or worked. Empty for a retry loop (``while``, ``for _ in
    range(n)``) or no loop."""
    validates: tuple[str, ...] | None = None
    """For a site in a pydantic validator (``@field_validator("role")``, ``@model_validator``):
    the fields it validates (empty for a whole-model validator); None elsewhere. What it checks is
    the data the model is built from (a request body, a file), not the server's state."""
    config_attrs: tuple[tuple[str, ...], ...] = ()
    """In model code, the attributes of the site's class filled from keys of the checkpoint's
    config, as ``(attribute, key, ...)`` (:mod:`extractor.analysis.config_attrs`)."""
    library_calls: tuple[str, ...] = ()
    """For a raise that hands on its caught error, the functions of other packages its ``try``
    block calls (``simm.kv.register_mr``): :mod:`extractor.analysis.library_calls`."""
    parsed: tuple[tuple[str, ast.expr], ...] = ()
    """For a raise that hands on its caught error, the texts its ``try`` block parses, as ``(format,
    argument)`` (``("JSON", server_args.extra_config)``): :func:`extractor.analysis.library_calls.parsed_values`."""
