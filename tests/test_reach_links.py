"""Reach through the links a plain call graph misses: an enum built from a flag's value and tested
under its own name, a custom op called as ``torch.ops.<namespace>.<name>``, an autograd function's
``apply``, a flag copied into a module global by a setter, an import whose alternatives bind one
name to an outside package and to the target's own module, a model config built from the
checkpoint, and a table of choices built inside a function."""

from __future__ import annotations

import textwrap

import pytest

from extractor.reach import SiteReach
from tests.conftest import site_reach_of

ARGS = "python/sglang/srt/server_args.py"
SERVER_ARGS = """\
from dataclasses import dataclass


@dataclass
class ServerArgs:
    handoff_mode: str = "null"
    handoff_wire: str = "tcp"
    enable_fast_reduce: bool = False
    enable_adapters: bool = False
    mixer_backend: str = "plain"
    tp_size: int = 1

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--handoff-mode", type=str, choices=["null", "sender", "receiver"])
        parser.add_argument("--handoff-wire", type=str, choices=["tcp", "rdma", "shm"])
        parser.add_argument("--enable-fast-reduce", action="store_true")
        parser.add_argument("--enable-adapters", action="store_true")
        parser.add_argument("--mixer-backend", type=str, choices=["plain", "blocked"])
        parser.add_argument("--tp-size", type=int, default=1)
"""

FILES = {
    ARGS: SERVER_ARGS,
    # An enum whose name is no flag, built from a flag's value, picks a class by its member.
    "python/sglang/srt/handoff/kinds.py": """\
        from enum import Enum


        class WireKind(Enum):
            TCP = "tcp"
            RDMA = "rdma"
            SHM = "shm"


        def pick_sender(wire_kind):
            from sglang.srt.handoff.rdma import RdmaSender
            from sglang.srt.handoff.tcp import TcpSender

            if wire_kind == WireKind.RDMA:
                return RdmaSender
            return TcpSender
    """,
    "python/sglang/srt/handoff/rdma.py": """\
        class RdmaSender:
            def send(self, blob):
                if not blob:
                    raise ValueError("empty blob")
    """,
    "python/sglang/srt/handoff/tcp.py": """\
        class TcpSender:
            def send(self, blob):
                if not blob:
                    raise ValueError("empty blob")
    """,
    "python/sglang/srt/handoff/service.py": """\
        from sglang.srt.handoff.kinds import WireKind, pick_sender


        def start(server_args):
            wire_kind = WireKind(server_args.handoff_wire)
            sender = pick_sender(wire_kind)()
            sender.send(b"x")
    """,
    # A custom op registered under a name and called only through ``torch.ops``; a second op
    # that nothing calls.
    "python/sglang/kernels/mixing.py": """\
        import torch

        from sglang.srt.utils.ops import register_op


        def _blocked_mix_impl(x):
            if x.dim() != 2:
                raise ValueError("blocked mix needs a matrix")
            return x


        register_op(op_name="blocked_mix", op_func=_blocked_mix_impl)


        def _unused_impl(x):
            raise NotImplementedError("never registered for use")


        register_op("unused_mix", op_func=_unused_impl)
    """,
    "python/sglang/srt/layers/mixer.py": """\
        import torch


        class Mixer:
            def __init__(self, server_args):
                self.backend = server_args.mixer_backend

            def forward(self, x, server_args):
                if server_args.mixer_backend == "blocked":
                    return torch.ops.sglang.blocked_mix(x)
                return x


        def build(server_args):
            return Mixer(server_args)
    """,
    # An autograd function: ``apply`` runs ``forward``.
    "python/sglang/kernels/grad_fn.py": """\
        import torch


        def _scaled_kernel(x):
            if x.numel() == 0:
                raise ValueError("empty input")
            return x


        class ScaledFn(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return _scaled_kernel(x)


        def scaled(x):
            return ScaledFn.apply(x)
    """,
    "python/sglang/srt/layers/adapters.py": """\
        from sglang.kernels.grad_fn import scaled


        def run(server_args, x):
            if server_args.enable_adapters:
                return scaled(x)
            return x
    """,
    # A flag copied into a module global by a setter, read back as a default of a parameter that
    # decides whether a communicator is built.
    "python/sglang/srt/distributed/state.py": """\
        _FAST_REDUCE = False


        def set_fast_reduce(enable):
            global _FAST_REDUCE
            _FAST_REDUCE = enable


        class FastReducer:
            def reduce(self, x):
                if x is None:
                    raise ValueError("nothing to reduce")
                return x


        class Group:
            def __init__(self, use_fast_reduce):
                self.reducer = None
                if use_fast_reduce:
                    self.reducer = FastReducer()


        def make_group(use_fast_reduce=None):
            if use_fast_reduce is None:
                use_fast_reduce = _FAST_REDUCE
            return Group(use_fast_reduce=use_fast_reduce)


        def all_reduce(group, x):
            return group.reducer.reduce(x)
    """,
    "python/sglang/srt/distributed/boot.py": """\
        from sglang.srt.distributed.state import make_group, set_fast_reduce


        def boot(server_args):
            set_fast_reduce(server_args.enable_fast_reduce)
            make_group()
    """,
    # One name, two imports: an outside package first, the target's own module as the fallback.
    "python/sglang/kernels/fused/__init__.py": """\
        def fused_norm(x):
            if x is None:
                raise ValueError("no input")
            return x
    """,
    "python/sglang/kernels/norm_entry.py": """\
        try:
            from outside_pkg.fused import fused_norm as _fused_norm
        except ImportError:
            from sglang.kernels.fused import fused_norm as _fused_norm


        def norm(x):
            return _fused_norm(x)
    """,
    "python/sglang/srt/layers/norm.py": """\
        from sglang.kernels.norm_entry import norm


        def apply_norm(server_args, x):
            if server_args.mixer_backend == "blocked":
                return norm(x)
            return x
    """,
    # A model config no code of the target builds: the checkpoint's config.json does, for the
    # model file that imports it.
    "python/sglang/srt/configs/toy_hybrid.py": """\
        from transformers import PretrainedConfig


        class ToyHybridConfig(PretrainedConfig):
            def __init__(self, mixer_layers=None, **kwargs):
                if mixer_layers is None:
                    raise ValueError("mixer_layers is required")
                super().__init__(**kwargs)
    """,
    "python/sglang/srt/models/toy_hybrid.py": """\
        from sglang.srt.configs.toy_hybrid import ToyHybridConfig


        class ToyHybridForCausalLM:
            def __init__(self, config: ToyHybridConfig):
                self.config = config


        EntryClass = ToyHybridForCausalLM
    """,
    # A table of factories by backend name, built in a function and looked up by the flag's value;
    # the class also gathered into a list of types is not built there.
    "python/sglang/srt/speculative/draft_factory.py": """\
        class DraftFactory:
            def __init__(self, server_args):
                self.server_args = server_args

            def create(self):
                table = {
                    "plain": self._make_plain,
                    "blocked": self._make_blocked,
                }
                return table[self.server_args.mixer_backend]()

            def _make_plain(self):
                return None

            def _make_blocked(self):
                from sglang.srt.layers.blocked_draft import BlockedDraft

                return BlockedDraft()


        def check_graphs(backend):
            from sglang.srt.layers.blocked_draft import BlockedDraft

            kinds = []
            kinds.append(BlockedDraft)
            known = [BlockedDraft, DraftFactory]
            return isinstance(backend, tuple(kinds)) or type(backend) in known


        def start_draft(server_args):
            if server_args.enable_adapters:
                DraftFactory(server_args).create()
    """,
    "python/sglang/srt/layers/blocked_draft.py": """\
        class BlockedDraft:
            def step(self, x):
                if x is None:
                    raise ValueError("no draft input")


        def draft_step(draft, x):
            return draft.step(x)
    """,
    # A property typed by its return annotation is the receiver of a call.
    "python/sglang/srt/runner.py": """\
        class Runner:
            def prepare(self):
                if not self:
                    raise RuntimeError("runner not ready")
    """,
    "python/sglang/srt/worker.py": """\
        from sglang.srt.runner import Runner


        class Worker:
            def __init__(self):
                self._runner = Runner()

            @property
            def runner(self) -> Runner:
                return self._runner

            def warm(self, server_args):
                if server_args.enable_adapters:
                    self.runner.prepare()


        def start(server_args):
            Worker().warm(server_args)
    """,
    # A branch also taken with the flag left unset selects nothing.
    "python/sglang/srt/handoff/roles.py": """\
        def open_side(server_args):
            if server_args.handoff_mode in ("null", "sender"):
                return _sender_side()
            if server_args.handoff_mode == "receiver":
                return _receiver_side()


        def _sender_side():
            raise NotImplementedError("sender side")


        def _receiver_side():
            raise NotImplementedError("receiver side")
    """,
    # An early exit: what follows runs only when its test failed.
    "python/sglang/srt/detok/router.py": """\
        def _route_many(server_args):
            raise RuntimeError("routing to several workers failed")


        def start_detok(server_args):
            if server_args.enable_adapters is None:
                return None
            if server_args.tp_size <= 1:
                return None
            return _route_many(server_args)
    """,
    # A constructor runs whenever its class is built, not only from a subclass's ``super()``.
    "python/sglang/srt/workers/base.py": """\
        from sglang.srt.utils import is_cpu


        class DeviceWorker:
            def __init__(self, rank):
                if rank < 0:
                    raise ValueError("negative rank")


        class HostWorker(DeviceWorker):
            def __init__(self, rank):
                super().__init__(rank)


        def make_worker(rank):
            if is_cpu():
                return HostWorker(rank)
            return DeviceWorker(rank)
    """,
    # A module-level table of layer classes keyed by what the checkpoint's config lists: each one is
    # built wherever the table is read, for the model that reads it.
    "python/sglang/srt/models/toy_mixed.py": """\
        class ToyMixerLayer:
            def __init__(self, config, idx):
                if config.num_heads % 2:
                    raise ValueError("odd head count")


        class ToyAttentionLayer:
            def __init__(self, config, idx):
                if not config.num_heads:
                    raise ValueError("no heads")


        class ToyUnlistedLayer:
            def __init__(self, config, idx):
                if not config.num_heads:
                    raise ValueError("no heads")


        LAYER_TYPES = {"mixer": ToyMixerLayer, "attention": ToyAttentionLayer}


        class ToyMixedModel:
            def __init__(self, config):
                def make(idx):
                    kind = LAYER_TYPES[config.layer_types[idx]]
                    return kind(config, idx)

                self.layers = [make(i) for i in range(config.num_layers)]


        class ToyMixedForCausalLM:
            def __init__(self, config):
                self.model = ToyMixedModel(config)


        EntryClass = ToyMixedForCausalLM
    """,
    # A module-level table keyed by a flag's choices, read under a switch.
    "python/sglang/srt/layers/mixers.py": """\
        class PlainMixer:
            def __init__(self, width):
                if width <= 0:
                    raise ValueError("plain mixer width")


        class BlockedMixer:
            def __init__(self, width):
                if width <= 0:
                    raise ValueError("blocked mixer width")


        MIXERS = {"plain": PlainMixer, "blocked": BlockedMixer}


        def build_mixer(server_args, width):
            if server_args.enable_adapters:
                return MIXERS.get(server_args.mixer_backend)(width)
    """,
    # Module-level code runs where the module is imported: here only inside a factory picked by a
    # flag's value, through a second module that imports it at its top.
    "python/sglang/srt/mixing/factory.py": """\
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            from sglang.srt.mixing.typed_only import Hint


        def make_mixer(server_args):
            if server_args.mixer_backend == "blocked":
                from sglang.srt.mixing.blocked_impl import BlockedImpl

                return BlockedImpl()
            import importlib

            return importlib.import_module("sglang.srt.mixing.by_name")
    """,
    "python/sglang/srt/mixing/blocked_impl.py": """\
        from sglang.srt.mixing.kernels import blocked_kernel


        class BlockedImpl:
            pass
    """,
    "python/sglang/srt/mixing/kernels.py": """\
        import os

        if os.cpu_count() is None:
            raise RuntimeError("cannot size the blocked kernel")


        def kernel_cache(fn):
            return KernelCache(fn)


        class KernelCache:
            def __init__(self, fn):
                if fn is None:
                    raise ValueError("no kernel to cache")


        @kernel_cache
        def blocked_kernel(x):
            return x
    """,
    "python/sglang/srt/mixing/typed_only.py": """\
        class Hint:
            pass


        if Hint is None:
            raise RuntimeError("typed only")
    """,
    "python/sglang/srt/mixing/by_name.py": """\
        import os

        if os.cpu_count() is None:
            raise RuntimeError("imported by name")
    """,
    "python/sglang/srt/mixing/uses_by_name.py": """\
        def use_it(server_args):
            if server_args.enable_adapters:
                import sglang.srt.mixing.by_name
    """,
    # A class built only for one model: a test that a value is one runs only for that model.
    "python/sglang/srt/models/toy_paged.py": """\
        from sglang.srt.mem_cache.toy_pools import ToyPagedPool


        class ToyPagedForCausalLM:
            def __init__(self, config):
                self.pool = ToyPagedPool(config)


        EntryClass = ToyPagedForCausalLM
    """,
    "python/sglang/srt/mem_cache/toy_pools.py": """\
        class ToyPagedPool:
            def __init__(self, config):
                self.pages = config.pages


        class PlainPool:
            pass


        def transfer(pool, other):
            if isinstance(pool, ToyPagedPool):
                if other is None:
                    raise ValueError("a paged pool needs its peer")
            if isinstance(pool, (ToyPagedPool, PlainPool)):
                if other is None:
                    raise ValueError("any pool needs its peer")
    """,
    # A value handed back and forth between two classes: whichever is asked first, both hold
    # the flag their first builder was given.
    "python/sglang/srt/spec/pair.py": """\
        class Leader:
            def __init__(self, width):
                self.width = width
                self.follower = Follower(self.width)


        class Follower:
            def __init__(self, width):
                self.width = width
                if width > 8:
                    raise ValueError("the follower is too wide")

            def lead(self):
                return Leader(self.width)


        def start(server_args):
            return Leader(server_args.tp_size)
    """,
}


@pytest.fixture(scope="module")
def reach() -> SiteReach:
    files = {p: (s if p == ARGS else textwrap.dedent(s)) for p, s in FILES.items()}
    return site_reach_of(files, ARGS)


def test_an_enum_built_from_a_flag_selects_that_flags_value(reach: SiteReach) -> None:
    got = reach.of("python/sglang/srt/handoff/rdma.py", "RdmaSender.send")
    assert got == (frozenset({("flag", "--handoff-wire", ("rdma",))}),)
    # The other class is returned whatever the enum says: nothing narrows it.
    assert reach.of("python/sglang/srt/handoff/tcp.py", "TcpSender.send") == ()


def test_a_custom_op_is_reached_through_torch_ops_by_its_name(reach: SiteReach) -> None:
    got = reach.of("python/sglang/kernels/mixing.py", "_blocked_mix_impl")
    assert got == (frozenset({("flag", "--mixer-backend", ("blocked",))}),)


def test_a_custom_op_nothing_calls_is_no_way_in(reach: SiteReach) -> None:
    # Not an entry point that anyone may call: no way in is known, so nothing is said.
    assert reach.of("python/sglang/kernels/mixing.py", "_unused_impl") == ()
    assert reach.finder.reach("sglang.kernels.mixing:_unused_impl", 0) is None


def test_an_autograd_functions_apply_runs_its_forward(reach: SiteReach) -> None:
    got = reach.of("python/sglang/kernels/grad_fn.py", "_scaled_kernel")
    assert got == (frozenset({("flag", "--enable-adapters", ())}),)


def test_a_flag_a_setter_copies_into_a_global_selects_what_its_readers_build(reach: SiteReach) -> None:
    got = reach.of("python/sglang/srt/distributed/state.py", "FastReducer.reduce")
    assert got == (frozenset({("flag", "--enable-fast-reduce", ())}),)


def test_the_targets_own_module_wins_over_an_outside_alternative_import(reach: SiteReach) -> None:
    got = reach.of("python/sglang/kernels/fused/__init__.py", "fused_norm")
    assert got == (frozenset({("flag", "--mixer-backend", ("blocked",))}),)


def test_a_model_config_is_reached_for_the_architectures_whose_file_imports_it(reach: SiteReach) -> None:
    got = reach.of("python/sglang/srt/configs/toy_hybrid.py", "ToyHybridConfig.__init__")
    assert got == (frozenset({("arch", "ToyHybridForCausalLM", ())}),)


def test_a_table_built_in_a_function_selects_its_entry_by_key(reach: SiteReach) -> None:
    got = reach.of("python/sglang/srt/layers/blocked_draft.py", "BlockedDraft.step")
    # The table's key and the switch that leads to the factory both hold; the lists of types the
    # class is appended to or listed in for a type test are no way in.
    assert got == (frozenset({("flag", "--mixer-backend", ("blocked",)), ("flag", "--enable-adapters", ())}),)


def test_a_property_returning_a_class_types_the_receiver_of_a_call(reach: SiteReach) -> None:
    got = reach.of("python/sglang/srt/runner.py", "Runner.prepare")
    assert got == (frozenset({("flag", "--enable-adapters", ())}),)


def test_a_branch_also_taken_with_the_flag_unset_selects_nothing(reach: SiteReach) -> None:
    assert reach.of("python/sglang/srt/handoff/roles.py", "_sender_side") == ()
    got = reach.of("python/sglang/srt/handoff/roles.py", "_receiver_side")
    assert got == (frozenset({("flag", "--handoff-mode", ("receiver",))}),)


def test_an_early_exit_guards_what_follows_with_its_failed_test(reach: SiteReach) -> None:
    got = reach.of("python/sglang/srt/detok/router.py", "_route_many")
    # ``is None`` then return: the switch is set; ``<= 1`` then return: the size is set above it.
    assert got == (frozenset({("flag", "--enable-adapters", ()), ("flag", "--tp-size", ())}),)


def test_a_constructor_runs_wherever_its_class_is_built(reach: SiteReach) -> None:
    # The platform-gated subclass calls it too, but building the base class needs no platform.
    assert reach.of("python/sglang/srt/workers/base.py", "DeviceWorker.__init__") == ()
    got = reach.of("python/sglang/srt/workers/base.py", "HostWorker.__init__")
    assert got == (frozenset({("platform", "cpu", ())}),)


def test_a_module_level_table_of_layers_builds_each_entry_where_it_is_read(reach: SiteReach) -> None:
    model = frozenset({("arch", "ToyMixedForCausalLM", ())})
    assert reach.of("python/sglang/srt/models/toy_mixed.py", "ToyMixerLayer.__init__") == (model,)
    assert reach.of("python/sglang/srt/models/toy_mixed.py", "ToyAttentionLayer.__init__") == (model,)
    # A class of the same file that no table lists and nobody builds has no known way in.
    assert reach.finder.reach("sglang.srt.models.toy_mixed:ToyUnlistedLayer.__init__", 0) is None


def test_a_module_level_table_of_a_flags_choices_selects_its_entry_by_key(reach: SiteReach) -> None:
    got = reach.of("python/sglang/srt/layers/mixers.py", "BlockedMixer.__init__")
    assert got == (frozenset({("flag", "--mixer-backend", ("blocked",))}),)


def test_module_level_code_runs_where_its_module_is_imported(reach: SiteReach) -> None:
    blocked = (frozenset({("flag", "--mixer-backend", ("blocked",))}),)
    # Imported at the top of a module that a factory imports under the flag's value; its
    # decorator builds the cache class at import, so the constructor is reached the same way.
    assert reach.of("python/sglang/srt/mixing/kernels.py", "<module>") == blocked
    assert reach.of("python/sglang/srt/mixing/blocked_impl.py", "<module>") == blocked
    assert reach.of("python/sglang/srt/mixing/kernels.py", "KernelCache.__init__") == blocked


def test_a_module_imported_by_name_type_only_or_by_noone_runs_for_anyone(reach: SiteReach) -> None:
    # Imported under a switch, but also by a string somewhere: anyone.
    assert reach.of("python/sglang/srt/mixing/by_name.py", "<module>") == ()
    # An import under ``if TYPE_CHECKING:`` never runs: no import statement runs the module.
    assert reach.of("python/sglang/srt/mixing/typed_only.py", "<module>") == ()
    # A module no statement imports is an entry point.
    assert reach.of("python/sglang/srt/mixing/factory.py", "<module>") == ()


def test_a_test_of_a_class_built_for_one_model_selects_that_model(reach: SiteReach) -> None:
    import ast

    path = "python/sglang/srt/mem_cache/toy_pools.py"
    paged = ast.parse("isinstance(pool, ToyPagedPool)", mode="eval").body
    assert reach.test_selector(path, "transfer", paged) == ("arch", "ToyPagedForCausalLM", ())
    # A class anyone may build (nothing builds it here) narrows nothing.
    either = ast.parse("isinstance(pool, (ToyPagedPool, PlainPool))", mode="eval").body
    assert reach.test_selector(path, "transfer", either) is None


def test_a_value_passed_around_a_cycle_resolves_whichever_end_is_asked_first(reach: SiteReach) -> None:
    path = "python/sglang/srt/spec/pair.py"
    # Asked first, the leader's parameter meets the follower's while its own lookup is open.
    assert [i.flag for i in reach.passed_flags(path, "Leader.__init__", "n:width")] == ["--tp-size"]
    assert [i.flag for i in reach.passed_flags(path, "Follower.__init__", "n:width")] == ["--tp-size"]
