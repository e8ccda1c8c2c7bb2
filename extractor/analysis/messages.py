"""Message templates, and the regex that full-matches every runtime rendering of them.

A message is reduced to *parts*: literal text and :class:`~extractor.analysis.facts.Placeholder` for each
dynamic piece, written as its source text (``{dtype!r}``, ``{x:.2f}``, ``{x=}``). Every form sglang
uses is read: literals and implicit concatenation, ``+``, ``%`` (tuple, mapping, single value),
``.format()`` (positional, numbered, keyword, attribute and index fields), f-strings (through
LibCST, which keeps the exact text of each replacement field), ``textwrap.dedent``,
``sep.join([...])`` over a literal list, and a message held in a local variable or module constant.

The pattern escapes the literal parts and lets each dynamic part match any text, newlines
included; a :class:`Choice` (a name that holds one of a few known strings) matches exactly those.
It is built to stay linear on hostile input: adjacent wildcards merge, a literal between two
wildcards is matched at its first occurrence inside an atomic group (never retried), and a
pattern with several wildcards checks its suffix and literal anchors with cheap lookaheads before
the backtracking part can run.

What ``str(exc)`` prints also depends on the exception: several arguments print as a tuple's
repr, ``KeyError`` prints the repr of its argument, ``OSError(errno, strerror)`` prints
``[Errno n] strerror`` (:func:`message_from_args`).
"""

from __future__ import annotations

import ast
import builtins
import io
import re
import string
import textwrap
import tokenize
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import libcst as cst

from extractor.analysis.facts import Message, Placeholder
from extractor.analysis.parse import ParsedFile

Part = str | Placeholder
WILDCARD = "(?s:.*)"
_LAZY_WILDCARD = "(?s:.*?)"
_EMPTY_MODULE = cst.Module(body=[])
_HAS_LETTER = re.compile(r"[A-Za-z]")
_MAX_CHOICES = 6
# Alternatives a pattern spells out for its choices before it matches them as any text instead.
_MAX_VARIANTS = 24


@dataclass(frozen=True)
class Choice(Placeholder):
    """A dynamic part known to render as one of a few alternatives (a name assigned on branches).

    The template still shows ``{source}``; the pattern matches exactly the alternatives.
    """

    options: tuple[tuple[Part, ...], ...] = ()


# --------------------------------------------------------------------------- parts -> text


_SPECIAL = frozenset("\\.^$*+?{}[]|()")
_CONTROL = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\f": "\\f", "\v": "\\v"}


def escape(text: str) -> str:
    """Escape regex metacharacters only, so patterns stay readable (``re.escape`` also escapes spaces)."""
    out = []
    for ch in text:
        if ch in _SPECIAL:
            out.append("\\" + ch)
        elif ch in _CONTROL:
            out.append(_CONTROL[ch])
        else:
            out.append(ch)
    return "".join(out)


class Loose(str):
    """Literal text whose runtime form may differ in whitespace, with the regex that allows it.

    ``textwrap.dedent`` and ``str.strip`` run on the rendered message, so the values decide how
    much indentation (or edge whitespace) survives: the template shows the text, the pattern
    lets the affected whitespace vary.
    """

    regex: str

    @classmethod
    def of(cls, text: str, regex: str) -> Loose:
        made = cls(text)
        made.regex = regex
        return made


def _regex_of(text: str) -> str:
    return text.regex if isinstance(text, Loose) else escape(text)


def normalise(parts: Sequence[Part]) -> tuple[Part, ...]:
    """Join adjacent literals and drop empty ones."""
    out: list[Part] = []
    for part in parts:
        if isinstance(part, str):
            if not part and not (isinstance(part, Loose) and part.regex):
                continue
            if out and isinstance(out[-1], str):
                prev = out[-1]
                if isinstance(prev, Loose) or isinstance(part, Loose):
                    out[-1] = Loose.of(prev + part, _regex_of(prev) + _regex_of(part))
                else:
                    out[-1] = prev + part
                continue
        out.append(part)
    return tuple(out)


def template_of(parts: Sequence[Part]) -> str:
    """The template form: literal text as is, each dynamic part as ``{source}``."""
    return "".join(p if isinstance(p, str) else "{" + p.source + "}" for p in parts)


# A token of a pattern under construction: literal text, None for a wildcard, a ready-made regex
# group (a Choice's alternation) that matches a bounded set of strings, or a piece of a Loose
# literal: (escaped text, "text") or a run of blanks it allows, (regex, "blanks").
_Token = str | None | tuple[str] | tuple[str, str]
_TEXT = "text"
_BLANKS_RUN = "blanks"


def _tokens(parts: Sequence[Part]) -> list[_Token]:
    tokens: list[_Token] = []
    for part in normalise(parts):
        if isinstance(part, Loose):
            tokens.extend(_loose_tokens(part.regex))
            continue
        if isinstance(part, str):
            tokens.append(part)
            continue
        if part.prefix:
            tokens.append(part.prefix)
        if isinstance(part, Choice) and part.options:
            bodies = sorted({_body(opt) for opt in part.options}, key=lambda b: (-len(b), b))
            if len(bodies) == 1:
                # One known value: its own literal text and wildcards, merged with the neighbours.
                tokens.extend(_tokens(part.options[0]))
            elif WILDCARD in bodies:
                tokens.append(None)
            else:
                tokens.append(("(?:" + "|".join(bodies) + ")",))
        else:
            tokens.append(None)
    return _merge(tokens)


def _loose_tokens(regex: str) -> list[_Token]:
    """A Loose literal's regex as escaped-text pieces and the blank runs (``[ \\t]*``, ``\\s*``) between them."""
    out: list[_Token] = []
    text: list[str] = []
    i = 0
    while i < len(regex):
        run = next((r for r in ("[ \\t]*", "\\s*") if regex.startswith(r, i)), None)
        if run is None:
            step = 2 if regex[i] == "\\" else 1  # an escaped character stays whole
            text.append(regex[i : i + step])
            i += step
            continue
        if text:
            out.append(("".join(text), _TEXT))
            text = []
        out.append((run, _BLANKS_RUN))
        i += len(run)
    if text:
        out.append(("".join(text), _TEXT))
    return out


def _absorb_blanks(tokens: list[_Token]) -> list[_Token]:
    """Drop the blank runs next to a wildcard: the wildcard matches those blanks as well."""
    out = list(tokens)
    changed = True
    while changed:
        changed = False
        for i, tok in enumerate(out):
            beside = (i > 0 and out[i - 1] is None) or (i + 1 < len(out) and out[i + 1] is None)
            if beside and isinstance(tok, tuple) and tok[1:] == (_BLANKS_RUN,):
                del out[i]
                changed = True
                break
    return _merge(out)


def _body(parts: Sequence[Part]) -> str:
    """A pattern fragment for ``parts`` with no anchoring lookaheads (used inside alternations)."""
    return _join(_absorb_blanks(_tokens(parts)))


def _join(tokens: list[_Token]) -> str:
    """The regex text of ``tokens``; a literal between two wildcards is matched at its first occurrence.

    ``(?>(?s:.*?)L)`` finds the first ``L`` and never gives it back. That loses no match: another
    wildcard follows, so the leftmost ``L`` leaves the most room for the rest of the pattern (the
    greedy glob argument). It keeps ``k`` wildcards to one pass over the text where plain
    ``(?s:.*)L(?s:.*)M...`` retries every ``L`` for every ``M`` (n**k steps on text made of the
    literals in the wrong order, e.g. a 30 kB log line).
    """
    out: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        following = [k for k in range(i + 1, len(tokens)) if tokens[k] is None]
        segment = tokens[i + 1 : following[0]] if tok is None and following else []
        if segment and _first_match_is_earliest(segment):
            out.append(f"(?>{_LAZY_WILDCARD}{''.join(_token_text(t) for t in segment)})")
            i += 1 + len(segment)
            continue
        out.append(_token_text(tok))
        i += 1
    return "".join(out)


def _first_match_is_earliest(segment: list[_Token]) -> bool:
    """Whether the first occurrence of ``segment`` also ends first, so an atomic group may keep it.

    True for literal text, and for literal text with blank runs (from a Loose literal) when each
    run is followed by a character it cannot match: the run is then forced to its full length, so
    every start has one end, and a later start never ends sooner.
    """
    for k, tok in enumerate(segment):
        if tok is None or (isinstance(tok, tuple) and tok[1:] not in ((_TEXT,), (_BLANKS_RUN,))):
            return False  # a Choice's alternation: options of different lengths
        if isinstance(tok, tuple) and tok[1:] == (_BLANKS_RUN,):
            nxt = segment[k + 1] if k + 1 < len(segment) else None
            if k == 0 or nxt is None or (isinstance(nxt, tuple) and nxt[1:] != (_TEXT,)):
                return False
            first = _first_char(nxt)
            if first is None or (first in " \t" if tok[0] == "[ \\t]*" else first.isspace()):
                return False
    return True


def _first_char(tok: _Token) -> str | None:
    if isinstance(tok, str):
        return tok[:1] or None
    if isinstance(tok, tuple) and tok[0]:
        text = tok[0]
        if text[0] != "\\":
            return text[0]
        return {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v"}.get(text[1:2], text[1:2]) or None
    return None


def _token_text(tok: _Token) -> str:
    if tok is None:
        return WILDCARD
    if isinstance(tok, tuple):
        return tok[0]
    return escape(tok)


def pattern_of(parts: Sequence[Part]) -> str:
    """A regex that full-matches every rendering of ``parts`` (each placeholder: any text)."""
    if any(isinstance(p, Choice) for p in parts) and _body(parts).count("(?s:.*") >= 2:
        # An alternation with wildcards around or inside it backtracks like one more wildcard, and
        # no first-occurrence rule holds for it (its options differ in length). Spelled out as
        # one choice-free alternative per combination of options, each alternative is linear.
        variants = _variants(parts)
        if variants is None:
            return _plain_pattern(
                [Placeholder(p.source, p.prefix) if isinstance(p, Choice) else p for p in parts]
            )
        alternatives = sorted({_plain_pattern(v) for v in variants}, key=lambda b: (-len(b), b))
        return alternatives[0] if len(alternatives) == 1 else "(?:" + "|".join(alternatives) + ")"
    return _plain_pattern(parts)


def _variants(parts: Sequence[Part]) -> list[list[Part]] | None:
    """Every spelling of ``parts`` with each choice replaced by one of its options; None past the cap."""
    out: list[list[Part]] = [[]]
    for part in parts:
        alternatives: list[list[Part]] = [[part]]
        if isinstance(part, Choice) and part.options:
            alternatives = []
            for option in part.options:
                spelled = _variants(option)
                if spelled is None:
                    return None
                alternatives += [[part.prefix, *s] for s in spelled]
        out = [[*o, *a] for o in out for a in alternatives]
        if len(out) > _MAX_VARIANTS:
            return None
    return out


def _plain_pattern(parts: Sequence[Part]) -> str:
    tokens = _absorb_blanks(_tokens(parts))
    wildcards = sum(1 for t in tokens if t is None)
    if wildcards >= 3:
        # Runs of wildcards separated only by punctuation, spaces or digits are where hostile text
        # (long runs of "1," or spaces) makes backtracking explode; such a run matches the same
        # strings as a single wildcard would, minus the separators, so fold it into one.
        tokens = _merge(_fold_weak(tokens))
        wildcards = sum(1 for t in tokens if t is None)
    body = _join(tokens)
    if wildcards < 2:
        return body
    guards = []
    suffix = tokens[-1]
    if isinstance(suffix, str):
        guards.append(f"(?=[\\s\\S]*{escape(suffix)}\\Z)")
    middle = sorted({t for t in tokens[1:-1] if isinstance(t, str) and t}, key=lambda t: (-len(t), t))
    guards.extend(f"(?=[\\s\\S]*?{escape(t)})" for t in middle[:4])
    return "".join(guards) + body


def _merge(tokens: list[_Token]) -> list[_Token]:
    out: list[_Token] = []
    for tok in tokens:
        if tok == "":
            continue
        if tok is None and out and out[-1] is None:
            continue
        if isinstance(tok, str) and out and isinstance(out[-1], str):
            out[-1] = out[-1] + tok
            continue
        out.append(tok)
    return out


def _fold_weak(tokens: list[_Token]) -> list[_Token]:
    out: list[_Token] = []
    for i, tok in enumerate(tokens):
        between = 0 < i < len(tokens) - 1 and tokens[i - 1] is None and tokens[i + 1] is None
        if isinstance(tok, str) and between and not _HAS_LETTER.search(tok):
            continue
        out.append(tok)
    return out


def make_message(parts: Sequence[Part]) -> Message:
    parts = normalise(parts)
    return Message(template=template_of(parts), pattern=pattern_of(parts), parts=parts)


EMPTY_MESSAGE = Message(template="", pattern="", parts=())


# --------------------------------------------------------------------------- f-strings via LibCST


def fstring_parts(source: str, node: ast.JoinedStr | None = None) -> list[Part] | None:
    """Parts of a (possibly implicitly concatenated) string expression written in ``source``.

    LibCST gives the exact source text of every replacement field; when the ``ast`` node is at
    hand its constant pieces give the literal text exactly as Python evaluates it (escapes,
    ``{{``, quotes inside triple-quoted strings), so only the fields' text is taken from LibCST.
    """
    if len(source) > FSTRING_CST_LIMIT:
        # LibCST's parse grows faster than linearly on huge f-strings (generated code): read
        # those from the ast alone, with each field's text as ast.unparse prints it.
        return _ast_fstring_parts(node) if node is not None else None
    try:
        tree = cst.parse_expression("(" + source + "\n)")
    except (cst.ParserSyntaxError, RecursionError, ValueError):
        return _ast_fstring_parts(node) if node is not None else None
    parts = _cst_string_parts(tree)
    if parts is None or node is None:
        return parts
    return _with_ast_text(parts, node) or parts


FSTRING_CST_LIMIT = 20_000
"""f-strings longer than this (in source characters) are read from the ast instead of LibCST."""


def _ast_fstring_parts(node: ast.JoinedStr) -> list[Part] | None:
    out: list[Part] = []
    for value in node.values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            out.append(value.value)
        elif isinstance(value, ast.FormattedValue):
            text = ast.unparse(value.value)
            if value.conversion != -1:
                text += "!" + chr(value.conversion)
            if isinstance(value.format_spec, ast.JoinedStr):
                spec = ast.unparse(value.format_spec)
                # unparse gives f'...'; the spec is what sits between the quotes.
                text += ":" + spec[2:-1]
            out.append(Placeholder(text))
        else:
            return None
    return out


def _with_ast_text(parts: list[Part], node: ast.JoinedStr) -> list[Part] | None:
    fields = [p for p in parts if not isinstance(p, str)]
    values = [v for v in node.values if isinstance(v, ast.FormattedValue)]
    if len(fields) != len(values):
        return None
    out: list[Part] = []
    text: list[str] = []
    k = 0
    for value in node.values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            text.append(value.value)
            continue
        if not isinstance(value, ast.FormattedValue):
            return None
        before = "".join(text)
        holder = fields[k]
        k += 1
        if holder.prefix:
            # The self-documenting ``{x=}`` puts its "x=" text into the constant before it.
            if not before.endswith(holder.prefix):
                return None
            before = before[: len(before) - len(holder.prefix)]
        out.append(before)
        out.append(holder)
        text = []
    out.append("".join(text))
    return out


def _cst_string_parts(node: cst.BaseExpression) -> list[Part] | None:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return [value] if isinstance(value, str) else None
    if isinstance(node, cst.ConcatenatedString):
        left = _cst_string_parts(node.left)
        right = _cst_string_parts(node.right)
        if left is None or right is None:
            return None
        return left + right
    if isinstance(node, cst.FormattedString):
        return _formatted_parts(node)
    return None


def _formatted_parts(node: cst.FormattedString) -> list[Part] | None:
    prefix = "".join(c for c in node.prefix if c.lower() != "f")
    quote = node.end
    out: list[Part] = []
    for part in node.parts:
        if isinstance(part, cst.FormattedStringText):
            text = _eval_text(prefix, quote, part.value)
            if text is None:
                return None
            out.append(text.replace("{{", "{").replace("}}", "}"))
        elif isinstance(part, cst.FormattedStringExpression):
            raw = _EMPTY_MODULE.code_for_node(part)
            inner = raw[1:-1]
            self_doc = ""
            if part.equal is not None:
                expr_code = _EMPTY_MODULE.code_for_node(part.expression)
                upto = inner.find(expr_code)
                eq = inner.find("=", upto + len(expr_code) if upto >= 0 else 0)
                if eq >= 0:
                    end = eq + 1
                    while end < len(inner) and inner[end] == " ":
                        end += 1
                    self_doc = inner[:end]
            out.append(Placeholder(source=inner.strip() if not self_doc else inner, prefix=self_doc))
    return out


def _eval_text(prefix: str, quote: str, value: str) -> str | None:
    """The literal text of an f-string piece (used when no ``ast`` node is at hand)."""
    for q in (quote, "'''", '"""'):
        try:
            text = ast.literal_eval(prefix + q + value + q)
        except (SyntaxError, ValueError):
            continue
        return text if isinstance(text, str) else None
    return value


# --------------------------------------------------------------------------- %-format and .format()

_PERCENT = re.compile(
    r"%(?:\((?P<key>[^)]*)\))?(?P<flags>[#0\- +]*)(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d*))?[hlL]?(?P<conv>[diouxXeEfFgGcrsa%])"
)


def percent_parts(fmt: str, args: ast.expr, src: Callable[[ast.AST], str]) -> list[Part] | None:
    """``"fmt" % args`` rendered as parts; ``None`` when the shapes do not line up."""
    positional: list[ast.expr] = []
    mapping: dict[str, ast.expr] = {}
    whole: ast.expr | None = None
    if isinstance(args, ast.Tuple):
        if any(isinstance(e, ast.Starred) for e in args.elts):
            return None
        positional = list(args.elts)
    elif isinstance(args, ast.Dict):
        for k, v in zip(args.keys, args.values, strict=True):
            if isinstance(k, ast.Constant) and isinstance(k.value, str):
                mapping[k.value] = v
    else:
        whole = args
    directives = sum(1 for m in _PERCENT.finditer(fmt) if m.group("conv") != "%" and m.group("key") is None)
    if whole is not None and directives > 1:
        # ``fmt % values`` with a tuple held in a name: directive i prints values[i].
        items = [ast.Subscript(value=whole, slice=ast.Constant(i), ctx=ast.Load()) for i in range(directives)]
        src = _indexed_src(src, src(whole), items)
        positional = list(items)
    out: list[Part] = []
    pos = 0
    index = 0

    def take() -> ast.expr | None:
        nonlocal index
        if whole is not None and not positional:
            if index == 0:
                index += 1
                return whole
            return None
        if index < len(positional):
            index += 1
            return positional[index - 1]
        return None

    for m in _PERCENT.finditer(fmt):
        out.append(fmt[pos : m.start()])
        pos = m.end()
        conv = m.group("conv")
        if conv == "%":
            out.append("%")
            continue
        width = m.group("width") or ""
        prec = m.group("prec")
        # ``%*d`` and ``%.*f`` take their width and precision from the arguments first.
        if width == "*":
            if take() is None:
                return None
            width = ""
        if prec == "*":
            if take() is None:
                return None
            prec = None
        key = m.group("key")
        expr_text: str
        if key is not None:
            if key in mapping:
                expr_text = src(mapping[key])
            elif whole is not None:
                expr_text = f"{src(whole)}[{key!r}]"
            else:
                return None
        else:
            taken = take()
            if taken is None:
                return None
            expr_text = src(taken)
        out.append(Placeholder(source=expr_text + _percent_suffix(m.group("flags") or "", width, prec, conv)))
    out.append(fmt[pos:])
    return out


def _indexed_src(
    src: Callable[[ast.AST], str], base: str, items: list[ast.Subscript]
) -> Callable[[ast.AST], str]:
    ids = {id(item): i for i, item in enumerate(items)}

    def read(node: ast.AST) -> str:
        if id(node) in ids:
            return f"{base}[{ids[id(node)]}]"
        return src(node)

    return read


def _percent_suffix(flags: str, width: str, prec: str | None, conv: str) -> str:
    """The ``!conv`` / ``:spec`` that writes a ``%`` directive the way ``format`` would."""
    if conv in "ra":
        return "!" + conv
    align = "<" if "-" in flags else ""
    sign = "".join(c for c in flags if c in "+ ")
    alt = "#" if "#" in flags else ""
    zero = "0" if "0" in flags and not align else ""
    precision = "." + (prec or "0") if prec is not None else ""
    if conv == "s":
        if not (width or precision):
            return ""
        return ":" + (align or ">" if width else "") + width + precision
    kind = "d" if conv in "diu" else conv
    spec = align + sign + alt + zero + width + precision
    if kind == "d" and not spec:
        return ""
    return ":" + spec + kind


def format_parts(fmt: str, call: ast.Call, src: Callable[[ast.AST], str]) -> list[Part] | None:
    """``"fmt".format(*args, **kwargs)`` rendered as parts."""
    out: list[Part] = []
    auto = 0
    try:
        parsed = list(string.Formatter().parse(fmt))
    except ValueError:
        return None
    for literal, fld, spec, conv in parsed:
        out.append(literal)
        if fld is None:
            continue
        name, rest = _split_field(fld)
        if name == "":
            name = str(auto)
            auto += 1
        base = _format_arg(name, call, src)
        if base is None:
            return None
        text = base + _field_rest(rest)
        if conv:
            text += "!" + conv
        if spec:
            nested = _nested_spec(spec, call, src, auto)
            if nested is None:
                return None
            spec, auto = nested
            text += ":" + spec
        out.append(Placeholder(source=text))
    return out


def _format_arg(name: str, call: ast.Call, src: Callable[[ast.AST], str]) -> str | None:
    args = call.args
    kwargs = {kw.arg: kw.value for kw in call.keywords if kw.arg is not None}
    if name.isdigit():
        i = int(name)
        if not any(isinstance(a, ast.Starred) for a in args[: i + 1]) and i < len(args):
            return src(args[i])
        if len(args) == 1 and isinstance(args[0], ast.Starred):
            # ``.format(*values)``: field i is values[i].
            return f"{src(args[0].value)}[{i}]"
        return None
    if name in kwargs:
        return src(kwargs[name])
    if any(kw.arg is None for kw in call.keywords):
        # ``.format(**mapping)``: the field name is all the source says about the value.
        return name
    return None


def _nested_spec(
    spec: str, call: ast.Call, src: Callable[[ast.AST], str], auto: int
) -> tuple[str, int] | None:
    """A format spec with its nested ``{}`` fields written as the arguments they take."""
    if "{" not in spec:
        return spec, auto
    out = []
    try:
        pieces = list(string.Formatter().parse(spec))
    except ValueError:
        return None
    for literal, fld, _spec, _conv in pieces:
        out.append(literal)
        if fld is None:
            continue
        if fld == "":
            fld = str(auto)
            auto += 1
        name, rest = _split_field(fld)
        base = _format_arg(name, call, src)
        if base is None:
            return None
        out.append("{" + base + _field_rest(rest) + "}")
    return "".join(out), auto


def _split_field(fld: str) -> tuple[str, str]:
    for i, ch in enumerate(fld):
        if ch in ".[":
            return fld[:i], fld[i:]
    return fld, ""


_INDEX = re.compile(r"\[([^\]]*)\]")


def _field_rest(rest: str) -> str:
    # ``{0[key]}`` indexes with the string 'key' (digits index with an int): write it as Python would.
    return _INDEX.sub(lambda m: f"[{m.group(1)}]" if m.group(1).isdigit() else f"[{m.group(1)!r}]", rest)


# --------------------------------------------------------------------------- name substitution


def substitute_names(text: str, names: Mapping[str, str]) -> str:
    """Rewrite ``text`` (an expression, maybe with ``!conv``/``:spec``) with names replaced.

    Keys are plain names (``rank``) or ``self.attr``; values are the source text that stands for
    them at the call site. Attribute names (``x.rank``), keyword-argument names and the
    conversion letter are left alone; a replacement that is not a single atom is parenthesised
    when the name is part of a larger expression.
    """
    if not names or not any(k.rsplit(".", 1)[-1] in text for k in names):
        return text
    wrapped = "(" + text + "\n)"
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(wrapped).readline))
    except (tokenize.TokenError, SyntaxError):
        return text
    starts = [0]
    for line in wrapped.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def offset(pos: tuple[int, int]) -> int:
        return starts[pos[0] - 1] + pos[1]

    sig = [
        t
        for t in toks
        if t.type
        not in (
            tokenize.NL,
            tokenize.NEWLINE,
            tokenize.COMMENT,
            tokenize.INDENT,
            tokenize.DEDENT,
            tokenize.ENDMARKER,
        )
    ]
    edits: list[tuple[int, int, str]] = []
    stack: list[str] = []
    mode = "expr"  # "conv" after a top-level "!", "spec" after a top-level ":"
    lone = len(sig) <= 3  # "(", name, ")": the name is the whole expression
    i = 0
    while i < len(sig):
        tok = sig[i]
        s = tok.string
        if s in "([{" and tok.type == tokenize.OP:
            stack.append(s)
            i += 1
            continue
        if s in ")]}" and tok.type == tokenize.OP:
            if stack:
                stack.pop()
            i += 1
            continue
        depth = len(stack)
        if depth == 1 and s == "!" and mode == "expr":
            mode = "conv"
            i += 1
            continue
        if depth == 1 and s == ":" and mode in ("expr", "conv"):
            mode = "spec"
            i += 1
            continue
        active = mode == "expr" or (mode == "spec" and depth >= 2)
        if active and tok.type == tokenize.NAME:
            prev = sig[i - 1].string if i > 0 else ""
            nxt = sig[i + 1].string if i + 1 < len(sig) else ""
            keyword = nxt == "=" and stack and stack[-1] == "(" and depth >= 2
            if prev != "." and not keyword:
                key = s
                end_tok = tok
                if s == "self" and nxt == "." and i + 2 < len(sig) and f"self.{sig[i + 2].string}" in names:
                    key = f"self.{sig[i + 2].string}"
                    end_tok = sig[i + 2]
                if key in names:
                    repl = names[key]
                    if not lone and not _atomic(repl):
                        repl = "(" + repl + ")"
                    edits.append((offset(tok.start), offset(end_tok.end), repl))
                    i = sig.index(end_tok) + 1
                    continue
        i += 1
    if not edits:
        return text
    out = wrapped
    for start, end, repl in sorted(edits, reverse=True):
        out = out[:start] + repl + out[end:]
    return out[1:-2]


def _atomic(text: str) -> bool:
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return False
    return isinstance(
        node,
        ast.Name
        | ast.Attribute
        | ast.Subscript
        | ast.Call
        | ast.Constant
        | ast.List
        | ast.Dict
        | ast.Set
        | ast.JoinedStr,
    ) or (isinstance(node, ast.Tuple) and text.strip().startswith("("))


# --------------------------------------------------------------------------- expressions

Lookup = Callable[[str], "tuple[ast.expr, MessageContext] | None"]
Choices = Callable[[str], "list[tuple[ast.expr, MessageContext]] | None"]


def _no_choices(_name: str) -> list[tuple[ast.expr, MessageContext]] | None:
    return None


@dataclass
class MessageContext:
    """What resolving a message can look at: the file, and the values names hold at the site.

    ``lookup`` gives the one expression a local (or module-level) name surely holds at the site;
    ``choices`` the few expressions it may hold when branches decide; ``bound`` maps the
    parameters of a helper or an exception's ``__init__`` being read to the arguments the call
    site passes (each with the context it must be read in).
    """

    parsed: ParsedFile
    lookup: Lookup
    choices: Choices = _no_choices
    bound: dict[str, tuple[ast.expr, MessageContext]] = field(default_factory=dict)
    _names: dict[str, str] | None = field(default=None, repr=False)

    def src(self, node: ast.AST) -> str:
        return self.rewrite(self.parsed.segment(node))

    def rewrite(self, text: str) -> str:
        """Source text written in this context, rewritten in the call site's terms."""
        if not self.bound:
            return text
        if self._names is None:
            self._names = {name: c.src(value) for name, (value, c) in self.bound.items()}
        return substitute_names(text, self._names)

    def resolve(self, name: str) -> tuple[ast.expr, MessageContext] | None:
        """The expression ``name`` surely stands for here, and the context to read it in."""
        if name in self.bound:
            return self.bound[name]
        return self.lookup(name)


_DEDENT = {"dedent", "textwrap.dedent", "inspect.cleandoc", "cleandoc"}


def expr_parts(node: ast.expr, ctx: MessageContext, depth: int = 0) -> list[Part]:
    """Parts of any message expression; unknown shapes become one placeholder of their source."""
    if depth > 8:
        return [Placeholder(ctx.src(node))]
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            return [node.value]
        if isinstance(node.value, bytes):
            return [repr(node.value)]
        return [str(node.value)] if node.value is not None else ["None"]
    if isinstance(node, ast.JoinedStr):
        parts = fstring_parts(ctx.parsed.segment(node), node)
        if parts is None:
            return [Placeholder(ctx.src(node))]
        return [_refine(p, ctx, depth) if isinstance(p, Placeholder) else p for p in parts]
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Add) and _stringish(node, ctx):
            return expr_parts(node.left, ctx, depth + 1) + expr_parts(node.right, ctx, depth + 1)
        if isinstance(node.op, ast.Mod):
            fmt = _literal_text(node.left, ctx)
            if fmt is not None:
                parts = percent_parts(fmt, node.right, ctx.src)
                if parts is not None:
                    return parts
    if isinstance(node, ast.Call):
        parts = _call_parts(node, ctx, depth)
        if parts is not None:
            return parts
    if isinstance(node, ast.Name):
        resolved = ctx.resolve(node.id)
        if resolved is not None:
            value, vctx = resolved
            if _stringish(value, vctx):
                return expr_parts(value, vctx, depth + 1)
            return [Placeholder(ctx.src(node))]
        options = _string_choices(node.id, ctx)
        if options is not None:
            return [
                Choice(
                    source=ctx.src(node),
                    options=tuple(tuple(expr_parts(o, c, depth + 1)) for o, c in options),
                )
            ]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        # ``self.message`` inside an exception's ``__init__``: what the constructor stored there.
        resolved = ctx.resolve(f"self.{node.attr}")
        if resolved is not None:
            return expr_parts(resolved[0], resolved[1], depth + 1)
    return [Placeholder(ctx.src(node))]


def _call_parts(node: ast.Call, ctx: MessageContext, depth: int) -> list[Part] | None:
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr == "format":
        fmt = _literal_text(func.value, ctx)
        if fmt is not None:
            parts = format_parts(fmt, node, ctx.src)
            if parts is not None:
                return parts
    if isinstance(func, ast.Attribute) and func.attr == "join" and len(node.args) == 1 and not node.keywords:
        sep = _literal_text(func.value, ctx)
        seq = node.args[0]
        if (
            sep is not None
            and isinstance(seq, ast.List | ast.Tuple)
            and seq.elts
            and all(not isinstance(e, ast.Starred) and _stringish(e, ctx) for e in seq.elts)
        ):
            out: list[Part] = []
            for i, elt in enumerate(seq.elts):
                if i:
                    out.append(sep)
                out.extend(expr_parts(elt, ctx, depth + 1))
            return out
    name = ctx.parsed.segment(func)
    if name in _DEDENT and len(node.args) == 1 and not node.keywords:
        inner = expr_parts(node.args[0], ctx, depth + 1)
        return _map_literal_text(inner, textwrap.dedent if "dedent" in name else _cleandoc)
    if isinstance(func, ast.Attribute) and func.attr in ("strip", "rstrip", "lstrip") and not node.args:
        inner = expr_parts(func.value, ctx, depth + 1)
        if all(isinstance(p, str) for p in inner) or _stringish(func.value, ctx):
            return _strip_parts(inner, func.attr)
    if name == "str" and len(node.args) == 1 and not node.keywords and _stringish(node.args[0], ctx):
        return expr_parts(node.args[0], ctx, depth + 1)
    return None


def _refine(part: Placeholder, ctx: MessageContext, depth: int) -> Part:
    """An f-string field in the call site's terms; ``{name}`` of a known string becomes a Choice."""
    if not part.prefix:
        inlined = _inline_bound(part.source, ctx)
        if inlined is not None:
            return inlined
    source = ctx.rewrite(part.source) if not part.prefix else part.source
    if not part.prefix and part.source.isidentifier():
        resolved = ctx.resolve(part.source)
        if resolved is not None:
            value, vctx = resolved
            if _stringish(value, vctx):
                return Choice(source=source, options=(tuple(expr_parts(value, vctx, depth + 1)),))
            return Placeholder(source)
        options = _string_choices(part.source, ctx)
        if options is not None:
            return Choice(
                source=source, options=tuple(tuple(expr_parts(o, c, depth + 1)) for o, c in options)
            )
    if source == part.source:
        return part
    return Placeholder(source=source, prefix=part.prefix)


_FIELD = re.compile(r"^(?P<name>(?:self\.)?[A-Za-z_]\w*)\s*(?:!(?P<conv>[rsa]))?(?::(?P<spec>[^{}]*))?$")


def _inline_bound(source: str, ctx: MessageContext) -> str | None:
    """A field over a helper's parameter that the call site passes as a literal: its text."""
    m = _FIELD.match(source)
    if m is None or m.group("name") not in ctx.bound:
        return None
    value, vctx = ctx.bound[m.group("name")]
    for _ in range(4):
        if not isinstance(value, ast.Name) or value.id not in vctx.bound:
            break
        value, vctx = vctx.bound[value.id]
    if not isinstance(value, ast.Constant) or not isinstance(value.value, str | int | float):
        return None
    conv = m.group("conv")
    shown: object = value.value
    if conv == "r":
        shown = repr(shown)
    elif conv == "a":
        shown = ascii(shown)
    elif conv == "s":
        shown = str(shown)
    try:
        return format(shown, m.group("spec") or "")
    except (ValueError, TypeError):
        return None


def _string_choices(name: str, ctx: MessageContext) -> list[tuple[ast.expr, MessageContext]] | None:
    if name in ctx.bound:
        return None
    options = ctx.choices(name)
    if not options or len(options) > _MAX_CHOICES or not all(_stringish(o, c) for o, c in options):
        return None
    return options


def _cleandoc(text: str) -> str:
    import inspect

    return inspect.cleandoc(text)


def _literal_text(node: ast.expr, ctx: MessageContext) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        resolved = ctx.resolve(node.id)
        if resolved is not None:
            value, vctx = resolved
            if value is not node:
                return _literal_text(value, vctx)
    return None


def _stringish(node: ast.expr, ctx: MessageContext, depth: int = 0) -> bool:
    """Whether ``node`` is certainly a string built from literals (so ``+`` is concatenation)."""
    if depth > 8:
        return False
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Add):
            return _stringish(node.left, ctx, depth + 1) or _stringish(node.right, ctx, depth + 1)
        if isinstance(node.op, ast.Mod):
            return _stringish(node.left, ctx, depth + 1)
        return False
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in ("format", "strip", "rstrip", "lstrip", "join"):
            return _stringish(func.value, ctx, depth + 1)
        name = ctx.parsed.segment(func)
        if name in _DEDENT:
            return True
        return name in ("str", "repr")
    if isinstance(node, ast.Name):
        resolved = ctx.resolve(node.id)
        if resolved is None:
            return False
        value, vctx = resolved
        return value is not node and _stringish(value, vctx, depth + 1)
    return False


_SENTINEL_BASE = 0xF0000  # private-use plane: never in real source text


def _map_literal_text(parts: list[Part], fn: Callable[[str], str]) -> list[Part]:
    """Apply a text transformation (dedent) across parts, keeping placeholders in place."""
    holders: list[Placeholder] = []
    text = []
    for part in parts:
        if isinstance(part, str):
            text.append(part)
        else:
            text.append(chr(_SENTINEL_BASE + len(holders)))
            holders.append(part)
    mapped = fn("".join(text))
    out: list[Part] = []
    buf: list[str] = []
    for ch in mapped:
        code = ord(ch) - _SENTINEL_BASE
        if 0 <= code < len(holders):
            out.append("".join(buf))
            buf = []
            out.append(holders[code])
        else:
            buf.append(ch)
    out.append("".join(buf))
    if not holders:
        return out
    # The values take part in the runtime dedent (a blank value blanks its line, a value with a
    # newline changes the common margin): indentation and line-end blanks may differ.
    loose: list[Part] = []
    for i, part in enumerate(out):
        if isinstance(part, str):
            loose.append(Loose.of(part, _loose_lines(part, at_line_start=i == 0)))
        else:
            loose.append(part)
    return loose


_BLANKS = "[ \\t]*"


def _loose_lines(text: str, at_line_start: bool) -> str:
    lines = text.split("\n")
    out = []
    for j, line in enumerate(lines):
        piece = line
        head = tail = ""
        if j > 0 or at_line_start:
            piece = piece.lstrip(" \t")
            head = _BLANKS
        if j < len(lines) - 1:
            piece = piece.rstrip(" \t")
            tail = _BLANKS
        out.append(head + escape(piece) + tail if piece else (_BLANKS if head or tail else ""))
    return "\\n".join(out)


def _strip_parts(parts: list[Part], how: str) -> list[Part]:
    """``.strip()`` of the rendered text: the edge literals lose their blanks, and past a dynamic
    part that may render blank, the strip may reach further into the next literal."""
    n = len(parts)
    cut_head = [False] * n  # blanks surely stripped from the start of literal i
    may_head = [False] * n  # blanks maybe stripped
    cut_tail = [False] * n
    may_tail = [False] * n
    for cut, may, order in (
        (cut_head, may_head, range(n) if how in ("strip", "lstrip") else range(0)),
        (cut_tail, may_tail, range(n - 1, -1, -1) if how in ("strip", "rstrip") else range(0)),
    ):
        reach = False
        for i in order:
            part = parts[i]
            if not isinstance(part, str):
                reach = True
                continue
            (may if reach else cut)[i] = True
            if part.strip():
                break
    out: list[Part] = []
    for i, part in enumerate(parts):
        if not isinstance(part, str) or not (cut_head[i] or may_head[i] or cut_tail[i] or may_tail[i]):
            out.append(part)
            continue
        text = part.lstrip() if cut_head[i] else part
        text = text.rstrip() if cut_tail[i] else text
        if not (may_head[i] or may_tail[i]):
            out.append(text)
            continue
        core = text.lstrip() if may_head[i] else text
        core = core.rstrip() if may_tail[i] else core
        regex = ("\\s*" if may_head[i] else "") + escape(core) + ("\\s*" if may_tail[i] and core else "")
        out.append(Loose.of(text, regex))
    return out


# --------------------------------------------------------------------------- str(exc) shapes

_OSERROR_FAMILY = frozenset(
    {
        "OSError", "IOError", "EnvironmentError", "FileNotFoundError", "FileExistsError",
        "PermissionError", "IsADirectoryError", "NotADirectoryError", "TimeoutError",
        "ConnectionError", "ConnectionResetError", "ConnectionRefusedError", "ConnectionAbortedError",
        "BrokenPipeError", "BlockingIOError", "InterruptedError", "ChildProcessError",
        "ProcessLookupError",
    }
)  # fmt: skip


def message_from_args(error_class: str, args: Sequence[ast.expr], ctx: MessageContext) -> Message | None:
    """The message ``str(exc)`` prints for ``error_class(*args)``; ``None`` when there is none."""
    if not args:
        return None
    if any(isinstance(a, ast.Starred) for a in args):
        return make_message([Placeholder(", ".join(ctx.src(a) for a in args))])
    base = error_class.rsplit(".", 1)[-1]
    builtin = base in _BUILTIN_EXCEPTIONS and error_class in (base, f"builtins.{base}")
    if len(args) > 1 and not builtin:
        # A class from elsewhere may format its arguments any way it likes: keep the part that
        # reads as the message, and let anything surround it.
        chosen = _message_arg(args, ctx)
        msg = make_message(expr_parts(chosen, ctx))
        inner = _body(msg.parts)
        pattern = WILDCARD if inner == WILDCARD or not inner else WILDCARD + inner + WILDCARD
        return Message(template=msg.template, pattern=pattern, parts=msg.parts)
    if base in _OSERROR_FAMILY and builtin and len(args) in (2, 3):
        # OSError(errno, strerror[, filename]) prints "[Errno n] strerror[: 'filename']".
        parts: list[Part] = ["[Errno ", *expr_parts(args[0], ctx), "] ", *expr_parts(args[1], ctx)]
        if len(args) == 3:
            parts += [": ", *_repr_template(args[2], ctx)]
            msg = make_message(parts)
            head = pattern_of(parts[: len(parts) - len(_repr_template(args[2], ctx))])
            return Message(msg.template, _unanchored(head) + _repr_body(args[2], ctx), msg.parts)
        return make_message(parts)
    if len(args) > 1:
        # BaseException.__str__ of several args prints the tuple's repr.
        tparts: list[Part] = ["("]
        bodies = []
        for i, arg in enumerate(args):
            if i:
                tparts.append(", ")
            tparts.extend(_repr_template(arg, ctx))
            bodies.append(_repr_body(arg, ctx))
        tparts.append(")")
        msg = make_message(tparts)
        return Message(template=msg.template, pattern="\\(" + ", ".join(bodies) + "\\)", parts=msg.parts)
    msg = make_message(expr_parts(args[0], ctx))
    if base == "KeyError" and builtin:
        # KeyError.__str__ prints the repr of its argument.
        return Message(template=msg.template, pattern=_repr_pattern(args[0], ctx), parts=msg.parts)
    return msg


_BUILTIN_EXCEPTIONS = frozenset(
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
)
_MESSAGE_NAME = re.compile(
    r"(?:^|_)(?:msg|message|reason|error|err|detail|text|description)s?$", re.IGNORECASE
)


def _message_arg(args: Sequence[ast.expr], ctx: MessageContext) -> ast.expr:
    """Of several constructor arguments, the one that reads as the message."""
    for arg in args:
        if _stringish(arg, ctx):
            return arg
    for arg in args:
        name = arg.id if isinstance(arg, ast.Name) else arg.attr if isinstance(arg, ast.Attribute) else ""
        if _MESSAGE_NAME.search(name):
            return arg
    return args[0]


def _unanchored(pattern: str) -> str:
    # Strip the leading lookaheads pattern_of adds: the fragment is followed by more pattern.
    while pattern.startswith("(?=[\\s\\S]*"):
        depth = 0
        for i, ch in enumerate(pattern):
            if ch == "(" and (i == 0 or pattern[i - 1] != "\\"):
                depth += 1
            elif ch == ")" and pattern[i - 1] != "\\":
                depth -= 1
                if depth == 0:
                    pattern = pattern[i + 1 :]
                    break
        else:
            break
    return pattern


def _repr_inner(text: str, quote: str) -> str:
    """``text`` as it appears inside a repr that uses ``quote``."""
    if quote == "'":
        # A string holding both quote kinds is printed in single quotes with ' escaped.
        return repr("'\"" + text)[4:-1]
    return repr("'" + text)[2:-1]


def _repr_alternatives(parts: Sequence[Part]) -> list[list[Part]]:
    out: list[list[Part]] = []
    for quote in ("'", '"'):
        if quote == '"' and any(isinstance(p, str) and '"' in p for p in parts):
            continue  # a string holding " is printed in single quotes
        out.append([quote, *(_repr_part(p, quote) for p in parts), quote])
    return out


def _repr_part(part: Part, quote: str) -> Part:
    if isinstance(part, Loose):
        # Its whitespace is decided at runtime; inside a repr any text will do.
        return Placeholder(part)
    if isinstance(part, str):
        return _repr_inner(part, quote)
    if isinstance(part, Choice):
        options = tuple(tuple(_repr_part(p, quote) for p in opt) for opt in part.options)
        return Choice(source=part.source, prefix=_repr_inner(part.prefix, quote), options=options)
    if part.prefix:
        return Placeholder(source=part.source, prefix=_repr_inner(part.prefix, quote))
    return part


def _repr_pattern(arg: ast.expr, ctx: MessageContext) -> str:
    """A full pattern for ``repr(arg)``."""
    if isinstance(arg, ast.Constant):
        return escape(repr(arg.value))
    if not _stringish(arg, ctx):
        return WILDCARD
    parts = expr_parts(arg, ctx)
    alts = [pattern_of(a) for a in _repr_alternatives(parts)]
    return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"


def _repr_body(arg: ast.expr, ctx: MessageContext) -> str:
    """A pattern fragment for ``repr(arg)`` inside a larger pattern."""
    if isinstance(arg, ast.Constant):
        return escape(repr(arg.value))
    if not _stringish(arg, ctx):
        return WILDCARD
    parts = expr_parts(arg, ctx)
    alts = sorted({_body(a) for a in _repr_alternatives(parts)})
    return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"


def _repr_template(arg: ast.expr, ctx: MessageContext) -> list[Part]:
    """Template parts for ``repr(arg)``: a string literal in quotes, anything else as ``{x!r}``."""
    if isinstance(arg, ast.Constant):
        return [repr(arg.value)]
    if _stringish(arg, ctx):
        return ["'", *expr_parts(arg, ctx), "'"]
    return [Placeholder(ctx.src(arg) + "!r")]
