"""Message templates and patterns: unit cases, and a differential property test.

The property test writes a small module whose one ``raise`` builds its message in a generated
form (literal, implicit concatenation, ``+``, ``%``, ``.format``, f-string, triple-quoted,
``textwrap.dedent``, a local variable, a module constant, a helper, a custom class), runs that
generated module with random values (newlines, regex metacharacters, braces, quotes, unicode),
and checks that the pattern the extractor derives from the file full-matches ``str(exc)``.
Only the generated fixture code is executed, never target code.
"""

from __future__ import annotations

import ast
import builtins
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from extractor.analysis.analyse import analyse, site_facts
from extractor.analysis.facts import Placeholder
from extractor.analysis.messages.formats import percent_parts
from extractor.analysis.messages.names import substitute_names
from extractor.analysis.messages.parts import Choice, template_of
from extractor.analysis.messages.patterns import make_message, pattern_of
from extractor.analysis.parse import ParsedFile, parse_source
from extractor.records import message_pattern
from tests.profiles import examples

# --------------------------------------------------------------------------- helpers


def facts(source: str) -> list[dict[str, Any]]:
    parsed = parse_source("fixture.py", textwrap.dedent(source).encode())
    assert isinstance(parsed, ParsedFile), parsed
    return [site_facts(s) for s in analyse(parsed)]


def only(source: str) -> dict[str, Any]:
    found = facts(source)
    assert len(found) == 1, found
    return found[0]


def matches(fact: dict[str, Any], text: str) -> bool:
    """Whether the fact's pattern full-matches ``text``; the pattern is portable, and the linear
    matcher says the same as ``re``."""
    pattern = fact["pattern"]
    assert message_pattern.problem(pattern) is None, pattern
    found = re.fullmatch(pattern, text) is not None
    assert message_pattern.fullmatch(pattern, text) == found, (pattern, text)
    return found


# --------------------------------------------------------------------------- unit cases


def test_template_and_pattern_of_parts() -> None:
    parts: list[str | Placeholder] = ["a.b ", Placeholder("x!r"), " (", Placeholder("y:.2f"), ")"]
    assert template_of(parts) == "a.b {x!r} ({y:.2f})"
    rx = re.compile(pattern_of(parts))
    assert rx.fullmatch("a.b 'q'\nz (1.00)")
    assert not rx.fullmatch("aXb 'q' (1.00)")


def test_choice_matches_exactly_its_options() -> None:
    choice = Choice(source="msg", options=(("grpc only",), ("http only", Placeholder("u"))))
    msg = make_message(["mode: ", choice])
    assert msg.template == "mode: {msg}"
    rx = re.compile(msg.pattern)
    assert rx.fullmatch("mode: grpc only")
    assert rx.fullmatch("mode: http only://x")
    assert not rx.fullmatch("mode: something else")


def test_percent_parts_shapes() -> None:
    src = ast.unparse
    tup = ast.parse("(a, b, c)", mode="eval").body
    parts = percent_parts("%s|%r|%.2f%%", tup, src)
    assert parts is not None and template_of(parts) == "{a}|{b!r}|{c:.2f}%"
    mapping = ast.parse("{'k': v}", mode="eval").body
    parts = percent_parts("%(k)05d", mapping, src)
    assert parts is not None and template_of(parts) == "{v:05d}"
    parts = percent_parts("%s %s", ast.parse("x", mode="eval").body, src)
    assert parts is not None and template_of(parts) == "{x[0]} {x[1]}"
    assert percent_parts("%s %s", ast.parse("(x,)", mode="eval").body, src) is None


def test_substitute_names_respects_attributes_keywords_and_conversions() -> None:
    names = {"rank": "i", "proc": "procs[i]", "r": "oops", "n": "a + b"}
    assert substitute_names("proc.exitcode", names) == "procs[i].exitcode"
    assert substitute_names("self.rank + rank", names) == "self.rank + i"
    assert substitute_names("f(rank=rank)", names) == "f(rank=i)"
    assert substitute_names("rank!r", names) == "i!r"
    assert substitute_names("n * 2", names) == "(a + b) * 2"
    assert substitute_names("n", names) == "a + b"
    assert substitute_names("x:{rank}", names) == "x:{i}"


def test_fstring_text_is_read_as_python_reads_it() -> None:
    fact = only(
        '''
        def f(x):
            raise ValueError(f"""a "quoted" {x} \\t {{b}}""")
        '''
    )
    # The literal braces print once at runtime; the template doubles them, as str.format reads it.
    assert fact["template"] == 'a "quoted" {x} \t {{b}}'
    assert matches(fact, 'a "quoted" 1 \t {b}')


def test_self_documenting_fields_print_their_text() -> None:
    fact = only(
        """
        def f(x, y):
            raise ValueError(f"{x=} {y = } {x=!r:>4}")
        """
    )
    assert fact["template"] == "{x=} {y = } {x=!r:>4}"
    x, y = "a b", 2
    assert matches(fact, f"{x=} {y = } {x=!r:>4}")


def test_key_error_prints_the_repr() -> None:
    fact = only(
        """
        def f(key):
            raise KeyError(f"no 'key' {key}")
        """
    )
    assert fact["template"] == "no 'key' {key}"
    for key in ["plain", 'dq"', "nl\n"]:
        try:
            raise KeyError(f"no 'key' {key}")
        except KeyError as exc:
            assert matches(fact, str(exc)), str(exc)


def test_several_arguments_print_the_tuple() -> None:
    fact = only(
        """
        def f(a):
            raise ValueError("model %s is not supported", a, 3)
        """
    )
    assert fact["template"] == "('model %s is not supported', {a!r}, 3)"
    assert matches(fact, str(ValueError("model %s is not supported", "x", 3)))
    assert not matches(fact, str(ValueError("model %s is not supported")))


def test_message_local_in_exclusive_branch_is_followed() -> None:
    fact = only(
        """
        def f(out, path):
            text = f"no output for {out}"
            if out is None:
                text += " and no file"
                return None
            else:
                raise ValueError(text)
        """
    )
    assert fact["template"] == "no output for {out}"


def test_message_local_decided_elsewhere_stays_a_placeholder() -> None:
    fact = only(
        """
        def f(mode):
            msg = "base."
            if mode:
                msg += f" mode={mode}"
            raise RuntimeError(msg)
        """
    )
    assert fact["template"] == "{msg}"
    assert matches(fact, "base.") and matches(fact, "base. mode=3")
    assert not matches(fact, "other")


def test_helper_message_is_built_from_the_call() -> None:
    fact = only(
        """
        def _died(rank, proc):
            return RuntimeError(f"rank {rank} died (exit {proc.exitcode})")

        def f(procs, i):
            raise _died(i, procs[i])
        """
    )
    assert fact["errorClass"] == "RuntimeError"
    assert fact["template"] == "rank {i} died (exit {procs[i].exitcode})"


def test_helper_returning_non_exception_keeps_the_helper_name() -> None:
    fact = only(
        """
        def _payload(x):
            return {"x": x}

        def f(x):
            raise _payload(x)
        """
    )
    assert fact["errorClass"] == "_payload"


def test_custom_class_status_and_message_through_a_base() -> None:
    fact = only(
        """
        from http import HTTPStatus

        class Coded(Exception):
            def __init__(self, message, code=HTTPStatus.INTERNAL_SERVER_ERROR):
                self.message = message
                self.code = code
                super().__init__(self.message)

        class BadRequest(Coded):
            def __init__(self, message):
                super().__init__(message, code=HTTPStatus.BAD_REQUEST)

        def f(e):
            raise BadRequest(f"bad: {e}")
        """
    )
    assert (fact["errorClass"], fact["httpStatus"], fact["template"]) == ("BadRequest", 400, "bad: {e}")


def test_raise_of_a_popped_value_is_any_exception_never_the_variable() -> None:
    fact = only(
        """
        def f(q):
            exc = q.pop()
            raise exc
        """
    )
    assert fact["errorClass"] == "BaseException" and fact["template"] == "{exc}"


# --------------------------------------------------------------------------- property test

_ODD = list("\n\t{}[]()*+?.^$|\\'\"%=:!#")
TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from(_ODD),
        st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]),
    ),
    max_size=10,
)
INTS = st.integers(-(10**6), 10**6)
FLOATS = st.floats(allow_nan=False, allow_infinity=False, width=32)


@dataclass
class Built:
    """A generated message: the expression, statements before the raise, module-level code."""

    expr: str
    setup: list[str] = field(default_factory=list)
    module: list[str] = field(default_factory=list)


def lit(text: str) -> str:
    return repr(text)


def sq(text: str) -> str:
    """``text`` as the inside of a single-quoted literal."""
    return repr("'\"" + text)[4:-1]


FSTRING_FIELDS = [
    "{s}", "{s!r}", "{i:05d}", "{f:.2f}", "{s:>{w}}", "{s=}", "{s = }", "{s=!r}",
    "{len(s)}", "{i + 1}", "{s.upper()}", "{i!s:^9}", '{d["k"]}', "{f:{w}.{w}f}",
]  # fmt: skip


@st.composite
def fstring(draw: st.DrawFn) -> Built:
    pieces = draw(
        st.lists(
            st.one_of(TEXT.map(lambda t: ("t", t)), st.sampled_from(FSTRING_FIELDS).map(lambda f: ("f", f))),
            min_size=1,
            max_size=5,
        )
    )
    inner = "".join(sq(v.replace("{", "{{").replace("}", "}}")) if k == "t" else v for k, v in pieces)
    return Built("f'" + inner + "'")


PERCENT = [
    ("%s", "s"),
    ("%r", "s"),
    ("%d", "i"),
    ("%.2f", "f"),
    ("%5d", "i"),
    ("%-6s", "s"),
    ("%x", "i"),
    ("%%", None),
]


@st.composite
def percent(draw: st.DrawFn, local: str = "values") -> Built:
    # A piece is literal text (a str) or a directive with the kind of value it formats.
    pieces: list[str | tuple[str, str | None]] = draw(
        st.lists(st.one_of(TEXT, st.sampled_from(PERCENT)), min_size=1, max_size=5)
    )
    fmt = "".join(p.replace("%", "%%") if isinstance(p, str) else p[0] for p in pieces)
    args = [p[1] for p in pieces if not isinstance(p, str) and p[1] is not None]
    shape = draw(st.sampled_from(["tuple", "single", "mapping", "name"]))
    if shape == "name":
        return Built(
            f"{lit(fmt)} % {local}", setup=[f"{local} = ({', '.join(args)}{',' if len(args) == 1 else ''})"]
        )
    if shape == "mapping" and args:
        keys = iter(range(100))
        fmt = "".join(
            p.replace("%", "%%")
            if isinstance(p, str)
            else (p[0] if p[1] is None else "%(k" + str(next(keys)) + ")" + p[0][1:])
            for p in pieces
        )
        mapping = ", ".join(f"'k{n}': {a}" for n, a in enumerate(args))
        return Built(f"{lit(fmt)} % {{{mapping}}}")
    if shape == "single" and len(args) == 1 and args[0] != "s":
        return Built(f"{lit(fmt)} % {args[0]}")
    return Built(f"{lit(fmt)} % ({', '.join(args)}{',' if len(args) == 1 else ''})")


FORMAT_FIELDS = [
    ("", "s"),
    ("!r", "s"),
    (":>8", "s"),
    (":.3f", "f"),
    (":05d", "i"),
    (".real", "i"),
    ("!s:^7", "i"),
]


@st.composite
def format_call(draw: st.DrawFn, local: str = "template") -> Built:
    # A piece is literal text (a str) or a replacement field with the kind of value it formats.
    pieces: list[str | tuple[str, str]] = draw(
        st.lists(st.one_of(TEXT, st.sampled_from(FORMAT_FIELDS)), min_size=1, max_size=5)
    )
    mode = draw(st.sampled_from(["auto", "numbered", "keyword"]))
    fmt: list[str] = []
    args: list[str] = []
    for piece in pieces:
        if isinstance(piece, str):
            fmt.append(piece.replace("{", "{{").replace("}", "}}"))
            continue
        rest, var = piece
        name = "" if mode == "auto" else str(len(args)) if mode == "numbered" else f"k{len(args)}"
        fmt.append("{" + name + rest + "}")
        args.append(var if mode != "keyword" else f"k{len(args)}={var}")
    target = draw(st.sampled_from(["literal", "constant", "local"]))
    if target == "constant":
        constant = local.upper()
        return Built(f"{constant}.format({', '.join(args)})", module=[f"{constant} = {lit(''.join(fmt))}"])
    if target == "local":
        return Built(f"{local}.format({', '.join(args)})", setup=[f"{local} = {lit(''.join(fmt))}"])
    return Built(f"{lit(''.join(fmt))}.format({', '.join(args)})")


@st.composite
def concatenation(draw: st.DrawFn) -> Built:
    a, b = draw(TEXT), draw(TEXT)
    form = draw(st.sampled_from(["implicit", "plus", "plus-var", "mixed", "constant", "strip"]))
    if form == "strip":
        f = draw(fstring())
        how = draw(st.sampled_from(["strip", "lstrip", "rstrip"]))
        return Built(f"({lit(a)} + {f.expr} + {lit(b)}).{how}()")
    if form == "implicit":
        return Built(f"({lit(a)}\n        {lit(b)})")
    if form == "plus":
        return Built(f"{lit(a)} + str(i) + {lit(b)}")
    if form == "plus-var":
        return Built(f"{lit(a)} + s")
    if form == "constant":
        return Built(f"PREFIX + s + {lit(b)}", module=[f"PREFIX = {lit(a)}"])
    f = draw(fstring())
    return Built(f"({f.expr} {lit(b)})")


def triple_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\r", "\\r").replace("\t", "\\t")


@st.composite
def triple(draw: st.DrawFn) -> Built:
    lines = draw(st.lists(TEXT.filter(lambda t: "\n" not in t), min_size=1, max_size=3))
    if draw(st.booleans()):
        body = "\n".join(triple_text(t) for t in lines)
        return Built('"""' + body + '\n"""')
    indented = "\n".join(
        "    " + triple_text(t.replace("{", "{{").replace("}", "}}")) + " {s}" for t in lines
    )
    return Built('textwrap.dedent(f"""\n' + indented + '\n    """)')


MESSAGE = st.one_of(
    fstring(), percent(), format_call(), concatenation(), triple(), TEXT.map(lambda t: Built(lit(t)))
)
# A second message in the same function keeps its template in names of its own.
OTHER_MESSAGE = st.one_of(
    fstring(),
    percent("other_values"),
    format_call("other"),
    concatenation(),
    triple(),
    TEXT.map(lambda t: Built(lit(t))),
)


@st.composite
def site(draw: st.DrawFn) -> Built:
    msg = draw(MESSAGE)
    how = draw(
        st.sampled_from(
            [
                "direct",
                "local",
                "augmented",
                "branches",
                "loop",
                "helper",
                "custom",
                "key",
                "multi",
                "oserror",
            ]
        )
    )
    module = list(msg.module)
    setup = list(msg.setup)
    if how == "direct":
        return Built(f"ValueError({msg.expr})", setup, module)
    if how == "local":
        return Built("RuntimeError(msg)", [*setup, f"msg = {msg.expr}"], module)
    if how == "augmented":
        more = draw(OTHER_MESSAGE)
        return Built(
            "RuntimeError(msg)",
            [*setup, *more.setup, f"msg = {msg.expr}", f"msg += {more.expr}"],
            module + more.module,
        )
    if how == "branches":
        other = draw(OTHER_MESSAGE)
        lines = [
            *setup,
            *other.setup,
            "if flag:",
            f"    msg = {msg.expr}",
            "else:",
            f"    msg = {other.expr}",
        ]
        return Built("RuntimeError(msg)", lines, module + other.module)
    if how == "loop":
        # A value set in a loop reaches the raise through ``continue`` as well.
        other = draw(OTHER_MESSAGE)
        lines = [
            *setup,
            *other.setup,
            f"msg = {msg.expr}",
            "for _ in range(2):",
            "    if flag:",
            f"        msg = {other.expr}",
            "        continue",
        ]
        return Built("RuntimeError(msg)", lines, module + other.module)
    if how == "helper":
        module.append("def _error(text):\n    return TypeError(text)")
        return Built(f"_error({msg.expr})", setup, module)
    if how == "custom":
        module.append(
            "class Wrapped(Exception):\n    def __init__(self, text, n=0):\n        super().__init__(f'wrapped [{n}]: {text}')"
        )
        return Built(f"Wrapped({msg.expr}, n=i)", setup, module)
    if how == "key":
        return Built(f"KeyError({msg.expr})", setup, module)
    if how == "multi":
        return Built(f"RuntimeError({msg.expr}, s, i)", setup, module)
    return Built(f"OSError(i, {msg.expr})", setup, module)


def render_module(built: Built) -> str:
    body = "\n".join("    " + line.replace("\n", "\n    ") for line in built.setup)
    return (
        "import textwrap\n\n"
        + "\n\n".join(built.module)
        + "\n\n\ndef target(s, i, f, w, d, flag):\n"
        + (body + "\n" if body else "")
        + f"    raise {built.expr}\n"
    )


@examples(200)
@given(built=site(), s=TEXT, i=INTS, f=FLOATS, w=st.integers(0, 12), flag=st.booleans())
def test_pattern_fullmatches_every_rendering(
    tmp_path_factory: Any, built: Built, s: str, i: int, f: float, w: int, flag: bool
) -> None:
    source = render_module(built)
    path: Path = tmp_path_factory.mktemp("gen") / "generated.py"
    path.write_text(source, encoding="utf-8")
    namespace: dict[str, Any] = {}
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)  # generated fixture only
    try:
        namespace["target"](s, i, f, w, {"k": s}, flag)
    except BaseException as exc:
        text = str(exc)
        caught = exc
    else:  # pragma: no cover - the generated function always raises
        raise AssertionError("generated function returned")
    # The generated raise itself, not an error of the generated code on the way to it.
    name = built.expr.split("(", 1)[0]
    expected = TypeError if name == "_error" else namespace.get(name) or getattr(builtins, name)
    assert isinstance(caught, expected), (source, caught)
    parsed = parse_source("generated.py", path.read_bytes())
    assert isinstance(parsed, ParsedFile)
    sites = analyse(parsed)
    assert len(sites) == 1, source
    message = sites[0].message
    assert message is not None, source
    assert re.fullmatch(message.pattern, text), (
        f"{source}\n--- str(exc): {text!r}\n--- pattern: {message.pattern!r}"
    )


def test_huge_fstrings_are_read_from_the_ast() -> None:
    """Past FSTRING_CST_LIMIT the fields come from the ast (LibCST slows down on generated giants)."""
    import ast as _ast

    from extractor.analysis.messages.fstrings import FSTRING_CST_LIMIT, fstring_parts

    fields = FSTRING_CST_LIMIT // 8 + 10
    source = 'f"' + "".join(f"k{i}={{v{i}!r}};" for i in range(fields)) + '"'
    assert len(source) > FSTRING_CST_LIMIT
    node = _ast.parse(source, mode="eval").body
    assert isinstance(node, _ast.JoinedStr)
    parts = fstring_parts(source, node)
    assert parts is not None
    holders = [p.source for p in parts if not isinstance(p, str)]
    assert holders[:2] == ["v0!r", "v1!r"] and len(holders) == fields
    assert parts[0] == "k0="
