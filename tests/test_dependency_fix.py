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


def cutedsl_wrapper():
    try:
        from kernelpack import DslWrapper
    except ImportError as e:
        raise ImportError("this backend requires kernelpack with DSL support. Install with: pip install kernelpack") from e
    return DslWrapper


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


def test_the_words_after_install_are_no_package() -> None:
    parsed = parse_source("python/sglang/srt/layers/sage.py", SOURCE)
    assert isinstance(parsed, ParsedFile), parsed
    (site,) = [s for s in analyse(parsed) if s.qualname == "cutedsl_wrapper"]
    prose = enrich(site, build_knowledge({}), module_constants(parsed.tree))
    # "Install with: pip install kernelpack": ``with`` is English, not a module to install.
    assert "`with`" not in prose.documentation and not any("`with`" in s for s in prose.solutions), (
        prose.solutions
    )
    assert "pip install kernelpack" in (prose.exampleFix or "")


def test_a_relative_import_names_no_package() -> None:
    fix = _fixes()["relative_only"]
    assert "pip install local_ops" not in fix and "pip install .local_ops" not in fix


PYPROJECT = b"""[project]
name = "sglang"
dependencies = [
  "kernelpack_python[cu13]==2.4.1 ; sys_platform == 'linux'",
  "vendor-fastkernels>=1.2",
  "kernelpack-cubin==2.4.1",
]

[project.optional-dependencies]
extra = ["docparse @ git+https://example.invalid/docparse.git"]
"""

VARIANT = b"""[project]
name = "sglang"
dependencies = ["kernelpack_python==9.9.9", "npu-only-kit==1.0", "attnlib-4>=4.0"]
"""

MORE = b"""def needs_ops():
    try:
        import vendorops
    except ImportError:
        raise ImportError("vendorops is required when the vendor path is enabled")
    return vendorops


def needs_attn():
    try:
        from attnlib import varlen
    except ImportError:
        raise ImportError("attnlib is not installed")
    return varlen


def told_how():
    try:
        import toldpkg
    except ImportError:
        raise ImportError("Install it with: pip install toldpkg")
    return toldpkg
"""


def _with_metadata(source: bytes) -> dict[str, tuple[str, list[str]]]:
    parsed = parse_source("python/sglang/srt/layers/sage.py", source)
    assert isinstance(parsed, ParsedFile), parsed
    knowledge = build_knowledge({"python/pyproject.toml": PYPROJECT, "python/pyproject_npu.toml": VARIANT})
    constants = module_constants(parsed.tree)
    out = {}
    for site in analyse(parsed):
        prose = enrich(site, knowledge, constants)
        out[site.qualname] = (prose.exampleFix or "", prose.solutions)
    return out


def test_the_declared_distribution_of_an_imported_module_is_what_pip_installs() -> None:
    knowledge = build_knowledge({"python/pyproject.toml": PYPROJECT, "python/pyproject_npu.toml": VARIANT})
    # The main metadata first, markers and extras dropped, a direct reference not pinned.
    assert knowledge.distributions[:3] == (
        "kernelpack_python==2.4.1",
        "vendor-fastkernels>=1.2",
        "kernelpack-cubin==2.4.1",
    )
    assert "docparse" in knowledge.distributions and "npu-only-kit==1.0" in knowledge.distributions
    assert knowledge.distribution_for("kernelpack") == "kernelpack_python==2.4.1"
    assert knowledge.distribution_for("fastkernels.ops") == "vendor-fastkernels>=1.2"
    assert knowledge.distribution_for("Npu_Only_Kit") == "npu-only-kit==1.0"
    # Another numbered line of a package is not the one the import means.
    assert knowledge.distribution_for("attnlib") is None
    assert knowledge.distribution_for("vendorops") is None
    got = _with_metadata(SOURCE)
    assert "pip install -U 'vendor-fastkernels>=1.2'" in got["SageAttention.__init__"][0]
    assert "pip install 'kernelpack_python==2.4.1'" in got["fused_block_scale"][0]


def test_an_undeclared_module_gets_no_guessed_pip_line_unless_the_message_gives_one() -> None:
    got = _with_metadata(MORE)
    for name in ("needs_ops", "needs_attn"):
        fix, solutions = got[name]
        assert "pip install" not in fix, fix
        module = "vendorops" if name == "needs_ops" else "attnlib"
        assert any(f"provides the `{module}` module" in s and "not declare" in s for s in solutions), (
            solutions
        )
    # The message's own command is the author's word for it.
    assert "pip install toldpkg" in got["told_how"][0]
    # Without the metadata nothing better than the module's name is known.
    assert "pip install kernelpack" in _fixes()["fused_block_scale"]
