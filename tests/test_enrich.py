"""Enrichment of hand-built sites: which flags and env vars a guard reads, and the prose."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path
from typing import get_args

import pytest

from extractor.analysis.facts import AtomKind, Guard, GuardAtom, LocalBinding, Message, Param, Site, SiteKind
from extractor.prose.enrich import Prose, enrich
from extractor.prose.knowledge import Knowledge, build_knowledge, module_constants
from extractor.prose.reads import guard_env_vars, guard_flags
from extractor.records.model import BackgroundTag, ErrorType, HandlingStrategy, Severity

FIXTURES = Path(__file__).parent / "fixtures" / "enrich"
MM_ARGS = "python/sglang/multimodal_gen/runtime/server_args/server_args.py"


@pytest.fixture(scope="module")
def knowledge() -> Knowledge:
    return build_knowledge(
        {
            "python/sglang/srt/server_args.py": (FIXTURES / "server_args.py").read_bytes(),
            "python/sglang/srt/environ.py": (FIXTURES / "environ.py").read_bytes(),
            MM_ARGS: (FIXTURES / "mm_server_args.py").read_bytes(),
        }
    )


def expr(src: str) -> ast.expr:
    return ast.parse(src, mode="eval").body


def atom(src: str, *, negated: bool = False, kind: AtomKind = "if", line: int = 10) -> GuardAtom:
    test = expr(src)
    text = ast.unparse(ast.parse(f"not ({src})", mode="eval")) if negated else ast.unparse(test)
    return GuardAtom(text=text, kind=kind, test=test, negated=negated, line=line)


def binding(src: str, line: int = 5) -> LocalBinding:
    stmt = ast.parse(src).body[0]
    assert isinstance(stmt, ast.Assign)
    target = stmt.targets[0]
    name = target.id if isinstance(target, ast.Name) else ast.unparse(target).split(".")[0]
    return LocalBinding(name=name, source=src, value=stmt.value, line=line)


def make_site(
    atoms: tuple[GuardAtom, ...] = (),
    *,
    bindings: tuple[LocalBinding, ...] = (),
    path: str = "python/sglang/srt/mem_cache/pool.py",
    qualname: str = "Pool.alloc",
    in_class: str | None = "Pool",
    error_class: str = "ValueError",
    message: str | None = "bad value",
    line: int = 20,
    kind: SiteKind = "raise",
    http_status: int | None = None,
    comments: tuple[str, ...] = (),
    handlers: tuple[str, ...] = (),
    error_code: str | None = None,
    params: tuple[Param, ...] = (),
) -> Site:
    msg = Message(template=message, pattern=re.escape(message)) if message is not None else None
    return Site(
        path=path,
        kind=kind,
        line=line,
        end_line=line,
        error_class=error_class,
        qualname=qualname,
        message=msg,
        guard=Guard(atoms=atoms, bindings=bindings, handlers=handlers),
        http_status=http_status,
        statement=f"raise {error_class}()",
        comments=comments,
        error_code=error_code,
        in_class=in_class,
        params=params,
    )


def code_spans(text: str) -> list[str]:
    return re.findall(r"`([^`\n]+)`", text)


def normalised_exprs(code: str) -> set[str]:
    """Every expression in ``code``, as ast.unparse prints it (the scorer's reading)."""
    out: set[str] = set()
    for mode in ("eval", "exec"):
        try:
            tree = ast.parse(code, mode=mode)
        except SyntaxError:
            continue
        out.update(ast.unparse(n) for n in ast.walk(tree) if isinstance(n, ast.expr))
        break
    return out


# ---------------------------------------------------------------------------------------------
# The reference record's gate
# ---------------------------------------------------------------------------------------------

REFERENCE_MESSAGE = "--enable-linear-replayssm-spec with DSPARK/DFLASH requires a KDA (kimi_linear) model; got a non-KDA model."


def reference_site() -> Site:
    return make_site(
        (
            atom("get_exec().mamba.enable_linear_replayssm_spec", line=14),
            atom("_algo in ('DSPARK', 'DFLASH')", line=15),
            atom("kimi_linear_config(self.model_config) is None", line=16),
        ),
        bindings=(binding("_algo = (get_spec().speculative_algorithm or '').upper()", line=12),),
        path="python/sglang/srt/mem_cache/kv_cache_configurator.py",
        qualname="KVCacheConfigurator._build_hybrid_req_pool",
        in_class="KVCacheConfigurator",
        message=REFERENCE_MESSAGE,
        line=18,
        comments=(
            "DSPARK/DFLASH commit routes through the backend fold (KDA-only); a",
            "non-KDA model there would scatter a None intermediate_ssm and crash.",
        ),
    )


def test_reference_gate_flags(knowledge: Knowledge) -> None:
    site = reference_site()
    assert guard_flags(site, knowledge) == ["--enable-linear-replayssm-spec", "--speculative-algorithm"]
    assert guard_env_vars(site, knowledge) == []


def test_reference_gate_solutions_and_fix(knowledge: Knowledge) -> None:
    prose = enrich(reference_site(), knowledge)
    solutions = " ".join(prose.solutions)
    assert "--enable-linear-replayssm-spec" in prose.solutions[0]
    assert prose.solutions[0].startswith("Launch without")
    assert "--speculative-algorithm" in solutions
    assert any("kimi_linear_config" in s for s in prose.solutions)
    before, after = prose.exampleFix.split("# after\n")
    assert "DSPARK" in prose.exampleFix
    assert "python -m sglang.launch_server" in before and "--enable-linear-replayssm-spec" in before
    assert "--enable-linear-replayssm-spec" not in after and "--speculative-algorithm DSPARK" in after
    assert prose.backgroundTag == "model-feature-mismatch"
    assert prose.errorType == "validation"
    assert "speculative-decoding" in prose.tags and prose.tags[0] == "mem-cache"


def test_reference_gate_documentation(knowledge: Knowledge) -> None:
    site = reference_site()
    prose = enrich(site, knowledge)
    doc = prose.documentation
    assert "KVCacheConfigurator._build_hybrid_req_pool" in doc
    assert "--enable-linear-replayssm-spec" in doc and "--speculative-algorithm" in doc
    assert "scatter a None intermediate_ssm" in doc
    spans: set[str] = set()
    for span in code_spans(doc):
        spans |= normalised_exprs(span)
    for a in site.guard.atoms:
        assert a.text in spans
    assert prose.validationCode == site.guard.validation_code()
    assert normalised_exprs(prose.validationCode)


# ---------------------------------------------------------------------------------------------
# Which reads are flags
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "flags"),
    [
        ("server_args.tp_size > 1", ["--tp-size"]),
        ("self.server_args.enable_linear_replayssm_spec", ["--enable-linear-replayssm-spec"]),
        ("self.model_runner.server_args.kv_dtype == 'fp8_e4m3'", ["--kv-dtype"]),
        ("args.draft_window_size is None", ["--draft-window"]),
        ("get_server_args().speculative_algorithm == 'EAGLE'", ["--speculative-algorithm"]),
        ("get_global_server_args().stream", ["--stream"]),
        ("global_server_args_dict['max_queue'] > 4", ["--max-queue"]),
        ("getattr(server_args, 'join_offset', 0) < 0", ["--elastic-join-offset"]),
        ("get_exec().mamba.enable_linear_replayssm_spec", ["--enable-linear-replayssm-spec"]),
        ("get_flags().capture.tp_size > 1", ["--tp-size"]),
        ("server_args.model_path.startswith('/') and server_args.tp_size", ["--model-path", "--tp-size"]),
        ("get_join_offset() > 0", ["--elastic-join-offset"]),
        ("global_server_args_dict.get('stream', False)", ["--stream"]),
        ("server_args_kv_dtype == 'auto'", ["--kv-dtype"]),
        ("get_kv_dtype().is_fp8()", ["--kv-dtype"]),
        # Not flags: the receiver is not a server-args object.
        ("self.tp_size > 1", []),
        ("config.tp_size > 1", []),
        ("kv_args.tp_size > 1", []),
        ("server_args.not_a_flag", []),
        ("get_parallel(group).tp_size > 1", []),
        ("get_stream() is None", []),
    ],
)
def test_flag_reads(knowledge: Knowledge, source: str, flags: list[str]) -> None:
    assert guard_flags(make_site((atom(source),)), knowledge) == flags


def test_self_reads_flags_inside_arg_classes_only(knowledge: Knowledge) -> None:
    inside = make_site(
        (atom("self.join_offset < 0"),),
        path="python/sglang/srt/server_args.py",
        qualname="ServerArgs.check_join",
        in_class="ServerArgs",
    )
    assert guard_flags(inside, knowledge) == ["--elastic-join-offset"]
    mm = make_site(
        (atom("self.decoder_tp is None", negated=True), atom("self.decoder_sp != self.decoder_tp")),
        path=MM_ARGS,
        qualname="ServerArgs.check",
        in_class="ServerArgs",
    )
    assert guard_flags(mm, knowledge) == ["--decoder-tp", "--decoder-sp"]


def test_bindings_are_followed_but_not_through_multi_argument_calls(knowledge: Knowledge) -> None:
    direct = make_site(
        (atom("backend == 'x'"),),
        bindings=(binding("backend = get_server_args().kv_dtype"),),
    )
    assert guard_flags(direct, knowledge) == ["--kv-dtype"]
    converted = make_site(
        (atom("algo.is_eagle()"),),
        bindings=(binding("algo = Algorithm.from_string(server_args.speculative_algorithm)"),),
    )
    assert guard_flags(converted, knowledge) == ["--speculative-algorithm"]
    view = make_site(
        (atom("view.tp_size > 2"),),
        bindings=(binding("view = resolved_view(server_args)"),),
    )
    assert guard_flags(view, knowledge) == ["--tp-size"]
    attribute = make_site(
        (atom("width == self.tp_size"),),
        bindings=(binding("self.tp_size = get_server_args().tp_size"),),
    )
    assert guard_flags(attribute, knowledge) == ["--tp-size"]
    clamped = make_site(
        (atom("width > 8"),),
        bindings=(binding("width = min(server_args.draft_window_size, limit)"),),
    )
    assert guard_flags(clamped, knowledge) == ["--draft-window"]
    local_key = make_site(
        (atom("os.environ.get(key) == '1'"),),
        bindings=(binding("key = 'SGLANG_LOCAL_KEY'"),),
    )
    assert guard_env_vars(local_key, knowledge) == ["SGLANG_LOCAL_KEY"]
    derived = make_site(
        (atom("result.output is None"),),
        bindings=(binding("result = client.run(batch, server_args.model_path, retries=2)"),),
    )
    assert guard_flags(derived, knowledge) == []


def test_flags_resolve_in_the_site_package(knowledge: Knowledge) -> None:
    src = "server_args.tp_size > 1"
    mm = make_site((atom(src),), path="python/sglang/multimodal_gen/runtime/pipelines/p.py")
    srt = make_site((atom(src),))
    assert guard_flags(mm, knowledge) == ["--tp-degree"]
    assert guard_flags(srt, knowledge) == ["--tp-size"]
    assert "sglang serve" in enrich(mm, knowledge).exampleFix
    assert "python -m sglang.launch_server" in enrich(srt, knowledge).exampleFix


# ---------------------------------------------------------------------------------------------
# Which reads are environment variables
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "envs"),
    [
        ("envs.SGLANG_VIT_CUDA_GRAPH.get()", ["SGLANG_VIT_CUDA_GRAPH"]),
        ("envs.SGLANG_SPEC_BUDGET.value > 3", ["SGLANG_SPEC_BUDGET"]),
        ("envs.SGLANG_DIFFUSION_STAGE_LOGGING", ["SGLANG_DIFFUSION_STAGE_LOGGING"]),
        ("os.environ['CUDA_VISIBLE_DEVICES'] == ''", ["CUDA_VISIBLE_DEVICES"]),
        ("os.environ.get('SGLANG_A', '0') == '1'", ["SGLANG_A"]),
        ("os.getenv('SGLANG_B') is None", ["SGLANG_B"]),
        ("'SGLANG_C' in os.environ", ["SGLANG_C"]),
        ("'SGLANG_C' not in os.environ", ["SGLANG_C"]),
        ("get_bool_env_var('SGLANG_D')", ["SGLANG_D"]),
        ("get_int_env_var('SGLANG_E', 4) > 2", ["SGLANG_E"]),
        ("get_bool_env_var(_ENV_NAME)", ["SGLANG_FROM_CONSTANT"]),
        ("CI_MODE and x", ["SGLANG_CI_MODE"]),
        # Not env reads.
        ("os.environ", []),
        ("set_env_var('SGLANG_F', '1')", []),
        ("envs.lowercase_thing", []),
        ("get_bool_env_var(name)", []),
    ],
)
def test_env_reads(knowledge: Knowledge, source: str, envs: list[str]) -> None:
    consts = module_constants(
        ast.parse("_ENV_NAME = 'SGLANG_FROM_CONSTANT'\nCI_MODE = os.getenv('SGLANG_CI_MODE') == '1'\n")
    )
    site = make_site((atom(source),))
    assert guard_env_vars(site, knowledge, consts) == envs
    prose = enrich(site, knowledge, consts)
    for e in envs:
        assert e in prose.documentation


def test_module_level_env_value_without_string_constants(knowledge: Knowledge) -> None:
    # The module has no plain string constants, only a derived value.
    consts = module_constants(ast.parse("import os\nCI = os.getenv('FLA_CI') == '1'\n"))
    site = make_site((atom("warning or (CI and rate < 0.01)", negated=True),))
    assert guard_env_vars(site, knowledge, consts) == ["FLA_CI"]


def test_env_constraint_prose(knowledge: Knowledge) -> None:
    site = make_site(
        (atom("envs.SGLANG_VIT_CUDA_GRAPH.get()"), atom("'output_ws' not in kwargs")),
        path="python/sglang/srt/layers/attention/vision.py",
        qualname="VisionAttention.forward",
        in_class="VisionAttention",
        error_class="RuntimeError",
        message="output_ws should be prepared for cuda-graph mode",
    )
    prose = enrich(site, knowledge)
    assert prose.solutions[0].startswith("Unset the environment variable `SGLANG_VIT_CUDA_GRAPH`")
    assert "SGLANG_VIT_CUDA_GRAPH=1 python -m sglang.launch_server" in prose.exampleFix
    assert "sglang-vit-cuda-graph" in prose.tags and "multimodal" in prose.tags


# ---------------------------------------------------------------------------------------------
# Prose for the common shapes
# ---------------------------------------------------------------------------------------------


def test_numeric_bound_on_a_flag(knowledge: Knowledge) -> None:
    site = make_site(
        (atom("self.join_offset is not None"), atom("self.join_offset > 0", negated=True)),
        path="python/sglang/srt/server_args.py",
        qualname="ServerArgs.check_join",
        in_class="ServerArgs",
        kind="assert",
        error_class="AssertionError",
        message="--elastic-join-offset must be a positive integer.",
    )
    prose = enrich(site, knowledge)
    assert "Launch with `--elastic-join-offset 1`" in prose.solutions
    before, after = prose.exampleFix.split("# after\n")
    assert before.rstrip().endswith("--elastic-join-offset 0")
    assert after.rstrip().endswith("--elastic-join-offset 1")
    assert prose.handlingStrategy == "configuration"
    assert "fails the assertion" in prose.documentation


def test_unset_flag_asks_to_pass_it(knowledge: Knowledge) -> None:
    site = make_site((atom("server_args.model_path is None"),), message="--model-path is required")
    prose = enrich(site, knowledge)
    assert prose.solutions[0] == "Launch with `--model-path <value>`"
    assert "--model-path <value>" in prose.exampleFix.split("# after\n")[1]


def test_isinstance_guard_gets_a_type_guard(knowledge: Knowledge) -> None:
    site = make_site((atom("isinstance(cu_seqlens, list)", negated=True),), error_class="TypeError")
    prose = enrich(site, knowledge)
    assert prose.typeGuard is not None and "TypeGuard[list]" in prose.typeGuard
    ast.parse(prose.typeGuard)
    # A type check on program state is an internal invariant: no flag is suggested.
    assert prose.backgroundTag == "internal-invariant"
    assert not any("--" in s for s in prose.solutions)
    plain = enrich(make_site((atom("x > 0"),)), knowledge)
    assert plain.typeGuard is None


def test_try_catch_pattern_parses_and_matches(knowledge: Knowledge) -> None:
    site = reference_site()
    prose = enrich(site, knowledge)
    assert prose.tryCatchPattern is not None
    tree = ast.parse(prose.tryCatchPattern)
    regexes = [
        n.args[0].value
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and ast.unparse(n.func) == "re.fullmatch"
        and isinstance(n.args[0], ast.Constant)
    ]
    assert regexes and isinstance(regexes[0], str) and re.fullmatch(regexes[0], REFERENCE_MESSAGE)
    assert "except ValueError as e" in prose.tryCatchPattern
    assert "kv_cache_configurator._build_hybrid_req_pool(...)" in prose.tryCatchPattern


@pytest.mark.parametrize(
    ("kwargs", "error_type", "background"),
    [
        ({"error_class": "NotImplementedError", "message": None}, "not-implemented", "not-implemented"),
        (
            {"error_class": "ImportError", "message": "please install flashinfer"},
            "dependency",
            "missing-dependency",
        ),
        ({"error_class": "HTTPException", "http_status": 400}, "bad-request", "bad-request"),
        ({"error_class": "TimeoutError", "message": "timed out waiting"}, "timeout", "timeout"),
        ({"error_class": "FileNotFoundError", "message": "no such file"}, "io", "io-error"),
        ({"error_class": "AssertionError", "kind": "assert"}, "internal-invariant", "internal-invariant"),
    ],
)
def test_classification(
    knowledge: Knowledge, kwargs: dict[str, object], error_type: str, background: str
) -> None:
    prose = enrich(make_site((atom("n < 0"),), **kwargs), knowledge)  # type: ignore[arg-type]
    assert (prose.errorType, prose.backgroundTag) == (error_type, background)


def test_two_flags_are_a_conflict(knowledge: Knowledge) -> None:
    site = make_site(
        (atom("server_args.stream"), atom("server_args.max_queue > 0")),
        message="--stream cannot be used with --max-queue",
    )
    prose = enrich(site, knowledge)
    assert prose.backgroundTag == "flag-conflict"
    assert prose.solutions[:2] == [
        "Launch without `--stream`",
        "Launch with `--max-queue 0`",
    ]


def test_unconditional_not_implemented_has_a_code_fix(knowledge: Knowledge) -> None:
    site = make_site(
        error_class="NotImplementedError", message=None, qualname="Base.forward", in_class="Base"
    )
    prose = enrich(site, knowledge)
    assert "class MyBase(Base)" in prose.exampleFix
    assert prose.solutions and all(prose.solutions)
    assert prose.handlingStrategy == "fallback"
    # The solutions say what the fix shows: a class of the user's own derived from the base.
    assert any(
        s.startswith("If the object is of a class of your own derived from `Base`") for s in prose.solutions
    )
    # A private base is sglang's own: no subclass of the user's, the bug report instead.
    private = make_site(
        error_class="NotImplementedError", message=None, qualname="_Base.forward", in_class="_Base"
    )
    hidden = enrich(private, knowledge)
    assert "class My" not in hidden.exampleFix and "python3 -m sglang.check_env" in hidden.exampleFix
    assert not any("derived from" in s for s in hidden.solutions)


def test_error_code_only_when_stated(knowledge: Knowledge) -> None:
    assert enrich(make_site((atom("x"),), error_code="E_POOL"), knowledge).errorCode == "E_POOL"
    assert enrich(make_site((atom("x"),)), knowledge).errorCode is None


def test_documentation_differs_between_sites_of_one_function(knowledge: Knowledge) -> None:
    docs = {
        enrich(make_site((atom("n < 0"),), line=20), knowledge).documentation,
        enrich(make_site((atom("n < 0"),), line=24), knowledge).documentation,
        enrich(make_site((atom("n > 9"),), line=20), knowledge).documentation,
        enrich(
            make_site((atom("n < 0"),), line=20, qualname="<module>", in_class=None), knowledge
        ).documentation,
    }
    assert len(docs) == 4
    module_doc = enrich(make_site(qualname="<module>", in_class=None), knowledge).documentation
    assert "module level of `python/sglang/srt/mem_cache/pool.py`" in module_doc


def test_handler_sites(knowledge: Knowledge) -> None:
    site = make_site(
        (GuardAtom("except jinja2.TemplateError", "except", None, False, 8),),
        handlers=("jinja2.TemplateError",),
        message="bad template",
    )
    prose = enrich(site, knowledge)
    assert "except jinja2.TemplateError" in prose.documentation
    assert any("jinja2.TemplateError" in s for s in prose.solutions)


# ---------------------------------------------------------------------------------------------
# Invariants
# ---------------------------------------------------------------------------------------------


def assert_complete(prose: Prose) -> None:
    for name in ("documentation", "triggerScenarios", "commonSituations", "exampleFix"):
        assert getattr(prose, name).strip(), name
    assert prose.solutions and all(s.strip() for s in prose.solutions)
    assert prose.tags and all(t.strip() for t in prose.tags)
    assert prose.preventionTips and all(t.strip() for t in prose.preventionTips)
    assert prose.errorType in get_args(ErrorType)
    assert prose.backgroundTag in get_args(BackgroundTag)
    assert prose.handlingStrategy in get_args(HandlingStrategy)
    assert prose.severity in get_args(Severity)


ODD_SITES = [
    make_site(),
    make_site(qualname="", in_class=None, message=None, error_class="errors.MMError"),
    make_site((GuardAtom("???", "if", None, False, 1),)),
    make_site((atom("x"),), bindings=(LocalBinding("x", "x = ...", None, 3),)),
    make_site((atom("a.b.c.d.e.f(g)[h] if i else j"),), path="setup.py", qualname="outer.<locals>.inner"),
    make_site((atom("server_args.tp_size in (1, 2)", negated=True), atom("not not x")), message="`odd` {x}"),
    make_site((atom("lambda: 0"),), message=""),
]


@pytest.mark.parametrize("site", ODD_SITES)
def test_odd_sites_get_complete_prose(knowledge: Knowledge, site: Site) -> None:
    assert_complete(enrich(site, knowledge))
    assert_complete(enrich(site, Knowledge.empty()))


def test_deterministic(knowledge: Knowledge) -> None:
    site = reference_site()
    assert enrich(site, knowledge) == enrich(site, knowledge)
    assert_complete(enrich(site, knowledge))


def test_elif_chain_names_the_handled_values(knowledge: Knowledge) -> None:
    site = make_site(
        (
            atom("quant_type == 'W8A8_DYNAMIC' or quant_type == 'W8A8'", negated=True),
            atom("quant_type == 'W4A4'", negated=True),
            atom("quant_type in ('MXFP4', 'MXFP4_DUAL')", negated=True),
        ),
        error_class="NotImplementedError",
        message="no scheme for {quant_type}",
    )
    prose = enrich(site, knowledge)
    # A dispatch on a value the code computes is internal: nothing the user sets is named.
    assert prose.errorType == "not-implemented" and not any("--" in s for s in prose.solutions)
    # The documentation leads with each atom's negation pushed in; the literal ``not (...)`` forms
    # come last, once, for a reader matching the record to the source.
    lead, _, literal = prose.documentation.partition("As the tests on the path read")
    assert "`quant_type != 'W8A8_DYNAMIC' and quant_type != 'W8A8'`" in lead
    assert "not (quant_type" not in lead and "that is," not in prose.documentation
    assert "`not (quant_type == 'W8A8_DYNAMIC' or quant_type == 'W8A8')`" in literal


def test_a_negated_not_reads_plainly_and_keeps_its_literal_form_last(knowledge: Knowledge) -> None:
    site = make_site(
        (atom("not self.done", negated=True), atom("self.slots < 0")), message="slots below zero"
    )
    prose = enrich(site, knowledge)
    lead, _, literal = prose.documentation.partition("As the tests on the path read")
    assert "`self.done`" in lead and "not not" not in lead
    # The guard atom as the source's tests spell it, for a reader (or a tool) matching the two.
    assert "`not not self.done`" in literal


def test_negated_or_on_flags_gives_one_solution_per_flag(knowledge: Knowledge) -> None:
    site = make_site((atom("server_args.stream or server_args.max_queue != 1", negated=True), atom("ready")))
    prose = enrich(site, knowledge)
    assert prose.solutions[:2] == [
        "Add `--stream` to the launch command",
        "Launch with `--max-queue 2`",
    ]


@pytest.mark.parametrize(
    ("path", "module"),
    [
        ("python/sglang/srt/layers/linear.py", "sglang.srt.layers.linear"),
        ("sgl-kernel/python/sgl_kernel/flash_attn.py", "sgl_kernel.flash_attn"),
        ("python/sglang/srt/lora/__init__.py", "sglang.srt.lora"),
    ],
)
def test_module_level_try_catch_imports_the_module(knowledge: Knowledge, path: str, module: str) -> None:
    site = make_site(path=path, qualname="<module>", in_class=None, error_class="ImportError")
    pattern = enrich(site, knowledge).tryCatchPattern
    assert pattern is not None and f"import {module}\n" in pattern
    ast.parse(pattern)


def test_flag_selected_path_also_names_the_state_check(knowledge: Knowledge) -> None:
    site = make_site(
        (atom("backend == 'ascend_attn'"), atom("self._merger_list is None")),
        bindings=(binding("backend = get_server_args().kv_dtype"),),
        error_class="RuntimeError",
    )
    prose = enrich(site, knowledge)
    assert (
        prose.solutions[0]
        == "Set `--kv-dtype` to one of auto, fp8_e4m3, bf16 (for example `--kv-dtype auto`, its default)"
    )


def test_an_amx_check_is_a_hardware_cause(knowledge: Knowledge) -> None:
    site = make_site(
        (atom("_is_cpu_amx_available", negated=True, kind="assert"),),
        kind="assert",
        error_class="AssertionError",
        message="Fp8 on CPU requires that CPU has AMX support",
    )
    prose = enrich(site, knowledge)
    assert prose.errorType == "hardware"
    assert "Cause: the hardware or platform (`CPU with AMX`)." in prose.documentation


def test_a_missing_file_the_caller_named_is_an_input_cause(knowledge: Knowledge) -> None:
    site = make_site(
        (atom("os.path.exists(mask_path)", negated=True),),
        error_class="FileNotFoundError",
        message="Mask file not found: {mask_path}",
    )
    prose = enrich(site, knowledge)
    assert "Cause: the request or call input (`mask_path`)." in prose.documentation
    assert prose.solutions[0].startswith("Pass a path that exists: `mask_path` must name a file or folder")
    assert not any("internal check" in s or s.startswith("Send ") for s in prose.solutions)
    assert prose.exampleFix.split("# after")[1].splitlines()[1] == "ls -ld <path>"


@pytest.mark.parametrize(
    ("message", "names"),
    [
        ("Scheduler did not respond in time.", ("timeout",)),
        ("Timed out waiting for the peer; raise SGLANG_PEER_TIMEOUT", ("timeout", "SGLANG_PEER_TIMEOUT")),
        ("Failed to download weights from {repo_id}", ("network",)),
    ],
)
def test_a_wait_that_ran_out_is_a_resource_cause(
    knowledge: Knowledge, message: str, names: tuple[str, ...]
) -> None:
    prose = enrich(make_site((atom("not ready"),), error_class="RuntimeError", message=message), knowledge)
    shown = ", ".join(f"`{n}`" for n in names)
    assert f"Cause: a resource limit ({shown})." in prose.documentation
    assert not any("internal check" in s for s in prose.solutions)
    if "SGLANG_PEER_TIMEOUT" in names:
        assert "Or give it more time: raise `SGLANG_PEER_TIMEOUT`" in prose.solutions
        assert prose.exampleFix.split("# after\n")[1].startswith("SGLANG_PEER_TIMEOUT=<more-seconds> ")


def test_a_timeout_setting_checked_for_its_type_is_no_wait(knowledge: Knowledge) -> None:
    site = make_site((atom("not isinstance(t, float)"),), message="prefetch_timeout must be number, got {t}")
    assert "resource limit" not in enrich(site, knowledge).documentation


def test_an_assert_on_the_schedulers_req_is_no_request_input(knowledge: Knowledge) -> None:
    site = make_site(
        (atom("req.grammar is not None", negated=True, kind="assert"),),
        kind="assert",
        error_class="AssertionError",
        message="{req=}",
    )
    assert "Cause: an internal invariant" in enrich(site, knowledge).documentation
    raised = make_site((atom("request.n > 4"),), message="n must be at most 4")
    assert "Cause: the request or call input (`n`)" in enrich(raised, knowledge).documentation


def test_an_input_check_with_advice_of_its_own_is_not_restated(knowledge: Knowledge) -> None:
    site = make_site((atom("request.url"),), message="The file moved. Please use the new URL instead.")
    prose = enrich(site, knowledge)
    assert prose.solutions == ["The message says: Please use the new URL instead."]


def test_a_note_to_the_codes_maintainers_is_no_advice(knowledge: Knowledge) -> None:
    site = make_site(
        (atom("request.url"),),
        message="Only the v2 layout is read. Add a layout branch here when one lands. Please use a v2 file.",
    )
    assert enrich(site, knowledge).solutions == ["The message says: Please use a v2 file."]


def test_a_check_that_fails_on_a_platform_does_not_send_the_user_to_it(knowledge: Knowledge) -> None:
    site = make_site(
        (atom("is_hip()"), atom("self.quantization not in supported")),
        message="{self.quantization} quantization is not supported on ROCm.",
    )
    prose = enrich(site, knowledge)
    assert prose.errorType == "hardware"
    assert not any(s.startswith("Run on ROCm") for s in prose.solutions)
    assert (
        "This check fails on ROCm: run on other hardware, or meet the rest of the check there "
        "(`self.quantization in supported`)"
    ) in prose.solutions


def test_a_check_that_fails_off_the_named_devices_sends_the_user_to_them(knowledge: Knowledge) -> None:
    # ``not in``, ``!=`` and a capability below a bound all fail where the device is missing.
    for test in (
        "get_device_sm() not in (100, 103)",
        "get_device_sm() != 100",
        "get_device_capability()[0] < 9",
    ):
        site = make_site(
            (atom(test),), error_class="RuntimeError", message="this kernel requires SM100 (Blackwell)"
        )
        prose = enrich(site, knowledge)
        assert prose.errorType == "hardware", test
        assert not any("run on other hardware" in s for s in prose.solutions), (test, prose.solutions)
        assert "# after: the same launch on " in prose.exampleFix and "other than" not in prose.exampleFix
    # ``>=`` a bound fails on the newer devices: those are what to move away from.
    newer = make_site((atom("get_device_capability()[0] >= 10"),), message="not supported on Blackwell yet")
    assert any("run on other hardware" in s for s in enrich(newer, knowledge).solutions)


def test_a_tensor_shape_in_a_kernel_is_no_checkpoint_cause(knowledge: Knowledge) -> None:
    kernel = make_site(
        (atom("v.shape == (pages, page_size, head_dim)", negated=True, kind="assert"),),
        kind="assert",
        error_class="AssertionError",
        path="python/sglang/jit_kernel/paged.py",
        qualname="paged_fwd",
        in_class=None,
    )
    assert "Cause: an internal invariant" in enrich(kernel, knowledge).documentation
    # In model code the same words are the checkpoint's, and a config read is one anywhere.
    model = make_site((atom("self.head_dim != 128"),), path="python/sglang/srt/models/toy.py")
    assert "Cause: the model" in enrich(model, knowledge).documentation
    read = make_site((atom("hf_config.head_dim != 128"),), path="python/sglang/jit_kernel/paged.py")
    assert "Cause: the model" in enrich(read, knowledge).documentation


def test_a_model_builders_config_parameter_is_the_checkpoints(knowledge: Knowledge) -> None:
    # ``def _build_norm(config): if config.norm == "RMSNorm": ...; raise``: in model code the
    # ``config`` a builder is handed is the checkpoint's config.json.
    atoms = (atom("config.norm == 'RMSNorm'", negated=True), atom("config.norm == 'LayerNorm'", negated=True))
    builder = make_site(
        atoms,
        path="python/sglang/srt/models/toy.py",
        qualname="ToyLayer._build_norm",
        in_class="ToyLayer",
        params=(Param("config"),),
    )
    prose = enrich(builder, knowledge)
    assert "Cause: the model (its checkpoint or config) (`norm`)." in prose.documentation
    # A settings object of the server's own named ``config`` outside model code is no checkpoint's.
    compiler = make_site(
        atoms,
        path="python/sglang/srt/compilation/backend.py",
        qualname="pick",
        in_class=None,
        params=(Param("config"),),
    )
    assert "Cause: an internal invariant" in enrich(compiler, knowledge).documentation


def test_a_weight_the_model_does_not_define_names_the_model_class(knowledge: Knowledge) -> None:
    site = make_site(
        (atom("name not in params_dict"),),
        path="python/sglang/srt/models/toy.py",
        qualname="ToyForCausalLM.load_weights",
        in_class="ToyForCausalLM",
        error_class="KeyError",
        message="Parameter {name} not found",
    )
    prose = enrich(site, knowledge)
    assert prose.solutions[0].startswith("Use a checkpoint made for `ToyForCausalLM`: its weight names")


def test_a_config_file_that_is_not_there_is_a_missing_path(knowledge: Knowledge) -> None:
    site = make_site(
        (atom("args.config"), atom("os.path.exists(args.config)", negated=True)),
        error_class="FileNotFoundError",
        message="Config file not found: {args.config}",
    )
    assert enrich(site, knowledge).errorType == "io"


def test_a_supported_check_of_a_gpu_generation_is_hardware(knowledge: Knowledge) -> None:
    site = make_site((atom("is_blackwell_supported()", negated=True),), message="needs a newer GPU")
    prose = enrich(site, knowledge)
    assert prose.errorType == "hardware" and "SM100 (Blackwell)" in prose.documentation


def test_a_message_that_names_the_only_gpu_architecture_is_hardware(knowledge: Knowledge) -> None:
    # The test reads a computed capability number; the message says which GPUs the path takes.
    site = make_site((atom("arch // 10 not in [10, 11]"),), message="only support Blackwell arch with qv")
    prose = enrich(site, knowledge)
    assert prose.errorType == "hardware" and "SM100 (Blackwell)" in prose.documentation


def test_the_message_names_the_checkpoint_dimension_a_kernel_cannot_take(knowledge: Knowledge) -> None:
    site = make_site(
        (atom("is_supported(hidden_size)", negated=True),),
        path="python/sglang/jit_kernel/norm.py",
        qualname="fused_norm",
        in_class=None,
        error_class="RuntimeError",
        message="fused_norm: unsupported hidden_size={hidden_size} (must be a multiple of 256)",
    )
    prose = enrich(site, knowledge)
    assert "Cause: the model (its checkpoint or config) (`hidden_size`)." in prose.documentation
    assert any("`hidden_size`" in s for s in prose.solutions)


def test_a_field_of_a_parameter_typed_as_the_users_request_is_the_request(knowledge: Knowledge) -> None:
    typed = (Param("obj", annotation="GenerateReqInput"),)
    ranked = make_site(
        (atom("obj.routed_rank < 0"),),
        path="python/sglang/srt/managers/front.py",
        qualname="Front.route",
        in_class="Front",
        message="routed_rank={obj.routed_rank} out of range",
        params=typed,
    )
    assert "Cause: the request or call input (`routed_rank`)." in enrich(ranked, knowledge).documentation
    # A bare assert on it says nothing to the user: the callers' invariant.
    bare = make_site(
        (atom("obj.routed_rank is not None", negated=True, kind="assert"),),
        kind="assert",
        error_class="AssertionError",
        message=None,
        path="python/sglang/srt/managers/front.py",
        qualname="Front.route",
        in_class="Front",
        params=typed,
    )
    assert "Cause: an internal invariant" in enrich(bare, knowledge).documentation


def test_what_sampling_parameters_check_of_themselves_is_the_request(knowledge: Knowledge) -> None:
    site = make_site(
        (atom("self.temperature < 0.0"),),
        path="python/sglang/srt/sampling/params.py",
        qualname="ToySamplingParams.verify",
        in_class="ToySamplingParams",
        message="temperature must be non-negative, got {self.temperature}.",
    )
    assert "Cause: the request or call input (`temperature`)." in enrich(site, knowledge).documentation


def test_a_layout_test_in_a_class_for_some_models_is_not_the_models(knowledge: Knowledge) -> None:
    # The message names the model dimensions that picked this class; the test reads the layout.
    site = make_site(
        (atom("self.layout != 'page_first'"),),
        path="python/sglang/srt/mem_cache/pool_host/split.py",
        qualname="SplitHostPool.backup",
        in_class="SplitHostPool",
        message="Unsupported layout for models with head_dim != v_head_dim: {self.layout}",
    )
    assert "Cause: the model" not in enrich(site, knowledge).documentation
    # A test of the dimension itself stays the model's.
    sized = make_site(
        (atom("qk_head_dim <= 256", negated=True),),
        path="python/sglang/jit_kernel/sparse.py",
        qualname="sparse_fwd",
        in_class=None,
        message="head_dim must be less than 256",
    )
    assert (
        "Cause: the model (its checkpoint or config) (`head_dim`)." in enrich(sized, knowledge).documentation
    )


def test_the_flag_the_message_tells_the_user_to_pass_is_what_the_fix_adds(knowledge: Knowledge) -> None:
    site = make_site(
        (atom("self._scaled and self._fused > 0"),),
        error_class="NotImplementedError",
        message="scaling is not supported with fused experts; pass --stream.",
    )
    before, after = enrich(site, knowledge).exampleFix.split("# after\n")
    assert "--stream" not in before and after.endswith("--stream")
    valued = make_site((atom("self._slow"),), message="This path is slow; use --max-queue 8 instead.")
    assert enrich(valued, knowledge).exampleFix.endswith("--max-queue 8")


def test_no_solution_list_starts_with_an_alternative(knowledge: Knowledge) -> None:
    # The only fix is the gate's workaround, worded as an alternative to what comes before it.
    site = make_site(
        (atom("server_args.stream"), atom("self._n > 1")), message="n > 1 is not supported with --stream"
    )
    site = dataclasses.replace(
        site,
        guard=dataclasses.replace(
            site.guard,
            atoms=(dataclasses.replace(site.guard.atoms[0], role="gate"), site.guard.atoms[1]),
        ),
    )
    sols = enrich(site, knowledge).solutions
    assert sols and not sols[0].startswith("Or ")


def test_a_memory_pool_that_lacks_a_feature_is_no_memory_limit(knowledge: Knowledge) -> None:
    small = make_site((atom("self._pool_size < 1"),), message="Memory pool size is too small")
    assert "Cause: a resource limit (`memory`)" in enrich(small, knowledge).documentation
    lacking = make_site((atom("self.use_mla"),), message="unified memory pool does not support MLA yet")
    assert "resource limit" not in enrich(lacking, knowledge).documentation


def test_a_hardware_fix_with_no_flag_to_change_says_the_machine_changes(knowledge: Knowledge) -> None:
    needs = make_site((atom("not is_cuda()"),), message="this kernel needs CUDA")
    fix = enrich(needs, knowledge).exampleFix
    lines = fix.split("\n")
    assert lines[0] == "# before: without CUDA" and lines[2] == "# after: the same launch on CUDA hardware"
    assert lines[1] == lines[3] and "sglang" in lines[1]
    fails = make_site((atom("is_hip()"),), message="not supported on ROCm")
    fix = enrich(fails, knowledge).exampleFix
    assert (
        fix.startswith("# before: on ROCm\n")
        and "# after: the same launch on hardware other than ROCm" in fix
    )


def test_a_switch_the_message_speaks_against_is_dropped_not_given_a_value(knowledge: Knowledge) -> None:
    site = make_site((atom("layer.scattered"),), message="scattered input with --stream is not supported")
    prose = enrich(site, knowledge)
    before, after = prose.exampleFix.split("# after")
    assert "--stream" in before and "--stream" not in after
    assert "<current-value>" not in prose.exampleFix and "<accepted-value>" not in prose.exampleFix
    assert (
        "Launch without `--stream`: the message names it as what this case does not support"
        in prose.solutions
    )


@pytest.mark.parametrize(
    "message",
    ["chunked mode is not supported here; pass --stream to avoid it", "not supported: use --stream instead"],
)
def test_a_switch_the_message_tells_to_pass_is_not_dropped(knowledge: Knowledge, message: str) -> None:
    prose = enrich(make_site((atom("layer.scattered"),), message=message), knowledge)
    assert not any(s.startswith("Launch without `--stream`") for s in prose.solutions)


def test_a_method_that_leaves_a_case_out_on_purpose_is_not_fixed_by_a_subclass(knowledge: Knowledge) -> None:
    # "only supports prefill": the kernel is not meant to decode, and subclassing it is no fix.
    limit = make_site(
        qualname="PrefillKernel.decode",
        in_class="PrefillKernel",
        error_class="NotImplementedError",
        message="PrefillKernel only supports prefill (extend)",
    )
    prose = enrich(limit, knowledge)
    assert "subclass" not in prose.exampleFix
    assert prose.commonSituations.startswith(
        "Any call of `PrefillKernel.decode`: it does not support the case, as its message says."
    )
    assert "expected never to produce" not in prose.commonSituations
    # A hook with no message, or one that asks for an override, is filled by a subclass.
    for message in (None, "subclasses must implement decode"):
        hook = make_site(
            qualname="KernelBase.decode",
            in_class="KernelBase",
            error_class="NotImplementedError",
            message=message,
        )
        assert "use a subclass that overrides decode" in enrich(hook, knowledge).exampleFix, message


def test_a_verify_pass_of_the_batch_is_glossed_as_speculative_decoding(knowledge: Knowledge) -> None:
    site = make_site(
        (
            atom("forward_batch.forward_mode.is_target_verify()"),
            atom("not forward_batch.forward_mode.is_draft_extend_v2()"),
            atom("n > 4"),
        ),
        message="too many draft tokens",
    )
    doc = enrich(site, knowledge).documentation
    assert (
        "(the batch is a target-verify pass of speculative decoding, which runs only with `--speculative-algorithm`)"
        in doc
    )
    assert "(the batch is not a draft-extend-v2 pass of speculative decoding)" in doc


def test_a_package_named_by_a_parameter_that_is_not_installed_is_a_dependency(knowledge: Knowledge) -> None:
    site = make_site(
        (atom("PackageNotFoundError", kind="except"),),
        error_class="Exception",
        message="{pkg} with minimum required version {min_version} is not installed.",
        handlers=("PackageNotFoundError",),
        qualname="assert_pkg_version",
        in_class=None,
    )
    prose = enrich(site, knowledge)
    assert "Cause: an installed package" in prose.documentation
    assert prose.solutions[0].startswith(
        "Install the package the message names, at least at the version it states"
    )


def test_a_request_error_handed_back_with_no_field_to_name_says_where_to_look(knowledge: Knowledge) -> None:
    # ``except ValueError as e: return error_response(str(e))``: no test, no field.
    site = make_site(
        (atom("ValueError", kind="except"),),
        error_class="BadRequestError",
        message="{str(e)}",
        handlers=("ValueError",),
        path="python/sglang/srt/entrypoints/openai/serving_tokenize.py",
        qualname="OpenAIServingTokenize.handle",
        in_class="OpenAIServingTokenize",
        http_status=400,
        kind="response",
    )
    prose = enrich(site, knowledge)
    assert "Cause: the request or call input" in prose.documentation
    assert "Fix the request: the error message it gets back says which part is rejected" in prose.solutions
    assert "`the input check`" not in prose.triggerScenarios
