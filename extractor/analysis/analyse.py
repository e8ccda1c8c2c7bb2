"""From a parsed file to its :class:`~extractor.analysis.facts.Site` objects: class, message, HTTP status,
guard and source window of every site, in source order.

:mod:`~extractor.analysis.sites` finds the sites, :mod:`~extractor.analysis.resolver` says what each
raises, :mod:`~extractor.analysis.conditions` works out its guard and
:mod:`~extractor.analysis.context` its window.
"""

from __future__ import annotations

import ast
from typing import Any

from extractor.analysis.conditions import guard_of
from extractor.analysis.context import window_of
from extractor.analysis.facts import Raised, Site
from extractor.analysis.http_status import error_response
from extractor.analysis.messages.expressions import expr_parts
from extractor.analysis.messages.patterns import make_message
from extractor.analysis.parse import ParsedFile
from extractor.analysis.resolver import OtherModules, Resolver
from extractor.analysis.sites import RawSite, error_response_call, find_sites


def analyse(parsed: ParsedFile, modules: OtherModules | None = None) -> list[Site]:
    """Every site of a parsed file, resolved, in source order.

    With ``modules``, classes and helpers the file imports from other modules of the target are
    read from those modules; without, they resolve as classes from outside the target.
    """
    raws = find_sites(parsed.tree)
    if not raws:
        return []  # no index of the file's scopes is needed
    resolver = Resolver(parsed, modules)
    return [site_of(resolver, raw) for raw in raws]


def site_of(resolver: Resolver, raw: RawSite) -> Site:
    """One raw site of the resolver's file, resolved."""
    parsed = resolver.parsed
    ctx = resolver.context_at(raw.scope, raw.frames)
    node = raw.node
    guard = guard_of(raw)
    response = error_response_call(node) if isinstance(node, ast.Return | ast.Expr) else None
    if isinstance(node, ast.Assert):
        message = make_message(expr_parts(node.msg, ctx)) if node.msg is not None else None
        raised = Raised("AssertionError", message)
    elif response is not None:
        raised = error_response(response, ctx)
    else:
        raised = resolver.raised(raw, list(guard.atoms))
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
    )


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
