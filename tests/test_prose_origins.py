"""Golden test of the causes read from the code itself and of the why in the code's words:
``tests/fixtures/prose/origins.py`` holds the sites, ``origins.jsonl`` beside it the prose
fields each gets. Regenerate after a deliberate change with ``SGLANG_ERRORS_REGEN=1`` and review
the diff."""

from __future__ import annotations

from pathlib import Path

from extractor.analysis.analyse import analyse
from extractor.analysis.parse import ParsedFile, parse_source
from extractor.prose.enrich import enrich
from extractor.prose.knowledge import build_knowledge, module_constants
from tests.conftest import assert_golden_rows

FIXTURES = Path(__file__).parent / "fixtures" / "prose"
GOLDEN = FIXTURES / "origins.jsonl"
FIELDS = (
    "errorType",
    "backgroundTag",
    "documentation",
    "triggerScenarios",
    "commonSituations",
    "solutions",
)


def rows() -> dict[int, dict[str, object]]:
    knowledge = build_knowledge(
        {"python/sglang/srt/server_args.py": (FIXTURES / "origins_args.py").read_bytes()}
    )
    parsed = parse_source("python/sglang/srt/utils/origins.py", (FIXTURES / "origins.py").read_bytes())
    assert isinstance(parsed, ParsedFile), parsed
    constants = module_constants(parsed.tree)
    out: dict[int, dict[str, object]] = {}
    for site in analyse(parsed):
        prose = enrich(site, knowledge, constants)
        out[site.line] = {"line": site.line, **{f: getattr(prose, f) for f in FIELDS}}
    return out


def _line_of(text: str) -> int:
    lines = (FIXTURES / "origins.py").read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def test_origins_match_the_golden_file() -> None:
    assert_golden_rows(GOLDEN, rows().values())


def _text(row: dict[str, object], *fields: str) -> str:
    return " ".join(" ".join(v) if isinstance(v, list) else str(v) for f in fields if (v := row[f]))


def _solutions(row: dict[str, object]) -> list[str]:
    sols = row["solutions"]
    assert isinstance(sols, list)
    return [str(s) for s in sols]


def test_a_parameter_filled_from_the_config_is_named_by_its_key() -> None:
    row = rows()[_line_of("No handler registered")]
    assert row["errorType"] == "validation"
    assert "vision_config.model_type" in _text(row, "documentation", "solutions")


def test_a_constructor_filled_from_config_keys_by_its_class_method_names_those_keys() -> None:
    got = rows()
    for text, key in (("Unsupported weight_bits", "bits"), ("Unsupported packing", "packing")):
        row = got[_line_of(text)]
        assert row["errorType"] != "internal-invariant"
        assert f"`{key}`" in _text(row, "documentation")


def test_caller_data_causes_say_what_the_call_must_contain() -> None:
    got = rows()
    dup = got[_line_of("Duplicate job_id")]
    assert dup["errorType"] == "bad-request"
    assert "job_id" in _text(dup, "solutions")
    parsed = got[_line_of("Missing closing marker")]
    # The module constants the check compares with are spelled out, in the cause and the fix.
    assert "</<|M|>calls>" in _text(parsed, "documentation")
    assert "</<|M|>calls>" in _text(parsed, "solutions")
    image = got[_line_of("Unsupported image input type")]
    assert "bytes" in _text(image, "solutions") and "ImageData" in _text(image, "solutions")


def test_the_why_is_the_codes_own_words_or_nothing() -> None:
    got = rows()
    assert "a mismatch would corrupt the cache" in str(
        got[_line_of('"page sizes differ"')]["commonSituations"]
    )
    assert "Packs rows into one contiguous buffer" in str(
        got[_line_of("assert rows is not None")]["commonSituations"]
    )
    bare = str(got[_line_of('RuntimeError("x")')]["commonSituations"])
    assert '"' not in bare and "upstream" not in bare
    # An internal check with no cause the user controls stays internal.
    assert got[_line_of('"page sizes differ"')]["errorType"] == "internal-invariant"


def test_hardware_causes_offer_the_other_declared_backends() -> None:
    row = rows()[_line_of("only runs on Blackwell")]
    assert row["errorType"] == "hardware"
    other = [s for s in _solutions(row) if "--gemm-backend" in s]
    # The choices come from the constant the declaration names; the selecting value is left out.
    assert len(other) == 1 and other[0].endswith("it accepts auto, portable")


def test_dependency_causes_name_each_package_once() -> None:
    row = rows()[_line_of("pyyaml is required")]
    assert row["errorType"] == "dependency"
    install = [s for s in _solutions(row) if "pip install" in s]
    assert install and install[0].lower().count("pyyaml") == 1


def test_capability_tests_name_the_sm_version_and_availability_tests_the_package() -> None:
    got = rows()
    sm = got[_line_of("needs a newer GPU")]
    assert sm["errorType"] == "hardware" and "SM90" in _text(sm, "documentation", "solutions")
    lib = got[_line_of("fast path cannot run here")]
    assert lib["errorType"] == "dependency" and "pip install fastlib" in _text(lib, "solutions")


def test_config_mapping_keys_are_named_and_called_methods_are_not() -> None:
    row = rows()[_line_of("Quantized bias is not supported")]
    assert row["backgroundTag"] == "model-feature-mismatch"
    words = _text(row, "documentation", "solutions")
    assert "`bias`" in words and "`get_name`" not in words
