"""Fuzzing with generated valid Python (hypothesmith): the extractor never raises, and it finds
exactly the raise/assert sites that :mod:`ast` finds.

The census is the scorer's (``shared/eval/score.py``): every ``raise`` with an exception except the
re-raise of a name an enclosing ``except ... as name`` bound, and every ``assert`` with a message.
hypothesmith rarely writes a ``raise`` on its own, so besides plain generated modules the tests
wrap generated code in site-bearing templates whose conditions and messages are expressions taken
from the generated code. Nothing generated is ever run.

A handful of examples run by default; ``SGLANG_ERRORS_FUZZ=1`` (or ``HYPOTHESIS_PROFILE=long``)
runs the long profile, as LibCST gates its own hypothesmith fuzzing.
"""

from __future__ import annotations

import ast
import textwrap
import warnings
from collections import Counter

import hypothesmith
import orjson
import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from extractor.engine.pipeline import analyse_file, check_outcome
from extractor.prose.knowledge import Knowledge
from extractor.types import Parsed
from tests.census import census
from tests.hostile import fuzz_settings

# hypothesmith compiles what it generates; CPython warns about odd but valid code ("'int' object is
# not callable"), which is noise here.
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")

PATH = "python/sglang/generated.py"
# Built once: each call compiles hypothesmith's grammar, seconds of work.
GRAMMAR = hypothesmith.from_grammar()
REPO = "sgl-project/sglang"


def check(source: str) -> None:
    """The property: a result (never an exception), parsed, with the census's sites, serialisable."""
    data = source.encode("utf-8", "surrogatepass")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        assume(False)
        return
    payload = analyse_file(PATH, data, REPO, Knowledge.empty())
    assert isinstance(payload, Parsed), f"{payload}\n---\n{source}"
    found = Counter(r["lineNumber"] for r in payload.records)
    assert found == census(tree), (
        f"extractor {sorted(found.elements())} vs ast {sorted(census(tree).elements())}\n---\n{source}"
    )
    assert payload.sites == sum(found.values())
    # What a worker sends back: every record validates and the payload serialises.
    checked = check_outcome(payload, PATH, REPO)
    assert isinstance(checked, Parsed), checked
    orjson.dumps(checked.to_plain())


# --------------------------------------------------------------------------- plain generated modules


@fuzz_settings(default=15, long=1500)
@given(GRAMMAR)
@example("raise ValueError('x')\n")
@example(
    "try:\n    pass\nexcept E as e:\n    raise e\nexcept F as f:\n    def g():\n        raise f\n    raise f from e\n"
)
def test_grammar_modules(source: str) -> None:
    check(source)


@fuzz_settings(default=3, long=300)
@given(hypothesmith.from_node())
def test_cst_node_modules(source: str) -> None:
    check(source)


# --------------------------------------------------------------------------- generated code with sites

# Each template holds sites; {body} is generated code, {e1}..{e4} are expressions taken from it.
TEMPLATES = [
    "def f{k}(a, b):\n{body}\n    if {e1}:\n        raise ValueError({e2})\n    assert {e3}, {e4}\n",
    "class C{k}:\n    def m(self, a):\n{body2}\n        raise RuntimeError(f'''{{{e1}}} failed''') from {e2}\n",
    "try:\n{body}\nexcept Exception as err{k}:\n    raise err{k}\nexcept (OSError, KeyError) as other:\n"
    "    raise RuntimeError({e1}) from other\nelse:\n    raise\n",
    "{piece}\nraise {e1}\n",
    "for _ in {e1}:\n{body}\n    if {e2}: raise KeyError({e3})\nelse:\n    assert {e4}\n",
    "match {e1}:\n    case {{'k': v}}:\n        raise ValueError(v)\n    case _:\n{body2}\n",
    "while {e1}:\n{body}\n    raise TypeError('%s and %s' % ({e2}, {e3}))\n",
    "def outer{k}():\n    try:\n{body2}\n    except E as e:\n        def inner():\n            raise e\n"
    "        raise ValueError('{{}} {{!r}}'.format({e1}, {e2}))\n",
    "async def g{k}(a):\n{body}\n    assert {e1}, 'static ' + {e2}\n    raise NotImplementedError\n",
    "if {e1}:\n    pass\nelif {e2}:\n{body}\nelse:\n    raise OSError(a, {e3}); assert {e4}, {e1}\n",
]


def expressions(source: str) -> list[str]:
    """Source text of the expressions in generated code (what the templates use as conditions and messages)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.expr) and not isinstance(node, ast.Starred | ast.Slice):
            text = ast.get_source_segment(source, node)
            if text and "\n" not in text and len(text) < 200:
                found.append(text)
    return found


@st.composite
def site_modules(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(GRAMMAR, min_size=1, max_size=3))
    exprs = [e for piece in pieces for e in expressions(piece)] or ["a"]
    pick = st.sampled_from([*exprs, "a", "b.c", "x[0]", "f(a)", "'literal'", "None"])
    out = []
    for k, piece in enumerate(pieces):
        template = draw(st.sampled_from(TEMPLATES))
        out.append(
            template.format(
                k=k,
                piece=piece,
                body=textwrap.indent(piece, "    ") + "\n    pass",
                body2=textwrap.indent(piece, "        ") + "\n        pass",
                e1=draw(pick),
                e2=draw(pick),
                e3=draw(pick),
                e4=draw(pick),
            )
        )
    return "\n".join(out)


@fuzz_settings(default=25, long=2500)
@given(site_modules())
def test_generated_code_with_sites(source: str) -> None:
    check(source)
