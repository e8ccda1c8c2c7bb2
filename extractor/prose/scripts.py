"""A tool script's own command line, as the cause of its checks.

A script such as a converter or a benchmark declares its flags with ``add_argument`` and reads
them as ``args.x``; the file's own flags are merged into the ones a site reads
(:func:`extractor.prose.knowledge.module_constants`), and a fix on one runs the script itself
(``python -m <module>``, :func:`extractor.prose.commands.launcher`). What it computes from its
flags through calls is another matter: :func:`own_flags_named` keeps a script flag only where the
atom names it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from extractor.prose.constraints import AtomView
from extractor.prose.reads import Reads

__all__ = ["own_flags_named"]

_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def own_flags_named(views: Sequence[AtomView], path: str) -> list[AtomView]:
    """``views`` keeping a tool script's own flag only where the atom names it (``args.x``,
    or a parameter ``x``): a value the script computed from its flags through calls
    (``df = read(args.path).filter(args.step)``) fails for what it read, not for the flag."""
    out = []
    for v in views:
        own = [f for f in v.reads.flags if f.namespace == path]
        if not own:
            out.append(v)
            continue
        named = set(_IDENT_RE.findall(v.text))
        dropped = {f.flag for f in own if f.dest not in named}
        if not dropped:
            out.append(v)
            continue

        reads = Reads(flags=[f for f in v.reads.flags if f.flag not in dropped], envs=list(v.reads.envs))
        kept = [c for c in v.constraints if c.name not in dropped]
        out.append(dataclasses.replace(v, reads=reads, constraints=kept))
    return out
