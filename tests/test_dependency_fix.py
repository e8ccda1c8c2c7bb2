"""A re-raised ImportError names the package its ``try`` body imports, not a word of the message
or a name imported from that package."""

from __future__ import annotations

from extractor.analysis.analyse import analyse
from extractor.analysis.parse import ParsedFile, parse_source
from extractor.prose.enrich import enrich
from extractor.prose.knowledge import build_knowledge, module_constants

SOURCE = b"""class SageAttention:
    def __init__(self):
        try:
            from fastkernels.ops.sage import sage_forward
        except ImportError:
            raise ImportError("Sage attention is not available, please update your kernels.")
        self.forward = sage_forward


def fused_block_scale():
    try:
        from kernelpack import fused_block_scale_moe
    except ImportError:
        raise ImportError("cannot import fused_block_scale_moe")
    return fused_block_scale_moe


def relative_only():
    try:
        from .local_ops import helper
    except ImportError:
        raise ImportError("cannot import helper")
    return helper
"""


def _fixes() -> dict[str, str]:
    parsed = parse_source("python/sglang/srt/layers/sage.py", SOURCE)
    assert isinstance(parsed, ParsedFile), parsed
    knowledge = build_knowledge({})
    constants = module_constants(parsed.tree)
    return {site.qualname: enrich(site, knowledge, constants).exampleFix or "" for site in analyse(parsed)}


def test_the_package_of_the_failed_import_is_installed() -> None:
    fixes = _fixes()
    # The message asks to update: -U, or pip keeps the old version.
    assert "pip install -U fastkernels" in fixes["SageAttention.__init__"]
    assert "pip install kernelpack" in fixes["fused_block_scale"]
    assert "fused_block_scale_moe" not in fixes["fused_block_scale"].split("pip install", 1)[1]


def test_a_relative_import_names_no_package() -> None:
    fix = _fixes()["relative_only"]
    assert "pip install local_ops" not in fix and "pip install .local_ops" not in fix
