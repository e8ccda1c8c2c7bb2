"""Reach: selectors read from fixture modules shaped like the target's own patterns (a decorator
registry of attention backends, a dict of quantization methods, if/elif dispatch on a flag's value,
a switch guarding a constructor, model files with ``EntryClass``, platform gates and folders), the
caller chains that carry them to a site, and the records and cache of a real extraction."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path
from typing import Any

import orjson
import pytest

from extractor.api import ExtractOptions, ExtractResult, extract
from extractor.prose.advice import INTERNAL_CHECK
from extractor.prose.knowledge import build_knowledge
from extractor.prose.passed import INTERNAL_CAUSE
from extractor.prose.reach import RunReach, reach_phrase, with_reach
from extractor.reach import SiteReach
from extractor.reach.facts import FileFacts
from extractor.reach.file_index import file_facts, module_name
from tests.conftest import records_by_message, site_reach_of
from tests.gitrepos import make_repo

ARGS = "python/sglang/srt/server_args.py"
SERVER_ARGS = """\
from dataclasses import dataclass

BACKEND_CHOICES = ["flex", "paged", "sparse", "sparse_old"]


@dataclass
class ServerArgs:
    attention_backend: str = "paged"
    quantization: str = None
    moe_runner_backend: str = "auto"
    enable_adapters: bool = False
    tp_size: int = 1

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--attention-backend", type=str, choices=BACKEND_CHOICES)
        parser.add_argument("--quantization", type=str, choices=["fp8", "int4"])
        parser.add_argument("--moe-runner-backend", type=str, choices=["auto", "grouped", "tiled"])
        parser.add_argument("--enable-adapters", action="store_true")
        parser.add_argument("--tp-size", type=int)
"""

FILES = {
    ARGS: SERVER_ARGS,
    # A decorator registry keyed by the backend's name; each entry imports its class lazily.
    "python/sglang/srt/layers/attention/registry.py": """\
        BACKENDS = {}


        def register_attention_backend(name):
            def decorator(fn):
                BACKENDS[name] = fn
                return fn

            return decorator


        @register_attention_backend("flex")
        def create_flex(runner):
            from sglang.srt.layers.attention.flex_backend import FlexBackend

            return FlexBackend(runner)


        @register_attention_backend("sparse")
        def create_sparse(runner):
            from sglang.srt.layers.attention.sparse_backend import SparseBackend

            return SparseBackend(runner)


        @register_attention_backend("sparse_old")
        def create_sparse_old(runner):
            from sglang.srt.layers.attention.sparse_backend import SparseBackend

            return SparseBackend(runner, legacy=True)
        """,
    "python/sglang/srt/layers/attention/flex_backend.py": """\
        class FlexBackend:
            def __init__(self, runner):
                self.runner = runner

            def forward_extend(self, q, layer):
                if layer.is_cross_attention:
                    raise NotImplementedError("flex backend does not support cross attention")
                return q
        """,
    "python/sglang/srt/layers/attention/sparse_backend.py": """\
        class SparseBackend:
            def __init__(self, runner, legacy=False):
                self.legacy = legacy

            def forward_decode(self, q):
                assert q.dim() == 3, "sparse decode wants a 3-d query"
                return q
        """,
    # A dict from choice strings to classes, each with its own method.
    "python/sglang/srt/layers/quantization/__init__.py": """\
        from sglang.srt.layers.quantization.fp8 import Fp8Config
        from sglang.srt.layers.quantization.int4 import Int4Config

        QUANTIZATION_METHODS = {"fp8": Fp8Config, "int4": Int4Config}
        """,
    "python/sglang/srt/layers/quantization/fp8.py": """\
        class Fp8Config:
            def get_quant_method(self, layer):
                raise ValueError("fp8 cannot quantize this layer")
        """,
    "python/sglang/srt/layers/quantization/int4.py": """\
        class Int4Config:
            def get_quant_method(self, layer):
                raise ValueError("int4 cannot quantize this layer")
        """,
    # if/elif dispatch on a flag's value, and a switch guarding a constructor.
    "python/sglang/srt/layers/moe/runner.py": """\
        from sglang.srt.layers.moe.grouped import GroupedRunner
        from sglang.srt.layers.moe.tiled import TiledRunner
        from sglang.srt.adapters.manager import AdapterManager


        def make_runner(server_args):
            backend = server_args.moe_runner_backend
            if backend == "grouped":
                return GroupedRunner()
            elif backend == "tiled":
                return TiledRunner()
            if server_args.enable_adapters:
                AdapterManager(server_args)
            return None
        """,
    "python/sglang/srt/layers/moe/grouped.py": """\
        class GroupedRunner:
            def run(self, x):
                assert x.is_contiguous(), "grouped runner wants contiguous input"
                return x
        """,
    "python/sglang/srt/layers/moe/tiled.py": """\
        class TiledRunner:
            def run(self, x):
                assert x.shape[0] % 16 == 0, "tiled runner wants 16-row tiles"
                return x
        """,
    "python/sglang/srt/adapters/manager.py": """\
        class AdapterManager:
            def __init__(self, server_args):
                self.load(server_args)

            def load(self, server_args):
                try:
                    self.check(server_args)
                except KeyError:
                    pass

            def check(self, server_args):
                raise KeyError("adapter not found")
        """,
    # Dispatch on an enum named after the flag: a member compared, or ``is_<value>()`` on a typed parameter.
    "python/sglang/srt/layers/moe/core.py": """\
        from enum import Enum


        class MoeRunnerBackend(Enum):
            GROUPED = "grouped"
            TILED = "tiled"


        class TiledCore:
            def run(self, x):
                assert x.ndim == 2, "tiled core wants a matrix"


        class GroupedCore:
            def run(self, x):
                assert x.ndim == 3, "grouped core wants a batch of matrices"


        def make_core(runner_backend: MoeRunnerBackend, chosen):
            if runner_backend.is_tiled():
                return TiledCore()
            if chosen == MoeRunnerBackend.GROUPED:
                return GroupedCore()
        """,
    # A model file: the entry class builds the model, which builds its attention.
    "python/sglang/srt/models/toy.py": """\
        class ToyAttention:
            def forward(self, x):
                assert x.shape[-1] == 64, "toy attention wants head size 64"
                return x


        class ToyModel:
            def __init__(self):
                self.attn = ToyAttention()


        class ToyForCausalLM:
            def __init__(self, config):
                self.model = ToyModel()


        EntryClass = ToyForCausalLM
        """,
    # Platform gates: a module-level ``if _is_hip:`` and a platform folder.
    "python/sglang/srt/layers/activation.py": """\
        from sglang.srt.utils import is_hip

        _is_hip = is_hip()

        if _is_hip:

            def gelu_rocm(x, out):
                assert x.shape == out.shape, "out must match x"
                return out
        """,
    "python/sglang/srt/hardware_backend/npu/unpack.py": """\
        def unpack(bits):
            if bits > 8:
                raise ValueError("at most 8 bits")
            return bits
        """,
    "python/sglang/srt/utils/__init__.py": """\
        def is_hip():
            return False
        """,
}


def _partial(
    scope: str, error: str = "ValueError", solutions: list[str] | None = None, fix: str = ""
) -> dict[str, Any]:
    """A worker's record of a site in ``scope`` with bare prose, for applying a run's reach to."""
    return {
        "id": f"{scope}\x1fraise\x1f{error}\x1f\x1f\x000",
        "documentation": "d.",
        "triggerScenarios": "t.",
        "tags": [],
        "solutions": ["Report it as a bug"] if solutions is None else solutions,
        "exampleFix": fix,
    }


def _source(path: str) -> str:
    return FILES[path] if path == ARGS else textwrap.dedent(FILES[path])


def _site_reach(files: dict[str, str]) -> SiteReach:
    return site_reach_of(files, ARGS)


@pytest.fixture(scope="module")
def reach() -> SiteReach:
    return _site_reach({p: _source(p) for p in FILES})


def test_module_names_follow_the_python_folder() -> None:
    assert module_name("python/sglang/srt/layers/moe/runner.py") == "sglang.srt.layers.moe.runner"
    assert (
        module_name("python/sglang/srt/layers/quantization/__init__.py") == "sglang.srt.layers.quantization"
    )
    assert module_name("sgl-kernel/python/sgl_kernel/elementwise.py") == "sgl_kernel.elementwise"


def test_an_early_return_unless_a_variable_is_on_leaves_the_calls_after_it_under_that_variable() -> None:
    source = textwrap.dedent(
        """\
        from sglang.srt.environ import envs


        def broadcast(x):
            if x is None or not envs.SGLANG_TOPK_BROADCAST.get():
                return x
            send(x)


        def check(x):
            if not x.is_ready():
                return x
            send(x)
        """
    )
    facts = file_facts("python/sglang/srt/layers/topk.py", ast.parse(source))
    guards = {raw[0]: [facts.atoms[int(i)] for i in raw[3]] for raw in facts.calls["send"]}
    assert ("e", "SGLANG_TOPK_BROADCAST") in guards["broadcast"]
    # A method's value test failing says nothing sure of its subject.
    assert guards["check"] == []


def test_a_getattr_lookup_may_run_a_method_and_a_hasattr_test_does_not() -> None:
    source = textwrap.dedent(
        """\
        def setup(model, ids):
            if hasattr(model, "set_capture_layers"):
                model.set_capture_layers(ids)
            hook = getattr(model, "post_load_hook", None)
            if hook is not None:
                hook()
            return hasattr(model, "warmup_kernels")
        """
    )
    facts = file_facts("python/sglang/srt/runner.py", ast.parse(source))
    assert facts.named == ["post_load_hook"]
    # A test for a method runs nothing: only the call after it does.
    assert "set_capture_layers" in facts.calls
    assert "warmup_kernels" not in facts.named


def test_facts_survive_a_json_round_trip_and_refuse_other_versions() -> None:
    path = "python/sglang/srt/layers/moe/runner.py"
    facts = file_facts(path, ast.parse(_source(path)))
    plain = orjson.loads(orjson.dumps(facts.to_plain()))
    back = FileFacts.from_plain(plain)
    assert back is not None and back.to_plain() == plain == facts.to_plain()
    assert back.defs == facts.defs and back.registrations == facts.registrations
    assert FileFacts.from_plain({**plain, "v": -1}) is None
    assert FileFacts.from_plain({"v": plain["v"], "path": 3}) is None


def test_a_decorator_registry_selects_the_backend_its_key_names(reach: SiteReach) -> None:
    got = reach.of("python/sglang/srt/layers/attention/flex_backend.py", "FlexBackend.forward_extend")
    assert got == (frozenset({("flag", "--attention-backend", ("flex",))}),)
    assert "flex" in reach.choices["--attention-backend"]


def test_two_registrations_of_one_class_are_alternatives_merged_by_value(reach: SiteReach) -> None:
    got = reach.of("python/sglang/srt/layers/attention/sparse_backend.py", "SparseBackend.forward_decode")
    assert got == (frozenset({("flag", "--attention-backend", ("sparse", "sparse_old"))}),)
    assert reach_phrase(got) == "with `--attention-backend sparse` or `sparse_old`"


def test_a_dict_of_choice_strings_selects_each_class(reach: SiteReach) -> None:
    got = reach.of("python/sglang/srt/layers/quantization/int4.py", "Int4Config.get_quant_method")
    assert got == (frozenset({("flag", "--quantization", ("int4",))}),)


def test_if_elif_dispatch_on_a_flag_value_selects_each_branch(reach: SiteReach) -> None:
    grouped = reach.of("python/sglang/srt/layers/moe/grouped.py", "GroupedRunner.run")
    tiled = reach.of("python/sglang/srt/layers/moe/tiled.py", "TiledRunner.run")
    assert grouped == (frozenset({("flag", "--moe-runner-backend", ("grouped",))}),)
    assert tiled == (frozenset({("flag", "--moe-runner-backend", ("tiled",))}),)


def test_an_enum_named_after_the_flag_selects_its_values(reach: SiteReach) -> None:
    tiled = reach.of("python/sglang/srt/layers/moe/core.py", "TiledCore.run")
    grouped = reach.of("python/sglang/srt/layers/moe/core.py", "GroupedCore.run")
    assert tiled == (frozenset({("flag", "--moe-runner-backend", ("tiled",))}),)
    assert grouped == (frozenset({("flag", "--moe-runner-backend", ("grouped",))}),)


def test_a_switch_guarding_a_constructor_reaches_the_methods_it_calls(reach: SiteReach) -> None:
    got = reach.of("python/sglang/srt/adapters/manager.py", "AdapterManager.check")
    assert got == (frozenset({("flag", "--enable-adapters", ())}),)


def test_the_entry_class_names_the_architecture_of_the_code_it_builds(reach: SiteReach) -> None:
    got = reach.of("python/sglang/srt/models/toy.py", "ToyAttention.forward")
    assert got == (frozenset({("arch", "ToyForCausalLM", ())}),)


def test_platform_gates_and_platform_folders(reach: SiteReach) -> None:
    gated = reach.of("python/sglang/srt/layers/activation.py", "gelu_rocm")
    assert gated == (frozenset({("platform", "hip", ())}),)
    folder = reach.of("python/sglang/srt/hardware_backend/npu/unpack.py", "unpack")
    assert folder == (frozenset({("platform", "npu", ())}),)
    assert "ROCm" in reach_phrase(gated)


def test_one_unconditional_caller_means_nothing_narrows_the_path() -> None:
    files = {p: _source(p) for p in FILES}
    files["python/sglang/srt/layers/moe/fallback.py"] = textwrap.dedent(
        """\
        from sglang.srt.layers.moe.tiled import TiledRunner


        def always():
            return TiledRunner()
        """
    )
    got = _site_reach(files).of("python/sglang/srt/layers/moe/tiled.py", "TiledRunner.run")
    assert got == ()


def test_catch_sites_are_exposed_for_the_swallowed_error_rule(reach: SiteReach) -> None:
    manager = "python/sglang/srt/adapters/manager.py"
    assert reach.caller_catches(manager, "AdapterManager.check") == [("KeyError",)]
    assert reach.caller_catches(manager, "AdapterManager.load") is None


def test_the_wording_states_reach_in_each_field_and_offers_another_value(reach: SiteReach) -> None:
    partial = {
        "documentation": "Raised when the layer is cross attention.",
        "triggerScenarios": "A cross-attention layer.",
        "tags": ["layers"],
        "solutions": ["Use a backend that supports cross attention"],
        "exampleFix": "# before\npython -m sglang.launch_server --model m\n# after\npython -m sglang.launch_server --model m",
    }
    got = reach.of("python/sglang/srt/layers/attention/flex_backend.py", "FlexBackend.forward_extend")
    out = with_reach(partial, got, reach.choices)
    assert "only with `--attention-backend flex`" in out["documentation"]
    assert "`--attention-backend flex`" in out["triggerScenarios"]
    assert "flex" in out["tags"]
    assert any("e.g. `--attention-backend sparse`" in s for s in out["solutions"])
    before, after = out["exampleFix"].split("# after")
    assert "--attention-backend flex" in before and "--attention-backend" not in after
    assert with_reach(partial, (), reach.choices) == partial
    # A dead check (its record says nothing triggers it) states no way in and no way around.
    dead = {
        **partial,
        "triggerScenarios": "None: line 9 sits under `if TYPE_CHECKING:`, which never runs.",
        "_dead": True,
    }
    assert with_reach(dead, got, reach.choices) == dead


def test_a_fix_that_changes_another_setting_keeps_the_selector_in_both_launches(reach: SiteReach) -> None:
    partial = {
        "documentation": "Raised when the page size is odd.",
        "triggerScenarios": "An odd page size.",
        "tags": ["layers"],
        "solutions": ["Use an even page size"],
        "exampleFix": "# before\npython -m sglang.launch_server --page-size 3\n"
        "# after\npython -m sglang.launch_server --page-size 4",
    }
    got = reach.of("python/sglang/srt/layers/attention/flex_backend.py", "FlexBackend.forward_extend")
    before, after = with_reach(partial, got, reach.choices)["exampleFix"].split("# after")
    # The fix is the page size alone: an "after" launch without the backend would change two things.
    assert "--attention-backend flex" in before and "--attention-backend flex" in after
    assert "--page-size 4" in after


def test_of_several_values_that_lead_here_the_launch_shows_the_one_the_site_names() -> None:
    def partial(doc: str) -> dict[str, Any]:
        return {
            "documentation": doc,
            "triggerScenarios": "A full queue.",
            "tags": ["disaggregation"],
            "solutions": ["Raise the queue size"],
            "exampleFix": "# before\npython -m sglang.launch_server --queue 1\n"
            "# after\npython -m sglang.launch_server --queue 8",
        }

    way = (frozenset({("flag", "--transfer-backend", ("ascend", "mooncake", "nixl"))}),)
    choices = {"--transfer-backend": ("ascend", "mooncake", "nixl")}
    named = with_reach(
        partial("In the method `Sender.send` (python/sglang/srt/mooncake/conn.py), line 9 raises."),
        way,
        choices,
    )
    before, after = named["exampleFix"].split("# after")
    # Every value leads here: a launch is written with one, the one the site's own path names.
    assert "--transfer-backend mooncake" in before and "--transfer-backend mooncake" in after
    plain = with_reach(
        partial("In the function `send` (python/sglang/srt/common/conn.py), line 9 raises."), way, choices
    )
    assert "--transfer-backend ascend" in plain["exampleFix"].split("# after")[0]
    # Else the value the target registers first, its main one as a rule.
    registered = {"--transfer-backend": ("nixl", "mooncake", "ascend")}
    first = with_reach(
        partial("In the function `send` (python/sglang/srt/common/conn.py), line 9 raises."), way, registered
    )
    assert "--transfer-backend nixl" in first["exampleFix"].split("# after")[0]


def test_a_case_the_selected_backend_does_not_implement_is_fixed_by_another_backend(reach: SiteReach) -> None:
    # Written by the worker as an internal invariant; the reach shows one backend value selects it.
    partial = {
        "filePath": "python/sglang/srt/layers/attention/flex_backend.py",
        "errorType": "not-implemented",
        "errorMessage": "cross attention is not supported",
        "documentation": f"Raised for cross attention. {INTERNAL_CAUSE}",
        "triggerScenarios": "A cross-attention layer.",
        "tags": ["layers"],
        "solutions": ["Report it as a bug", f"{INTERNAL_CHECK}`FlexBackend.forward_extend`: report it"],
        "exampleFix": "# before: forward_extend(...) reaches an internal state\npython3 -m sglang.check_env",
    }
    got = reach.of("python/sglang/srt/layers/attention/flex_backend.py", "FlexBackend.forward_extend")
    out = with_reach(partial, got, reach.choices)
    # The bug report the internal wording asked for becomes a request for the case, last.
    assert not any(s.startswith(INTERNAL_CHECK) for s in out["solutions"])
    assert out["solutions"][-1].startswith(
        "If you need this case with `--attention-backend flex`, ask sglang"
    )
    assert INTERNAL_CAUSE not in out["documentation"]
    assert (
        "Cause: the launch selected `--attention-backend flex`, which does not implement this case"
        in (out["documentation"])
    )
    assert out["solutions"][0].endswith("e.g. `--attention-backend sparse`")
    assert out["solutions"][1] == "Report it as a bug"
    assert out["exampleFix"] == (
        "# before\npython -m sglang.launch_server --model-path <model> --attention-backend flex\n"
        "# after\npython -m sglang.launch_server --model-path <model> --attention-backend sparse"
    )
    # A base class's bare stub (no message) is a bug in the subclass, not a case left out.
    stub = with_reach(
        {**partial, "errorMessage": "", "solutions": ["Report it as a bug"]}, got, reach.choices
    )
    assert INTERNAL_CAUSE in stub["documentation"] and stub["solutions"][0] == "Report it as a bug"
    # Any other kind of record keeps the worker's words.
    other = with_reach({**partial, "errorType": "internal-invariant"}, got, reach.choices)
    assert INTERNAL_CAUSE in other["documentation"] and other["solutions"][0] == "Report it as a bug"


# --------------------------------------------------------------------------- a real extraction


def _run(repo: Path, sha: str, cache: Path, jobs: int = 1) -> ExtractResult:
    return extract(ExtractOptions.build(source=str(repo), sha=sha, jobs=jobs, cache_dir=cache))


def _lines(result: ExtractResult) -> bytes:
    from extractor.records.jsonl import dumps_line

    return b"".join(dumps_line(r, "2026-01-01T00:00:00.000Z") for r in result.records)


def test_an_edit_to_a_caller_changes_the_reach_of_an_unchanged_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    first = {p: _source(p).encode() for p in FILES}
    runner = "python/sglang/srt/layers/moe/runner.py"
    # The edit drops the guard around the tiled runner: its file is untouched but no longer narrowed.
    edited = (
        _source(runner)
        .replace('    elif backend == "tiled":\n        return TiledRunner()\n', "")
        .replace("    return None\n", "    return TiledRunner()\n")
    )
    repo, shas = make_repo(tmp_path / "repo", [first, {runner: edited.encode()}])
    cache = tmp_path / "cache"

    def tiled_doc(result: ExtractResult) -> str:
        (rec,) = [r for r in result.records if r.filePath.endswith("moe/tiled.py")]
        return rec.documentation

    old = _run(repo, shas[0], cache)
    assert "only with `--moe-runner-backend tiled`" in tiled_doc(old)
    new = _run(repo, shas[1], cache)
    assert new.stats.files_parsed == 1  # only the edited file; every other outcome is reused
    assert "only with" not in tiled_doc(new)
    cold = _run(repo, shas[1], tmp_path / "cold", jobs=2)
    assert _lines(cold) == _lines(new)
    assert _lines(_run(repo, shas[1], cache, jobs=2)) == _lines(new)


def test_a_config_field_or_a_pair_of_keys_is_not_taken_for_a_flag_choice() -> None:
    files = {
        ARGS: SERVER_ARGS,
        "python/sglang/srt/loader.py": textwrap.dedent(
            """\
            from sglang.srt.quant import QuantConfig


            def load(model_config):
                if model_config.quantization:
                    QuantConfig()
            """
        ),
        "python/sglang/srt/quant.py": textwrap.dedent(
            """\
            FUSED = {}


            def register_fused(a2a, runner):
                def wrap(fn):
                    FUSED[(a2a, runner)] = fn
                    return fn

                return wrap


            class QuantConfig:
                def check(self):
                    raise ValueError("bad quant config")


            @register_fused("flex", "sparse")
            def fused(x):
                assert x, "x must be set"
            """
        ),
    }
    reach = _site_reach(files)
    assert reach.of("python/sglang/srt/quant.py", "QuantConfig.check") == ()
    assert reach.of("python/sglang/srt/quant.py", "fused") == ()


def test_a_value_test_outside_the_declared_choices_only_says_the_flag_is_set() -> None:
    files = {
        ARGS: SERVER_ARGS.replace(
            '"--tp-size", type=int',
            '"--tp-size", type=int)\n        parser.add_argument("--spec-algorithm", type=str',
        ),
        "python/sglang/srt/spec.py": textwrap.dedent(
            """\
            class Drafter:
                def step(self):
                    raise RuntimeError("draft step failed")


            def start(server_args):
                if server_args.spec_algorithm.is_eagle_family():
                    Drafter()
            """
        ),
    }
    got = _site_reach(files).of("python/sglang/srt/spec.py", "Drafter.step")
    assert got == (frozenset({("flag", "--spec-algorithm", ())}),)


def test_a_value_test_of_an_enum_named_after_the_flag_selects_the_members_it_returns_for() -> None:
    files = {
        ARGS: SERVER_ARGS.replace(
            '"--tp-size", type=int',
            '"--tp-size", type=int)\n        parser.add_argument("--spec-algorithm", type=str',
        ),
        "python/sglang/srt/spec.py": textwrap.dedent(
            """\
            from enum import Enum


            class SpecAlgorithm(Enum):
                NONE = 0
                QUICK = 1
                EAGLE = 2
                EAGLE3 = 3

                def is_quick(self):
                    return self == SpecAlgorithm.QUICK

                def is_eagle(self):
                    return self in (SpecAlgorithm.EAGLE, SpecAlgorithm.EAGLE3)

                def is_draft_free(self):
                    return self.is_quick() or self.is_none()

                def is_any_drafting(self):
                    return self.is_quick() or self.is_eagle()


            class QuickWorker:
                def step(self):
                    raise RuntimeError("quick step failed")


            class EagleWorker:
                def step(self):
                    raise RuntimeError("eagle step failed")


            class OddWorker:
                def step(self):
                    raise RuntimeError("odd step failed")


            class DraftPool:
                def grow(self):
                    raise RuntimeError("draft pool cannot grow")


            def pick(algo: SpecAlgorithm):
                if algo.is_quick():
                    return QuickWorker()
                if algo.is_eagle():
                    return EagleWorker()
                if algo.is_draft_free():
                    return OddWorker()


            def pool(algo: SpecAlgorithm):
                if algo.is_any_drafting():
                    return DraftPool()
            """
        ),
    }
    reach = _site_reach(files)
    # ``is_quick()`` is true for one member: that value decides the path, not "any algorithm".
    assert reach.of("python/sglang/srt/spec.py", "QuickWorker.step") == (
        frozenset({("flag", "--spec-algorithm", ("quick",))}),
    )
    assert reach.of("python/sglang/srt/spec.py", "EagleWorker.step") == (
        frozenset({("flag", "--spec-algorithm", ("eagle", "eagle3"))}),
    )
    # A test the class answers with other tests names no member: only "the flag is set" is sure.
    assert reach.of("python/sglang/srt/spec.py", "OddWorker.step") == (
        frozenset({("flag", "--spec-algorithm", ())}),
    )
    # A test that is either of two value tests is true for the members of both.
    assert reach.of("python/sglang/srt/spec.py", "DraftPool.grow") == (
        frozenset({("flag", "--spec-algorithm", ("eagle", "eagle3", "quick"))}),
    )


def test_an_abstract_method_body_is_reached_only_through_an_overrides_super_call() -> None:
    files = {
        ARGS: SERVER_ARGS,
        "python/sglang/srt/detectors.py": textwrap.dedent(
            """\
            from abc import ABC, abstractmethod


            class Detector(ABC):
                @abstractmethod
                def info(self):
                    raise NotImplementedError()

                @abstractmethod
                def parse(self, text):
                    raise NotImplementedError("parse is not implemented")

                def run(self, text):
                    return self.info(), self.parse(text)


            class JsonDetector(Detector):
                def info(self):
                    return "json"

                def parse(self, text):
                    return super().parse(text)


            def start(server_args, text):
                if server_args.enable_adapters:
                    JsonDetector().run(text)
            """
        ),
    }
    reach = _site_reach(files)
    # Every detector overrides ``info``: no launch runs the base body, so no choice is claimed.
    assert reach.of("python/sglang/srt/detectors.py", "Detector.info") == ()
    # ``parse`` is called through ``super()`` by an override: that override's ways in hold.
    assert reach.of("python/sglang/srt/detectors.py", "Detector.parse") == (
        frozenset({("flag", "--enable-adapters", ())}),
    )
    assert reach.of("python/sglang/srt/detectors.py", "Detector.run") == (
        frozenset({("flag", "--enable-adapters", ())}),
    )


def test_a_base_method_is_reached_only_through_the_subclasses_that_do_not_override_it() -> None:
    files = {
        ARGS: SERVER_ARGS,
        "python/sglang/srt/layers/quantization/__init__.py": textwrap.dedent(
            """\
            class BaseConfig:
                def get_quant_method(self, layer):
                    raise ValueError("this layer cannot be quantized")

                def scale(self):
                    raise ValueError("no scale for this layer")


            class Fp8Config(BaseConfig):
                def get_quant_method(self, layer):
                    return layer


            class Int4Config(BaseConfig):
                pass


            QUANTIZATION_METHODS = {"fp8": Fp8Config, "int4": Int4Config}
            """
        ),
    }
    reach = _site_reach(files)
    path = "python/sglang/srt/layers/quantization/__init__.py"
    # fp8 runs its own ``get_quant_method``: only int4 instances run the base one.
    assert reach.of(path, "BaseConfig.get_quant_method") == (
        frozenset({("flag", "--quantization", ("int4",))}),
    )
    # Both run the base ``scale``: every choice of the flag leads there, so nothing narrows it.
    assert reach.of(path, "BaseConfig.scale") == ()


def test_a_base_constructor_is_reached_only_through_the_subclasses_that_run_it() -> None:
    files = {
        ARGS: SERVER_ARGS,
        "python/sglang/srt/layers/quantization/__init__.py": textwrap.dedent(
            """\
            class BaseConfig:
                def __init__(self, bits):
                    if bits not in (4, 8):
                        raise ValueError("bits must be 4 or 8")


            class Fp8Config(BaseConfig):
                def __init__(self):
                    self.bits = 8  # a constructor of its own, never the base's


            class Int4Config(BaseConfig):
                def __init__(self):
                    super().__init__(4)


            class W8Config(BaseConfig):
                pass


            QUANTIZATION_METHODS = {"fp8": Fp8Config, "int4": Int4Config, "w8": W8Config}
            """
        ),
    }
    reach = _site_reach(files)
    path = "python/sglang/srt/layers/quantization/__init__.py"
    # fp8 builds its own; int4 runs the base's through ``super()``; w8 keeps the base's.
    assert reach.of(path, "BaseConfig.__init__") == (frozenset({("flag", "--quantization", ("int4", "w8"))}),)


def test_a_method_the_base_dispatches_to_under_a_platform_gate_runs_only_on_that_platform() -> None:
    files = {
        ARGS: SERVER_ARGS,
        "python/sglang/srt/layers/custom_op.py": textwrap.dedent(
            """\
            from sglang.srt.utils import is_npu

            _is_npu = is_npu()


            class CustomOp:
                def __init__(self):
                    self._forward = self.dispatch_forward()

                def forward(self, x):
                    return self._forward(x)

                def forward_native(self, x):
                    raise NotImplementedError

                def forward_npu(self, x):
                    return self.forward_native(x)

                def dispatch_forward(self):
                    if _is_npu:
                        return self.forward_npu
                    return self.forward_native
            """
        ),
        "python/sglang/srt/layers/norm.py": textwrap.dedent(
            """\
            from sglang.srt.layers.custom_op import CustomOp


            class Norm(CustomOp):
                def forward_native(self, x):
                    if x.dim() != 2:
                        raise ValueError("norm wants a 2-d input")
                    return x

                def forward_npu(self, x):
                    if x.dtype != "bf16":
                        raise ValueError("the NPU norm wants bf16")
                    return x


            def build(server_args):
                if server_args.enable_adapters:
                    return Norm()
            """
        ),
    }
    reach = _site_reach(files)
    assert reach.of("python/sglang/srt/layers/norm.py", "Norm.forward_npu") == (
        frozenset({("flag", "--enable-adapters", ()), ("platform", "npu", ())}),
    )
    # The native path is the fallback everywhere: no platform is claimed for it.
    assert reach.of("python/sglang/srt/layers/norm.py", "Norm.forward_native") == (
        frozenset({("flag", "--enable-adapters", ())}),
    )


def test_a_base_method_that_forwards_to_an_override_counts_only_where_it_runs() -> None:
    files = {
        ARGS: SERVER_ARGS,
        "python/sglang/srt/layers/custom_op.py": textwrap.dedent(
            """\
            from sglang.srt.utils import is_cuda, is_hip, is_musa

            _is_cuda = is_cuda()
            _is_hip = is_hip()
            _is_musa = is_musa()


            class CustomOp:
                def __init__(self):
                    self._forward = self.dispatch_forward()

                def forward(self, x):
                    return self._forward(x)

                def forward_native(self, x):
                    raise NotImplementedError

                def forward_cuda(self, x):
                    raise NotImplementedError

                def forward_hip(self, x):
                    return self.forward_cuda(x)

                def forward_musa(self, x):
                    return self.forward_cuda(x)

                def forward_cpu(self, x):
                    return self.forward_cuda(x)

                def dispatch_forward(self):
                    if _is_cuda:
                        return self.forward_cuda
                    if _is_hip:
                        return self.forward_hip
                    if _is_musa:
                        return self.forward_musa
                    return self.forward_native
            """
        ),
        "python/sglang/srt/layers/cpu_op.py": textwrap.dedent(
            """\
            class CpuOp:
                def forward_cpu(self, x):
                    return x

                def forward(self, x):
                    return self.forward_cpu(x)
            """
        ),
        "python/sglang/srt/layers/norm.py": textwrap.dedent(
            """\
            from sglang.srt.layers.custom_op import CustomOp


            class Norm(CustomOp):
                def forward_native(self, x):
                    return x

                def forward_cuda(self, x):
                    if x.dim() != 2:
                        raise ValueError("the fused norm wants a 2-d input")
                    return x

                def forward_hip(self, x):
                    return self.forward_native(x)


            class Scale(CustomOp):
                def forward_native(self, x):
                    return x

                def forward_cuda(self, x):
                    if x.dim() != 2:
                        raise ValueError("the fused scale wants a 2-d input")
                    return x


            def build(server_args):
                if server_args.enable_adapters:
                    return Norm(), Scale()
            """
        ),
    }
    reach = _site_reach(files)
    # Norm overrides forward_hip, so the base's forward_hip never runs its forward_cuda; the base's
    # forward_musa does, on MUSA only; the base's forward_cpu is never called (the one call of
    # that name runs another class's method).
    assert reach.of("python/sglang/srt/layers/norm.py", "Norm.forward_cuda") == (
        frozenset({("flag", "--enable-adapters", ()), ("platform", "cuda", ())}),
        frozenset({("flag", "--enable-adapters", ()), ("platform", "musa", ())}),
    )
    # Scale keeps the base's forward_hip: ROCm runs its CUDA path too.
    assert reach.of("python/sglang/srt/layers/norm.py", "Scale.forward_cuda") == (
        frozenset({("flag", "--enable-adapters", ()), ("platform", "cuda", ())}),
        frozenset({("flag", "--enable-adapters", ()), ("platform", "hip", ())}),
        frozenset({("flag", "--enable-adapters", ()), ("platform", "musa", ())}),
    )


def test_a_predicate_on_the_checkpoints_architecture_selects_those_architectures() -> None:
    files = {
        ARGS: SERVER_ARGS,
        "python/sglang/srt/configs/model_config.py": textwrap.dedent(
            """\
            def _hf_arch(config):
                return (config.architectures or [None])[0]


            def is_owl(config) -> bool:
                \"\"\"Whether the checkpoint is an Owl model.\"\"\"
                return _hf_arch(config) in ("OwlForCausalLM", "OwlForCausalLMNextN") and config.sparse


            def is_gizmo(config):
                arch = (config.architectures or [None])[0]
                return arch == "GizmoForCausalLM"
            """
        ),
        "python/sglang/srt/models/owl.py": "class OwlForCausalLM:\n    pass\n\n\nEntryClass = OwlForCausalLM\n",
        "python/sglang/srt/mem_cache/pools.py": textwrap.dedent(
            """\
            from sglang.srt.configs.model_config import is_gizmo, is_owl


            class OwlPool:
                def state_infos(self):
                    raise NotImplementedError("owl pools keep no state")


            class GizmoPool:
                def state_infos(self):
                    raise NotImplementedError("gizmo pools keep no state")


            def build(config):
                owl = is_owl(config)
                if owl:
                    return OwlPool()
                if is_gizmo(config):
                    return GizmoPool()
            """
        ),
    }
    files["python/sglang/srt/models/owl_attention.py"] = textwrap.dedent(
        """\
        from sglang.srt.configs.model_config import is_owl


        class Indexer:
            def select(self, q):
                raise ValueError("the indexer wants a 3-d query")


        class SharedAttention:
            def __init__(self, config):
                self.use_index = is_owl(config)
                self.indexer = Indexer()

            def forward(self, q):
                use = self.use_index
                if use:
                    return self.indexer.select(q)
                return q


        def build(config):
            return SharedAttention(config)
        """
    )
    reach = _site_reach(files)
    path = "python/sglang/srt/mem_cache/pools.py"
    # ``self.use_index = is_owl(config)`` then ``if self.use_index``: the predicate's architectures.
    assert reach.of("python/sglang/srt/models/owl_attention.py", "Indexer.select") == (
        frozenset({("arch", "OwlForCausalLM", ())}),
    )
    # Only architectures a model file serves are named (the draft head has no EntryClass here).
    assert reach.of(path, "OwlPool.state_infos") == (frozenset({("arch", "OwlForCausalLM", ())}),)
    # No model file serves ``GizmoForCausalLM``: the test names no checkpoint we know.
    assert reach.of(path, "GizmoPool.state_infos") == ()


# The MoE runner's enum, named after its flag, with a value test and the accessor of the value.
MOE_BACKEND = """\
from enum import Enum


class MoeRunnerBackend(Enum):
    AUTO = "auto"
    GROUPED = "grouped"
    TILED = "tiled"

    def is_grouped(self):
        return self == MoeRunnerBackend.GROUPED


def get_moe_runner_backend() -> MoeRunnerBackend:
    return MoeRunnerBackend.AUTO
"""


# The backend with a second value test, ``is_tiled()``.
TILED_BACKEND = MOE_BACKEND.replace(
    "    def is_grouped(self):",
    "    def is_tiled(self):\n        return self == MoeRunnerBackend.TILED\n\n    def is_grouped(self):",
)


def test_a_value_test_of_an_attribute_holding_the_flags_enum_selects_that_value() -> None:
    files = {
        ARGS: SERVER_ARGS,
        "python/sglang/srt/layers/moe/backend.py": MOE_BACKEND,
        "python/sglang/srt/lora/moe_layer.py": textwrap.dedent(
            """\
            from sglang.srt.layers.moe.backend import MoeRunnerBackend, get_moe_runner_backend


            def grouped_lora(x):
                raise NotImplementedError("grouped LoRA needs a bf16 input")


            class MoEWithAdapters:
                def __init__(self, quantized):
                    backend = get_moe_runner_backend()
                    if quantized:
                        backend = MoeRunnerBackend.TILED
                    self._backend = backend

                def forward(self, x):
                    if self._backend.is_grouped():
                        return grouped_lora(x)
                    return x


            def build(server_args):
                if server_args.enable_adapters:
                    return MoEWithAdapters(False)
            """
        ),
    }
    reach = _site_reach(files)
    assert reach.of("python/sglang/srt/lora/moe_layer.py", "grouped_lora") == (
        frozenset({("flag", "--enable-adapters", ()), ("flag", "--moe-runner-backend", ("grouped",))}),
    )


def test_a_factory_returning_a_class_under_an_or_of_value_tests_selects_those_values() -> None:
    files = {
        ARGS: SERVER_ARGS,
        "python/sglang/srt/layers/moe/backend.py": TILED_BACKEND,
        "python/sglang/srt/layers/moe/impl.py": textwrap.dedent(
            """\
            from sglang.srt.layers.moe.backend import get_moe_runner_backend


            class PlainMoE:
                def forward(self, x):
                    return x


            class BlockedMoE(PlainMoE):
                def forward(self, x):
                    if x.ndim != 3:
                        raise ValueError("blocked experts take 3-D input")
                    return x


            def get_moe_impl_class():
                if get_moe_runner_backend().is_grouped() or get_moe_runner_backend().is_tiled():
                    return BlockedMoE
                return PlainMoE
            """
        ),
    }
    reach = _site_reach(files)
    # Either test picks the class: it is built only with one of the two values.
    assert reach.of("python/sglang/srt/layers/moe/impl.py", "BlockedMoE.forward") == (
        frozenset({("flag", "--moe-runner-backend", ("grouped", "tiled"))}),
    )


def test_a_class_method_called_on_its_class_by_name_is_reached_by_its_callers_not_its_builders() -> None:
    modes = "python/sglang/srt/layers/modes.py"
    files = {
        ARGS: SERVER_ARGS,
        modes: textwrap.dedent(
            """\
            class Modes:
                def __init__(self, mlp):
                    self.mlp = mlp

                @classmethod
                def init_new(cls, sparse):
                    return cls(cls._mlp_mode(sparse))

                @classmethod
                def _mlp_mode(cls, sparse):
                    if sparse not in (0, 1):
                        raise NotImplementedError
                    return sparse
            """
        ),
        # One family builds the class itself; two others only call its class method.
        "python/sglang/srt/models/owl.py": textwrap.dedent(
            """\
            from sglang.srt.layers.modes import Modes


            class OwlForCausalLM:
                def __init__(self, config):
                    self.modes = Modes(1)


            EntryClass = OwlForCausalLM
            """
        ),
        "python/sglang/srt/models/lark.py": textwrap.dedent(
            """\
            from sglang.srt.layers.modes import Modes


            class LarkForCausalLM:
                def __init__(self, config):
                    self.modes = Modes.init_new(config.sparse)


            EntryClass = LarkForCausalLM
            """
        ),
        "python/sglang/srt/models/wren.py": textwrap.dedent(
            """\
            from sglang.srt.layers.modes import Modes


            class WrenForCausalLM:
                def __init__(self, config):
                    self.modes = Modes.init_new(0)


            EntryClass = WrenForCausalLM
            """
        ),
    }
    reach = _site_reach(files)
    families = (frozenset({("arch", "", ("LarkForCausalLM", "WrenForCausalLM"))}),)
    assert reach.of(modes, "Modes.init_new") == families
    # ``cls._mlp_mode(...)`` inside it names the class too: the same ways in, not Owl's.
    assert reach.of(modes, "Modes._mlp_mode") == families


def test_a_function_kept_in_a_named_tuple_runs_where_its_field_is_called() -> None:
    kernels = "python/sglang/srt/layers/fused_ops.py"
    files = {
        ARGS: SERVER_ARGS,
        kernels: textwrap.dedent(
            """\
            def fused_norm(x):
                raise NotImplementedError("fused norm needs bf16")


            def split_norm(x):
                return x
            """
        ),
        "python/sglang/srt/models/owl.py": textwrap.dedent(
            """\
            from typing import NamedTuple


            class Ops(NamedTuple):
                fused_norm: object
                split_norm: object


            def get_ops() -> Ops:
                from sglang.srt.layers.fused_ops import fused_norm, split_norm

                return Ops(fused_norm, split_norm)


            class OwlForCausalLM:
                def forward(self, x, server_args):
                    if server_args.enable_adapters:
                        return get_ops().fused_norm(x)
                    return get_ops().split_norm(x)


            EntryClass = OwlForCausalLM
            """
        ),
    }
    reach = _site_reach(files)
    # Built into the tuple under no test, called through its field only under the switch.
    owl = ("arch", "OwlForCausalLM", ())
    assert reach.of(kernels, "fused_norm") == (frozenset({("flag", "--enable-adapters", ()), owl}),)
    assert reach.of(kernels, "split_norm") == (frozenset({owl}),)


def test_a_runs_reach_read_back_from_the_cache_holds_every_setting_it_was_built_with() -> None:
    """A warm run reads the reach back from the cache: what it words records with must all be there."""
    cuda = frozenset({("platform", "cuda", ())})
    run = RunReach(
        {"a.py": {"run": (cuda,)}},
        {"--backend": ("fast", "slow")},
        passed={"a.py": {"run": {"n:mode": [["--mode", "mode", "str", "", [], False]]}}},
        switches={"--enable-old"},
        agreed={"--quantization"},
        optional={"--draft"},
        forced={"--backend": {"fast": ("OwlForCausalLM",)}},
        scoped={"srt": {"--backend": ("fast",)}},
        namespaces={"a.py": "srt"},
        defaults={"--backend": "slow"},
        implied={"--enable-old": ("--enable-new",)},
        declared={"srt": {"--backend": ("fast", "slow")}},
        picked={"--backend": ("fast",)},
        replaced={"--old-mode": "--mode"},
        phased={"srt": {"--backend": ("--prefill-backend",)}},
        negated={"--enable-old": "--no-enable-old"},
        validations=[(("--enable-old", "on", ()), ("--backend", "in", ("fast",)))],
        drafts={"OwlForCausalLMNextN"},
        tested={"a.py": {"--backend": ("fast", "slow")}},
        model_sets={"--page-size": (("always", ("128", "256"), ("OwlForCausalLM",)),)},
        override_paths={"overrides.py"},
        rewritten={"--draft-tokens": (("steps + 1", "topk == 1"),)},
    )
    back = RunReach.from_plain(orjson.loads(orjson.dumps(run.to_plain())))
    assert back is not None
    public = {k: v for k, v in vars(run).items() if not k.startswith("_")}
    assert {k: v for k, v in vars(back).items() if not k.startswith("_")} == public
    assert all(public.values())  # every setting was given: none compares equal by being empty


def test_a_choice_every_way_in_needs_is_offered_as_the_way_out() -> None:
    store = ("flag", "--attention-backend", ("sparse",))
    reach = (
        frozenset({store, ("flag", "--enable-adapters", ())}),
        frozenset({store, ("flag", "--tp-size", ())}),
    )
    run = RunReach({"a.py": {"run": reach}}, {"--attention-backend": ("flex", "sparse")})
    solutions = run.apply("a.py", _partial("run"))["solutions"]
    # Whichever way the launch took, another backend leaves the path; neither other flag does alone.
    assert any("use another one, e.g. `--attention-backend flex`" in s for s in solutions)
    assert not any("--enable-adapters" in s or "--tp-size" in s for s in solutions)


def test_a_flag_that_picks_from_the_same_choices_for_one_phase_is_said_beside_it() -> None:
    sparse = (frozenset({("flag", "--attention-backend", ("sparse",))}),)
    run = RunReach(
        {"python/sglang/srt/a.py": {"run": sparse}, "python/sglang/kernels/b.py": {"run": sparse}},
        {"--attention-backend": ("flex", "sparse")},
        namespaces={"python/sglang/srt/a.py": "srt", "python/sglang/kernels/b.py": "srt"},
        declared={"srt": {"--attention-backend": ("flex", "sparse")}},
        phased={
            "srt": {"--attention-backend": ("--decode-attention-backend", "--prefill-attention-backend")}
        },
    )
    out = run.apply("python/sglang/srt/a.py", _partial("run"))
    assert "This code runs only with `--attention-backend sparse` (or that value for " in out["documentation"]
    assert any(
        "e.g. `--attention-backend flex` (and leave out `--decode-attention-backend` and "
        "`--prefill-attention-backend`, or give them another one too)" in s
        for s in out["solutions"]
    )
    # A value the package does not declare was read in another package's code: no phases there.
    other = RunReach(
        {"python/sglang/kernels/b.py": {"run": (frozenset({("flag", "--attention-backend", ("fa",))}),)}},
        {"--attention-backend": ("flex", "sparse")},
        namespaces={"python/sglang/kernels/b.py": "srt"},
        declared={"srt": {"--attention-backend": ("flex", "sparse")}},
        phased={"srt": {"--attention-backend": ("--prefill-attention-backend",)}},
    )
    assert (
        "--prefill-attention-backend"
        not in other.apply("python/sglang/kernels/b.py", _partial("run"))["documentation"]
    )


def test_code_of_one_phase_of_the_run_is_not_said_to_follow_the_other_phases_flag() -> None:
    sparse = (frozenset({("flag", "--attention-backend", ("sparse",))}),)
    run = RunReach(
        {
            "python/sglang/srt/sparse_backend.py": {
                "SparseBackend.forward_decode": sparse,
                "SparseBackend.forward_extend": sparse,
                "SparseBackend.init_buffers": sparse,
            },
            "python/sglang/kernels/prefill/sparse_kernel.py": {"run": sparse},
        },
        {"--attention-backend": ("flex", "sparse")},
        namespaces={
            "python/sglang/srt/sparse_backend.py": "srt",
            "python/sglang/kernels/prefill/sparse_kernel.py": "srt",
        },
        declared={"srt": {"--attention-backend": ("flex", "sparse")}},
        phased={
            "srt": {"--attention-backend": ("--decode-attention-backend", "--prefill-attention-backend")}
        },
    )
    decode = run.apply("python/sglang/srt/sparse_backend.py", _partial("SparseBackend.forward_decode"))
    assert "that value for `--decode-attention-backend`" in decode["documentation"]
    assert "--prefill-attention-backend" not in decode["documentation"] + " ".join(decode["solutions"])
    # Code that serves both phases keeps both; so does extend and prefill code, which a speculative
    # run's verify pass also takes with the decode phase's backend.
    for path, scope in (
        ("python/sglang/srt/sparse_backend.py", "SparseBackend.init_buffers"),
        ("python/sglang/srt/sparse_backend.py", "SparseBackend.forward_extend"),
        ("python/sglang/kernels/prefill/sparse_kernel.py", "run"),
    ):
        both = run.apply(path, _partial(scope))
        assert "--decode-attention-backend" in both["documentation"], scope
        assert "--prefill-attention-backend" in both["documentation"], scope


def test_ways_in_that_differ_in_one_flag_are_said_once_with_what_they_share() -> None:
    decode = ("flag", "--decode-backend", ("fast",))
    prefill = ("flag", "--prefill-backend", ("fast",))
    shared = {("arch", "OwlForCausalLM", ()), ("platform", "cuda", ())}
    reach = (frozenset({decode, *shared}), frozenset({prefill, *shared}))
    assert reach_phrase(reach) == (
        "with `--decode-backend fast`, or `--prefill-backend fast`, for `OwlForCausalLM` checkpoints, "
        "on CUDA (NVIDIA GPUs)"
    )
    # Ways that differ in more than one choice stay apart.
    apart = (frozenset({decode, ("platform", "cuda", ())}), frozenset({prefill, ("platform", "hip", ())}))
    assert "; or " in reach_phrase(apart)
    # Ways that need only a platform are one list; a way with more beside them stays its own.
    cuda, hip, musa = (frozenset({("platform", p, ())}) for p in ("cuda", "hip", "musa"))
    assert reach_phrase((cuda, hip, musa)) == "on CUDA (NVIDIA GPUs), ROCm (AMD GPUs) or MUSA GPUs"
    assert reach_phrase((frozenset({decode}), cuda, hip)) == (
        "with `--decode-backend fast`; or on CUDA (NVIDIA GPUs) or ROCm (AMD GPUs)"
    )


def test_a_flag_read_through_its_accessor_and_handed_on_as_a_local_selects_its_value() -> None:
    files = {
        ARGS: SERVER_ARGS,
        "python/sglang/srt/layers/moe/dispatch.py": textwrap.dedent(
            """\
            _BACKEND = None


            def get_moe_runner_backend():
                return _BACKEND


            class TiledKernel:
                def run(self, x):
                    raise NotImplementedError("the tiled kernel wants a 2-d input")


            class Dispatcher:
                def __init__(self, backend):
                    if backend == "tiled":
                        self.kernel = TiledKernel()


            def build():
                backend = get_moe_runner_backend()
                return Dispatcher(backend)
            """
        ),
    }
    reach = _site_reach(files)
    assert reach.of("python/sglang/srt/layers/moe/dispatch.py", "TiledKernel.run") == (
        frozenset({("flag", "--moe-runner-backend", ("tiled",))}),
    )


def test_a_backend_flag_no_registry_is_keyed_by_offers_its_declared_default() -> None:
    from extractor.prose.reach import RunReach

    args = SERVER_ARGS.replace(
        '    moe_runner_backend: str = "auto"\n',
        '    moe_runner_backend: str = "auto"\n    sampling_backend: str = "plain"\n',
    ).replace(
        '        parser.add_argument("--tp-size", type=int)\n',
        '        parser.add_argument("--tp-size", type=int)\n'
        '        parser.add_argument("--sampling-backend", type=str, choices=["fast", "plain", "fake"], '
        'default="plain")\n',
    )
    reach = site_reach_of({ARGS: args}, ARGS)
    # The default backend stands in for a registry; ``auto`` (the launch code picks, maybe the
    # very backend being left) and modes or switches offer nothing.
    assert reach.choices["--sampling-backend"] == ("plain",)
    assert "--moe-runner-backend" not in reach.choices and "--quantization" not in reach.choices
    fast = (frozenset({("flag", "--sampling-backend", ("fast",))}),)
    partial = _partial("run")
    run = RunReach({"a.py": {"run": fast}}, reach.choices)
    assert run.apply("a.py", partial)["solutions"][-1] == (
        "This code runs only with `--sampling-backend fast`: if that sampling backend is not "
        "required, use another one, e.g. `--sampling-backend plain`"
    )
    # The check's own gate already offers another value: the reach does not say it twice.
    said = {**partial, "solutions": ["Or pick a `--sampling-backend` other than fast: it only runs then"]}
    assert run.apply("a.py", said)["solutions"] == said["solutions"]


def test_a_switch_another_flag_turns_on_is_left_only_without_both() -> None:
    from extractor.prose.reach import RunReach

    args = SERVER_ARGS.replace(
        "    tp_size: int = 1\n",
        "    tp_size: int = 1\n    adapter_paths: str = None\n\n"
        "    def check_adapters(self):\n"
        "        if self.adapter_paths:\n"
        '            self.override("check_adapters", enable_adapters=True)\n'
        "        if self.tp_size:\n"
        "            self.enable_adapters = True\n",
    ).replace(
        '        parser.add_argument("--tp-size", type=int)\n',
        '        parser.add_argument("--tp-size", type=int)\n'
        '        parser.add_argument("--adapter-paths", type=str)\n',
    )
    knowledge = build_knowledge({ARGS: args.encode()})
    # Both ways the launch code turns the switch on are read; a switch never implies itself.
    assert knowledge.implied == {"--enable-adapters": ("--adapter-paths", "--tp-size")}
    reach = (frozenset({("flag", "--enable-adapters", ())}),)
    assert reach_phrase(reach, implied={"--enable-adapters": ("--adapter-paths",)}) == (
        "with `--enable-adapters` (or `--adapter-paths`, which turns it on)"
    )
    partial = _partial("run")
    run = RunReach(
        {"a.py": {"run": reach}},
        {},
        switches={"--enable-adapters"},
        implied={"--enable-adapters": ("--adapter-paths",)},
    )
    assert run.apply("a.py", partial)["solutions"][-1].endswith(
        "launch without `--enable-adapters` and without `--adapter-paths`, which turns it on"
    )
    back = RunReach.from_plain(orjson.loads(orjson.dumps(run.to_plain())))
    assert back is not None and back.implied == {"--enable-adapters": ("--adapter-paths",)}
    # Turned on by either of two flags: both must be left out.
    both = RunReach(
        {"a.py": {"run": reach}},
        {},
        switches={"--enable-adapters"},
        implied={"--enable-adapters": ("--adapter-paths", "--tp-size")},
    )
    assert both.apply("a.py", partial)["solutions"][-1].endswith(
        "launch without `--enable-adapters` and without `--adapter-paths` or `--tp-size`, which turn it on"
    )


def test_a_switch_set_only_under_a_further_test_is_not_turned_on() -> None:
    args = SERVER_ARGS.replace(
        "    tp_size: int = 1\n",
        "    tp_size: int = 1\n    adapter_paths: str = None\n    enable_exact: bool = False\n\n"
        "    def check_exact(self):\n"
        "        if self.enable_exact:\n"
        '            if self.tp_size not in ("a", "b"):\n'
        "                self.enable_adapters = True\n"
        "        if self.adapter_paths:\n"
        "            if self.enable_adapters is None:\n"
        "                self.enable_adapters = True\n",
    ).replace(
        '        parser.add_argument("--tp-size", type=int)\n',
        '        parser.add_argument("--tp-size", type=int)\n'
        '        parser.add_argument("--adapter-paths", type=str)\n'
        '        parser.add_argument("--enable-exact", action="store_true")\n',
    )
    knowledge = build_knowledge({ARGS: args.encode()})
    # ``--enable-exact`` sets the switch only for some ``--tp-size`` values: no sure consequence.
    # ``--adapter-paths`` sets it whenever the launch left the switch out: that is the default path.
    assert knowledge.implied == {"--enable-adapters": ("--adapter-paths",)}


# --------------------------------------------------------------------------- model selectors


MODEL_FILES = {
    ARGS: SERVER_ARGS,
    "python/sglang/srt/models/toy.py": FILES["python/sglang/srt/models/toy.py"],
    # A second model file whose decoder layer is built only by its own entry class.
    "python/sglang/srt/models/gizmo.py": """\
        class GizmoDecoderLayer:
            def __init__(self):
                self.width = 8


        class GizmoForCausalLM:
            def __init__(self, config):
                self.layers = [GizmoDecoderLayer()]


        EntryClass = [GizmoForCausalLM]
        """,
    # A processor that declares the architectures it serves, and one listing other classes.
    "python/sglang/srt/multimodal/processors/toy_vision.py": """\
        from sglang.srt.models.toy import ToyForCausalLM
        from sglang.srt.models.gizmo import GizmoDecoderLayer


        class ToyVisionProcessor:
            models = [ToyForCausalLM]

            def pick(self, model_type):
                if model_type != "clip":
                    raise ValueError(f"no processor for {model_type}")


        class LayerLister:
            kinds = [GizmoDecoderLayer]

            def pick(self, kind):
                raise ValueError(f"unknown layer kind {kind}")
        """,
    # A strategy chosen by the name of the layer class it is given.
    "python/sglang/srt/batch_overlap/strategy.py": """\
        def _gizmo_plan(mode):
            if mode != "extend":
                raise NotImplementedError("gizmo overlap only plans prefill")


        def plan(layers, mode):
            layer_name = layers[0].__class__.__name__
            if layer_name == "GizmoDecoderLayer":
                return _gizmo_plan(mode)
            elif layer_name == "MissingDecoderLayer":
                return _other(mode)


        def _other(mode):
            raise NotImplementedError("no plan")
        """,
}


@pytest.fixture(scope="module")
def models() -> SiteReach:
    return _site_reach({p: _source(p) if p == ARGS else textwrap.dedent(s) for p, s in MODEL_FILES.items()})


def test_a_class_listing_entry_classes_is_reached_for_those_architectures(models: SiteReach) -> None:
    path = "python/sglang/srt/multimodal/processors/toy_vision.py"
    assert models.of(path, "ToyVisionProcessor.pick") == (frozenset({("arch", "ToyForCausalLM", ())}),)
    # Classes that are no model's entry class say nothing about the checkpoint.
    assert models.of(path, "LayerLister.pick") == ()


def test_a_test_of_a_class_name_selects_the_architectures_that_build_the_class(models: SiteReach) -> None:
    path = "python/sglang/srt/batch_overlap/strategy.py"
    assert models.of(path, "_gizmo_plan") == (frozenset({("arch", "GizmoForCausalLM", ())}),)
    # A name no class of the target carries selects nothing.
    assert models.of(path, "_other") == ()


# --------------------------------------------------------------------------- the site's own guard


def test_the_sites_own_guard_selects_flags_and_an_or_of_flags_gives_alternatives() -> None:
    from extractor.reach.gates import gate_alternatives

    knowledge = build_knowledge({ARGS: SERVER_ARGS.encode()})
    path = "python/sglang/srt/layers/attention/checks.py"
    one = gate_alternatives("view.attention_backend == 'flex' and view.tp_size > 2", path, knowledge)
    assert one == (frozenset({("flag", "--attention-backend", ("flex",))}),)
    either = gate_alternatives(
        "(view.attention_backend == 'flex' or view.moe_runner_backend == 'tiled') and server_args.enable_adapters",
        path,
        knowledge,
    )
    assert either == (
        frozenset({("flag", "--attention-backend", ("flex",)), ("flag", "--enable-adapters", ())}),
        frozenset({("flag", "--enable-adapters", ()), ("flag", "--moe-runner-backend", ("tiled",))}),
    )
    # Negations, locals, config fields and unparsable text select nothing.
    for text in (
        "not server_args.enable_adapters",
        "x == 'flex'",
        "model_config.quantization == 'fp8'",
        "(",
        "True",
    ):
        assert gate_alternatives(text, path, knowledge) == ()
    # ``a == 'x' or a == 'y'`` is one flag with both values.
    both = gate_alternatives(
        "args.attention_backend == 'flex' or args.attention_backend == 'paged'", path, knowledge
    )
    assert both == (frozenset({("flag", "--attention-backend", ("flex", "paged"))}),)
    # Past ``if not a or not b: return``, the path reads ``not (not a or not b)``: both hold.
    past = gate_alternatives(
        "not (not server_args.enable_adapters or not view.attention_backend == 'flex')", path, knowledge
    )
    assert past == (
        frozenset({("flag", "--attention-backend", ("flex",)), ("flag", "--enable-adapters", ())}),
    )
    assert gate_alternatives("not not server_args.enable_adapters", path, knowledge) == (
        frozenset({("flag", "--enable-adapters", ())}),
    )


def test_the_sites_own_guard_reads_variables_and_accessor_value_tests_as_callers_guards_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    files = {
        ARGS: SERVER_ARGS.encode(),
        "python/sglang/srt/environ.py": ENV_REGISTRY.encode(),
        "python/sglang/srt/layers/moe/backend.py": MOE_BACKEND.encode(),
        "python/sglang/srt/layers/moe/apply.py": textwrap.dedent(
            """\
            from sglang.srt.environ import envs
            from sglang.srt.layers.moe.backend import get_moe_runner_backend


            def apply(x):
                if get_moe_runner_backend().is_grouped():
                    if x.ndim != 2:
                        raise ValueError("grouped runner needs a 2-D input")
                if envs.SGLANG_SLOW_GATE.get():
                    if x.ndim > 3:
                        raise ValueError("slow gate takes at most 3 dimensions")
            """
        ).encode(),
    }
    repo, shas = make_repo(tmp_path / "repo", [files])
    records = {r.errorMessage: r for r in _run(repo, shas[0], tmp_path / "cache").records}
    grouped = records["grouped runner needs a 2-D input"]
    assert "This code runs only with `--moe-runner-backend grouped`" in grouped.documentation
    slow = records["slow gate takes at most 3 dimensions"]
    assert "This code runs only with `SGLANG_SLOW_GATE` set" in slow.documentation


def test_the_sites_own_guard_on_an_attribute_holding_an_accessor_value_test_selects_that_value(
    tmp_path: Path,
) -> None:
    files = {
        ARGS: SERVER_ARGS,
        "python/sglang/srt/layers/moe/backend.py": MOE_BACKEND,
        "python/sglang/srt/layers/moe/method.py": textwrap.dedent(
            """\
            from sglang.srt.layers.moe.backend import get_moe_runner_backend


            class GroupedMethod:
                def __init__(self):
                    self.use_grouped = get_moe_runner_backend().is_grouped()
                    self.fallback = False

                def load(self, w):
                    if self.use_grouped:
                        if w.ndim != 3:
                            raise ValueError("grouped weights need 3 dimensions")
                    if self.fallback:
                        if w.ndim != 2:
                            raise ValueError("fallback weights need 2 dimensions")
            """
        ),
    }
    records = records_by_message(tmp_path, files)
    # ``self.use_grouped`` holds the value test of the backend's accessor: the test is the gate.
    grouped = records["grouped weights need 3 dimensions"]
    assert "This code runs only with `--moe-runner-backend grouped`" in grouped.documentation
    # An attribute that holds a constant selects nothing.
    assert "--moe-runner-backend" not in records["fallback weights need 2 dimensions"].documentation


def test_an_attribute_that_holds_a_test_gates_what_its_class_runs_under_it(tmp_path: Path) -> None:
    files = {
        ARGS: SERVER_ARGS,
        "python/sglang/srt/environ.py": ENV_REGISTRY,
        "python/sglang/srt/multimodal/graph_runner.py": textwrap.dedent(
            """\
            class EncoderGraphRunner:
                def __init__(self, encoder):
                    if encoder.num_heads is None:
                        raise ValueError("the encoder graph needs a head count")
            """
        ),
        "python/sglang/srt/multimodal/encoder.py": textwrap.dedent(
            """\
            from sglang.srt.environ import envs
            from sglang.srt.multimodal.graph_runner import EncoderGraphRunner
            from sglang.srt.utils import is_cuda

            _is_cuda = is_cuda()


            class Encoder:
                def __init__(self):
                    self.num_heads = None
                    self.enable_graph = _is_cuda and envs.SGLANG_SLOW_GATE.get()
                    self.runner = None
                    if self.enable_graph:
                        self.runner = EncoderGraphRunner(self)


            class Decoder:
                def __init__(self, graph):
                    self.use_graph = envs.SGLANG_SLOW_GATE.get() and graph
                    self.use_graph = graph

                def run(self, x):
                    if self.use_graph:
                        if x.ndim != 2:
                            raise ValueError("the decoder graph takes 2-D input")
            """
        ),
        "python/sglang/srt/models/owl.py": textwrap.dedent(
            """\
            from sglang.srt.multimodal.encoder import Decoder, Encoder


            class OwlForCausalLM:
                def __init__(self, graph):
                    self.encoder = Encoder()
                    self.decoder = Decoder(graph)

                def forward(self, x):
                    return self.decoder.run(x)


            EntryClass = OwlForCausalLM
            """
        ),
    }
    records = records_by_message(tmp_path, files)
    # The runner is built only where ``self.enable_graph`` holds: on CUDA, with the variable set.
    runner = records["the encoder graph needs a head count"]
    assert "`SGLANG_SLOW_GATE` set" in runner.triggerScenarios and "on CUDA" in runner.triggerScenarios, (
        runner.triggerScenarios
    )
    # Another value stored in the same attribute (a parameter) makes the test say nothing sure.
    assert "SGLANG_SLOW_GATE" not in records["the decoder graph takes 2-D input"].triggerScenarios


def test_a_flag_attribute_set_true_under_tests_gates_what_reads_it(tmp_path: Path) -> None:
    files = {
        ARGS: SERVER_ARGS,
        "python/sglang/srt/environ.py": ENV_REGISTRY,
        "python/sglang/srt/models/heron.py": textwrap.dedent(
            """\
            from sglang.srt.environ import envs


            class HeronMLP:
                def __init__(self):
                    self._fused = False
                    self.plain = False

                def forward(self, x):
                    if getattr(self, "_fused", False):
                        if x.ndim != 2:
                            raise ValueError("the fused kernel takes 2-D input")
                    if self.plain:
                        if x.ndim != 3:
                            raise ValueError("the plain kernel takes 3-D input")
                    return x


            class HeronBlock:
                def __init__(self, size):
                    self.shared = HeronMLP()
                    if envs.SGLANG_SLOW_GATE.get():
                        self.shared._fused = True
                    self.shared.plain = True
                    self.shared.plain = size > 2

                def forward(self, x):
                    return self.shared.forward(x)


            class HeronForCausalLM:
                def __init__(self, config):
                    self.block = HeronBlock(config.size)

                def forward(self, x):
                    return self.block.forward(x)


            EntryClass = HeronForCausalLM
            """
        ),
    }
    records = records_by_message(tmp_path, files)
    # ``_fused`` is only ever turned on from the owning block, under the variable: so is the check.
    fused = records["the fused kernel takes 2-D input"]
    assert "`SGLANG_SLOW_GATE` set" in fused.triggerScenarios, fused.triggerScenarios
    # ``plain`` is also given a computed value from outside: its test says nothing sure.
    assert "SGLANG_SLOW_GATE" not in records["the plain kernel takes 3-D input"].triggerScenarios


GROUPED_METHOD = """\
from sglang.srt.layers.moe.backend import get_moe_runner_backend


class GroupedMethod:
    def __init__(self):
        self.use_grouped = get_moe_runner_backend().is_grouped()
        self.use_tiled = get_moe_runner_backend().is_tiled()

    def load(self, w):
        if self.use_grouped:
            assert w.ndim == 3
"""


def _grouped_method_files(args: str, method: str = GROUPED_METHOD) -> dict[str, str]:
    """A MoE method class that tests the runner backend for ``grouped`` and ``tiled``."""
    return {
        ARGS: args,
        "python/sglang/srt/layers/moe/backend.py": TILED_BACKEND,
        "python/sglang/srt/layers/moe/method.py": method,
    }


def test_a_backend_no_registry_lists_offers_the_other_values_the_sites_code_handles(tmp_path: Path) -> None:
    args = SERVER_ARGS.replace(
        'choices=["auto", "grouped", "tiled"]', 'choices=["auto", "grouped", "tiled", "streamed"]'
    )
    (record,) = records_by_message(tmp_path, _grouped_method_files(args)).values()
    # The class also handles ``tiled``; ``streamed`` is declared but nothing here handles it, and
    # ``auto`` stands for the launch's own pick.
    assert (
        "This code runs only with `--moe-runner-backend grouped`: if that moe runner backend is not "
        "required, use one of the others this code handles: `--moe-runner-backend tiled`"
    ) in record.solutions


def test_a_value_the_sites_own_file_refuses_is_not_offered_as_another_choice(tmp_path: Path) -> None:
    method = GROUPED_METHOD + textwrap.dedent(
        """\


        def resolve(value):
            if value == "tiled":
                raise ValueError("the tiled runner needs another platform")
            return value
        """
    )
    files = _grouped_method_files(SERVER_ARGS, method)
    record = next(r for m, r in records_by_message(tmp_path, files).items() if "tiled runner" not in m)
    # ``tiled`` is tested in the file, but a raise of the same file refuses it: no way out.
    assert not any("`--moe-runner-backend tiled`" in s for s in record.solutions), record.solutions


def test_a_value_the_callers_read_from_a_variable_selects_that_variables_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    registry = ENV_REGISTRY.replace(
        "    SGLANG_SLOW_GATE = EnvBool(False)\n",
        "    SGLANG_SLOW_GATE = EnvBool(False)\n    SGLANG_DECODE_IMPL = EnvStr('kernel')\n",
    ).replace("class Envs:", "class EnvStr(EnvBool):\n    pass\n\n\nclass Envs:")
    files = {
        ARGS: SERVER_ARGS.encode(),
        "python/sglang/srt/environ.py": registry.encode(),
        "python/sglang/srt/layers/decode.py": textwrap.dedent(
            """\
            import os

            from sglang.srt.environ import envs
            from sglang.srt.utils import get_bool_env_var


            def decode_entry(x, impl):
                if impl == "torch":
                    if x.ndim != 3:
                        raise ValueError("the torch decode needs a 3-D input")


            def page_entry(x, layout):
                if layout == "paged":
                    if x.ndim != 4:
                        raise ValueError("the paged layout needs a 4-D input")


            def bind_entry(x):
                cores = os.environ.get("SGLANG_BIND_CORES", "all")
                if cores == "all":
                    if x.ndim != 2:
                        raise ValueError("binding every core needs a 2-D input")


            def layerwise_entry(x):
                if os.environ.get("KVSTORE_ENABLE_LAYERWISE", "0") == "1":
                    if x.ndim != 5:
                        raise ValueError("the layerwise transfer needs a 5-D input")


            def fused_entry(x):
                if get_bool_env_var("KVSTORE_USE_FUSED_NORM", "true"):
                    if x.ndim != 6:
                        raise ValueError("the fused norm needs a 6-D input")


            def run(x):
                decode_entry(x, impl=envs.SGLANG_DECODE_IMPL.get())
                page_entry(x, os.getenv("SGLANG_PAGE_LAYOUT", "flat"))
                bind_entry(x)
                layerwise_entry(x)
                fused_entry(x)
            """
        ).encode(),
    }
    repo, shas = make_repo(tmp_path / "repo", [files])
    records = {r.errorMessage: r for r in _run(repo, shas[0], tmp_path / "cache").records}
    torch = records["the torch decode needs a 3-D input"]
    assert "This code runs only with `SGLANG_DECODE_IMPL=torch`" in torch.documentation
    paged = records["the paged layout needs a 4-D input"]
    assert "This code runs only with `SGLANG_PAGE_LAYOUT=paged`" in paged.documentation
    # An unset variable reads as ``all``: the path needs no setting, and unsetting it is no way out.
    bound = records["binding every core needs a 2-D input"]
    assert "SGLANG_BIND_CORES=all" not in bound.documentation + bound.triggerScenarios
    assert not any("unset `SGLANG_BIND_CORES`" in s for s in bound.solutions), bound.solutions
    # Another package's variable named as a feature switch is the user's too.
    layerwise = records["the layerwise transfer needs a 5-D input"]
    assert "This code runs only with `KVSTORE_ENABLE_LAYERWISE=1`" in layerwise.documentation
    # On unless turned off: the path needs no setting.
    fused = records["the fused norm needs a 6-D input"]
    assert "KVSTORE_USE_FUSED_NORM" not in fused.triggerScenarios, fused.triggerScenarios


def test_the_sites_own_guard_on_an_attribute_filled_from_a_flag_selects_that_flag() -> None:
    from extractor.reach.gates import gate_alternatives

    path = "python/sglang/srt/models/layer.py"
    args = SERVER_ARGS.replace('"--tp-size", type=int)', '"--tp-size", type=int, default=1)')
    files = {
        ARGS: args,
        path: textwrap.dedent(
            """\
            from sglang.srt.server_args import get_server_args


            class Layer:
                def __init__(self, config):
                    self.scattered = get_server_args().enable_adapters
                    self.tp_size = get_server_args().tp_size
                    if self.scattered:
                        assert config.hidden_size % 4 == 0
                    if self.tp_size is not None and self.tp_size > 1:
                        raise ValueError("sharded layers are not supported")
            """
        ),
    }
    reach = site_reach_of(files, ARGS)
    knowledge = build_knowledge({ARGS: args.encode()})

    def gates(text: str) -> tuple[frozenset[tuple[str, str, tuple[str, ...]]], ...]:
        return gate_alternatives(
            text, path, knowledge, lambda atom: reach.passed_selector(path, "Layer.__init__", atom)
        )

    # ``self.scattered`` holds the switch's value (read through the args getter).
    assert gates("self.scattered") == (frozenset({("flag", "--enable-adapters", ())}),)
    # ``--tp-size`` holds 1 when not given: ``is not None`` passes on any launch and selects nothing.
    assert gates("self.tp_size is not None") == ()
    assert gate_alternatives("self.scattered", path, knowledge) == ()


def test_the_guard_joins_the_callers_reach_keeping_the_values_both_allow() -> None:
    from extractor.reach.gates import with_gates

    callers = (frozenset({("flag", "--attention-backend", ("flex", "sparse"))}),)
    gates = (frozenset({("flag", "--attention-backend", ("sparse",)), ("platform", "hip", ())}),)
    assert with_gates(callers, gates) == (
        frozenset({("flag", "--attention-backend", ("sparse",)), ("platform", "hip", ())}),
    )
    # A guard no caller's choice can meet leaves the callers' reach as it was.
    assert with_gates(callers, (frozenset({("flag", "--attention-backend", ("paged",))}),)) == callers
    assert with_gates((), gates) == gates and with_gates(callers, ()) == callers


# --------------------------------------------------------------------------- factories and scripts


FACTORY_FILES = {
    ARGS: SERVER_ARGS.replace(
        '"--tp-size", type=int',
        '"--tp-size", type=int)\n        parser.add_argument("--draft-algorithm", type=str',
    ),
    # An enum named after a flag hands out the worker class of its value; ``is_none`` is no choice.
    "python/sglang/srt/drafting/algorithm.py": """\
        from enum import Enum


        class DraftAlgorithm(Enum):
            NONE = "none"
            LOOKAHEAD = "lookahead"

            def worker_class(self):
                if self.is_lookahead():
                    from sglang.srt.drafting.lookahead import LookaheadWorker

                    return LookaheadWorker
                if self.is_none():
                    from sglang.srt.drafting.plain import PlainWorker

                    return PlainWorker
                return None


        def start(server_args):
            cls = DraftAlgorithm[server_args.draft_algorithm].worker_class()
            return cls()
        """,
    "python/sglang/srt/drafting/lookahead.py": """\
        class LookaheadWorker:
            def step(self, n):
                if n > 4:
                    raise ValueError("lookahead drafts at most 4 tokens")
        """,
    "python/sglang/srt/drafting/plain.py": """\
        class PlainWorker:
            def step(self, n):
                assert n == 0, "the plain worker drafts nothing"
        """,
    # A dict whose name leads with a qualifier before the flag's name.
    "python/sglang/srt/layers/quantization/__init__.py": """\
        from sglang.srt.layers.quantization.fp8 import Fp8Config

        BASE_QUANTIZATION_METHODS = {"fp8": Fp8Config}
        """,
    "python/sglang/srt/layers/quantization/fp8.py": FILES["python/sglang/srt/layers/quantization/fp8.py"],
    # A kernel called by the flex backend and by a benchmark script's main.
    "python/sglang/srt/layers/attention/registry.py": FILES["python/sglang/srt/layers/attention/registry.py"],
    "python/sglang/srt/layers/attention/flex_backend.py": """\
        from sglang.kernels.flex_kernel import flex_kernel


        class FlexBackend:
            def __init__(self, runner):
                self.runner = runner

            def forward_extend(self, q, layer):
                return flex_kernel(q)
        """,
    "python/sglang/kernels/flex_kernel.py": """\
        def flex_kernel(q):
            assert q.is_contiguous(), "flex kernel wants a contiguous query"
            return q


        def tile_kernel(q):
            assert q.shape[0] % 8 == 0, "tiles of 8"
        """,
    "python/sglang/kernels/bench_flex.py": """\
        from sglang.kernels.flex_kernel import flex_kernel, tile_kernel


        def main():
            flex_kernel(None)
            tile_kernel(None)


        if __name__ == "__main__":
            main()
        """,
}


@pytest.fixture(scope="module")
def factories() -> SiteReach:
    return _site_reach({p: s if p == ARGS else textwrap.dedent(s) for p, s in FACTORY_FILES.items()})


def test_a_class_a_factory_returns_under_a_value_test_of_an_enum_named_after_a_flag(
    factories: SiteReach,
) -> None:
    got = factories.of("python/sglang/srt/drafting/lookahead.py", "LookaheadWorker.step")
    assert got == (frozenset({("flag", "--draft-algorithm", ())}),)
    # ``is_none()`` holds when the flag is not chosen: it selects nothing.
    assert factories.of("python/sglang/srt/drafting/plain.py", "PlainWorker.step") == ()


def test_a_dict_named_with_a_qualifier_before_the_flag_still_selects(factories: SiteReach) -> None:
    got = factories.of("python/sglang/srt/layers/quantization/fp8.py", "Fp8Config.get_quant_method")
    assert got == (frozenset({("flag", "--quantization", ("fp8",))}),)


def test_a_benchmark_script_is_no_way_in_of_its_own(factories: SiteReach) -> None:
    from extractor.reach.selectors import user_ways

    kernel = "python/sglang/kernels/flex_kernel.py"
    # Reached by the flex backend and by the script: only the backend is said.
    assert user_ways(factories.of(kernel, "flex_kernel")) == (
        frozenset({("flag", "--attention-backend", ("flex",))}),
    )
    # Reached by the script alone: nothing is said (the serving path is unknown, not absent).
    assert user_ways(factories.of(kernel, "tile_kernel")) == ()


def test_one_flag_twice_on_a_chain_keeps_the_values_both_allow() -> None:
    from extractor.reach.gates import tidy

    twice = (frozenset({("flag", "--quantization", ("fp8", "int4")), ("flag", "--quantization", ("int4",))}),)
    assert tidy(twice) == (frozenset({("flag", "--quantization", ("int4",))}),)
    assert tidy(()) == ()
    # Two platforms on one chain cannot both hold: a way in was missed, so nothing is said.
    both = frozenset({("platform", "hip", ()), ("platform", "npu", ())})
    assert tidy((both, frozenset({("platform", "hip", ())}))) == ()
    # So do two pipelines with nothing in common; a pipeline and the model it loads may.
    pipes = frozenset({("arch", "", ("APipeline", "BPipeline")), ("arch", "CPipeline", ())})
    assert tidy((pipes,)) == ()
    levels = (frozenset({("arch", "APipeline", ()), ("arch", "ToyForCausalLM", ())}),)
    assert tidy(levels) == levels


def test_a_site_whose_guard_empties_its_scopes_reach_keeps_that_when_read_back() -> None:
    from extractor.prose.reach import RunReach

    npu = (frozenset({("platform", "npu", ())}),)
    site = "Mixin.compress\x1fraise\x1fNotImplementedError\x1fpaged only\x1f_is_hip\x000"
    run = RunReach({"a.py": {"Mixin.compress": npu, site.rpartition("\x00")[0]: ()}}, {})
    back = RunReach.from_plain(orjson.loads(orjson.dumps(run.to_plain())))
    assert back is not None and back.table == run.table


def test_turning_off_the_switch_or_env_var_that_selects_the_path_is_offered() -> None:
    from extractor.prose.reach import RunReach

    lora = (frozenset({("flag", "--enable-adapters", ())}),)
    partial = _partial("Layer.apply", "AssertionError")
    run = RunReach({"a.py": {"Layer.apply": lora}}, {}, switches={"--enable-adapters"})
    got = run.apply("a.py", partial)
    assert got["solutions"] == [
        "Report it as a bug",
        "This code runs only with `--enable-adapters`: if you can do without it, launch without `--enable-adapters`",
    ]
    # A valued flag given at all is no switch: nothing to turn off is known.
    assert RunReach(run.table, {}).apply("a.py", partial)["solutions"] == ["Report it as a bug"]
    env = (frozenset({("env", "SGLANG_FAST_PATH", ())}),)
    got = RunReach({"a.py": {"Layer.apply": env}}, {}).apply("a.py", partial)
    assert got["solutions"][-1].endswith("if you can do without it, unset `SGLANG_FAST_PATH`")
    back = RunReach.from_plain(orjson.loads(orjson.dumps(run.to_plain())))
    assert back is not None and back.switches == {"--enable-adapters"}


def test_a_switch_that_leaving_out_does_not_turn_off_is_left_by_its_no_form() -> None:
    from extractor.prose.reach import RunReach

    shared = (frozenset({("flag", "--shared-outer", ())}),)
    partial = _partial("Layer.apply", "AssertionError")
    run = RunReach(
        {"a.py": {"Layer.apply": shared}},
        {},
        switches={"--shared-outer"},
        negated={"--shared-outer": "--no-shared-outer"},
    )
    got = run.apply("a.py", partial)
    assert got["solutions"][-1].endswith("if you can do without it, launch with `--no-shared-outer`")
    assert "launch without" not in got["solutions"][-1]
    assert got["triggerScenarios"].endswith(
        "with `--shared-outer` on (given, or turned on at launch unless `--no-shared-outer` is given)."
    )
    back = RunReach.from_plain(orjson.loads(orjson.dumps(run.to_plain())))
    assert back is not None and back.apply("a.py", partial) == got


def test_what_every_way_in_needs_is_a_way_out_and_part_of_the_failing_launch() -> None:
    partial = {
        "documentation": "Raised when the cache is full.",
        "triggerScenarios": "A full cache.",
        "tags": ["cache"],
        "solutions": ["Report it as a bug"],
        "exampleFix": "# before\npython -m sglang.launch_server --model m\n# after\npython -m sglang.launch_server --model m",
    }
    two = (
        frozenset({("flag", "--enable-adapters", ()), ("platform", "hip", ())}),
        frozenset({("flag", "--enable-adapters", ()), ("platform", "npu", ())}),
    )
    out = with_reach(partial, two, {}, switches={"--enable-adapters"})
    assert any(s.endswith("launch without `--enable-adapters`") for s in out["solutions"])
    assert "--enable-adapters" in out["exampleFix"].split("# after")[0]
    # Ways that share nothing offer no single way out.
    apart = (frozenset({("flag", "--enable-adapters", ())}), frozenset({("platform", "npu", ())}))
    assert with_reach(partial, apart, {}, switches={"--enable-adapters"})["solutions"] == [
        "Report it as a bug"
    ]


def test_a_switch_detected_from_the_data_offers_no_way_out() -> None:
    from extractor.prose.reach import RunReach

    shared = (frozenset({("flag", "--shared-outer", ())}),)
    partial = _partial("Layer.apply", "AssertionError")
    # "" for its off form: the launch detects it from the adapter; forcing it off misreads it.
    run = RunReach(
        {"a.py": {"Layer.apply": shared}}, {}, switches={"--shared-outer"}, negated={"--shared-outer": ""}
    )
    got = run.apply("a.py", partial)
    assert not any("--shared-outer" in s for s in got["solutions"])
    assert got["triggerScenarios"].endswith(
        "with `--shared-outer` on (given, or turned on when sglang detects that the data needs it)."
    )
    back = RunReach.from_plain(orjson.loads(orjson.dumps(run.to_plain())))
    assert back is not None and back.apply("a.py", partial) == got


def test_a_selecting_value_no_declaration_offers_is_said_to_come_only_from_python() -> None:
    from extractor.prose.reach import RunReach

    old = (frozenset({("flag", "--adapter-backend", ("legacy",))}),)
    partial = _partial("make_legacy", "ValueError")
    declared: dict[str, dict[str, tuple[str, ...]]] = {"srt": {"--adapter-backend": ("fast", "small")}}
    run = RunReach({"a.py": {"make_legacy": old}}, {}, declared=declared)
    said = run.apply("a.py", partial)["triggerScenarios"]
    assert said.endswith(
        "with `--adapter-backend legacy` (a value the command line refuses: only Python code, "
        "`ServerArgs` or `sglang.Engine`, sets it)."
    )
    # A package that declares the flag without choices takes any value; so does a value the
    # checkpoint's config declares.
    open_ended: dict[str, dict[str, tuple[str, ...]]] = {**declared, "gen": {"--adapter-backend": ()}}
    for other in (
        RunReach(run.table, {}, declared=open_ended),
        RunReach(run.table, {}, declared=declared, agreed={"--adapter-backend"}),
    ):
        assert "refuses" not in other.apply("a.py", partial)["triggerScenarios"]


def test_a_selecting_flag_goes_on_the_command_line_only_in_a_form_that_parses() -> None:
    from extractor.prose.reach import RunReach

    launch = "python -m sglang.launch_server --model-path <model>"
    partial = _partial("Layer.apply", solutions=["s"], fix=f"# before\n{launch}\n# after\n{launch}")
    switch = (frozenset({("flag", "--enable-adapters", ())}),)
    got = RunReach({"a.py": {"Layer.apply": switch}}, {}, switches={"--enable-adapters"}).apply(
        "a.py", partial
    )
    assert got["exampleFix"].split("\n")[1] == f"{launch} --enable-adapters"
    # ``--draft-algorithm`` takes a value the reach does not pin (any leads here): written alone it
    # would not parse, so it is written with the first of its choices, or a value to fill in.
    valued = (frozenset({("flag", "--draft-algorithm", ())}),)
    got = RunReach({"a.py": {"Layer.apply": valued}}, {"--draft-algorithm": ("eagle", "ngram")}).apply(
        "a.py", partial
    )
    assert got["exampleFix"].split("\n")[1] == f"{launch} --draft-algorithm eagle", got["exampleFix"]
    got = RunReach({"a.py": {"Layer.apply": valued}}, {}).apply("a.py", partial)
    assert got["exampleFix"].split("\n")[1] == f"{launch} --draft-algorithm <value>", got["exampleFix"]


# A model config that takes the quantization from the checkpoint when the flag is not given, and
# refuses a given value that disagrees: the checkpoint decides it.
MODEL_CONFIG = """\
    class ModelConfig:
        def __init__(self, server_args, hf_config):
            self.quantization = server_args.quantization
            declared = hf_config.get("quantization_config", {}).get("quant_method")
            if self.quantization is None:
                self.quantization = declared
            elif self.quantization != declared:
                raise ValueError("the checkpoint's quantization does not match --quantization")
    """


def test_a_flag_the_checkpoint_decides_is_no_value_to_switch_on_the_command_line() -> None:
    from extractor.prose.reach import RunReach

    files = {p: _source(p) for p in FILES}
    files["python/sglang/srt/configs/model_config.py"] = textwrap.dedent(MODEL_CONFIG)
    reach = _site_reach(files)
    assert reach.agreed == {"--quantization"}
    path = "python/sglang/srt/layers/quantization/int4.py"
    got = reach.of(path, "Int4Config.get_quant_method")
    partial = {
        "id": "Int4Config.get_quant_method\x1fraise\x1fNotImplementedError\x1f\x1f\x000",
        "filePath": path,
        "errorType": "not-implemented",
        "errorMessage": "int4 cannot quantize this layer",
        "documentation": f"Raised for this layer. {INTERNAL_CAUSE}",
        "triggerScenarios": "t.",
        "tags": [],
        "solutions": ["Report it as a bug"],
        "exampleFix": "",
    }
    run = RunReach({path: {"Int4Config.get_quant_method": got}}, reach.choices, agreed=reach.agreed)
    out = run.apply(path, partial)
    # No other --quantization value is offered: it would be refused for this checkpoint.
    assert not any("--quantization" in s for s in out["solutions"])
    assert "use a checkpoint made without it" in out["solutions"][0]
    assert "the quantization `int4` (the checkpoint's own, or asked for at launch)" in out["documentation"]
    assert (
        "runs only with `--quantization int4` (given, or declared by the checkpoint's config)."
        in (out["documentation"])
    )
    assert "--model-path <other-checkpoint>" in out["exampleFix"]
    back = RunReach.from_plain(orjson.loads(orjson.dumps(run.to_plain())))
    assert back is not None and back.agreed == {"--quantization"}
    # The same registry with no such config: another value is the workaround, as before.
    plain = RunReach(run.table, reach.choices).apply(path, partial)
    assert "e.g. `--quantization fp8`" in plain["solutions"][0]


def test_a_literal_default_is_no_agreement_with_the_checkpoint() -> None:
    from extractor.reach.agreement import agreed_attribute

    def first_if(src: str) -> ast.If:
        node = ast.parse(textwrap.dedent(src)).body[0]
        assert isinstance(node, ast.If)
        return node

    literal = """\
        if args.ssm_dtype is None:
            args.ssm_dtype = "float32"
        elif args.ssm_dtype != "float32":
            raise ValueError("needs float32")
        """
    assert agreed_attribute(first_if(literal)) is None
    derived = literal.replace('args.ssm_dtype = "float32"', "args.ssm_dtype = checkpoint_dtype")
    assert agreed_attribute(first_if(derived)) == "ssm_dtype"
    # A mismatch that is only logged is not refused.
    logged = derived.replace('raise ValueError("needs float32")', "log(args.ssm_dtype)")
    assert agreed_attribute(first_if(logged)) is None


def test_leaving_out_a_valued_flag_that_is_off_unless_given_is_offered() -> None:
    from extractor.prose.reach import RunReach

    spec = (frozenset({("flag", "--draft-algorithm", ())}),)
    partial = _partial(
        "Drafter.step",
        "AssertionError",
        fix="# before\npython -m sglang.launch_server --model-path <model>\n# after\nx",
    )
    run = RunReach({"a.py": {"Drafter.step": spec}}, {}, optional={"--draft-algorithm"})
    got = run.apply("a.py", partial)
    assert got["solutions"][-1] == (
        "This code runs only with `--draft-algorithm`: if you can do without it, launch without "
        "`--draft-algorithm`"
    )
    # Written without a value it would not parse: the "before" launch gives it one to fill in.
    assert got["exampleFix"].split("\n")[1].endswith(" --draft-algorithm <value>"), got["exampleFix"]
    # A flag the checkpoint decides is not "left out" either.
    agreed = RunReach(run.table, {}, agreed={"--draft-algorithm"}, optional={"--draft-algorithm"})
    assert agreed.apply("a.py", partial)["solutions"] == ["Report it as a bug"]
    back = RunReach.from_plain(orjson.loads(orjson.dumps(run.to_plain())))
    assert back is not None and back.optional == {"--draft-algorithm"}
    # With the values that decide the path, leaving the flag out still leaves it.
    valued = (frozenset({("flag", "--draft-algorithm", ("quick", "swift"))}),)
    got = RunReach({"a.py": {"Drafter.step": valued}}, {}, optional={"--draft-algorithm"}).apply(
        "a.py", partial
    )
    assert got["solutions"][-1] == (
        "This code runs only with `--draft-algorithm quick / swift`: if you can do without it, launch "
        "without `--draft-algorithm`"
    )


def test_a_way_in_with_narrower_values_of_another_adds_nothing() -> None:
    from extractor.reach.paths import _simplify

    multi = ("flag", "--multi-layer", ())
    narrow = ("flag", "--draft-algorithm", ("eagle",))
    wide = ("flag", "--draft-algorithm", ("eagle", "quick"))
    rocm = ("platform", "hip", ())
    # ``--multi-layer and eagle`` needs all that ``eagle or quick`` needs: only the wider way stays.
    assert _simplify([frozenset({multi, narrow}), frozenset({wide})]) == (frozenset({wide}),)
    # A way that needs a value the other does not allow, or another platform, stays.
    other = ("flag", "--draft-algorithm", ("swift",))
    assert _simplify([frozenset({other, rocm}), frozenset({wide})]) == (
        frozenset({wide}),
        frozenset({other, rocm}),
    )

    # A narrower way of the same size sorts first and is still absorbed by the wider one.
    mode = ("flag", "--serve-mode", ("decode",))
    modes = ("flag", "--serve-mode", ("decode", "prefill"))
    assert _simplify([frozenset({mode, narrow}), frozenset({modes, narrow})]) == (frozenset({modes, narrow}),)


def test_ways_in_that_differ_in_the_values_of_one_flag_are_merged_step_by_step() -> None:
    from extractor.reach.paths import _simplify

    def way(mode: tuple[str, ...], link: tuple[str, ...]) -> frozenset[tuple[str, str, tuple[str, ...]]]:
        return frozenset({("flag", "--serve-mode", mode), ("flag", "--link", link)})

    # (decode, tcp) or (prefill, tcp) or (decode|prefill, rdma): one flag's values at a time, then
    # the other's, end as one way.
    merged = _simplify(
        [way(("decode",), ("tcp",)), way(("prefill",), ("tcp",)), way(("decode", "prefill"), ("rdma",))]
    )
    assert merged == (way(("decode", "prefill"), ("rdma", "tcp")),)
    # Two flags that both differ are two ways.
    apart = _simplify([way(("decode",), ("tcp",)), way(("prefill",), ("rdma",))])
    assert set(apart) == {way(("decode",), ("tcp",)), way(("prefill",), ("rdma",))}
    # Variables keep their marks (on by default, set at launch) apart: no list joins them.
    on = frozenset({("env", "SGLANG_FAST", ("on",))})
    launched = frozenset({("env", "SGLANG_FAST", ("launch",))})
    assert set(_simplify([on, launched])) == {launched, on}


def test_a_chain_that_needs_two_values_of_one_flag_is_no_way_in() -> None:
    """A base-typed attribute's call resolved to every subclass: the subclass one backend builds is
    not reached from the code another backend runs."""
    files = {
        "python/sglang/srt/moe/base.py": """\
            class Engine:
                def push(self, data):
                    raise NotImplementedError


            class Sender:
                engine: Engine

                def send(self, data):
                    self.engine.push(data)
            """,
        "python/sglang/srt/moe/engines.py": """\
            from sglang.srt.moe.base import Engine, Sender


            class GroupedEngine(Engine):
                def push(self, data):
                    if not data:
                        raise ValueError("grouped engine: nothing to push")


            class TiledEngine(Engine):
                def push(self, data):
                    if not data:
                        raise ValueError("tiled engine: nothing to push")


            class GroupedSender(Sender):
                def __init__(self):
                    self.engine = GroupedEngine()


            class TiledSender(Sender):
                def __init__(self):
                    self.engine = TiledEngine()


            def start(server_args):
                if server_args.moe_runner_backend == "grouped":
                    engine = GroupedEngine()
                    if server_args.enable_adapters:
                        engine.push(b"x")
                elif server_args.moe_runner_backend == "tiled":
                    TiledSender().send(b"x")
            """,
    }
    reach = _site_reach(
        {**{p: _source(p) for p in FILES}, **{p: textwrap.dedent(s) for p, s in files.items()}}
    )
    path = "python/sglang/srt/moe/engines.py"
    # ``Sender.send``'s ``self.engine`` may be either engine, but only the tiled backend sends: the
    # chain "tiled sender, grouped engine" needs two values of one flag and is no way in, while the
    # grouped backend's own call of its engine (with adapters) still is.
    grouped = ("flag", "--moe-runner-backend", ("grouped",))
    assert reach.of(path, "GroupedEngine.push") == (frozenset({grouped, ("flag", "--enable-adapters", ())}),)
    assert reach.of(path, "TiledEngine.push") == (frozenset({("flag", "--moe-runner-backend", ("tiled",))}),)


DRAFT_FILES = {
    ARGS: SERVER_ARGS.replace(
        "    tp_size: int = 1\n", "    tp_size: int = 1\n    draft_algorithm: str = None\n"
    ).replace(
        '        parser.add_argument("--tp-size", type=int)\n',
        '        parser.add_argument("--tp-size", type=int)\n'
        '        parser.add_argument("--draft-algorithm", type=str)\n',
    ),
    # Loaded as a draft, a checkpoint's architecture is renamed to its multi-token-prediction head.
    "python/sglang/srt/configs/model_config.py": """\
        class ModelConfig:
            def __init__(self, hf_config, is_draft_model=False):
                self.hf_config = hf_config
                if is_draft_model and hf_config.architectures[0] == "OwlForCausalLM":
                    hf_config.architectures[0] = "OwlForCausalLMNextN"
        """,
    "python/sglang/srt/models/owl_nextn.py": """\
        class OwlForCausalLMNextN:
            def forward(self, x):
                if x.shape[-1] % 256:
                    raise RuntimeError("the draft head needs a hidden size that is a multiple of 256")


        EntryClass = [OwlForCausalLMNextN]
        """,
    "python/sglang/srt/models/owl.py": """\
        class OwlForCausalLM:
            def forward(self, x):
                if x.shape[-1] % 128:
                    raise RuntimeError("the model needs a hidden size that is a multiple of 128")


        EntryClass = [OwlForCausalLM]
        """,
    "python/sglang/srt/speculative/draft_worker.py": """\
        from sglang.srt.configs.model_config import ModelConfig


        class DraftWorker:
            def __init__(self, hf_config):
                self.config = ModelConfig(hf_config, is_draft_model=True)


        def start(server_args, hf_config):
            if server_args.draft_algorithm is not None:
                DraftWorker(hf_config)
        """,
}


def test_a_draft_architecture_is_reached_only_with_the_flags_that_build_a_draft() -> None:
    reach = site_reach_of({p: textwrap.dedent(t) for p, t in DRAFT_FILES.items()}, ARGS)
    draft = reach.of("python/sglang/srt/models/owl_nextn.py", "OwlForCausalLMNextN.forward")
    assert draft == (frozenset({("arch", "OwlForCausalLMNextN", ()), ("flag", "--draft-algorithm", ())}),)
    # The checkpoint's own architecture runs without any draft.
    assert reach.of("python/sglang/srt/models/owl.py", "OwlForCausalLM.forward") == (
        frozenset({("arch", "OwlForCausalLM", ())}),
    )


@pytest.mark.parametrize(
    ("call", "builds"),
    [
        ("ModelRunner(config, is_draft_worker=True)", True),
        ("ModelConfig.from_server_args(args, is_draft_model=True)", True),
        ("ModelRunner(config, is_draft_worker=False)", False),
        ("resolve_tokens(args, is_draft_worker=True)", False),
        ("Backend(runner, is_draft_override=True)", False),
    ],
)
def test_only_a_constructor_given_a_draft_keyword_builds_a_draft(call: str, builds: bool) -> None:
    from extractor.reach.drafts import builds_draft

    node = ast.parse(call, mode="eval").body
    assert isinstance(node, ast.Call)
    assert builds_draft(node, ast.unparse(node.func)) is builds


def test_a_switch_the_check_already_says_to_drop_is_not_offered_twice() -> None:
    from extractor.prose.reach import RunReach

    lora = (frozenset({("flag", "--enable-adapters", ())}),)
    partial = _partial(
        "Layer.apply",
        "AssertionError",
        solutions=["Or launch without `--enable-adapters`: this check only runs when it is given"],
    )
    run = RunReach({"a.py": {"Layer.apply": lora}}, {}, switches={"--enable-adapters"})
    # The reach's "launch without" says what the check's own gate already said.
    assert run.apply("a.py", partial)["solutions"] == partial["solutions"]


OVERRIDES = """\
    TABLE = {"ToyDenseForCausalLM": {"quantization": "fp8"}}


    def register_for(*architectures):
        def wrap(fn):
            return fn
        return wrap


    @register_for("ToySparseForCausalLM", "ToySparseForConditionalGeneration")
    def _sparse(server_args, hf_config):
        out = {"attention_backend": "sparse", "tp_size": 2}
        if server_args.tp_size > 4:
            out["tp_size"] = 4
        return out


    @register_for("ToyFlexForCausalLM")
    def _flex(server_args, hf_config):
        if server_args.enable_adapters:
            return {"attention_backend": "flex"}
        return {}
    """


def test_a_value_the_code_forces_for_an_architecture_is_no_value_to_switch() -> None:
    from extractor.prose.reach import RunReach

    files = {p: _source(p) for p in FILES}
    files["python/sglang/srt/arg_groups/overrides.py"] = textwrap.dedent(OVERRIDES)
    reach = _site_reach(files)
    # Constant entries only: a key rewritten later and a value returned under a test are not forced.
    assert reach.forced == {
        "--attention-backend": {"sparse": ("ToySparseForCausalLM", "ToySparseForConditionalGeneration")},
        "--quantization": {"fp8": ("ToyDenseForCausalLM",)},
    }
    spec = (frozenset({("flag", "--attention-backend", ("sparse",))}),)
    partial = _partial("SparseBackend.step", "AssertionError")
    run = RunReach({"a.py": {"SparseBackend.step": spec}}, reach.choices, forced=reach.forced)
    got = run.apply("a.py", partial)
    # Another backend is no way out for the checkpoints that get this one from the code.
    assert got["solutions"] == ["Report it as a bug"]
    said = (
        "only with `--attention-backend sparse` (which sglang sets for `ToySparseForCausalLM`, "
        "`ToySparseForConditionalGeneration` checkpoints, whatever is given)."
    )
    assert got["documentation"].endswith(said) and got["triggerScenarios"].endswith(said)
    back = RunReach.from_plain(orjson.loads(orjson.dumps(run.to_plain())))
    assert back is not None and back.apply("a.py", partial) == got
    # A value no architecture is forced to keeps the workaround.
    flex = (frozenset({("flag", "--attention-backend", ("flex",))}),)
    other = RunReach({"a.py": {"SparseBackend.step": flex}}, reach.choices, forced=reach.forced)
    offered = other.apply("a.py", partial)["solutions"][-1]
    assert "use another one, e.g. `--attention-backend " in offered
    # ... and the one it offers is not the value some model's checkpoints are forced to.
    assert not offered.endswith("`--attention-backend sparse`")


# --------------------------------------------------------------------------- settings holders

HOLDER_FILES = {
    ARGS: SERVER_ARGS,
    # Launch settings copied into a process-wide holder, read back by getters.
    "python/sglang/srt/layers/overlap/settings.py": """\
        class _Holder:
            pass


        def get_settings():
            return _Holder()


        def init_settings(server_args):
            s = get_settings().overlap
            wanted = server_args.enable_adapters
            s.enabled = wanted
            s.mixed = server_args.enable_adapters
            if server_args.tp_size > 1:
                s.mixed = server_args.quantization


        def is_overlap_enabled():
            s = get_settings().overlap
            if s.enabled is None:
                s.enabled = False
            return s.enabled


        def is_mixed():
            return get_settings().overlap.mixed
        """,
    # A strategy picked by the class of the layers it is given.
    "python/sglang/srt/layers/overlap/strategy.py": """\
        def _gizmo_plan(mode):
            if mode != "extend":
                raise NotImplementedError("gizmo overlap only plans prefill")


        def plan(layers, mode):
            layer_name = layers[0].__class__.__name__
            if layer_name == "GizmoDecoderLayer":
                return _gizmo_plan(mode)
            return None
        """,
    # One model asks a predicate method of its own before planning; the other plans always.
    "python/sglang/srt/models/gizmo.py": """\
        from sglang.srt.layers.overlap.strategy import plan


        class GizmoDecoderLayer:
            pass


        class GizmoModel:
            def __init__(self, config):
                self.layers = [GizmoDecoderLayer()]

            def _can_overlap(self, batch):
                \"\"\"Whether this batch may be split in two.\"\"\"
                from sglang.srt.layers.overlap.settings import is_overlap_enabled

                return is_overlap_enabled() and batch.ready

            def forward(self, batch):
                if self._can_overlap(batch):
                    return plan(self.layers, batch.mode)
                return None


        class GizmoForCausalLM:
            def __init__(self, config):
                self.model = GizmoModel(config)

            def forward(self, batch):
                return self.model.forward(batch)


        EntryClass = [GizmoForCausalLM]
        """,
    "python/sglang/srt/models/widget.py": """\
        from sglang.srt.layers.overlap.strategy import plan


        class WidgetDecoderLayer:
            pass


        class WidgetForCausalLM:
            def __init__(self, config):
                self.layers = [WidgetDecoderLayer()]

            def forward(self, batch):
                return plan(self.layers, batch.mode)


        EntryClass = [WidgetForCausalLM]
        """,
}


def test_a_getter_of_a_holder_field_filled_from_one_flag_tests_that_flag() -> None:
    from extractor.reach.guard_atoms import GuardReader
    from extractor.reach.holders import holder_getters

    source = textwrap.dedent(HOLDER_FILES["python/sglang/srt/layers/overlap/settings.py"])
    # ``mixed`` is filled from two flags: its getter says nothing sure.
    assert holder_getters(ast.parse(source), GuardReader({})) == [("is_overlap_enabled", "enable_adapters")]


def test_a_predicate_method_and_a_class_dispatch_narrow_the_chain() -> None:
    reach = _site_reach({p: _source(p) if p == ARGS else textwrap.dedent(s) for p, s in HOLDER_FILES.items()})
    got = reach.of("python/sglang/srt/layers/overlap/strategy.py", "_gizmo_plan")
    # The widget model calls ``plan`` too, but never with gizmo layers: that chain is dead, and the
    # gizmo chain passes the predicate method, whose getter reads the holder the switch fills.
    assert got == (frozenset({("arch", "GizmoForCausalLM", ()), ("flag", "--enable-adapters", ())}),)


def test_the_value_offered_instead_is_the_one_the_launch_code_falls_back_to_most() -> None:
    # Registry order is flex, sparse, sparse_old; the launch code compares with and falls back
    # to "sparse_old" twice, and names "sparse" once (a special case, not a sign of breadth).
    args = SERVER_ARGS + textwrap.indent(
        textwrap.dedent(
            """\

            def __post_init__(self):
                if self.attention_backend == "sparse":
                    self.tp_size = 2
                if self.tp_size > 8:
                    self.attention_backend = "sparse_old"
                if self.attention_backend not in ("sparse_old", "paged"):
                    self.enable_adapters = False
            """
        ),
        "    ",
    )
    files = {p: _source(p) for p in FILES}
    files[ARGS] = args
    reach = site_reach_of(files, ARGS)
    assert reach.choices["--attention-backend"][0] == "sparse_old"
    got = reach.of("python/sglang/srt/layers/attention/flex_backend.py", "FlexBackend.forward_extend")
    out = with_reach(
        {"solutions": [], "documentation": "", "triggerScenarios": "", "tags": []}, got, reach.choices
    )
    assert any("e.g. `--attention-backend sparse_old`" in s for s in out["solutions"])


ENV_REGISTRY = """\
class EnvBool:
    def __init__(self, default):
        self.default = default


class Envs:
    SGLANG_FUSED_GATE = EnvBool(True)
    SGLANG_SLOW_GATE = EnvBool(False)


envs = Envs()
"""

GATED_KERNELS = """\
from sglang.srt.environ import envs


class FusedGate:
    def run(self, width):
        if width % 8:
            raise ValueError("fused gate needs a width divisible by 8")


class SlowGate:
    def run(self, width):
        if width < 1:
            raise ValueError("slow gate needs a positive width")


def build_gate():
    if envs.SGLANG_FUSED_GATE.get():
        return FusedGate()
    if envs.SGLANG_SLOW_GATE.get():
        return SlowGate()
    return None
"""


def test_a_variable_on_by_default_is_turned_off_not_unset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    files = {
        ARGS: SERVER_ARGS.encode(),
        "python/sglang/srt/environ.py": ENV_REGISTRY.encode(),
        "python/sglang/srt/layers/gates.py": GATED_KERNELS.encode(),
    }
    repo, shas = make_repo(tmp_path / "repo", [files])
    records = {r.errorMessage: r for r in _run(repo, shas[0], tmp_path / "cache").records}
    fused = records["fused gate needs a width divisible by 8"]
    assert "only with `SGLANG_FUSED_GATE` on (its default)" in fused.documentation
    assert any(s.endswith("launch with `SGLANG_FUSED_GATE=0`") for s in fused.solutions)
    assert not any("unset `SGLANG_FUSED_GATE`" in s for s in fused.solutions)
    # A variable off by default is still left by unsetting it.
    slow = records["slow gate needs a positive width"]
    assert any(s.endswith("unset `SGLANG_SLOW_GATE`") for s in slow.solutions)
    # The slow gate is built only past the fused one's early return: with that variable turned off.
    assert "only with `SGLANG_FUSED_GATE=0` and `SGLANG_SLOW_GATE` set" in slow.documentation
    assert any(
        s
        == "This code runs only with `SGLANG_FUSED_GATE=0` (it is on by default): if you can do without it, "
        "unset `SGLANG_FUSED_GATE`"
        for s in slow.solutions
    )


KILL_SWITCHES = """\
from sglang.srt.environ import envs


def fast_ok():
    return True


class PagedGate:
    def __init__(self):
        self.use_fast = not envs.SGLANG_DISABLE_FAST_GATE.get() and fast_ok()

    def run(self, width):
        if self.use_fast:
            if width % 16:
                raise ValueError("fast paged gate needs a width divisible by 16")
        if not envs.SGLANG_ENABLE_NEW_GATE.get():
            if width > 4096:
                raise ValueError("legacy paged gate takes widths up to 4096")
        if not envs.SGLANG_DISABLE_FAST_GATE.get():
            if width == 0:
                raise ValueError("fast paged gate needs a width")
"""


def test_a_kill_switch_left_off_is_a_way_off_the_path_it_guards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    registry = ENV_REGISTRY.replace(
        "    SGLANG_SLOW_GATE = EnvBool(False)\n",
        "    SGLANG_SLOW_GATE = EnvBool(False)\n    SGLANG_DISABLE_FAST_GATE = EnvBool(False)\n"
        "    SGLANG_ENABLE_NEW_GATE = EnvBool(False)\n",
    )
    files = {
        ARGS: SERVER_ARGS.encode(),
        "python/sglang/srt/environ.py": registry.encode(),
        "python/sglang/srt/layers/paged_gate.py": KILL_SWITCHES.encode(),
    }
    repo, shas = make_repo(tmp_path / "repo", [files])
    records = {r.errorMessage: r for r in _run(repo, shas[0], tmp_path / "cache").records}
    way_off = (
        "This code runs only with `SGLANG_DISABLE_FAST_GATE` off, which is its default: if you can do "
        "without it, launch with `SGLANG_DISABLE_FAST_GATE=1`"
    )
    # Through the flag the constructor stores, and in the guard of the site's own function.
    for message in ("fast paged gate needs a width divisible by 16", "fast paged gate needs a width"):
        record = records[message]
        assert "only with `SGLANG_DISABLE_FAST_GATE` off (its default)" in record.documentation
        assert way_off in record.solutions
    # A variable that turns something on is no way out when left off: it is not said.
    legacy = records["legacy paged gate takes widths up to 4096"]
    assert "`SGLANG_ENABLE_NEW_GATE` off" not in legacy.documentation
    assert not any("SGLANG_ENABLE_NEW_GATE=1" in s for s in legacy.solutions)


def test_a_way_in_that_needs_a_variable_both_off_and_on_cannot_hold() -> None:
    from extractor.reach.gates import tidy

    off = ("env", "SGLANG_DISABLE_FAST_GATE", ("off",))
    on = ("env", "SGLANG_DISABLE_FAST_GATE", ())
    arch = ("arch", "OwlForCausalLM", ())
    assert tidy((frozenset({off, arch}),)) == (frozenset({off, arch}),)
    # One chain needing both shows a way in the index missed: nothing sure is said.
    assert tidy((frozenset({off, on}),)) == ()
    assert tidy((frozenset({("env", "SGLANG_X", ("0",)), ("env", "SGLANG_X", ())}),)) == ()


def test_the_per_phase_flags_the_server_args_declare_with_the_same_choices_are_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    args = SERVER_ARGS.replace(
        "    tp_size: int = 1\n", "    tp_size: int = 1\n    prefill_attention_backend: str = None\n"
    ).replace(
        '        parser.add_argument("--tp-size", type=int)\n',
        '        parser.add_argument("--tp-size", type=int)\n'
        '        parser.add_argument("--prefill-attention-backend", type=str, choices=BACKEND_CHOICES)\n',
    )
    files = {p: (args if p == ARGS else _source(p)).encode() for p in FILES}
    repo, shas = make_repo(tmp_path / "repo", [files])
    result = _run(repo, shas[0], tmp_path / "cache")
    phased = [
        r for r in result.records if "(or that value for `--prefill-attention-backend`)" in r.documentation
    ]
    assert phased and all("--attention-backend" in r.documentation for r in phased)


DIFFUSION_ARGS = """\
def add_cli_args(parser):
    parser.add_argument("--attention-backend", type=str, choices=["torch_sdpa", "tiled"])
"""

DIFFUSION_BACKENDS = """\
BACKENDS = {}


def register_backend(name):
    def wrap(cls):
        BACKENDS[name] = cls
        return cls

    return wrap


@register_backend("tiled")
class TiledBackend:
    def run(self, tile):
        if tile > 64:
            raise ValueError("tiles above 64 are not supported")


@register_backend("torch_sdpa")
class SdpaBackend:
    def run(self, tile):
        return tile
"""


def test_another_backend_is_offered_from_the_sites_own_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    files = {p: _source(p).encode() for p in FILES}
    # The server's launch code falls back to "flex" most: across packages it would be offered first.
    fallback = '\n    def __post_init__(self):\n        if self.tp_size > 8 and self.attention_backend != "flex":\n            self.attention_backend = "flex"\n'
    files[ARGS] = (SERVER_ARGS + fallback).encode()
    files["python/sglang/multimodal_gen/runtime/server_args.py"] = DIFFUSION_ARGS.encode()
    files["python/sglang/multimodal_gen/runtime/attention/registry.py"] = DIFFUSION_BACKENDS.encode()
    repo, shas = make_repo(tmp_path / "repo", [files])
    records = {r.errorMessage: r for r in _run(repo, shas[0], tmp_path / "cache").records}
    tiled = records["tiles above 64 are not supported"]
    assert "only with `--attention-backend tiled`" in tiled.documentation
    offered = [s for s in tiled.solutions if "use another one" in s]
    # The server's registry holds flex, sparse ...: none of them is a diffusion backend.
    assert offered and offered[0].endswith("e.g. `--attention-backend torch_sdpa`")


def test_a_value_the_flag_holds_when_left_out_is_not_said_to_need_the_flag() -> None:
    picked = (frozenset({("flag", "--attention-backend", ("flex",))}),)
    assert reach_phrase(picked, {"--attention-backend": ""}) == (
        "with `--attention-backend flex` (given, or picked by sglang when `--attention-backend` is left out)"
    )
    assert reach_phrase(picked, {"--attention-backend": "flex"}).endswith("(its default)")
    # Of several values, the one a launch that leaves the flag out holds is named.
    both = (frozenset({("flag", "--attention-backend", ("flex", "paged"))}),)
    assert reach_phrase(both, {"--attention-backend": "paged"}).endswith(
        "`--attention-backend flex` or `paged` (`paged` is its default)"
    ), reach_phrase(both, {"--attention-backend": "paged"})
    # Another default, or a flag that is off unless given: only giving the value leads here.
    assert reach_phrase(picked, {"--attention-backend": "paged"}) == "with `--attention-backend flex`"
    assert reach_phrase(picked, {}) == "with `--attention-backend flex`"


def test_declared_defaults_are_read_from_fields_and_arguments() -> None:
    source = textwrap.dedent(
        """\
        import argparse
        from dataclasses import dataclass, field


        @dataclass
        class ServerArgs:
            sampler: Annotated[str, "Which sampler runs."] = field(default="greedy")
            page_size: Annotated[int, "Tokens per page."] = 16
            grammar: Annotated[str, "Grammar backend."] = None
            group_size: Annotated[int, "Layers per offload group."] = -1

            @staticmethod
            def add_cli_args(parser):
                parser.add_argument("--queue-limit", type=int, default=8)
        """
    )
    knowledge = build_knowledge({ARGS: source.encode()})
    got = {i.flag: i.default for i in knowledge.flag_info.values()}
    assert got["--sampler"] == "greedy" and got["--page-size"] == "16" and got["--queue-limit"] == "8"
    assert got["--grammar"] == ""
    # A negative number is a default as written, not one the launch code picks.
    assert got["--group-size"] == "-1"


SHARED_KERNEL = """\
def pack_tiles(tile):
    if tile % 8:
        raise ValueError("tiles must be a multiple of 8")
    return tile
"""


def test_a_shared_kernel_reached_from_another_package_is_offered_that_packages_backends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    files = {p: _source(p).encode() for p in FILES}
    files["python/sglang/multimodal_gen/runtime/server_args.py"] = DIFFUSION_ARGS.encode()
    # The kernel lives outside the diffusion runtime's folder; only its tiled backend calls it.
    files["python/sglang/jit_kernel/diffusion/tiles.py"] = SHARED_KERNEL.encode()
    files["python/sglang/multimodal_gen/runtime/attention/registry.py"] = (
        "from sglang.jit_kernel.diffusion.tiles import pack_tiles\n\n"
        + DIFFUSION_BACKENDS.replace(
            "        if tile > 64:", "        pack_tiles(tile)\n        if tile > 64:"
        )
    ).encode()
    repo, shas = make_repo(tmp_path / "repo", [files])
    records = {r.errorMessage: r for r in _run(repo, shas[0], tmp_path / "cache").records}
    kernel = records["tiles must be a multiple of 8"]
    assert "only with `--attention-backend tiled`" in kernel.documentation
    offered = [s for s in kernel.solutions if "use another one" in s]
    # The server's flag of the same name takes flex, paged ...: no diffusion backend among them.
    assert offered and offered[0].endswith("e.g. `--attention-backend torch_sdpa`")


def _kernel_run(value: str) -> RunReach:
    reach = (frozenset({("flag", "--attention-backend", (value,))}),)
    return RunReach(
        {"python/sglang/jit_kernel/k.py": {"k": reach}},
        {"--attention-backend": ("flex", "paged")},
        scoped={"python/sglang/srt/": {"--attention-backend": ("flex", "paged")}},
        namespaces={"python/sglang/jit_kernel/k.py": "python/sglang/srt/"},
        declared={"python/sglang/srt/": {"--attention-backend": ("flex", "paged", "sparse")}},
    )


def test_a_value_no_package_registers_gets_no_other_value() -> None:
    run = _kernel_run("fa")
    partial = _partial("k", solutions=[])
    got = run.apply("python/sglang/jit_kernel/k.py", partial)
    assert "only with `--attention-backend fa`" in got["documentation"]
    assert not any("use another one" in s for s in got["solutions"])
    # A value the site's own package declares keeps that package's offer.
    got = _kernel_run("sparse").apply("python/sglang/jit_kernel/k.py", partial)
    assert any(s.endswith("e.g. `--attention-backend flex`") for s in got["solutions"])


DEVICE_KERNELS = """\
def store_cache(key):
    assert key.is_cuda
    return key


def scale_rows(rows):
    if not rows.is_cuda:
        raise RuntimeError("scale_rows needs CUDA tensors")
    return rows
"""

DEVICE_CALLERS = """\
from sglang.srt.kernels.device import scale_rows, store_cache
from sglang.srt.utils import is_cuda

_is_cuda = is_cuda()


def write_key(key):
    if _is_cuda:
        store_cache(key)


def scale_all(rows):
    return scale_rows(rows)
"""


def test_a_tensor_device_check_on_a_path_that_runs_only_on_that_device_is_internal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    files = {
        ARGS: SERVER_ARGS.encode(),
        "python/sglang/srt/utils.py": b"def is_cuda():\n    return True\n",
        "python/sglang/srt/kernels/device.py": DEVICE_KERNELS.encode(),
        "python/sglang/srt/layers/cache_writer.py": DEVICE_CALLERS.encode(),
    }
    repo, shas = make_repo(tmp_path / "repo", [files])
    records = {
        r.lineNumber: r for r in _run(repo, shas[0], tmp_path / "cache").records if "device" in r.filePath
    }
    gated = records[2]
    # Every way in already runs on CUDA: a tensor on another device failed, not the machine.
    assert "on CUDA" in gated.documentation
    assert "internal invariant" in gated.documentation and "another device" in gated.triggerScenarios
    assert not any(s.startswith("Run on CUDA hardware") for s in gated.solutions)
    assert any("Report it to sglang as a bug" in s for s in gated.solutions)
    assert gated.errorType == "internal-invariant" and "hardware-unsupported" not in gated.tags
    # Reached on any platform: the hardware cause and its fix stay.
    open_path = records[8]
    assert "Cause: the hardware or platform (`CUDA`)" in open_path.documentation
    assert any(s.startswith("Run on CUDA hardware") for s in open_path.solutions)


def test_an_optional_value_another_flag_fills_in_is_left_only_without_both() -> None:
    from extractor.prose.reach import RunReach

    args = SERVER_ARGS.replace(
        "    tp_size: int = 1\n",
        "    tp_size: int = 1\n    recorder_mode: str = None\n    enable_balancer: bool = False\n\n"
        "    def check_balancer(self):\n"
        "        if self.enable_balancer and self.recorder_mode is None:\n"
        '            self.recorder_mode = "stat"\n'
        "        if self.enable_balancer or self.tp_size > 1:\n"
        '            self.recorder_mode = "full"\n',
    ).replace(
        '        parser.add_argument("--tp-size", type=int)\n',
        '        parser.add_argument("--tp-size", type=int)\n'
        '        parser.add_argument("--recorder-mode", type=str, choices=["stat", "full"])\n'
        '        parser.add_argument("--enable-balancer", action="store_true")\n',
    )
    knowledge = build_knowledge({ARGS: args.encode()})
    # Only the test that needs the one flag given counts: an ``or`` may fill it without it.
    assert knowledge.implied == {"--recorder-mode": ("--enable-balancer",)}
    reach = (frozenset({("flag", "--recorder-mode", ())}),)
    implied = dict(knowledge.implied)
    assert reach_phrase(reach, implied=implied, switches=frozenset()) == (
        "with `--recorder-mode` (or `--enable-balancer`, which sets it)"
    )
    partial = _partial("run")
    run = RunReach({"a.py": {"run": reach}}, {}, optional={"--recorder-mode"}, implied=implied)
    assert run.apply("a.py", partial)["solutions"][-1].endswith(
        "launch without `--recorder-mode` and without `--enable-balancer`, which sets it"
    )


def test_an_architecture_predicate_that_also_needs_a_config_key_names_it() -> None:
    files = {
        ARGS: SERVER_ARGS,
        "python/sglang/srt/configs/model_config.py": textwrap.dedent(
            """\
            def _hf_attr(config, name):
                return getattr(config, name, None)


            def is_sparse_owl(config) -> bool:
                return (
                    config.architectures[0] in ("OwlForCausalLM", "OwlV2ForCausalLM")
                    and _hf_attr(config, "index_topk") is not None
                    and hasattr(config, "index_head_dim")
                )
            """
        ),
        "python/sglang/srt/models/owl.py": "class OwlForCausalLM:\n    pass\n\n\nEntryClass = OwlForCausalLM\n",
        "python/sglang/srt/layers/sparse_index.py": textwrap.dedent(
            """\
            from sglang.srt.configs.model_config import is_sparse_owl


            class SparseIndex:
                def select(self, q):
                    raise ValueError("the sparse index wants a 3-d query")


            def build(config):
                if is_sparse_owl(config):
                    return SparseIndex()
            """
        ),
    }
    reach = _site_reach(files)
    got = reach.of("python/sglang/srt/layers/sparse_index.py", "SparseIndex.select")
    assert got == (
        frozenset(
            {
                ("arch", "OwlForCausalLM", ()),
                ("config", "index_topk", ()),
                ("config", "index_head_dim", ()),
            }
        ),
    )
    # A plain Owl checkpoint (no sparse index in its config) never gets here: the sentence says so.
    assert reach_phrase(got) == (
        "for `OwlForCausalLM` checkpoints whose config sets `index_head_dim` and `index_topk`"
    )


def test_a_value_the_launch_code_sets_itself_is_not_said_to_need_the_flag() -> None:
    args = SERVER_ARGS.replace(
        "    tp_size: int = 1\n",
        "    tp_size: int = 1\n\n"
        "    def resolve_moe(self):\n"
        '        if self.moe_runner_backend == "auto" and self.quantization == "int4":\n'
        '            self.moe_runner_backend = "tiled"\n',
    ).replace(
        'choices=["auto", "grouped", "tiled"])', 'choices=["auto", "grouped", "tiled"], default="auto")'
    ) + (
        '\n\ndef _for_fp8(args):\n    backend = "grouped"\n'
        '    return {"moe_runner_backend": backend, "quantization": "fp4"}\n'
    )
    knowledge = build_knowledge({ARGS: args.encode()})
    # Both the attribute write and the returned table count; a value outside the choices does not.
    assert knowledge.picked == {"--moe-runner-backend": ("tiled",)}
    tiled = (frozenset({("flag", "--moe-runner-backend", ("tiled",))}),)
    assert reach_phrase(tiled, picked=dict(knowledge.picked)) == (
        "with `--moe-runner-backend tiled` (given, or set by sglang itself for some models or hardware)"
    )
    grouped = (frozenset({("flag", "--moe-runner-backend", ("grouped",))}),)
    assert reach_phrase(grouped, picked=dict(knowledge.picked)) == "with `--moe-runner-backend grouped`"


def test_another_backend_is_offered_only_where_the_user_gave_the_one_sglang_may_pick() -> None:
    from extractor.prose.reach import _workarounds

    reach = (frozenset({("flag", "--attention-backend", ("sparse",))}),)
    choices = {"--attention-backend": ["flex", "paged", "sparse"]}
    # The launch code picks ``sparse`` itself for some models: those may need it.
    (picked,) = _workarounds(reach, choices, picked={"--attention-backend": ("sparse",)})
    assert picked == (
        "This code runs only with `--attention-backend sparse`: sglang picks it itself for some models and "
        "hardware, which may need it; if you gave it yourself and that attention backend is not required, "
        "use another one, e.g. `--attention-backend flex`"
    )
    (given,) = _workarounds(reach, choices, picked={"--attention-backend": ("paged",)})
    assert given.startswith(
        "This code runs only with `--attention-backend sparse`: if that attention backend is not required"
    )


def test_a_variable_the_launch_code_turns_on_itself_is_not_left_by_unsetting_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    # For wide models the launch code turns the slow gate on itself.
    args = SERVER_ARGS.replace(
        "from dataclasses import dataclass\n",
        "from dataclasses import dataclass\n\nfrom sglang.srt.environ import envs\n",
    ).replace(
        "    tp_size: int = 1\n",
        "    tp_size: int = 1\n\n    def pick_gates(self):\n        if self.tp_size > 8:\n"
        "            envs.SGLANG_SLOW_GATE.set(True)\n            envs.SGLANG_FUSED_GATE.set(False)\n",
    )
    files = {
        ARGS: args.encode(),
        "python/sglang/srt/environ.py": ENV_REGISTRY.encode(),
        "python/sglang/srt/layers/gates.py": GATED_KERNELS.encode(),
    }
    knowledge = build_knowledge(files)
    assert knowledge.env_launched == frozenset({"SGLANG_SLOW_GATE"})
    assert knowledge.env_launched_off == frozenset({"SGLANG_FUSED_GATE"})
    repo, shas = make_repo(tmp_path / "repo", [files])
    records = {r.errorMessage: r for r in _run(repo, shas[0], tmp_path / "cache").records}
    slow = records["slow gate needs a positive width"]
    # The fused gate, on by default, is turned off by the launch code too: both ways are said.
    assert (
        "only with `SGLANG_FUSED_GATE=0` (by you, or by sglang itself for some models or hardware) and "
        "`SGLANG_SLOW_GATE` set (by you, or by sglang itself for some models or hardware)"
    ) in slow.documentation
    assert any(
        "unset `SGLANG_FUSED_GATE`; where sglang turns it off, no setting of yours avoids this path" in s
        for s in slow.solutions
    )
    assert any(
        s.endswith(
            "unset `SGLANG_SLOW_GATE` (where sglang sets it itself, for some models or hardware, that is not enough)"
        )
        for s in slow.solutions
    )
    # Turned off by the launch code is no way onto the path: the fused gate reads as before.
    assert (
        "only with `SGLANG_FUSED_GATE` on (its default)"
        in records["fused gate needs a width divisible by 8"].documentation
    )


def test_a_variable_compared_with_a_value_selects_that_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    registry = ENV_REGISTRY.replace(
        "class Envs:\n",
        'class EnvStr:\n    def __init__(self, default):\n        self.default = default\n\n\nclass Envs:\n    SGLANG_DECODE_KERNEL = EnvStr("native")\n',
    )
    kernels = """\
from sglang.srt.environ import envs


class TritonDecode:
    def run(self, pages):
        if pages > 64:
            raise ValueError("the triton decode kernel takes at most 64 pages")


class NativeDecode:
    def run(self, pages):
        if pages < 1:
            raise ValueError("the native decode kernel needs a page")


def pick_decode():
    if envs.SGLANG_DECODE_KERNEL.get() in ("triton", "triton_v2"):
        return TritonDecode()
    if envs.SGLANG_DECODE_KERNEL.get() == "native":
        return NativeDecode()
    return None


def decode(pages):
    return pick_decode().run(pages)
"""
    files = {
        ARGS: SERVER_ARGS.encode(),
        "python/sglang/srt/environ.py": registry.encode(),
        "python/sglang/srt/layers/decode.py": kernels.encode(),
    }
    repo, shas = make_repo(tmp_path / "repo", [files])
    records = {r.errorMessage: r for r in _run(repo, shas[0], tmp_path / "cache").records}
    triton = records["the triton decode kernel takes at most 64 pages"]
    assert "only with `SGLANG_DECODE_KERNEL=triton` or `triton_v2`" in triton.documentation
    assert any(
        s == "This code runs only with `SGLANG_DECODE_KERNEL=triton / triton_v2`: if you can do without it, "
        "unset `SGLANG_DECODE_KERNEL`"
        for s in triton.solutions
    )
    # The value the variable holds unless told otherwise narrows nothing.
    assert "runs only" not in records["the native decode kernel needs a page"].documentation


def test_a_method_no_code_names_gets_no_reach_and_a_getattr_lookup_names_one() -> None:
    files = {
        ARGS: SERVER_ARGS,
        "python/sglang/srt/layers/rope.py": textwrap.dedent(
            """\
            class Rope:
                def by_index(self, idx):
                    raise ValueError("the rope index is out of range")

                def by_length(self, n):
                    raise ValueError("the rope length is out of range")

                def pack(self, n):
                    raise ValueError("the rope cannot be packed")


            def build(server_args):
                if server_args.enable_adapters:
                    return Rope()


            def run(backend, n):
                pack = getattr(backend, "pack", None)
                if pack is not None:
                    pack(n)
                return backend.by_length(n)
            """
        ),
    }
    reach = _site_reach(files)
    path = "python/sglang/srt/layers/rope.py"
    adapters = (frozenset({("flag", "--enable-adapters", ())}),)
    assert reach.of(path, "Rope.by_length") == adapters
    # Looked up by its name as a string: it may run, where its class is built.
    assert reach.of(path, "Rope.pack") == adapters
    # Nothing calls, references or looks up ``by_index``: no way in, so no claim about one.
    assert not reach.of(path, "Rope.by_index")


def test_a_call_through_a_module_the_tree_lacks_is_not_tied_to_a_namesake() -> None:
    files = {
        ARGS: SERVER_ARGS,
        "python/sglang/srt/kernels/dequant.py": textwrap.dedent(
            """\
            def dequantize_cache(cache):
                raise ValueError("the cache is not quantized")
            """
        ),
        "python/sglang/srt/layers/hip_mla.py": textwrap.dedent(
            """\
            from sglang.srt.missing_tests import quant as test_quant


            def decode(server_args, cache):
                if server_args.enable_adapters:
                    return test_quant.dequantize_cache(cache)
            """
        ),
        "python/sglang/srt/layers/users.py": textwrap.dedent(
            """\
            from sglang.srt.kernels.dequant import dequantize_cache


            def load(cache):
                return dequantize_cache(cache)
            """
        ),
    }
    reach = _site_reach(files)
    callers = {e.caller for e in reach.index.callers("sglang.srt.kernels.dequant:dequantize_cache")}
    # ``test_quant.dequantize_cache`` is a function of a module the tree does not hold.
    assert callers == {"sglang.srt.layers.users:load"}


def test_a_value_the_launch_code_never_picks_needs_the_flag_given() -> None:
    args = SERVER_ARGS.replace(
        "    tp_size: int = 1\n",
        "    tp_size: int = 1\n\n"
        "    def pick_backend(self):\n"
        "        if self.attention_backend is None:\n"
        "            self.attention_backend = self._default_backend()\n"
        "        if self.tp_size > 8:\n"
        '            overrides = {}\n            overrides["attention_backend"] = "sparse"\n'
        "            return overrides\n\n"
        "    def _default_backend(self):\n"
        '        return "flex" if self.tp_size > 1 else "paged"\n',
    )
    knowledge = build_knowledge({ARGS: args.encode()})
    # Returned by a helper, or written into the table of overrides: the values sglang picks.
    assert knowledge.picked["--attention-backend"] == ("flex", "paged", "sparse")
    defaults = {"--attention-backend": ""}
    picked = dict(knowledge.picked)
    flex = (frozenset({("flag", "--attention-backend", ("flex",))}),)
    assert reach_phrase(flex, defaults, picked=picked) == (
        "with `--attention-backend flex` (given, or picked by sglang when `--attention-backend` is left out)"
    )
    # Never picked by the launch code: only a user who gives it gets there.
    old = (frozenset({("flag", "--attention-backend", ("sparse_old",))}),)
    assert reach_phrase(old, defaults, picked=picked) == "with `--attention-backend sparse_old`"
    # Where the launch code is never seen picking a value, nothing is ruled out.
    assert reach_phrase(old, defaults).endswith("is left out)")


def test_a_deprecated_spelling_is_said_beside_the_flag_that_replaced_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    # Old spellings kept as deprecated aliases that land in their own fields; the launch code maps
    # them onto the new flags.
    args = SERVER_ARGS.replace(
        "    tp_size: int = 1\n",
        "    tp_size: int = 1\n    enable_split: bool = False\n    enable_old_split: bool = False\n"
        '    split_mode: str = "rows"\n    old_split_mode: str = "row-major"\n',
    ).replace(
        '        parser.add_argument("--tp-size", type=int)\n',
        '        parser.add_argument("--tp-size", type=int)\n'
        '        parser.add_argument("--enable-split", action="store_true")\n'
        '        parser.add_argument("--split-mode", type=str, choices=["rows", "cols"])\n'
        "        parser.add_argument(\n"
        '            "--enable-old-split",\n'
        '            dest="enable_old_split",\n'
        "            action=DeprecatedStoreTrueAction,\n"
        '            new_flag="--enable-split",\n'
        '            help="[Deprecated] Use --enable-split instead.",\n'
        "        )\n"
        "        parser.add_argument(\n"
        '            "--old-split-mode",\n'
        '            dest="old_split_mode",\n'
        "            action=DeprecatedAliasStoreAction,\n"
        '            new_flag="--split-mode",\n'
        '            choices=["row-major", "col-major"],\n'
        '            help="[Deprecated] Use --split-mode instead.",\n'
        "        )\n",
    )
    kernel = textwrap.dedent(
        """\
        def split_rows(x):
            if x.dim() != 2:
                raise ValueError("the split kernel wants a 2-d input")
            return x


        def split_cols(x):
            if x.shape[0] % 2:
                raise ValueError("the column split wants an even row count")
            return x


        def split_wide(server_args, x):
            if server_args.tp_size > 4:
                raise ValueError("the row split allows at most 4 ranks")
            return x


        def split(server_args, x):
            if server_args.enable_old_split:
                x = split_rows(x)
                x = split_wide(server_args, x)
            if server_args.old_split_mode == "col-major":
                x = split_cols(x)
            return x
        """
    )
    files = {ARGS: args.encode(), "python/sglang/srt/layers/split.py": kernel.encode()}
    info = build_knowledge(files).flag_info
    assert info["enable_old_split"].replaced_by == "--enable-split"
    assert info["old_split_mode"].replaced_by == "--split-mode"
    # A flag declared for itself replaces nothing.
    assert info["enable_split"].replaced_by == ""
    repo, shas = make_repo(tmp_path / "repo", [files])
    records = {r.errorMessage: r for r in _run(repo, shas[0], tmp_path / "cache").records}
    switch = records["the split kernel wants a 2-d input"]
    # The switch is turned on by its replacement, which is what a command line gives today: that
    # is named first, and leaving the path needs both left out.
    assert (
        "only with `--enable-split` (or the deprecated `--enable-old-split` it replaces)"
        in switch.documentation
    )
    assert any(
        s.endswith(
            "launch without `--enable-split` (and without the deprecated `--enable-old-split` it replaces)"
        )
        for s in switch.solutions
    ), switch.solutions
    # The example command gives the switch as a command line gives it today.
    wide = records["the row split allows at most 4 ranks"]
    before = wide.exampleFix.split("# after", 1)[0]
    assert "--enable-split" in before and "--enable-old-split" not in before, wide.exampleFix
    valued = records["the column split wants an even row count"]
    assert "`--old-split-mode col-major` (deprecated in favour of `--split-mode`)" in valued.documentation


SHAPE_CHECKS = """\
def verify_shape(width):
    if width % 64:
        raise ValueError(f"width {width} is not a multiple of 64")


def supports_shape(width):
    try:
        verify_shape(width)
    except ValueError:
        return False
    return True


def pick_kernel(server_args, width):
    if server_args.quantization == "fp8":
        return "tiled" if supports_shape(width) else "plain"
    if server_args.quantization == "int4":
        verify_shape(width)
        return "tiled"
    return "plain"
"""


def test_a_caller_that_catches_the_raise_is_no_way_to_its_error(tmp_path: Path) -> None:
    files = {ARGS: SERVER_ARGS.encode(), "python/sglang/srt/layers/shapes.py": SHAPE_CHECKS.encode()}
    repo, shas = make_repo(tmp_path / "repo", [files])
    (record,) = [
        r for r in _run(repo, shas[0], tmp_path / "cache").records if "multiple of 64" in r.errorMessage
    ]
    # fp8 reaches the check too, but its caller turns the error into a fallback: only int4's
    # call lets the user see it.
    assert "This code runs only with `--quantization int4`" in record.documentation
    assert "fp8" not in record.documentation + record.triggerScenarios


EXTRA_ARGS = """\
from dataclasses import dataclass


@dataclass
class ServerArgs:
    cache_extra_config: str = None

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--cache-extra-config", type=str, help="JSON options of the cache.")
"""

EXTRA_CACHE = """\
import json


class HostCache:
    def __init__(self, server_args):
        self.options = self._parse_extra(server_args.cache_extra_config)

    def _parse_extra(self, extra_config):
        options = json.loads(extra_config) if extra_config else {}
        timeout = options.pop("timeout", 5)
        if not isinstance(timeout, (int, float)):
            raise ValueError("timeout must be a number")
        return options
"""


def test_an_entry_of_data_a_flag_hands_in_names_that_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    files = {ARGS: EXTRA_ARGS.encode(), "python/sglang/srt/mem_cache/host_cache.py": EXTRA_CACHE.encode()}
    repo, shas = make_repo(tmp_path / "repo", [files])
    (record,) = [
        r for r in _run(repo, shas[0], tmp_path / "cache").records if "timeout must be" in r.errorMessage
    ]
    assert "handed in (`extra_config`, the value of `--cache-extra-config`)" in record.documentation
    assert "its `timeout` entry" in record.documentation
    assert any("entry of the data given with `--cache-extra-config`" in s for s in record.solutions)


ARGUMENT_KERNEL = """\
def attend(q, k, score_mod=None, *, sinks=None, bias=None, strict=True, validate=False):
    if score_mod is not None:
        raise NotImplementedError("score_mod is not supported by this kernel")
    if sinks is not None:
        raise NotImplementedError("sinks are not supported by this kernel")
    if bias is not None:
        raise NotImplementedError("bias is not supported by this kernel")
    if strict and q > k:
        raise ValueError("more queries than keys")
    width = q + k
    if width and q < 0:
        raise ValueError("a negative query length")
    if validate:
        if q != k:
            raise ValueError("validated lengths differ")
    return q
"""


STORE_OWNER = """\
class Store:
    def __init__(self, backend=None):
        if backend is not None:
            raise ValueError(f"unknown store backend {backend}")


class LocalStore(Store):
    def __init__(self):
        super().__init__(backend=None)


class Conv:
    def __init__(self, width, activation=None):
        if activation is not None:
            if activation not in ("silu", "swish"):
                raise ValueError(f"unsupported conv activation {activation}")


def _check_out(out):
    if out is None:
        return
    if out.ndim != 2:
        raise ValueError(f"replay output must be 2-d, got {out.ndim}")


def _check_filled(out):
    if out is None:
        return
    if out.ndim != 3:
        raise ValueError(f"filled output must be 3-d, got {out.ndim}")


def run_moe(x, out=None):
    # Hands its own optional ``out`` on: the check gets one only where ``run_moe`` does.
    _check_out(out)
    return x


def run_filled(x, out=None):
    if out is None:
        out = x
    _check_filled(out)
    return out


class Attention:
    def __init__(self, kind):
        if kind == "self":
            self.mode = 0
        elif kind == "cross":
            self.mode = 1
        else:
            raise RuntimeError(f"unsupported attention kind {kind}")


def make_serde(kind):
    if kind != "safe":
        raise ValueError(f"unknown serde {kind}")


def pick_mode(mode):
    if mode not in ("fa3", "triton"):
        raise ValueError(f"unsupported mode {mode}")


def build(server_args):
    # Every construction leaves ``activation`` out.
    Conv(4)
    Conv(width=8)
    run_moe(4)
    run_filled(4)
    # Only handled words reach these checks; the launch's own value may be any.
    kind = "cross" if server_args.enable_adapters else "self"
    Attention(kind)
    make_serde("safe")
    pick_mode("fa3")
    pick_mode(server_args.attention_backend)
    if server_args.enable_adapters:
        return LocalStore()
    return Store(backend=server_args.attention_backend)
"""


def _argument_model(name: str, call: str) -> str:
    return textwrap.dedent(
        f"""\
        from sglang.srt.layers.attend import attend


        class {name}ForCausalLM:
            def forward(self, q, k):
                return {call}


        EntryClass = {name}ForCausalLM
        """
    )


def test_a_local_picked_among_kernels_passes_what_its_calls_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ``fn = attend if fast else attend_ref`` then ``fn(...)``: the picked kernels get that call's
    # arguments, and nothing else of the pick says it may pass anything.
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    tern = """\
        from sglang.srt.layers.attend import attend
        from sglang.srt.layers.attend_ref import attend_ref


        class TernForCausalLM:
            def forward(self, q, k, fast=True):
                fn = attend if fast else attend_ref
                return fn(q, k, sinks=k)


        EntryClass = TernForCausalLM
        """
    skua = """\
        from sglang.srt.layers.attend import attend


        class SkuaForCausalLM:
            def forward(self, q, k):
                kernel = attend
                out = kernel(q, k, bias=k)
                return kernel(q, out)


        EntryClass = SkuaForCausalLM
        """
    files = {
        ARGS: SERVER_ARGS,
        "python/sglang/srt/layers/attend.py": ARGUMENT_KERNEL,
        "python/sglang/srt/layers/attend_ref.py": "def attend_ref(q, k, sinks=None):\n    return q\n",
        "python/sglang/srt/models/tern.py": textwrap.dedent(tern),
        "python/sglang/srt/models/skua.py": textwrap.dedent(skua),
    }
    sites = site_reach_of(files, ARGS)
    kernel = "python/sglang/srt/layers/attend.py"
    assert not sites.passed_anywhere(kernel, "attend", ["validate?"])
    assert sites.passed_anywhere(kernel, "attend", ["sinks"])
    assert sites.passed_anywhere(kernel, "attend", ["bias"])
    records = records_by_message(tmp_path, files)
    assert (
        "for `TernForCausalLM` checkpoints"
        in records["sinks are not supported by this kernel"].triggerScenarios
    )
    assert (
        "for `SkuaForCausalLM` checkpoints"
        in records["bias is not supported by this kernel"].triggerScenarios
    )
    assert records["validated lengths differ"].triggerScenarios.endswith(
        "It is reached only when a call passes `validate`, which no caller in sglang does (only your own "
        "code calling it directly)."
    )


def test_a_picked_local_a_nested_function_calls_is_left_to_the_reference() -> None:
    from extractor.reach.receiver_facts import called_locals

    tree = ast.parse(
        textwrap.dedent(
            """\
            def forward(q, k, fast):
                fn = attend if fast else attend_ref
                out = fn(q, k)

                def again(x):
                    return fn(x, k, validate=True)

                return again(out)


            def plain(q, k, fast):
                fn = attend if fast else attend_ref
                return fn(q, k)
            """
        )
    )
    forward, plain = (n for n in tree.body if isinstance(n, ast.FunctionDef))
    assert called_locals(forward) == frozenset()
    assert called_locals(plain) == frozenset({"fn"})


def test_a_raise_on_an_argument_being_given_is_reached_only_by_the_calls_that_give_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    files = {
        ARGS: SERVER_ARGS.encode(),
        "python/sglang/srt/layers/attend.py": ARGUMENT_KERNEL.encode(),
        # Owl passes score_mod by keyword, Lark by position with sinks by keyword, Wren passes
        # neither (its None is no score_mod).
        "python/sglang/srt/models/owl.py": _argument_model("Owl", "attend(q, k, score_mod=abs)").encode(),
        "python/sglang/srt/models/lark.py": _argument_model(
            "Lark", "attend(q, k, abs, sinks=k, validate=False)"
        ).encode(),
        "python/sglang/srt/models/wren.py": _argument_model("Wren", "attend(q, k, None)").encode(),
        # A constructor is reached by building its class: its argument is given there.
        "python/sglang/srt/layers/store.py": STORE_OWNER.encode(),
        # A model's layer that its model builds with a handled word only.
        "python/sglang/srt/models/finch.py": textwrap.dedent(
            """\
            class FinchMixer:
                def __init__(self, config, mixer_kind):
                    if mixer_kind not in ("conv", "attn"):
                        raise ValueError(f"unknown mixer kind {mixer_kind}")


            class FinchForCausalLM:
                def __init__(self, config):
                    self.mixer = FinchMixer(config, "conv")


            EntryClass = FinchForCausalLM
            """
        ).encode(),
    }
    repo, shas = make_repo(tmp_path / "repo", [files])
    records = {r.errorMessage: r for r in _run(repo, shas[0], tmp_path / "cache").records}
    score = records["score_mod is not supported by this kernel"]
    assert "for `LarkForCausalLM` or `OwlForCausalLM` checkpoints" in score.triggerScenarios
    assert "Wren" not in score.triggerScenarios
    # A keyword-only parameter is matched by its keyword.
    sinks = records["sinks are not supported by this kernel"]
    assert "for `LarkForCausalLM` checkpoints" in sinks.triggerScenarios
    # No caller passes ``bias``: only code calling the kernel itself gets there.
    bias = records["bias is not supported by this kernel"]
    assert bias.triggerScenarios.endswith(
        "It is reached only when a call passes `bias`, which no caller in sglang does (only your own code "
        "calling it directly)."
    )
    # Lark gives ``validate`` only as a literal False: no caller turns the validation on.
    validated = records["validated lengths differ"]
    assert validated.triggerScenarios.endswith(
        "It is reached only when a call passes `validate`, which no caller in sglang does (only your own "
        "code calling it directly)."
    ), validated.triggerScenarios
    # ``strict`` is on unless a call turns it off: leaving it out is no way around the check.
    strict = records["more queries than keys"]
    assert "no caller" not in strict.triggerScenarios
    store = records["unknown store backend {backend}"]
    assert "no caller" not in store.triggerScenarios
    # No construction of the class passes ``activation``: only code building it itself gets there.
    conv = records["unsupported conv activation {activation}"]
    assert conv.triggerScenarios.endswith(
        "It is reached only when a call passes `activation` other than `silu` or `swish`, which no caller "
        "in sglang does (only your own code calling it directly)."
    ), conv.triggerScenarios
    # ``run_moe`` hands on an ``out`` that no call of it gives; ``run_filled`` fills its own.
    replay = records["replay output must be 2-d, got {out.ndim}"]
    assert replay.triggerScenarios.endswith(
        "It is reached only when a call passes `out`, which no caller in sglang does (only your own "
        "code calling it directly)."
    ), replay.triggerScenarios
    # Read as a direct call's arguments, it is no longer tagged as the internal check it first was.
    assert replay.backgroundTag in replay.tags and "internal-invariant" not in replay.tags, replay.tags
    # Every call gives a word the check lets through: only a call of the user's own gets there.
    for message, words in (
        ("unsupported attention kind {kind}", "`kind` other than `cross` or `self`"),
        ("unknown serde {kind}", "`kind` other than `safe`"),
    ):
        assert records[message].triggerScenarios.endswith(
            f"It is reached only when a call passes {words}, which no caller in sglang does (only your "
            "own code calling it directly)."
        ), records[message].triggerScenarios
    assert "no caller" not in records["unsupported mode {mode}"].triggerScenarios
    # In model code such a check read as the checkpoint's is the direct call's too, with no model fix.
    mixer = records["unknown mixer kind {mixer_kind}"]
    assert "Cause: the arguments of a direct call" in mixer.documentation, mixer.documentation
    assert not any("Use a model" in s for s in mixer.solutions), mixer.solutions
    filled = records["filled output must be 3-d, got {out.ndim}"]
    assert "no caller" not in filled.triggerScenarios
    # ``width`` is no parameter: every caller may reach the check.
    negative = records["a negative query length"]
    assert (
        "for `LarkForCausalLM`, `OwlForCausalLM` or `WrenForCausalLM` checkpoints"
        in negative.triggerScenarios
    )


def test_a_class_named_as_a_parameters_default_is_built_where_that_parameter_is() -> None:
    layer = "python/sglang/srt/layers/owl_layer.py"
    files = {
        ARGS: SERVER_ARGS,
        layer: textwrap.dedent(
            """\
            class OwlLayer:
                def __init__(self, heads, tp_size):
                    if heads % tp_size != 0:
                        raise ValueError("heads do not split")
            """
        ),
        "python/sglang/srt/models/owl.py": textwrap.dedent(
            """\
            from sglang.srt.layers.owl_layer import OwlLayer


            class OwlModel:
                def __init__(self, config, layer_type=OwlLayer):
                    self.layers = [layer_type(config.heads, 2) for _ in range(config.depth)]


            class OwlForCausalLM:
                def __init__(self, config):
                    self.model = OwlModel(config)


            EntryClass = OwlForCausalLM
            """
        ),
    }
    reach = _site_reach(files)
    # Built only through the parameter whose default names it: the model that holds it.
    assert reach.of(layer, "OwlLayer.__init__") == (frozenset({("arch", "OwlForCausalLM", ())}),)


def test_leaving_out_a_switch_the_validation_requires_with_what_the_way_in_keeps_is_not_offered() -> None:
    from extractor.prose.reach import RunReach, _validation_of

    # ``if self.enable_mm_cache and not self.encoder_only: raise``: the cache needs --encoder-only.
    key = "ServerArgs._check\x1fraise\x1fValueError\x1fneeds encoder\x1fself.enable_mm_cache and not self.encoder_only\x000"
    from extractor.prose.knowledge import FlagInfo

    flags = {
        d: FlagInfo(flag=f"--{d.replace('_', '-')}", dest=d, namespace="python/sglang/srt/", is_bool=True)
        for d in ("enable_mm_cache", "encoder_only")
    }
    rule = _validation_of(key, flags)
    assert rule == (("--enable-mm-cache", "on", ()), ("--encoder-only", "off", ()))
    # A guard with anything but flag tests is no combination of flags.
    assert _validation_of(key.replace("not self.encoder_only", "x > 1"), flags) is None
    both = (frozenset({("flag", "--enable-mm-cache", ()), ("flag", "--encoder-only", ())}),)
    partial = _partial("Cache.set", "AssertionError")
    switches = {"--enable-mm-cache", "--encoder-only"}
    run = RunReach({"a.py": {"Cache.set": both}}, {}, switches=switches, validations=[rule])
    got = run.apply("a.py", partial)["solutions"]
    assert any(s.endswith("launch without `--enable-mm-cache`") for s in got)
    # Dropping --encoder-only while the cache stays on fails at startup.
    assert not any("launch without `--encoder-only`" in s for s in got)
    plain = RunReach({"a.py": {"Cache.set": both}}, {}, switches=switches).apply("a.py", partial)["solutions"]
    assert any("launch without `--encoder-only`" in s for s in plain)


def test_a_variable_the_checks_gate_already_turns_off_is_not_offered_twice() -> None:
    reach = (frozenset({("env", "SGLANG_AVOID_RETOKENIZE", ("on",))}),)
    gate = "Or set `SGLANG_AVOID_RETOKENIZE=0`: this check only runs when it is on, which is its default"
    out = with_reach(
        {"solutions": [gate], "documentation": "", "triggerScenarios": "", "tags": []}, reach, {}
    )
    assert out["solutions"] == [gate]
    # With no such gate the reach's own way out is offered.
    alone = with_reach({"solutions": [], "documentation": "", "triggerScenarios": "", "tags": []}, reach, {})
    assert any("`SGLANG_AVOID_RETOKENIZE=0`" in s for s in alone["solutions"])
    # A variable that is off unless set: "unset it" is said once too.
    opt_in = (frozenset({("env", "SGLANG_GRAPH_MODE", ())}),)
    unset = "Or unset `SGLANG_GRAPH_MODE`: this check only runs when it is set"
    out = with_reach(
        {"solutions": [unset], "documentation": "", "triggerScenarios": "", "tags": []}, opt_in, {}
    )
    assert out["solutions"] == [unset]


def test_a_method_tied_by_its_unique_name_still_leads_in_beside_calls_with_known_receivers() -> None:
    items = "python/sglang/srt/managers/items.py"
    files = {
        ARGS: SERVER_ARGS,
        items: textwrap.dedent(
            """\
            class MediaItem:
                def set_pad_value(self):
                    assert self.hash is not None

                def apply(self):
                    assert self.hash is not None


            def from_processor(items):
                # The items come from a list: their class is not known here.
                for item in items:
                    item.set_pad_value()
                    item.apply()
            """
        ),
        "python/sglang/srt/managers/adapters_only.py": textwrap.dedent(
            """\
            from sglang.srt.managers.items import MediaItem


            def encode(server_args):
                if server_args.enable_adapters:
                    item = MediaItem()
                    item.set_pad_value()
                    item.apply()
            """
        ),
        "python/sglang/srt/managers/serve.py": textwrap.dedent(
            """\
            from sglang.srt.managers.items import MediaItem, from_processor


            def handle(count):
                return from_processor([MediaItem() for _ in range(count)])
            """
        ),
    }
    reach = _site_reach(files)
    # ``item.set_pad_value()`` can only be this method: the served path reaches it too.
    assert reach.of(items, "MediaItem.set_pad_value") == ()
    # ``apply`` is a word other libraries' objects answer to: only the known receiver counts.
    assert reach.of(items, "MediaItem.apply") == (frozenset({("flag", "--enable-adapters", ())}),)


def test_a_record_reached_only_for_a_draft_name_says_that_it_is_the_draft(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    files = {p: textwrap.dedent(t) for p, t in DRAFT_FILES.items()}
    repo, shas = make_repo(tmp_path / "repo", [{p: t.encode() for p, t in files.items()}])
    records = {r.errorMessage: r for r in _run(repo, shas[0], tmp_path / "cache").records}
    draft = records["the draft head needs a hidden size that is a multiple of 256"]
    assert (
        "`OwlForCausalLMNextN` drafts (the name sglang gives the draft model it loads" in draft.documentation
    )
    assert "`OwlForCausalLMNextN` checkpoints" not in draft.documentation + draft.triggerScenarios
    # The target's own architecture is a checkpoint's.
    target = records["the model needs a hidden size that is a multiple of 128"]
    assert "for `OwlForCausalLM` checkpoints" in target.documentation


PLATFORM_FILES = {
    ARGS: SERVER_ARGS,
    # A table that gains an entry on one platform alone, and replaces one on another.
    "python/sglang/srt/layers/quantization/__init__.py": """\
        from sglang.srt.layers.quantization.fp8 import Fp8Config, NpuFp8Config
        from sglang.srt.layers.quantization.int4 import Int4Config
        from sglang.srt.utils import is_npu

        QUANTIZATION_METHODS = {"fp8": Fp8Config}

        if is_npu():
            QUANTIZATION_METHODS.update({"fp8": NpuFp8Config, "int4": Int4Config})
        """,
    "python/sglang/srt/layers/quantization/fp8.py": """\
        class Fp8Config:
            def get_quant_method(self, layer):
                return None


        class NpuFp8Config:
            def get_quant_method(self, layer):
                return None
        """,
    "python/sglang/srt/layers/quantization/int4.py": """\
        from sglang.srt.utils import is_npu


        class Int4Config:
            def get_quant_method(self, layer):
                if not is_npu():
                    raise NotImplementedError("int4 kernels exist for NPU only")
        """,
}


def test_an_entry_a_table_gains_on_one_platform_is_reached_there_alone() -> None:
    got = _site_reach({p: s if p == ARGS else textwrap.dedent(s) for p, s in PLATFORM_FILES.items()})
    int4 = got.of("python/sglang/srt/layers/quantization/int4.py", "Int4Config.get_quant_method")
    assert int4 == (frozenset({("flag", "--quantization", ("int4",)), ("platform", "npu", ())}),)
    npu = got.of("python/sglang/srt/layers/quantization/fp8.py", "NpuFp8Config.get_quant_method")
    assert npu == (frozenset({("flag", "--quantization", ("fp8",)), ("platform", "npu", ())}),)
    # The entry made without a gate is a way in everywhere.
    plain = got.of("python/sglang/srt/layers/quantization/fp8.py", "Fp8Config.get_quant_method")
    assert plain == (frozenset({("flag", "--quantization", ("fp8",))}),)


def test_a_platform_gate_every_way_in_passes_is_no_hardware_cause(tmp_path: Path) -> None:
    files = {p: s if p == ARGS else textwrap.dedent(s) for p, s in PLATFORM_FILES.items()}
    rec = records_by_message(tmp_path, files)["int4 kernels exist for NPU only"]
    assert "Cause: an internal invariant: every way into this code runs on the platform" in rec.documentation
    assert not any(s.startswith("Run on NPU") for s in rec.solutions)
    assert "on Ascend NPU" in rec.triggerScenarios


def test_a_test_of_a_hardware_feature_only_one_platform_has_selects_that_platform(tmp_path: Path) -> None:
    files = {
        ARGS: SERVER_ARGS,
        "python/sglang/srt/utils/cpu_caps.py": textwrap.dedent(
            """\
            def cpu_has_amx_support():
                return False


            def use_intel_amx_backend(layer):
                return getattr(layer, "use_intel_amx_backend", False)
            """
        ),
        "python/sglang/srt/layers/packed.py": textwrap.dedent(
            """\
            from sglang.srt.utils.cpu_caps import cpu_has_amx_support, use_intel_amx_backend

            _is_cpu_amx_available = cpu_has_amx_support()


            def pack(layer):
                if use_intel_amx_backend(layer):
                    assert layer.weight.ndim == 2, "packed weights must be 2-D"


            def prepack(layer):
                if not _is_cpu_amx_available:
                    raise RuntimeError("prepacking needs a CPU with AMX")
            """
        ),
    }
    records = records_by_message(tmp_path, files)
    # The layer takes the AMX backend only on a CPU: the check is reached there alone.
    assert "on CPU" in records["packed weights must be 2-D"].triggerScenarios
    # A failing feature test says nothing about another platform: it is the hardware's, not code
    # built for one platform meeting another.
    amx = records["prepacking needs a CPU with AMX"]
    assert "for one platform alone" not in amx.triggerScenarios
    assert "internal invariant" not in amx.documentation


def test_a_custom_op_nothing_calls_is_no_way_into_what_it_runs() -> None:
    files = {
        ARGS: SERVER_ARGS,
        "python/sglang/jit_kernel/tiles.py": textwrap.dedent(
            """\
            import torch


            class TileRunner:
                @classmethod
                def forward(cls, x):
                    assert x.ndim == 2, "tiles are 2-D"
                    return x


            @torch.library.custom_op("sglang::tile_op", mutates_args=())
            def tile_op(x: torch.Tensor) -> torch.Tensor:
                return TileRunner.forward(x)
            """
        ),
        "python/sglang/srt/layers/attention/tiled.py": textwrap.dedent(
            """\
            from sglang.jit_kernel.tiles import TileRunner


            def attend(server_args, x):
                if server_args.attention_backend == "flex":
                    return TileRunner.forward(x)
                return x
            """
        ),
    }
    got = _site_reach(files)
    # ``torch.ops.sglang.tile_op`` is called nowhere: the registered op is no entry point, and the
    # runner is reached through the backend that calls it alone.
    assert got.of("python/sglang/jit_kernel/tiles.py", "TileRunner.forward") == (
        frozenset({("flag", "--attention-backend", ("flex",))}),
    )


def test_an_entry_under_a_key_its_tables_flag_never_holds_is_no_way_in() -> None:
    files = {
        ARGS: SERVER_ARGS,
        "python/sglang/srt/layers/attention/flex_backend.py": textwrap.dedent(
            """\
            class FlexBackend:
                def __init__(self, runner):
                    if runner.heads % 4:
                        raise ValueError("flex needs heads in fours")
            """
        ),
        "python/sglang/srt/speculative/draft_backends.py": textwrap.dedent(
            """\
            from sglang.srt.layers.attention.flex_backend import FlexBackend


            class DraftBackends:
                def __init__(self, server_args, runner):
                    self.server_args = server_args
                    self.runner = runner

                def create(self):
                    table = {
                        "flex": self._flex,
                        "paged": self._paged,
                        "mixed_linear": self._mixed,
                    }
                    return table[self.server_args.attention_backend]()

                def _flex(self):
                    return FlexBackend(self.runner)

                def _paged(self):
                    return None

                def _mixed(self):
                    return self._flex()
            """
        ),
        "python/sglang/srt/speculative/worker.py": textwrap.dedent(
            """\
            from sglang.srt.speculative.draft_backends import DraftBackends


            def start(server_args, runner):
                return DraftBackends(server_args, runner).create()
            """
        ),
    }
    got = _site_reach(files)
    # ``mixed_linear`` is no value of ``--attention-backend``: its entry is run by nothing, so the
    # way through it adds nothing beside ``flex``.
    assert got.of("python/sglang/srt/layers/attention/flex_backend.py", "FlexBackend.__init__") == (
        frozenset({("flag", "--attention-backend", ("flex",))}),
    )


SPECULATIVE_ARGS = """\
from dataclasses import dataclass


@dataclass
class ServerArgs:
    speculative_algorithm: str = None

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--speculative-algorithm", type=str)
"""


def test_a_call_made_only_in_a_verify_or_draft_extend_pass_needs_speculative_decoding() -> None:
    files = {
        ARGS: SPECULATIVE_ARGS,
        "python/sglang/srt/layers/attention/plain_backend.py": textwrap.dedent(
            """\
            from sglang.kernels.verify_meta import verify_metadata, extend_metadata


            class PlainBackend:
                def init_forward_metadata(self, forward_batch):
                    if forward_batch.forward_mode.is_target_verify():
                        return verify_metadata(forward_batch)
                    if forward_batch.forward_mode.is_extend():
                        return extend_metadata(forward_batch)
            """
        ),
        "python/sglang/kernels/verify_meta.py": textwrap.dedent(
            """\
            def verify_metadata(batch):
                assert batch.size > 0, "empty verify batch"


            def extend_metadata(batch):
                assert batch.size > 0, "empty extend batch"
            """
        ),
        "python/sglang/srt/model_executor/runner.py": textwrap.dedent(
            """\
            from sglang.srt.layers.attention.plain_backend import PlainBackend


            def run(batch):
                return PlainBackend().init_forward_metadata(batch)
            """
        ),
    }
    got = _site_reach(files)
    verify = got.of("python/sglang/kernels/verify_meta.py", "verify_metadata")
    assert verify == (frozenset({("flag", "--speculative-algorithm", ())}),)
    # An ordinary extend pass runs with or without it.
    assert got.of("python/sglang/kernels/verify_meta.py", "extend_metadata") == ()


NEXTN_MODEL = """\
class CrowForCausalLM:
    def load_weights(self, weights, is_nextn=False):
        if is_nextn and not hasattr(self.config, "nextn_layers"):
            raise ValueError("nextn_layers is not in the config")

    def load_draft(self, weights, draft=False):
        if draft and not hasattr(self.config, "draft_layers"):
            raise ValueError("draft_layers is not in the config")


EntryClass = CrowForCausalLM
"""

NEXTN_OTHER = """\
from sglang.srt.models.crow import CrowForCausalLM


class RookForCausalLM:
    def load_weights(self, weights, is_nextn=False):
        return weights


class RookNextN(RookForCausalLM):
    def load_weights(self, weights):
        # Another class's method, named by its class: no call of Crow's.
        return RookForCausalLM.load_weights(self, weights, is_nextn=True)


EntryClass = [RookForCausalLM, RookNextN]
"""

NEXTN_LOADER = """\
def load(model, weights, server_args):
    # The model's class is not known here: many define both methods.
    model.load_weights(weights)
    model.load_draft(weights, draft=server_args.speculative_algorithm is not None)
"""


def test_a_method_called_only_on_unknown_receivers_is_given_what_those_calls_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    files = {
        ARGS: SERVER_ARGS.encode(),
        "python/sglang/srt/models/crow.py": NEXTN_MODEL.encode(),
        "python/sglang/srt/models/rook.py": NEXTN_OTHER.encode(),
        "python/sglang/srt/model_loader/load.py": NEXTN_LOADER.encode(),
    }
    repo, shas = make_repo(tmp_path / "repo", [files])
    records = {r.errorMessage: r for r in _run(repo, shas[0], tmp_path / "cache").records}
    # Every call of ``load_weights`` with an unknown receiver leaves ``is_nextn`` out; the one
    # that passes it names another class.
    nextn = records["nextn_layers is not in the config"]
    assert nextn.triggerScenarios.endswith(
        "It is reached only when a call passes `is_nextn`, which no caller in sglang does (only your own "
        "code calling it directly)."
    ), nextn.triggerScenarios
    # The cause stays the checkpoint's, but no launch shows the fix: the failing call is the user's.
    assert nextn.solutions[0].startswith("No launch of sglang reaches this check"), nextn.solutions
    assert "launch_server" not in nextn.exampleFix
    assert "load_weights(...)" in nextn.exampleFix
    # A call that passes a value that may be true keeps every launch a way in.
    draft = records["draft_layers is not in the config"]
    assert "no caller" not in draft.triggerScenarios
    assert "launch_server" in draft.exampleFix


CLOSURE_GATE = """\
from sglang.srt.utils import get_bool_env_var


def _direction(op):
    if op.kind == "send":
        return 1
    raise NotImplementedError(f"unknown op kind {op.kind}")


def move_layer(ops, log_metrics=False):
    def _run():
        for op in ops:
            op.start()
        if log_metrics:
            # A name of the enclosing function: what its callers pass.
            return [_direction(op) for op in ops]
        return []

    return _run()


def move_all(layers):
    log_metrics = get_bool_env_var("SGLANG_MOVER_LOG_METRICS")
    for ops in layers:
        move_layer(ops, log_metrics=log_metrics)
"""


def test_a_nested_functions_test_of_its_enclosing_parameter_is_what_the_callers_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    files = {
        ARGS: SERVER_ARGS.encode(),
        "python/sglang/srt/eplb/mover.py": CLOSURE_GATE.encode(),
        "python/sglang/srt/eplb/manager.py": b"from sglang.srt.eplb.mover import move_all\n",
    }
    repo, shas = make_repo(tmp_path / "repo", [files])
    records = {r.errorMessage: r for r in _run(repo, shas[0], tmp_path / "cache").records}
    raised = records["unknown op kind {op.kind}"]
    assert raised.triggerScenarios.endswith("It is reached only with `SGLANG_MOVER_LOG_METRICS` set."), (
        raised.triggerScenarios
    )
    assert any(
        s.startswith("This code runs only with `SGLANG_MOVER_LOG_METRICS` set") for s in raised.solutions
    )


CAPTURE_BASE = """\
class HeronForCausalLM:
    def set_capture_layers(self, layer_ids):
        if layer_ids is None:
            raise ValueError("capture needs explicit layer ids")
        self.capture = list(layer_ids)


class HeronV3ForCausalLM(HeronForCausalLM):
    pass


EntryClass = [HeronForCausalLM, HeronV3ForCausalLM]
"""

CAPTURE_WRAPPER = """\
from sglang.srt.models.heron import HeronV3ForCausalLM


class EgretForConditionalGeneration:
    def __init__(self, config):
        self.language_model = HeronV3ForCausalLM(config)

    def set_capture_layers(self, layer_ids):
        # A wrapper model hands the call to the language model it holds: a known receiver.
        self.language_model.set_capture_layers(layer_ids)


EntryClass = EgretForConditionalGeneration
"""

CAPTURE_RUNNER = """\
def setup_capture(model, layer_ids, server_args):
    # The loaded model, whatever class the checkpoint picked.
    if server_args.enable_adapters:
        model.set_capture_layers(layer_ids)
"""


def test_a_model_method_a_wrapper_calls_is_also_run_by_the_runner_on_any_checkpoints_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    files = {
        ARGS: SERVER_ARGS.encode(),
        "python/sglang/srt/models/heron.py": CAPTURE_BASE.encode(),
        "python/sglang/srt/models/egret.py": CAPTURE_WRAPPER.encode(),
        "python/sglang/srt/model_executor/capture.py": CAPTURE_RUNNER.encode(),
    }
    repo, shas = make_repo(tmp_path / "repo", [files])
    records = {r.errorMessage: r for r in _run(repo, shas[0], tmp_path / "cache").records}
    trigger = records["capture needs explicit layer ids"].triggerScenarios
    # Not only the wrapper's checkpoints: the base model's own, through the runner's call.
    assert "`HeronForCausalLM`" in trigger and "`HeronV3ForCausalLM`" in trigger, trigger
    assert "`EgretForConditionalGeneration`" in trigger, trigger
    # The runner's own gate holds on its way in.
    assert "with `--enable-adapters`, for `EgretForConditionalGeneration`, `HeronForCausalLM` or" in trigger


READER_DEFAULT = """\
from sglang.srt.utils import get_int_env_var


class Dispatcher:
    def __init__(self):
        self.max_tokens = get_int_env_var("SGLANG_DISPATCH_MAX_TOKENS", 128)
        assert self.max_tokens <= 1024
"""


def test_a_variable_read_with_a_default_that_passes_the_check_is_fixed_by_unsetting_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    files = {
        ARGS: SERVER_ARGS.encode(),
        "python/sglang/srt/layers/dispatch.py": READER_DEFAULT.encode(),
        "python/sglang/srt/layers/runner.py": (
            b"from sglang.srt.layers.dispatch import Dispatcher\n\n\ndef build():\n    return Dispatcher()\n"
        ),
    }
    repo, shas = make_repo(tmp_path / "repo", [files])
    (record,) = _run(repo, shas[0], tmp_path / "cache").records
    assert record.solutions[0] == "Unset `SGLANG_DISPATCH_MAX_TOKENS`: its default (128) passes this check", (
        record.solutions
    )
    before, after = record.exampleFix.split("# after", 1)
    assert "SGLANG_DISPATCH_MAX_TOKENS=" in before and "SGLANG_DISPATCH_MAX_TOKENS" not in after


PAGED_ARGS = """\
from dataclasses import dataclass


@dataclass
class ServerArgs:
    page_size: int = None
    tp_size: int = 1
    device: str = "cuda"

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--page-size", type=int)
        parser.add_argument("--tp-size", type=int)
        parser.add_argument("--device", type=str)
"""

MODEL_OVERRIDES = """\
def register_for(*architectures):
    def decorator(fn):
        return fn

    return decorator


@register_for("OwlForCausalLM")
def _owl_overrides(server_args, hf_config):
    overrides = {}
    size = 256
    if server_args.device == "npu":
        size = 128
    overrides["page_size"] = size
    return overrides


@register_for("LarkForCausalLM")
def _lark_overrides(server_args, hf_config):
    overrides = {}
    if server_args.tp_size > 1:
        overrides["page_size"] = 64
    return overrides


@register_for("WrenForCausalLM")
def _wren_overrides(server_args, hf_config):
    overrides = {}
    if server_args.page_size is None:
        overrides["page_size"] = 32
    return overrides
"""


def _paged_model(name: str, size: int) -> str:
    return textwrap.dedent(
        f"""\
        from sglang.srt.server_args import get_global_server_args


        class {name}ForCausalLM:
            def __init__(self, config):
                if get_global_server_args().page_size != {size}:
                    raise ValueError("{name.lower()} needs page_size {size}")


        EntryClass = {name}ForCausalLM
        """
    )


def test_a_flag_the_models_override_sets_itself_is_no_fix_for_that_model(tmp_path: Path) -> None:
    records = records_by_message(
        tmp_path,
        {
            ARGS: PAGED_ARGS,
            "python/sglang/srt/arg_groups/overrides.py": MODEL_OVERRIDES,
            "python/sglang/srt/models/owl.py": _paged_model("Owl", 256),
            "python/sglang/srt/models/lark.py": _paged_model("Lark", 64),
            "python/sglang/srt/models/wren.py": _paged_model("Wren", 32),
        },
    )
    # Every Owl launch gets sglang's own page size: the check is sglang's, not the user's.
    owl = records["owl needs page_size 256"]
    assert owl.errorType == "internal-invariant", owl.documentation
    assert (
        "sglang sets `--page-size` itself for `OwlForCausalLM` checkpoints (to `128` or `256`)"
        in owl.solutions[0]
    )
    assert not any("Launch with `--page-size" in s for s in owl.solutions)
    # Lark's override sets it for some launches: the fix stands, with that said first.
    lark = records["lark needs page_size 64"]
    assert lark.solutions[0].startswith(
        "For `LarkForCausalLM` checkpoints sglang sets `--page-size` itself for some launches (to `64`)"
    ), lark.solutions
    assert any("--page-size 64" in s for s in lark.solutions[1:])
    # Wren's override only fills in a page size the launch left out: the user's value decides.
    wren = records["wren needs page_size 32"]
    assert not any("sglang sets" in s for s in wren.solutions), wren.solutions


def test_a_flag_the_launch_code_works_out_from_others_says_where_a_given_value_is_replaced() -> None:
    from extractor.prose.knowledge import build_knowledge
    from extractor.prose.reach import RunReach

    hook = textwrap.dedent(
        """\
        def _handle_drafts(server_args):
            if server_args.draft_topk == 1 and server_args.draft_tokens != server_args.draft_steps + 1:
                server_args.draft_tokens = server_args.draft_steps + 1
            if server_args.draft_steps is None:
                server_args.draft_steps = server_args.draft_topk + 2
            if server_args.draft_width != 4:
                server_args.draft_width = 4
        """
    )
    args = textwrap.dedent(
        """\
        from dataclasses import dataclass


        @dataclass
        class ServerArgs:
            draft_tokens: int = None
            draft_steps: int = None
            draft_topk: int = 1
            draft_width: int = 2

            @staticmethod
            def add_cli_args(parser):
                parser.add_argument("--draft-tokens", type=int)
                parser.add_argument("--draft-steps", type=int)
                parser.add_argument("--draft-topk", type=int)
                parser.add_argument("--draft-width", type=int)
        """
    )
    knowledge = build_knowledge(
        {ARGS: args.encode(), "python/sglang/srt/arg_groups/draft_hook.py": hook.encode()}
    )
    # Filling in a flag left out, or a constant under a test of the handler alone, is not said.
    assert dict(knowledge.rewritten) == {
        "--draft-tokens": (("draft_steps + 1", "draft_topk == 1 and draft_tokens != draft_steps + 1"),)
    }
    partial = {**_partial("Verifier.check"), "documentation": "d. Cause: a launch flag (`--draft-tokens`)."}
    run = RunReach({}, {}, rewritten=knowledge.rewritten)
    got = run.apply("python/sglang/srt/speculative/verify.py", partial)
    assert got["solutions"][0] == (
        "sglang sets `--draft-tokens` itself to `draft_steps + 1` when `draft_topk == 1 and draft_tokens != "
        "draft_steps + 1`, replacing a value you give: with such a launch the value this check reads is "
        "that one, not yours"
    )
    # The launch code's own checks may run before it.
    assert (
        run.apply("python/sglang/srt/arg_groups/draft_hook.py", partial)["solutions"] == partial["solutions"]
    )


def test_a_gate_the_record_already_says_to_drop_is_not_offered_twice() -> None:
    from extractor.prose.reach import RunReach

    switch = (frozenset({("flag", "--enable-adapters", ())}),)
    partial = _partial("Layer.apply", solutions=["Launch without `--enable-adapters`"])
    got = RunReach({"a.py": {"Layer.apply": switch}}, {}, switches={"--enable-adapters"}).apply(
        "a.py", partial
    )
    assert got["solutions"] == ["Launch without `--enable-adapters`"]


GATHER_FILES = {
    ARGS: SERVER_ARGS,
    "python/sglang/srt/utils/layout.py": """\
        from sglang.srt.utils.platform import is_hip


        def needs_gather(server_args):
            # Every true return sits under the adapters switch; the early exits say nothing true.
            if server_args.enable_adapters:
                if server_args.tp_size > 1:
                    return True
                elif is_hip():
                    return True
                return server_args.quantization is None
            return False


        def gather_after_check(server_args):
            if not server_args.enable_adapters:
                return False
            width = server_args.tp_size
            return width > 2


        def reshape(out):
            if out.ndim == 3:
                return out.transpose(0, 1)
            return out.flatten()


        def sometimes(server_args):
            if server_args.enable_adapters:
                return True
            return server_args.tp_size > 4
        """,
    "python/sglang/srt/layers/gather.py": """\
        from sglang.srt.utils.layout import gather_after_check, needs_gather, reshape, sometimes


        def gather_rows(x):
            raise ValueError("rows out of order")


        def gather_cols(x):
            raise ValueError("cols out of order")


        def reshaped(x):
            raise ValueError("bad shape")


        def either(x):
            raise ValueError("either")


        def boxed(x):
            raise ValueError("boxed")


        def fast_path(x):
            raise ValueError("fast path")


        def merged_path(x):
            raise ValueError("merged path")


        def staged(server_args, x):
            use_fast = False
            if server_args.enable_adapters and server_args.tp_size > 1:
                use_fast = True
            if use_fast:
                fast_path(x)


        def merged(server_args, x):
            fused = False
            if server_args.enable_adapters:
                fused = True
            if server_args.tp_size > 4:
                fused = True
            if fused:
                merged_path(x)


        def flagged_path(x):
            raise ValueError("flagged path")


        def flagged(server_args, x):
            fused = server_args.enable_adapters
            if server_args.tp_size > 4:
                fused = True
            if fused:
                flagged_path(x)


        def assemble(server_args, x):
            build = bool(server_args.enable_adapters)
            return boxed(x) if build else None


        def run(server_args, x):
            if needs_gather(server_args):
                gather_rows(x)
            if gather_after_check(server_args):
                gather_cols(x)
            if reshape(x):
                reshaped(x)
            if sometimes(server_args):
                either(x)
        """,
}


def test_a_predicate_whose_every_true_return_sits_under_a_flag_selects_that_flag() -> None:
    reach = _site_reach({p: _source(p) if p == ARGS else textwrap.dedent(s) for p, s in GATHER_FILES.items()})
    adapters = ("flag", "--enable-adapters", ())
    path = "python/sglang/srt/layers/gather.py"
    # Nested returns under ``if server_args.enable_adapters:``, and a true return after an early
    # ``return False`` unless the flag is on: both need the flag.
    assert reach.of(path, "gather_rows") == (frozenset({adapters}),)
    assert reach.of(path, "gather_cols") == (frozenset({adapters}),)
    # A function that returns a computed value tests nothing; one with a true return outside the
    # flag's test does not need the flag.
    assert reach.of(path, "reshaped") == ()
    assert reach.of(path, "either") == ()
    # A local set true only under the flag's test; one also set true under another test says
    # nothing sure.
    assert reach.of(path, "fast_path") == (frozenset({adapters}),)
    assert reach.of(path, "merged_path") == ()
    # A local read from the flag and set true elsewhere holds no flag's value alone.
    assert reach.of(path, "flagged_path") == ()
    # ``bool(x)`` is true where ``x`` is, through a local too.
    assert reach.of(path, "boxed") == (frozenset({adapters}),)


TABLE_FILES = {
    ARGS: SERVER_ARGS,
    "python/sglang/srt/mem_cache/parts.py": """\
        import enum


        class PartKind(enum.Enum):
            FULL = 1
            STATE = 2


        class StatePart:
            def evict(self):
                raise ValueError("state part out of sync")


        class FullPart:
            pass


        PART_TABLE: dict = {
            PartKind.FULL: FullPart,
            PartKind.STATE: StatePart,
        }
        """,
    "python/sglang/srt/mem_cache/adapter_parts.py": """\
        from sglang.srt.mem_cache.parts import StatePart


        class AdapterStatePart(StatePart):
            pass


        def make_part(server_args):
            if server_args.enable_adapters:
                return AdapterStatePart()
            return None
        """,
}


def test_a_class_in_a_table_keyed_by_enum_members_is_not_narrowed_to_its_subclasses_ways() -> None:
    reach = _site_reach({p: _source(p) if p == ARGS else textwrap.dedent(s) for p, s in TABLE_FILES.items()})
    # The table builds ``StatePart`` for whoever reads it: the subclass's flag is no condition of
    # the base's own code.
    assert reach.of("python/sglang/srt/mem_cache/parts.py", "StatePart.evict") == ()
    assert reach.of("python/sglang/srt/mem_cache/adapter_parts.py", "make_part") == ()


def test_a_choice_turned_into_its_enum_member_still_names_the_flag_value() -> None:
    files = {
        ARGS: SERVER_ARGS,
        "python/sglang/srt/layers/layout.py": textwrap.dedent(
            """\
            import enum


            class LayoutKind(enum.Enum):
                PAGED = "paged"
                SPARSE = "sparse"

                @classmethod
                def from_string(cls, name):
                    return cls[name.upper()]


            class SparseLayout:
                def plan(self):
                    raise NotImplementedError("sparse layout planning will land later")


            def init_layout(server_args):
                kind = LayoutKind.from_string(server_args.attention_backend)
                if kind == LayoutKind.SPARSE:
                    SparseLayout().plan()
            """
        ),
    }
    reach = _site_reach(files)
    got = reach.of("python/sglang/srt/layers/layout.py", "SparseLayout.plan")
    assert got == (frozenset({("flag", "--attention-backend", ("sparse",))}),), got


def test_a_runtime_platform_test_is_a_platform_gate() -> None:
    source = textwrap.dedent(
        """\
        from sglang.jit_kernel.utils import is_hip_runtime

        _is_hip = is_hip_runtime()


        def route(x):
            if is_hip_runtime():
                rocm_kernel(x)
            if _is_hip:
                rocm_other(x)
        """
    )
    facts = file_facts("python/sglang/jit_kernel/route.py", ast.parse(source))
    for callee in ("rocm_kernel", "rocm_other"):
        (call,) = facts.calls[callee]
        assert [facts.atoms[int(i)] for i in call.guards] == [("p", "hip")], callee


def test_a_value_test_of_a_flag_no_registry_lists_offers_another_declared_choice(tmp_path: Path) -> None:
    files = {
        ARGS: SERVER_ARGS,
        "python/sglang/srt/layers/moe/tiled.py": textwrap.dedent(
            """\
            class TiledRunner:
                def run(self):
                    raise ValueError("tiled runner lost its tiles")


            def make_runner(server_args):
                if server_args.moe_runner_backend == "tiled":
                    return TiledRunner().run()
                return None
            """
        ),
    }
    record = records_by_message(tmp_path, files)["tiled runner lost its tiles"]
    # The flag declares three choices and nothing registers them: another declared one is the way out.
    assert any("use another one, e.g. `--moe-runner-backend auto`" in s for s in record.solutions), (
        record.solutions
    )


def test_a_case_the_raising_class_leaves_out_names_the_value_the_class_is_named_after() -> None:
    # ``MxfpPool`` (the pool ``--kv-dtype mxfp`` builds) has no buffers to hand to a transfer: the KV
    # dtype lacks the case, though the disaggregation mode also leads here.
    partial = {
        "id": "MxfpPool.get_buffers\x1fraise\x00" + "0",
        "filePath": "python/sglang/srt/mem_cache/pool.py",
        "errorType": "not-implemented",
        "errorMessage": "KV transfer is unsupported for the mxfp KV cache",
        "documentation": f"Raised for a transfer. {INTERNAL_CAUSE}",
        "triggerScenarios": "A transfer.",
        "tags": ["mem-cache"],
        "solutions": [f"{INTERNAL_CHECK}`MxfpPool.get_buffers`: report it"],
        "exampleFix": "# before: get_buffers(...)\npython3 -m sglang.check_env",
    }
    reach = (
        frozenset({("flag", "--disagg-mode", ("decode", "prefill")), ("flag", "--kv-dtype", ("mxfp",))}),
    )
    choices = {"--disagg-mode": ("null", "decode", "prefill"), "--kv-dtype": ("auto", "fp8", "mxfp")}
    out = with_reach(partial, reach, choices)
    assert (
        "Cause: the launch selected `--kv-dtype mxfp`, which does not implement this case"
        in out["documentation"]
    )
    assert "--kv-dtype mxfp" in out["exampleFix"].split("# after")[0]
    # A message that names what lacks the case ("not supported by the decode side") says so first.
    told = with_reach(
        {**partial, "errorMessage": "mxfp pools are not supported by the decode side"}, reach, choices
    )
    assert "Cause: the launch selected `--disagg-mode decode / prefill`" in told["documentation"]


def test_a_checkpoint_moved_to_a_faster_variant_of_its_kind_can_ask_for_the_plain_kind() -> None:
    from extractor.prose.reach import _workarounds

    reach = (frozenset({("flag", "--quantization", ("int4_marlin",))}),)
    choices = {"--quantization": ["fp8", "int4", "int4_marlin", "int4_mixed", "mixed"]}
    declared, kept = _workarounds(reach, choices, agreed={"--quantization"})
    assert declared.startswith(
        "This code runs only when the quantization is `int4_marlin`: a checkpoint that"
    )
    assert "(a value on the command line that does not fit it is refused)" in declared
    assert kept == (
        "A checkpoint that declares `int4` is run with `int4_marlin` where its layers allow it: "
        "`--quantization int4` keeps it on the `int4` kernels instead"
    )
    # Both kinds on the path: asking for the plain one leads there too.
    both = (frozenset({("flag", "--quantization", ("int4", "int4_marlin"))}),)
    assert len(_workarounds(both, choices, agreed={"--quantization"})) == 1
    # A compound name of another kind is no faster kernel of its first word.
    mixed = (frozenset({("flag", "--quantization", ("int4_mixed",))}),)
    assert len(_workarounds(mixed, choices, agreed={"--quantization"})) == 1


def test_a_choice_an_earlier_check_of_the_function_requires_is_no_way_around_it() -> None:
    from extractor.prose.reach import _held_names, _required

    survivors = ["not not lora_info.use_virtual_experts", "not (algo == 'tiled' and dp)"]
    assert _held_names(survivors[0]) == ["use_virtual_experts"]
    assert _held_names(survivors[1]) == []
    assert _held_names("not server_args.mode not in ('a', 'b')") == ["mode"]
    assert _held_names("not (not args.enable_x or args.k is None)") == ["enable_x", "k"]
    off = "This code runs only with `--use-virtual-experts`: if you can do without it, launch without it"
    assert _required(off, survivors, frozenset())
    # The callers already need it: leaving it out skips the whole function, earlier check included.
    assert not _required(off, survivors, frozenset({"--use-virtual-experts"}))
    other = "This code runs only with `--enable-lora`: if you can do without it, launch without it"
    assert not _required(other, survivors, frozenset())


def test_every_way_in_needing_one_flag_gives_a_way_around_with_another_value() -> None:
    from extractor.prose.reach import _shared, _workarounds

    reach = (
        frozenset({("flag", "--attention-backend", ("flex",))}),
        frozenset({("flag", "--attention-backend", ("flex", "paged")), ("flag", "--enable-adapters", ())}),
    )
    assert _shared(reach) == (frozenset({("flag", "--attention-backend", ("flex", "paged"))}),)
    (way,) = _workarounds(reach, {"--attention-backend": ["flex", "paged", "sparse"]})
    assert way == (
        "This code runs only with `--attention-backend flex / paged`: if that attention backend is not "
        "required, use another one, e.g. `--attention-backend sparse`"
    )
    # A flag only one way in needs is no way around the other.
    apart = (
        frozenset({("flag", "--attention-backend", ("flex",))}),
        frozenset({("flag", "--enable-adapters", ())}),
    )
    assert _shared(apart) == ()
