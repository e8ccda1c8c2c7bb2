"""Guard atoms: unit cases, and a differential property test over generated branch shapes.

The property test generates a function over boolean parameters whose one target site sits behind
``if``/``elif``/``else`` branches, ``match`` cases, ``for`` loops, early exits
(``return``/``raise``/``continue``/``break`` in all branches but one) and its own ``assert``, runs
it for every combination of inputs, and checks that the extracted guard (``validationCode``:
bindings, then one expression) is true exactly on the inputs that reach the target.
Shapes the labelling rules deliberately leave out (an earlier assert, an exit nested inside a
branch that also falls through) are not generated: for those the guard is, by rule, only
necessary.
"""

from __future__ import annotations

import ast
import itertools
import textwrap
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from extractor.analysis.analyse import analyse
from extractor.analysis.conditions import guard_atoms, negate, pattern_test, split_and
from extractor.analysis.facts import Site
from extractor.analysis.parse import ParsedFile, parse_source
from extractor.analysis.sites import find_sites
from tests.profiles import examples


def sites_of(source: str) -> list[Site]:
    parsed = parse_source("fixture.py", textwrap.dedent(source).encode())
    assert isinstance(parsed, ParsedFile), parsed
    return analyse(parsed)


def atoms(source: str) -> list[list[str]]:
    return [[a.text for a in s.guard.atoms] for s in sites_of(source)]


# --------------------------------------------------------------------------- unit cases


def test_negation_is_printed_as_unparse_prints_it() -> None:
    def neg(text: str) -> str:
        return negate(ast.parse(text, mode="eval").body)

    assert neg("x > 0") == "not x > 0"
    assert neg("a or b") == "not (a or b)"
    assert neg("not p") == "not not p"
    assert [
        ast.unparse(t) for t in split_and(ast.parse("a and (b and c) and (d or e)", mode="eval").body)
    ] == [
        "a",
        "b",
        "c",
        "d or e",
    ]


def test_elif_negates_every_earlier_test() -> None:
    got = atoms(
        """
        def f(a, b, c):
            if a:
                pass
            elif b and c:
                pass
            elif c or a:
                raise ValueError("x")
        """
    )
    assert got == [["not a", "not (b and c)", "c or a"]]


def test_if_else_where_only_one_branch_falls_through() -> None:
    got = atoms(
        """
        def f(backend, layer):
            for layer in range(3):
                if backend == "x":
                    y = 1
                else:
                    raise ValueError("unsupported")
                if layer is None:
                    raise RuntimeError("missing")
        """
    )
    assert got == [["not backend == 'x'"], ["backend == 'x'", "layer is None"]]


def test_earlier_assert_and_loops_contribute_nothing() -> None:
    got = atoms(
        """
        def f(xs, n):
            assert n > 0, "n"
            while n:
                for x in xs:
                    assert x != n, "equal"
        """
    )
    assert got == [["not n > 0"], ["not x != n"]]


def test_except_handler_atoms_and_validation_code_comment() -> None:
    (site,) = sites_of(
        """
        def f(g, strict):
            try:
                g()
            except (KeyError, IndexError) as e:
                if strict:
                    raise ValueError("bad") from e
        """
    )
    assert [a.text for a in site.guard.atoms] == ["except (KeyError, IndexError)", "strict"]
    assert site.guard.validation_code() == "# reached in: except (KeyError, IndexError)\nstrict"


def roles(source: str) -> list[list[tuple[str, str]]]:
    return [[(a.text, a.role) for a in s.guard.atoms] for s in sites_of(source)]


def test_an_earlier_error_response_is_a_survivor_not_the_deciding_condition() -> None:
    # An HTTP handler's earlier ``return self.create_error_response(...)`` is a check of its own:
    # the later raise is reached only after it passed, so negating it is never the cause.
    got = roles(
        """
        def create(self, request):
            if not request.tools:
                return self.create_error_response("tools are required")
            if request.n > 4:
                raise ValueError("n is too large")
        """
    )
    assert got[-1] == [("not not request.tools", "survivor"), ("request.n > 4", "deciding")]


def test_a_raise_in_an_except_handler_is_decided_by_the_caught_error() -> None:
    # The early exits before the ``try`` decide too: every way of returning first was missed.
    got = roles(
        """
        def device():
            if is_cuda():
                return "cuda"
            try:
                return plugin_device()
            except LookupError as e:
                raise RuntimeError("no accelerator") from e
        """
    )
    assert got[-1] == [("not is_cuda()", "deciding"), ("except LookupError", "deciding")]


def test_an_if_around_the_try_only_selects_the_path_to_its_handler() -> None:
    got = roles(
        """
        def generate(obj):
            if obj.stream:
                return stream(obj)
            else:
                try:
                    return run(obj)
                except ValueError as e:
                    raise BadRequest(str(e))
        """
    )
    assert got[-1] == [("not obj.stream", "gate"), ("except ValueError", "deciding")]


def test_an_assert_decides_by_its_own_test_and_the_if_around_it_is_a_gate() -> None:
    got = roles(
        """
        def check(self):
            if self.impl == "ascend":
                assert is_npu(), "only on NPU"
            if self.mode == "strict":
                assert False, "strict mode is gone"
        """
    )
    assert got[0] == [("self.impl == 'ascend'", "gate"), ("not is_npu()", "deciding")]
    # ``assert False`` is a raise spelled as an assert: the ``if`` decides.
    assert ("self.mode == 'strict'", "deciding") in got[1]


def test_an_early_exit_decides_a_bare_raise_but_only_selects_the_path_to_an_assert() -> None:
    got = roles(
        """
        def fused(rows, index):
            if rows > 64 or not index.is_cuda:
                return None
            assert index.stride(0) == 1


        def device():
            if is_cuda():
                return "cuda"
            raise RuntimeError("no accelerator")
        """
    )
    # On CUDA the fused path runs and the stride decides; the device test is not why it failed.
    assert got[0] == [
        ("not (rows > 64 or not index.is_cuda)", "gate"),
        ("not index.stride(0) == 1", "deciding"),
    ]
    assert got[1] == [("not is_cuda()", "deciding")]


def test_an_early_exit_before_a_search_loop_only_selects_the_path_to_the_raise_after_it() -> None:
    got = roles(
        """
        def wrap(layer):
            if getattr(layer, "is_special", False):
                return Special(layer)
            for kind, wrapper in SUPPORTED.items():
                if isinstance(layer, kind):
                    return wrapper(layer)
            raise TypeError("no wrapper for this layer")


        def pick(value):
            for member in MEMBERS:
                if member == value:
                    return member
            if value is None:
                return DEFAULT
            raise ValueError("no member")
        """
    )
    # The loop finding nothing decides; the early return before it only leads into the loop.
    assert got[0] == [("not getattr(layer, 'is_special', False)", "gate")]
    # An early exit after the loop still decides the raise that follows it.
    assert got[1] == [("not value is None", "deciding")]


def test_match_cases_become_comparisons() -> None:
    got = atoms(
        """
        def f(cmd, n):
            match cmd:
                case "a" | "b":
                    pass
                case int() if n > 1:
                    raise ValueError("int")
        """
    )
    assert got == [["not cmd in ('a', 'b')", "isinstance(cmd, int)", "n > 1"]]


def test_pattern_test_wildcard_is_none() -> None:
    subject = ast.Name("x", ast.Load())
    assert pattern_test(subject, ast.MatchAs(pattern=None, name=None)) is None


def test_nested_function_sees_only_its_own_scope() -> None:
    got = atoms(
        """
        def outer(a):
            if a:
                def inner(b):
                    if b:
                        raise ValueError("inner")
                return inner
        """
    )
    assert got == [["b"]]


def test_bindings_are_carried_and_parse() -> None:
    (site,) = sites_of(
        """
        def f(spec, n):
            algo = (spec.algorithm or "").upper()
            count = n
            count += 1
            if algo == "X" and count > 2:
                raise ValueError("x")
        """
    )
    code = site.guard.validation_code()
    assert code.splitlines()[:3] == ["algo = (spec.algorithm or '').upper()", "count = n", "count += 1"]
    ast.parse(code)


def test_guard_atoms_of_raw_sites_match_analysis() -> None:
    source = "def f(a):\n    if a:\n        raise ValueError('x')\n"
    raw = find_sites(ast.parse(source))
    assert [a.text for a in guard_atoms(raw[0])] == ["a"]


# --------------------------------------------------------------------------- property test

VARS = ("a", "b", "c", "d")
TARGET = "TARGET"


@st.composite
def guard_test(draw: st.DrawFn) -> str:
    x, y = draw(st.sampled_from(VARS)), draw(st.sampled_from(VARS))
    form = draw(
        st.sampled_from(
            [
                "{x}",
                "not {x}",
                "{x} and {y}",
                "{x} or {y}",
                "({x} or {y}) and not {x}",
                "{x} == {y}",
                "t",
                "not t",
            ]
        )
    )
    return form.format(x=x, y=y)


def indent(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]


@st.composite
def exit_stmt(draw: st.DrawFn, in_loop: bool) -> list[str]:
    options = ["return None", 'raise RuntimeError("other")']
    if in_loop:
        options += ["continue", "break"]
    if draw(st.integers(0, 4)) == 0:
        # A compound exit: every branch of it leaves.
        return [
            f"if {draw(guard_test())}:",
            "    " + draw(st.sampled_from(options)),
            "else:",
            "    " + draw(st.sampled_from(options)),
        ]
    return [draw(st.sampled_from(options))]


@st.composite
def pre_statement(draw: st.DrawFn, in_loop: bool) -> list[str]:
    """A statement before the target on its path: inert, or an if-chain with one survivor."""
    kind = draw(st.sampled_from(["inert", "early-exit", "early-exit", "no-exit-chain"]))
    if kind == "inert":
        return ["x = 1"]
    n = draw(st.integers(1, 3))
    tests = [draw(guard_test()) for _ in range(n)]
    has_else = draw(st.booleans())
    bodies = n + (1 if has_else else 0)
    if kind == "no-exit-chain":
        exits = [False] * bodies
    else:
        survivor = draw(st.integers(0, bodies)) if not has_else else draw(st.integers(0, bodies - 1))
        # survivor == bodies means: every written branch exits and the implicit else falls through
        exits = [i != survivor for i in range(bodies)]
    lines: list[str] = []
    for i, test in enumerate(tests):
        lines.append(("if " if i == 0 else "elif ") + test + ":")
        lines.extend(indent(draw(exit_stmt(in_loop)) if exits[i] else ["x = 2"]))
    if has_else:
        lines.append("else:")
        lines.extend(indent(draw(exit_stmt(in_loop)) if exits[-1] else ["x = 3"]))
    return lines


@st.composite
def block(draw: st.DrawFn, depth: int, in_loop: bool) -> list[str]:
    """Statements ending in the container that holds the target (or the target itself)."""
    lines: list[str] = []
    for _ in range(draw(st.integers(0, 2))):
        lines.extend(draw(pre_statement(in_loop)))
    kind = draw(st.sampled_from(["target", "assert"] + (["if", "if", "loop", "match"] if depth < 3 else [])))
    if kind == "target":
        lines.append(f'raise ValueError("{TARGET}")')
    elif kind == "assert":
        lines.append(f'assert {draw(guard_test())}, "{TARGET}"')
    elif kind == "loop":
        lines.append("for _ in range(1):")
        lines.extend(indent(draw(block(depth + 1, True))))
    elif kind == "match":
        var = draw(st.sampled_from(VARS))
        k = draw(st.integers(0, 2))
        lines.append(f"match {var}:")
        for i, case in enumerate(["True", "False", "_"]):
            lines.append(f"    case {case}:")
            body = draw(block(depth + 1, in_loop)) if i == k else ["x = 4"]
            lines.extend(indent(indent(body)))
    else:
        n = draw(st.integers(1, 3))
        has_else = draw(st.booleans())
        where = draw(st.integers(0, n - (0 if has_else else 1)))
        for i in range(n):
            lines.append(("if " if i == 0 else "elif ") + draw(guard_test()) + ":")
            body = (
                draw(block(depth + 1, in_loop))
                if i == where
                else [draw(st.sampled_from(["x = 5", "return None"]))]
            )
            lines.extend(indent(body))
        if has_else:
            lines.append("else:")
            lines.extend(indent(draw(block(depth + 1, in_loop)) if where == n else ["x = 6"]))
    return lines


def program(body: list[str]) -> str:
    return "def target(a, b, c, d):\n    t = a and not b\n" + "\n".join(indent(body)) + "\n"


def evaluate(code: str, env: dict[str, Any]) -> bool:
    lines = [line for line in code.splitlines() if not line.startswith("#")]
    scope = dict(env)
    exec("\n".join(lines[:-1]), {}, scope)  # the guard's own bindings, over the test's inputs
    return bool(eval(lines[-1], {}, scope))


@examples(200)
@given(body=block(0, False))
def test_guard_is_true_exactly_where_the_target_is_reached(body: list[str]) -> None:
    source = program(body)
    namespace: dict[str, Any] = {}
    exec(compile(source, "generated.py", "exec"), namespace)  # generated fixture only
    targets = [s for s in sites_of(source) if s.message is not None and s.message.template == TARGET]
    assert len(targets) == 1, source
    code = targets[0].guard.validation_code()
    for values in itertools.product([False, True], repeat=len(VARS)):
        env = dict(zip(VARS, values, strict=True))
        try:
            namespace["target"](**env)
            reached = False
        except (ValueError, AssertionError) as exc:
            reached = str(exc) == TARGET
        except RuntimeError:
            reached = False
        assert evaluate(code, env) == reached, f"{source}\n--- guard:\n{code}\n--- inputs: {env}"
