"""Reach through the user's choices hidden behind a name: an import that only runs on one platform,
a predicate function a guard calls instead of reading the flag itself, and a helper that hands back
the checkpoint's config only when it is of some config classes (``isinstance``), which the
architectures whose model files use those configs are served with."""

from __future__ import annotations

import ast
import textwrap

import pytest

from extractor.reach import SiteReach
from tests.conftest import site_reach_of

ARGS = "python/sglang/srt/server_args.py"
SERVER_ARGS = """\
from dataclasses import dataclass


@dataclass
class ServerArgs:
    enable_adapters: bool = False
    mixer_backend: str = "plain"

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--enable-adapters", action="store_true")
        parser.add_argument("--mixer-backend", type=str, choices=["plain", "blocked"])
"""

FILES = {
    ARGS: SERVER_ARGS,
    "python/sglang/srt/utils.py": """\
        def is_npu():
            return False


        def get_server_args():
            return None
    """,
    # A kernel module anyone may import; who calls it decides where it runs.
    "python/sglang/kernels/rotary.py": """\
        def fused_rotate(x):
            if x is None:
                raise ValueError("nothing to rotate")
            return x


        def plain_rotate(x):
            if x is None:
                raise ValueError("nothing to rotate")
            return x
    """,
    # Bound only on NPU: its calls run there, whatever guards the call itself.
    "python/sglang/srt/layers/rope.py": """\
        from sglang.srt.utils import is_npu

        _is_npu = is_npu()

        if _is_npu:
            from sglang.kernels.rotary import fused_rotate


        def rotate(x):
            if x.shape[0] > 1:
                return fused_rotate(x)
            return x
    """,
    # The same name bound with and without a guard: the guard says nothing sure.
    "python/sglang/srt/layers/rope_any.py": """\
        from sglang.srt.utils import is_npu

        if is_npu():
            from sglang.kernels.rotary import plain_rotate


        def apply(x):
            from sglang.kernels.rotary import plain_rotate

            return plain_rotate(x)
    """,
    # Predicates a guard calls: one reads a flag, one only its parameter.
    "python/sglang/srt/layers/choices.py": """\
        from sglang.srt.utils import get_server_args


        def adapters_on():
            \"\"\"Whether adapters were asked for.\"\"\"
            return get_server_args().enable_adapters


        def is_blocked(mixer_backend):
            return mixer_backend == "blocked"


        def _adapter_step(x):
            if x is None:
                raise ValueError("no input")


        def _blocked_step(x):
            if x is None:
                raise ValueError("no input")


        def step(x, backend):
            if adapters_on():
                _adapter_step(x)
            if is_blocked(backend):
                _blocked_step(x)
    """,
    # A config class built from the checkpoint, the model file that serves it, and a helper that
    # returns the config only for that class.
    "python/sglang/srt/configs/toy_linear.py": """\
        from transformers import PretrainedConfig


        class ToyLinearConfig(PretrainedConfig):
            model_type = "toy_linear"
    """,
    "python/sglang/srt/configs/toy_mixed.py": """\
        from transformers import PretrainedConfig


        class ToyMixedConfig(PretrainedConfig):
            model_type = "toy_mixed"


        class ToyMixedTextConfig(ToyMixedConfig):
            model_type = "toy_mixed_text"
    """,
    "python/sglang/srt/models/toy_linear.py": """\
        from sglang.srt.configs.toy_linear import ToyLinearConfig


        class ToyLinearForCausalLM:
            def __init__(self, config: ToyLinearConfig):
                self.config = config


        EntryClass = ToyLinearForCausalLM
    """,
    "python/sglang/srt/models/toy_mixed.py": """\
        from sglang.srt.configs.toy_mixed import ToyMixedConfig


        class ToyMixedForCausalLM:
            def __init__(self, config: ToyMixedConfig):
                self.config = config


        EntryClass = ToyMixedForCausalLM
    """,
    "python/sglang/srt/configs/arch.py": """\
        from sglang.srt.configs.toy_linear import ToyLinearConfig
        from sglang.srt.configs.toy_mixed import ToyMixedConfig


        def toy_linear_config(model_config):
            config = model_config.hf_config
            if isinstance(config, ToyLinearConfig):
                return config
            return None


        def toy_mixed_config(model_config):
            config = model_config.hf_config
            if isinstance(config, (ToyMixedConfig,)):
                return config
            return None
    """,
    "python/sglang/srt/layers/linear_backends.py": """\
        from sglang.srt.configs.arch import toy_linear_config, toy_mixed_config


        class LinearBackend:
            def forward(self, x):
                if x is None:
                    raise ValueError("no input")


        class WalrusBackend:
            def forward(self, x):
                if x is None:
                    raise ValueError("no input")


        class MixedBackend:
            def forward(self, x):
                if x is None:
                    raise ValueError("no input")


        def wrap(runner):
            if toy_linear_config(runner.model_config) is not None:
                return LinearBackend()
            if cfg := toy_linear_config(runner.model_config):
                return WalrusBackend()
            if toy_mixed_config(runner.model_config) is not None:
                return MixedBackend()
            return None
    """,
    # A package that re-exports its modules with ``import *``: a call through the package runs them.
    "python/sglang/srt/dist/__init__.py": """\
        from sglang.srt.dist.helpers import *
        from sglang.srt.dist.world import *
    """,
    "python/sglang/srt/dist/helpers.py": """\
        def describe():
            return "world"
    """,
    "python/sglang/srt/dist/world.py": """\
        def start_world(size):
            if size < 1:
                raise ValueError("empty world")
    """,
    "python/sglang/srt/dist/launch.py": """\
        from sglang.srt.dist import start_world


        def launch(server_args):
            if server_args.enable_adapters:
                start_world(2)
    """,
}


@pytest.fixture(scope="module")
def reach() -> SiteReach:
    files = {p: (s if p == ARGS else textwrap.dedent(s)) for p, s in FILES.items()}
    return site_reach_of(files, ARGS)


def test_a_call_through_a_platform_gated_import_runs_on_that_platform(reach: SiteReach) -> None:
    got = reach.of("python/sglang/kernels/rotary.py", "fused_rotate")
    assert got == (frozenset({("platform", "npu", ())}),)


def test_a_name_also_bound_without_the_gate_is_not_narrowed(reach: SiteReach) -> None:
    assert reach.of("python/sglang/kernels/rotary.py", "plain_rotate") == ()


def test_a_predicate_that_returns_a_flag_selects_that_flag(reach: SiteReach) -> None:
    got = reach.of("python/sglang/srt/layers/choices.py", "_adapter_step")
    assert got == (frozenset({("flag", "--enable-adapters", ())}),)


def test_a_predicate_of_its_own_parameter_says_nothing_of_the_caller(reach: SiteReach) -> None:
    # ``mixer_backend`` is the caller's value, whatever the parameter is named.
    assert reach.of("python/sglang/srt/layers/choices.py", "_blocked_step") == ()


def test_a_config_returned_only_for_one_class_selects_its_architectures(reach: SiteReach) -> None:
    got = reach.of("python/sglang/srt/layers/linear_backends.py", "LinearBackend.forward")
    assert got == (frozenset({("arch", "ToyLinearForCausalLM", ())}),)


def test_a_walrus_test_reads_the_value_it_binds(reach: SiteReach) -> None:
    got = reach.of("python/sglang/srt/layers/linear_backends.py", "WalrusBackend.forward")
    assert got == (frozenset({("arch", "ToyLinearForCausalLM", ())}),)


def test_a_config_class_with_a_subclass_no_model_serves_names_nothing(reach: SiteReach) -> None:
    # ``isinstance`` also holds for ``ToyMixedTextConfig``, which no model file is known to use.
    assert reach.of("python/sglang/srt/layers/linear_backends.py", "MixedBackend.forward") == ()


def test_a_name_a_package_re_exports_with_a_star_import_is_followed(reach: SiteReach) -> None:
    got = reach.of("python/sglang/srt/dist/world.py", "start_world")
    assert got == (frozenset({("flag", "--enable-adapters", ())}),)


def test_an_enum_named_with_its_acronyms_split_otherwise_is_its_flags_value() -> None:
    # ``DSATopKBackend`` holds ``--dsa-topk-backend``'s value though its name splits "TopK" off; its
    # ``is_sgl_kernel()`` is the choice ``sgl-kernel``, spelled with a dash on the command line.
    args = textwrap.dedent(
        """\
        from dataclasses import dataclass


        @dataclass
        class ServerArgs:
            dsa_topk_backend: str = "sgl-kernel"

            @staticmethod
            def add_cli_args(parser):
                parser.add_argument("--dsa-topk-backend", type=str, choices=["sgl-kernel", "torch"])
        """
    )
    topk = textwrap.dedent(
        """\
        from enum import Enum

        from sglang.srt.kernels import fused_topk


        class DSATopKBackend(Enum):
            SGL_KERNEL = "sgl-kernel"
            TORCH = "torch"

            def is_sgl_kernel(self):
                return self == DSATopKBackend.SGL_KERNEL

            def select(self, scores):
                if self.is_sgl_kernel():
                    return fused_topk(scores)
                return scores


        def serve(server_args, scores):
            return DSATopKBackend(server_args.dsa_topk_backend).select(scores)
        """
    )
    kernels = "def fused_topk(scores):\n    if scores < 0:\n        raise ValueError('negative scores')\n"
    sites = site_reach_of(
        {ARGS: args, "python/sglang/srt/topk.py": topk, "python/sglang/srt/kernels.py": kernels}, ARGS
    )
    assert sites.of("python/sglang/srt/kernels.py", "fused_topk") == (
        frozenset({("flag", "--dsa-topk-backend", ("sgl-kernel",))}),
    )


def test_a_value_test_that_returned_early_takes_its_values_out_of_a_later_family_test() -> None:
    # ``is_eagle()`` covers ``frozen``, but ``create_worker`` returns for ``frozen`` first: the eagle
    # worker never runs with it.
    args = textwrap.dedent(
        """\
        from dataclasses import dataclass


        @dataclass
        class ServerArgs:
            speculative_algorithm: str = None

            @staticmethod
            def add_cli_args(parser):
                parser.add_argument("--speculative-algorithm", type=str, choices=["eagle", "eagle3", "frozen"])
        """
    )
    spec = textwrap.dedent(
        """\
        from enum import Enum

        from sglang.srt.workers import EagleWorker, FrozenWorker


        class SpeculativeAlgorithm(Enum):
            EAGLE = "eagle"
            EAGLE3 = "eagle3"
            FROZEN = "frozen"

            def is_eagle(self):
                return self in (SpeculativeAlgorithm.EAGLE, SpeculativeAlgorithm.EAGLE3, SpeculativeAlgorithm.FROZEN)

            def is_frozen(self):
                return self == SpeculativeAlgorithm.FROZEN

            def create_worker(self):
                if self.is_frozen():
                    return FrozenWorker
                if self.is_eagle():
                    return EagleWorker
                return None


        def serve(server_args):
            SpeculativeAlgorithm(server_args.speculative_algorithm).create_worker()().step(1)
        """
    )
    workers = textwrap.dedent(
        """\
        class EagleWorker:
            def step(self, n):
                if n < 0:
                    raise ValueError("negative draft step")


        class FrozenWorker:
            def step(self, n):
                return n
        """
    )
    sites = site_reach_of(
        {ARGS: args, "python/sglang/srt/spec.py": spec, "python/sglang/srt/workers.py": workers}, ARGS
    )
    assert sites.of("python/sglang/srt/workers.py", "EagleWorker.step") == (
        frozenset({("flag", "--speculative-algorithm", ("eagle", "eagle3"))}),
    )


@pytest.mark.parametrize(
    ("text", "platform"),
    [
        ("is_cuda()", "cuda"),
        ("_is_hip", "hip"),
        ("self._is_npu", "npu"),
        ("utils.is_xpu()", "xpu"),
        # Where a tensor lives is no platform: a ROCm GPU's tensors say ``is_cuda`` too.
        ("dst.is_cuda", None),
        ("x.weight.is_cpu", None),
    ],
)
def test_a_platform_gate_is_a_call_or_a_flag_of_the_module_not_a_tensors_device(
    text: str, platform: str | None
) -> None:
    from extractor.reach.guard_atoms import platform_word

    assert platform_word(ast.parse(text, mode="eval").body) == platform
