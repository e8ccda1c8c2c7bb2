"""What an ``except`` handler does with the error it catches, read from its body.

* ``reraise``: a bare ``raise``, ``raise e`` of the caught name, or ``raise X(...)`` of the very class
  caught (the error, or one of its class, goes on): nothing is swallowed here;
* ``convert``: every path raises another class (``raise RuntimeError(...) from e``): the user meets
  that error instead;
* ``exit``: the handler ends the process (``sys.exit``, ``os._exit``);
* ``swallow``: no path raises; the handler may log (``logger.warning``, ``warnings.warn``, ``print``)
  and then returns, continues a loop, or goes on after the ``try`` with a fallback value.

A handler that raises on some paths only is ``mixed``: it is never said to swallow anything.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Callable

from extractor.analysis.handled_facts import Outcome
from extractor.analysis.messages.expressions import MessageContext, expr_parts
from extractor.analysis.messages.patterns import make_message
from extractor.analysis.walk import NEW_SCOPE, own_statements

__all__ = ["Outcome", "class_test", "outcome_of", "reported_later"]

_LOG_LEVELS = {
    "debug": "debug",
    "info": "info",
    "warning": "warning",
    "warn": "warning",
    "error": "error",
    "exception": "error",
    "critical": "error",
    "fatal": "error",
}
_LOG_METHOD = re.compile(r"^(debug|info|warning|warn|error|exception|critical|fatal)(?:_once)?$")
_LOG_RECEIVER = re.compile(r"(?:^|\.)_?(?:logger|logging|log|LOGGER|LOG|_logger)$|logger$", re.I)
_EXITS = frozenset({"sys.exit", "os._exit", "exit", "quit", "os.kill", "os.killpg", "signal.raise_signal"})
_MAX_MESSAGE = 300

KeyOf = Callable[[str], str]
"""The key (:mod:`extractor.analysis.exception_keys`) of a class written in the handler's file."""


def _call_name(node: ast.expr) -> str:
    try:
        return ast.unparse(node)
    except (ValueError, RecursionError):  # pragma: no cover - a tree ast.parse built always unparses
        return ""


def _log_call(call: ast.Call) -> tuple[str, ast.expr | None, list[ast.expr]] | None:
    """``(level, message, extra args)`` when ``call`` writes a log line."""
    func = call.func
    if isinstance(func, ast.Attribute):
        receiver = _call_name(func.value)
        method = _LOG_METHOD.match(func.attr)
        if method and _LOG_RECEIVER.search(receiver):
            first = call.args[0] if call.args else None
            return _LOG_LEVELS[method.group(1)], first, list(call.args[1:])
        if receiver == "warnings" and func.attr == "warn":
            return "warning", call.args[0] if call.args else None, []
        if receiver == "traceback" and func.attr == "print_exc":
            return "print", None, []
    elif isinstance(func, ast.Name):
        if func.id == "print":
            return "print", call.args[0] if call.args else None, list(call.args[1:])
        m = re.match(r"^(?:print|log)_(debug|info|warning|error)(?:_once|_on_rank0)?$", func.id)
        if m:
            args = [a for a in call.args if not (isinstance(a, ast.Name) and "log" in a.id.lower())]
            return _LOG_LEVELS[m.group(1)], args[0] if args else None, args[1:]
    return None


def _message(node: ast.expr | None, extra: list[ast.expr], ctx: MessageContext | None) -> str:
    if node is None:
        return ""
    if extra and isinstance(node, ast.Constant) and isinstance(node.value, str) and "%" in node.value:
        node = ast.BinOp(node, ast.Mod(), ast.Tuple(extra, ast.Load()) if len(extra) > 1 else extra[0])
        ast.copy_location(node, node.left)
        ast.fix_missing_locations(node)
    if ctx is not None:
        try:
            text = make_message(expr_parts(node, ctx)).template
        except Exception:  # a message we cannot render is left out, never a failure
            text = ""
    else:
        text = ""
    if not text:
        try:
            text = "{" + ast.unparse(node) + "}"
        except (ValueError, RecursionError):  # pragma: no cover
            return ""
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 1] + "…"


def _is_reraise(stmt: ast.Raise, bound: str | None, caught: tuple[str, ...], key_of_text: KeyOf) -> bool:
    if stmt.exc is None:
        return True
    exc = stmt.exc
    if isinstance(exc, ast.Name) and bound is not None and exc.id == bound:
        return True
    target = exc.func if isinstance(exc, ast.Call) else exc
    if isinstance(target, ast.Name | ast.Attribute):
        return key_of_text(ast.unparse(target)) in caught
    return True  # ``raise make_error(e)``: nobody can tell what goes on, so nothing is swallowed


def outcome_of(
    handler: ast.ExceptHandler,
    caught: tuple[str, ...],
    key_of_text: KeyOf,
    ctx: MessageContext | None,
    is_instance: Callable[[ast.expr], bool | None] | None = None,
) -> Outcome:
    """What ``handler`` (catching the classes with keys ``caught``) does with the error.

    With ``is_instance`` (whether the error is an instance of the classes an expression names,
    None when that cannot be told), a handler that branches on the error's class first
    (``if isinstance(e, TRANSPORT_ERRORS): warn ... else: log the traceback``) is read along the
    branch the error takes."""
    body = _taken(handler.body, handler.name, is_instance) if is_instance is not None else handler.body
    raises = [s for s in own_statements(body) if isinstance(s, ast.Raise)]
    line = handler.lineno
    if any(_is_reraise(r, handler.name, caught, key_of_text) for r in raises):
        return Outcome("reraise", line=line)
    exit_call = _exit(body)
    top_raise = next((s for s in body if isinstance(s, ast.Raise)), None)
    if raises:
        if top_raise is None or len(raises) > 1:
            return Outcome("mixed", line=line)
        exc = top_raise.exc
        target = exc.func if isinstance(exc, ast.Call) else exc
        assert target is not None
        text = ast.unparse(target)
        message = ""
        if isinstance(exc, ast.Call) and exc.args:
            message = _message(exc.args[0], [], ctx)
        return Outcome("convert", logged=message, raised=text, raised_key=key_of_text(text), line=line)
    level, logged = "", ""
    for stmt in own_statements(body):
        for node in _calls(stmt):
            found = _log_call(node)
            if found is not None:
                level, logged = found[0], _message(found[1], found[2], ctx)
                break
        if level:
            break
    if exit_call:
        return Outcome("exit", level, logged, then=exit_call, line=line)
    bound = handler.name or ""
    return Outcome("swallow", level, logged, _then(body), line=line, bound=bound, passed=_passed(body, bound))


def class_test(stmt: ast.stmt, bound: str | None) -> ast.expr | None:
    """``X`` of ``if isinstance(<bound>, X):`` (a handler branching on the caught error's class)."""
    test = stmt.test if isinstance(stmt, ast.If) else None
    if (
        bound
        and isinstance(test, ast.Call)
        and isinstance(test.func, ast.Name)
        and test.func.id == "isinstance"
        and len(test.args) == 2
        and isinstance(test.args[0], ast.Name)
        and test.args[0].id == bound
    ):
        return test.args[1]
    return None


def _taken(
    body: list[ast.stmt], bound: str | None, is_instance: Callable[[ast.expr], bool | None]
) -> list[ast.stmt]:
    """``body`` with each ``if isinstance(<bound>, X):`` at its top replaced by the branch the
    error takes, where that can be told."""
    out: list[ast.stmt] = []
    for stmt in body:
        classes = class_test(stmt, bound)
        hit = is_instance(classes) if classes is not None else None
        if hit is not None and isinstance(stmt, ast.If):
            out.extend(stmt.body if hit else stmt.orelse)
        else:
            out.append(stmt)
    return out


def reported_later(outcome: Outcome, scope: ast.AST | None, ctx: MessageContext | None) -> Outcome:
    """``outcome`` with the later raise of ``scope`` that carries the error the handler keeps in a
    name (``last_error = exc``, then after the loop ``raise RuntimeError(f"... {last_error}")``):
    the user meets the error there, inside that one's message."""
    m = _KEPT.match(outcome.passed) if outcome.kind == "swallow" else None
    if m is None or scope is None:
        return outcome
    name = m.group(1)
    later = sorted(
        (
            n
            for n in ast.walk(scope)
            if isinstance(n, ast.Raise)
            and n.lineno > outcome.line
            and any(
                isinstance(x, ast.Name) and x.id == name for e in (n.exc, n.cause) if e for x in ast.walk(e)
            )
        ),
        key=lambda n: n.lineno,
    )
    if not later:
        return outcome
    exc = later[0].exc
    target = exc.func if isinstance(exc, ast.Call) else exc
    if not isinstance(target, ast.Name | ast.Attribute):
        return outcome
    message = _message(exc.args[0], [], ctx) if isinstance(exc, ast.Call) and exc.args else ""
    text = f"{later[0].lineno}|{ast.unparse(target)}|{' '.join(message.split())}"
    return dataclasses.replace(outcome, reported=text)


_KEPT = re.compile(r"^([A-Za-z_]\w*) = ")


def _passed(body: list[ast.stmt], bound: str) -> str:
    """The first statement that hands the caught error on: a call with it as an argument, or an
    assignment of something made from it (``record["error"] = repr(exc)``)."""
    if not bound:
        return ""
    for stmt in body:
        for call in _calls(stmt):
            if _log_call(call) is None and any(isinstance(a, ast.Name) and a.id == bound for a in call.args):
                return _call_name(call)
        if isinstance(stmt, ast.Assign) and any(
            isinstance(n, ast.Name) and n.id == bound for n in ast.walk(stmt.value)
        ):
            return ast.unparse(stmt)
    return ""


def _calls(stmt: ast.stmt) -> list[ast.Call]:
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        return [stmt.value]
    return []


def _exit(body: list[ast.stmt]) -> str:
    for stmt in own_statements(body):
        for call in _calls(stmt):
            if _call_name(call.func) in _EXITS:
                return _call_name(call)
    return ""


def _then(body: list[ast.stmt]) -> str:
    """The statement that decides where the code goes after the handler (its last one that does)."""
    for stmt in reversed(body):
        if isinstance(stmt, ast.Return):
            return "return" if stmt.value is None else f"return {_call_name(stmt.value)}"
        if isinstance(stmt, ast.Continue):
            return "continue"
        if isinstance(stmt, ast.Break):
            return "break"
        if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            return f"{' = '.join(_call_name(t) for t in targets)} = {_call_name(stmt.value)}"
        if isinstance(stmt, NEW_SCOPE):
            continue
        if isinstance(stmt, ast.Expr | ast.Pass):
            continue
        return ""
    return ""
