"""``"fmt" % args`` and ``"fmt".format(...)`` read into parts, each field written as ``format`` would."""

from __future__ import annotations

import ast
import re
import string
from collections.abc import Callable

from extractor.analysis.facts import Placeholder
from extractor.analysis.messages.parts import Part

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
