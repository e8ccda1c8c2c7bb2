"""An environment variable in ``exampleFix`` is set in front of the launcher, never passed to it
as if it were a command-line argument."""

from __future__ import annotations

import shlex

from extractor.analysis.analyse import analyse
from extractor.analysis.parse import ParsedFile, parse_source
from extractor.prose.enrich import enrich
from extractor.prose.knowledge import build_knowledge, module_constants

SOURCE = b"""import os


def profile_run(profile):
    if profile:
        assert "SGLANG_PROFILE_OUT_DIR" in os.environ, "Please set SGLANG_PROFILE_OUT_DIR."
"""


def test_env_var_fix_sets_the_variable_before_the_launcher() -> None:
    parsed = parse_source("python/sglang/srt/utils/profiling.py", SOURCE)
    assert isinstance(parsed, ParsedFile), parsed
    knowledge = build_knowledge({})
    (site,) = analyse(parsed)
    fix = enrich(site, knowledge, module_constants(parsed.tree)).exampleFix
    assert fix and "SGLANG_PROFILE_OUT_DIR" in fix
    for line in fix.splitlines():
        if line.startswith("#") or "SGLANG_PROFILE_OUT_DIR" not in line:
            continue
        words = shlex.split(line)
        launcher = words.index("python") if "python" in words else words.index("sglang")
        named = [i for i, w in enumerate(words) if "SGLANG_PROFILE_OUT_DIR" in w]
        # ``NAME=value`` before the launcher is an assignment the shell applies; after it, an argument.
        assert all(i < launcher and words[i].startswith("SGLANG_PROFILE_OUT_DIR=") for i in named), line
