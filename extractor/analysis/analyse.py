"""From a parsed file to its :class:`~extractor.analysis.facts.Site` objects: class, message, HTTP status,
guard and source window of every site, in source order.

:mod:`~extractor.analysis.sites` finds the sites, :mod:`~extractor.analysis.resolver` says what each
raises, :mod:`~extractor.analysis.conditions` works out its guard and
:mod:`~extractor.analysis.context` its window.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from typing import Any

from extractor.analysis.caller_ruled_out import callers_rule_out
from extractor.analysis.conditions import after_loop, count_sites, guard_of
from extractor.analysis.config_attrs import config_attributes
from extractor.analysis.context import window_of
from extractor.analysis.docstrings import CallIndex, class_doc, function_doc, parameters
from extractor.analysis.facts import Message, Placeholder, Raised, Site
from extractor.analysis.handling import site_handling
from extractor.analysis.http_status import error_response
from extractor.analysis.library_calls import library_calls, parsed_values
from extractor.analysis.messages.exception_str import assert_message
from extractor.analysis.messages.expressions import MessageContext, expr_parts
from extractor.analysis.messages.parts import Part
from extractor.analysis.messages.patterns import make_message
from extractor.analysis.parse import ParsedFile
from extractor.analysis.resolver import OtherModules, Resolver
from extractor.analysis.ruled_out import asserted_before, ruled_out
from extractor.analysis.sites import RawSite, error_response_call, find_sites
from extractor.analysis.walk import called_name, last_name, own_statements

_GROUPS = ("ExceptionGroup", "BaseExceptionGroup")


def _exception_group(raised: Raised, exc: ast.expr, ctx: MessageContext) -> Raised:
    """An exception group prints its message and count, ``msg (1 sub-exception)``, not its args."""
    if raised.message is None or raised.error_class.rsplit(".", 1)[-1] not in _GROUPS:
        return raised
    if not isinstance(exc, ast.Call) or len(exc.args) != 2:
        return raised
    excs = exc.args[1]
    suffix: list[Part]
    if isinstance(excs, ast.List | ast.Tuple) and not any(isinstance(e, ast.Starred) for e in excs.elts):
        n = len(excs.elts)
        suffix = [f" ({n} sub-exception{'' if n == 1 else 's'})"]
    else:
        count = f"len({ast.unparse(excs)})"
        suffix = [" (", Placeholder(count), " sub-exception", Placeholder(f"'s' if {count} > 1 else ''"), ")"]
    message = make_message([*expr_parts(exc.args[0], ctx), *suffix])
    return dataclasses.replace(raised, message=message)


def analyse(parsed: ParsedFile, modules: OtherModules | None = None) -> list[Site]:
    """Every site of a parsed file, resolved, in source order.

    With ``modules``, classes and helpers the file imports from other modules of the target are
    read from those modules; without, they resolve as classes from outside the target.
    """
    return analyse_with_resolver(parsed, modules)[0]


def analyse_with_resolver(
    parsed: ParsedFile, modules: OtherModules | None = None
) -> tuple[list[Site], Resolver | None]:
    """:func:`analyse`, and the resolver it built (None when the file has no site), which later
    steps over the same file reuse instead of indexing its scopes again."""
    raws = find_sites(parsed.tree)
    if not raws:
        return [], None  # no index of the file's scopes is needed
    count_sites(raws)  # a scope with thousands of sites gets shorter guards (conditions.sibling_limit)
    resolver = Resolver(parsed, modules)
    calls = CallIndex.of(parsed.tree)
    return [site_of(resolver, raw, calls) for raw in raws], resolver


def site_of(resolver: Resolver, raw: RawSite, calls: CallIndex | None = None) -> Site:
    """One raw site of the resolver's file, resolved; ``calls`` (the file's calls) tell what
    its function's parameters are passed."""
    parsed = resolver.parsed
    ctx = resolver.context_at(raw.scope, raw.frames)
    node = raw.node
    guard = guard_of(raw)
    dead = ruled_out(raw, list(guard.atoms)) or callers_rule_out(raw, guard.atoms)
    guard = dataclasses.replace(guard, ruled_out=dead, asserted=tuple(asserted_before(raw)))
    response = error_response_call(node) if isinstance(node, ast.Return | ast.Expr) else None
    if isinstance(node, ast.Assert):
        message = assert_message(node.msg, ctx) if node.msg is not None else None
        raised = Raised("AssertionError", message)
    elif response is not None:
        raised = error_response(response, ctx)
    else:
        assert isinstance(node, ast.Raise) and node.exc is not None
        raised = _exception_group(resolver.raised(raw, list(guard.atoms)), node.exc, ctx)
    start, end, comments = window_of(parsed, raw, guard.bindings)
    return Site(
        path=parsed.path,
        kind="assert" if isinstance(node, ast.Assert) else "response" if response is not None else "raise",
        line=node.lineno,
        end_line=node.end_lineno or node.lineno,
        error_class=raised.error_class,
        qualname=raw.qualname,
        message=raised.message,
        guard=guard,
        http_status=raised.status,
        statement=parsed.segment(node),
        comments=tuple(comments),
        window=(start, end),
        source_lines=tuple(parsed.line(n) for n in range(start, end + 1)),
        error_code=raised.code,
        is_async=isinstance(raw.scope, ast.AsyncFunctionDef),
        in_class=raw.class_name,
        class_bases=tuple(last_name(b) for b in raw.class_node.bases) if raw.class_node is not None else (),
        handled=None
        if response is not None
        else site_handling(resolver, raw.frames, raised.error_class, raw.qualname, raw.scope),
        doc=function_doc(raw.scope),
        class_doc=class_doc(raw.class_node),
        params=parameters(raw.scope, raw.class_node, calls),
        passes_on=(passed := _passed_on(raw)),
        after_loop=loop.lineno if (loop := after_loop(raw)) is not None else 0,
        loop_over=_loop_over(loop),
        validates=_validated_fields(raw.scope),
        library_calls=library_calls(raw, resolver.own_imports()) if passed is not None else (),
        parsed=parsed_values(raw) if passed is not None else (),
        message_constants=_imported_texts(resolver, raised.message),
        config_attrs=_config_attrs(resolver, raw),
    )


def _config_attrs(resolver: Resolver, raw: RawSite) -> tuple[tuple[str, ...], ...]:
    """The class's attributes kept from the config, for a site in model code that tests one."""
    cls = raw.class_node
    if cls is None or not _MODEL_CODE_RE.search(resolver.parsed.path):
        return ()
    found = resolver.class_facts.get(id(cls))
    if found is None:
        found = resolver.class_facts[id(cls)] = config_attributes(cls)
    return found


_MODEL_CODE_RE = re.compile(r"/(?:models|configs)/")


def _imported_texts(resolver: Resolver, message: Message | None) -> tuple[tuple[str, str], ...]:
    """The imported string constants a message prints whole (``{CAPTURE_HINT}``)."""
    if message is None or resolver.modules is None:
        return ()
    out: list[tuple[str, str]] = []
    for part in message.parts:
        if isinstance(part, Placeholder) and part.source.isidentifier() and part.source.isupper():
            text = resolver.imported_text(part.source)
            if text is not None and "{" not in text:
                out.append((part.source, text))
    return tuple(dict.fromkeys(out))


# Pydantic's validator decorators, v2 and v1: the function checks the data the model is built from.
_VALIDATORS = frozenset({"field_validator", "model_validator", "validator", "root_validator"})


def _validated_fields(scope: ast.AST) -> tuple[str, ...] | None:
    """The fields a pydantic validator checks (``@field_validator("role", "name")``), ``()`` for a
    whole-model one; None when ``scope`` is no validator."""
    if not isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    for deco in scope.decorator_list:
        call = deco if isinstance(deco, ast.Call) else None
        if last_name(call.func if call is not None else deco) in _VALIDATORS:
            args = call.args if call is not None else []
            return tuple(a.value for a in args if isinstance(a, ast.Constant) and isinstance(a.value, str))
    return None


_MAX_LOOP_OVER = 80


def _loop_over(loop: ast.For | ast.AsyncFor | ast.While | None) -> str:
    """What a ``for`` goes through, when it searches that for one that fits (``for spec in specs:
    if spec.backend == b: return spec``), rather than trying again (a count of attempts, or a
    ``try`` or a sleep in its body: each pass may fail on its own, or waits for something)."""
    if not isinstance(loop, ast.For | ast.AsyncFor):
        return ""
    for stmt in own_statements(loop.body):
        if isinstance(stmt, ast.Try | ast.TryStar):
            return ""
        if any(called_name(n).endswith("sleep") for n in ast.walk(stmt) if isinstance(n, ast.Call)):
            return ""
    it = loop.iter
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range":
        return ""  # a count of attempts (``for _ in range(n)``), each trying the next value
    text = ast.unparse(it)
    return text if len(text) <= _MAX_LOOP_OVER else text[: _MAX_LOOP_OVER - 3] + "..."


def _passed_on(raw: RawSite) -> str | None:
    """The caught error's name when the raise hands it on: ``raise X(f"... {e}")``, ``from e``."""
    node = raw.node
    if not isinstance(node, ast.Raise) or node.exc is None or not raw.handler_names:
        return None
    if isinstance(node.cause, ast.Name) and node.cause.id in raw.handler_names:
        return node.cause.id
    for sub in ast.walk(node.exc):
        if isinstance(sub, ast.Name) and sub.id in raw.handler_names:
            return sub.id
    return None


def site_facts(site: Site) -> dict[str, Any]:
    """The analysis-level facts of a site as plain data (what the golden files hold).

    Prose fields are left out on purpose: they belong to enrichment and change for other reasons.
    """
    message = site.message
    return {
        "line": site.line,
        "kind": site.kind,
        "errorClass": site.error_class,
        "qualname": site.qualname,
        "template": message.template if message else None,
        "pattern": message.pattern if message else None,
        "atoms": [a.text for a in site.guard.atoms],
        "validationCode": site.guard.validation_code(),
        "httpStatus": site.http_status,
    }
