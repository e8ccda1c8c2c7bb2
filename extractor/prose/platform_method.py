"""A platform's own path that raises ``NotImplementedError`` and nothing else.

``def forward_prepare_npu(self, ...): raise NotImplementedError(...)`` in a model, or
``def forward_npu(self, ...): raise NotImplementedError`` in an op's base class: the dispatch
calls the method named for the platform the server runs on, so this raise is what a user on that
platform meets, every time. Nothing in the launch turns it off and no report makes it a bug: the
code does not support that platform, and the fix is another one.

The CUDA path is left alone: it is the main implementation, and a base class that raises there
only asks its subclasses for one.
"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING

from extractor.analysis.facts import Site
from extractor.prose.passed import internal_sentence
from extractor.reach.selectors import PLATFORM_NAMES

if TYPE_CHECKING:
    from extractor.prose.enrich import Prose

__all__ = ["platform_of_method", "with_platform_method"]

_METHOD_RE = re.compile(r"_(npu|hip|xpu|musa|cpu|hpu|mlu)$")


def platform_of_method(site: Site) -> str | None:
    """The platform whose own method ``site`` raises in, unconditionally, with
    ``NotImplementedError``; None for anything else."""
    if site.error_class.rsplit(".", 1)[-1] != "NotImplementedError" or site.guard.atoms:
        return None
    m = _METHOD_RE.search(site.qualname.rsplit(".", 1)[-1]) if site.in_class else None
    return PLATFORM_NAMES[m.group(1)] if m else None


def with_platform_method(prose: Prose, site: Site, platform: str, launch: str) -> Prose:
    """``prose`` saying that ``site`` is the ``platform`` path of its code, not implemented there."""
    where = f"`{site.qualname}`"
    owner = site.in_class or "this code"
    cause = f"Cause: the hardware or platform ({platform}): {where} is the {platform} path of `{owner}`, which it does not implement."
    said = internal_sentence(prose.documentation)
    documentation = (
        prose.documentation.replace(said, cause) if said is not None else f"{prose.documentation} {cause}"
    )
    return dataclasses.replace(
        prose,
        documentation=documentation,
        triggerScenarios=f"Running on {platform}: the dispatch calls {where}, the {platform} path of "
        f"`{owner}`, and it raises whenever it is called.",
        commonSituations=f"Serving a model that uses `{owner}` on {platform}, which `{owner}` does not support yet.",
        solutions=[
            f"`{owner}` has no {platform} implementation: run this model on another platform (for "
            f"example NVIDIA GPUs with CUDA), or pick a model that runs on {platform}",
        ],
        exampleFix=f"# before: the launch on {platform}\n{launch}\n"
        f"# after: the same launch on another platform (for example NVIDIA GPUs)\n{launch}",
        errorType="not-implemented",
        backgroundTag="hardware-unsupported",
        handlingStrategy="fallback",
    )
