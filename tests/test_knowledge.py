"""What build_knowledge reads from a target's server-args and environment modules."""

from __future__ import annotations

import ast
import pickle
from pathlib import Path

import pytest

from extractor.prose.knowledge import (
    Knowledge,
    ModuleConstants,
    build_knowledge,
    is_knowledge_path,
    module_constants,
)

FIXTURES = Path(__file__).parent / "fixtures" / "enrich"
SRT_ARGS = "python/sglang/srt/server_args.py"
SRT_ENV = "python/sglang/srt/environ.py"
MM_ARGS = "python/sglang/multimodal_gen/runtime/server_args/server_args.py"


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


@pytest.fixture(scope="module")
def knowledge() -> Knowledge:
    return build_knowledge(
        {
            SRT_ARGS: fixture("server_args.py"),
            SRT_ENV: fixture("environ.py"),
            MM_ARGS: fixture("mm_server_args.py"),
        }
    )


def test_annotated_fields_become_flags(knowledge: Knowledge) -> None:
    srt = knowledge.flags_for("python/sglang/srt/managers/scheduler.py")
    assert srt["model_path"].flag == "--model-path"
    assert srt["model_path"].aliases == ("--model",)
    assert srt["model_path"].help == "Where the weights live."
    assert srt["tp_size"].aliases == ("--tensor-parallel-size",)
    assert srt["enable_linear_replayssm_spec"].is_bool
    # An optional switch is still a switch: the parser unwraps Optional before it picks store_true.
    assert srt["enable_adapters"].is_bool and srt["use_page_cache"].is_bool
    assert not srt["max_adapters"].is_bool
    assert srt["speculative_algorithm"].choices == ("EAGLE", "EAGLE3", "DSPARK", "DFLASH", "NGRAM")
    # Literal[...] gives the choices when Arg lists none.
    assert srt["kv_dtype"].choices == ("auto", "fp8_e4m3", "bf16")


def test_cli_name_override_and_exclusion(knowledge: Knowledge) -> None:
    srt = knowledge.flags_for(SRT_ARGS)
    assert srt["join_offset"].flag == "--elastic-join-offset"
    assert "internal_only" not in srt


def test_add_argument_forms(knowledge: Knowledge) -> None:
    srt = knowledge.flags_for(SRT_ARGS)
    # A plain field becomes a flag only through an explicit add_argument.
    assert srt["max_queue"].flag == "--max-queue"
    assert srt["max_queue"].help == "Requests allowed to wait."
    # dest= wins over the derived destination; the first long option is the primary spelling.
    assert srt["draft_window_size"].flag == "--draft-window"
    assert srt["draft_window_size"].aliases == ("--speculative-draft-window",)
    assert srt["stream"].is_bool
    # A project's own store-true / store-const action classes make switches too, not valued flags.
    assert srt["no_graphs"].is_bool and not srt["no_graphs"].optional
    assert srt["prefill_mode"].is_bool
    assert not srt["adapter_dirs"].is_bool and srt["adapter_dirs"].is_list
    # A deprecated spelling registered for the same dest does not replace the real flag.
    assert srt["enable_linear_replayssm_spec"].flag == "--enable-linear-replayssm-spec"


def test_flags_are_scoped_by_package(knowledge: Knowledge) -> None:
    mm = knowledge.flags_for("python/sglang/multimodal_gen/runtime/pipelines/x.py")
    srt = knowledge.flags_for("python/sglang/srt/layers/linear.py")
    assert mm["decoder_tp"].flag == "--decoder-tp"
    assert mm["tp_size"].flag == "--tp-degree"
    assert srt["tp_size"].flag == "--tp-size"
    assert "decoder_tp" not in srt
    # Files outside every package with flags see the largest namespace.
    assert knowledge.namespace_of("python/sglang/bench_serving.py") == "python/sglang/srt/"
    assert knowledge.flags["tp_size"] == "--tp-size"


def test_arg_classes_include_mixins_and_subclasses(knowledge: Knowledge) -> None:
    assert knowledge.is_arg_class(SRT_ARGS, "ServerArgs")
    assert knowledge.is_arg_class(MM_ARGS, "ServerArgs")
    assert knowledge.is_arg_class(MM_ARGS, "DecoderArgsMixin")
    assert not knowledge.is_arg_class(SRT_ARGS, "Arg")
    assert not knowledge.is_arg_class("python/sglang/srt/models/llama.py", "LlamaAttention")
    assert not knowledge.is_arg_class(SRT_ARGS, None)


def test_env_registry(knowledge: Knowledge) -> None:
    assert knowledge.env_vars == frozenset({"SGLANG_VIT_CUDA_GRAPH", "SGLANG_SPEC_BUDGET"})
    assert knowledge.env_info["SGLANG_VIT_CUDA_GRAPH"].kind == "bool"
    assert knowledge.env_info["SGLANG_SPEC_BUDGET"].default == "8"


def test_an_env_field_variant_keeps_its_base_type() -> None:
    from extractor.prose.declarations import read_env_registry

    found = read_env_registry(
        ast.parse(
            "class Envs:\n"
            "    SGLANG_FUSE = EnvBoolWithAlias(True, deprecated_name='SGLANG_OLD_FUSE')\n"
            "    SGLANG_LIMITS = EnvJSON(None)\n"
            "    SGLANG_CHUNK = EnvIntWithAlias(64, deprecated_name='SGLANG_OLD_CHUNK')\n"
        )
    )
    # A boolean under another name is still on unless turned off.
    assert found["SGLANG_FUSE"].kind == "bool" and found["SGLANG_FUSE"].on_by_default
    assert found["SGLANG_LIMITS"].kind == "json"
    assert (found["SGLANG_CHUNK"].kind, found["SGLANG_CHUNK"].default) == ("int", "64")


def test_older_layout_with_only_add_argument() -> None:
    k = build_knowledge({SRT_ARGS: fixture("old_server_args.py")})
    assert dict(k.flags) == {
        "model_path": "--model-path",
        "disable_radix_cache": "--disable-radix-cache",
        "chunked_prefill_size": "--chunked-prefill-size",
        "tensor_parallel_size": "--tensor-parallel-size",
        # The alias that spells the field the value is copied into stands for that field.
        "tp_size": "--tp-size",
    }
    assert k.flag_info["disable_radix_cache"].is_bool
    assert not k.flag_info["chunked_prefill_size"].is_bool


@pytest.mark.parametrize(
    "content",
    [
        fixture("broken.py"),
        b"\x00\x01\xff\xfe",
        b"",
        b"parser.add_argument()\nparser.add_argument(dest=3)\nx: A[int] = 1\n",
        b"class C:\n    y: A[int, Arg(help=1, choices=f(), aliases=None, no_cli=x)] = 0\n",
    ],
)
def test_bad_input_gives_fewer_mappings_not_errors(content: bytes) -> None:
    k = build_knowledge({SRT_ARGS: content, SRT_ENV: content})
    assert "never_seen" not in k.flags
    assert isinstance(k.fingerprint(), str)


def test_files_outside_the_globs_are_ignored() -> None:
    k = build_knowledge({"python/sglang/srt/layers/linear.py": fixture("server_args.py")})
    assert k.flags == {}
    assert k.fingerprint() == Knowledge.empty().fingerprint()


def test_fingerprint_is_stable_and_tracks_content(knowledge: Knowledge) -> None:
    again = build_knowledge(
        {
            MM_ARGS: fixture("mm_server_args.py"),
            SRT_ENV: fixture("environ.py"),
            SRT_ARGS: fixture("server_args.py"),
        }
    )
    assert again.fingerprint() == knowledge.fingerprint()
    assert again == knowledge and hash(again) == hash(knowledge)
    changed = fixture("server_args.py").replace(b"Tensor parallel degree.", b"TP degree.")
    other = build_knowledge(
        {SRT_ARGS: changed, SRT_ENV: fixture("environ.py"), MM_ARGS: fixture("mm_server_args.py")}
    )
    assert other.fingerprint() != knowledge.fingerprint()


def test_knowledge_pickles_for_worker_processes(knowledge: Knowledge) -> None:
    again = pickle.loads(pickle.dumps(knowledge))
    assert again.fingerprint() == knowledge.fingerprint()
    assert again.flags_for(MM_ARGS)["decoder_sp"].flag == "--decoder-sp"


@pytest.mark.parametrize(
    ("path", "wanted"),
    [
        ("python/sglang/srt/server_args.py", True),
        ("python/sglang/srt/server_args_config_parser.py", True),
        ("python/sglang/multimodal_gen/runtime/server_args/disagg.py", True),
        ("python/sglang/srt/arg_groups/speculative_hook.py", True),
        ("python/sglang/srt/environ.py", True),
        ("python/sglang/multimodal_gen/envs.py", True),
        ("python/sglang/srt/managers/scheduler.py", False),
        ("python/sglang/test/test_server_args.py", False),
        ("test/srt/test_server_args.py", False),
    ],
)
def test_is_knowledge_path(path: str, wanted: bool) -> None:
    assert is_knowledge_path(path) is wanted


def test_module_constants() -> None:
    tree = ast.parse(
        "import os\n"
        "_ENV = 'SGLANG_X'\n"
        "TWICE = 'A'\n"
        "TWICE = 'B'\n"
        "ANN: str = 'SGLANG_Y'\n"
        "CI = os.getenv('FLA_CI') == '1'\n"
        "a, b = 'P', 'Q'\n"
        "if True:\n    GUARDED = 'SGLANG_Z'\n"
        "def f():\n    LOCAL = 'no'\n"
    )
    consts = module_constants(tree)
    assert isinstance(consts, ModuleConstants)
    assert dict(consts) == {"_ENV": "SGLANG_X", "ANN": "SGLANG_Y", "GUARDED": "SGLANG_Z"}
    assert ast.unparse(consts.exprs["CI"]) == "os.getenv('FLA_CI') == '1'"
    assert "TWICE" not in consts.exprs and "a" not in consts.exprs and "f" not in consts.exprs


def test_a_valued_flag_off_unless_given_is_optional_unless_resolved_or_filled() -> None:
    src = b"""\
from dataclasses import dataclass
from typing import Annotated as A, Optional


@dataclass
class ServerArgs:
    draft_algorithm: A[Optional[str], Arg(help="Draft algorithm.", choices=["A", "B"])] = None
    draft_steps: A[Optional[int], Arg(help="Draft steps.")] = None
    kernel_backend: A[Optional[str], Arg(help="Kernels.", resolvable=True)] = None
    page_size: A[int, Arg(help="Page size.")] = 1
    enable_trace: A[bool, Arg(help="Trace.")] = False

    graph_config: A[Optional[str], Arg(help="Graph config.")] = None
    mesh_config: A[Optional[str], Arg(help="Mesh config.")] = None

    def __post_init__(self):
        self._fill()
        self._resolve_graph_config()
        self._resolve_mesh_config()
        if self.legacy_path is not None:
            self._resolve_legacy_path()

    def _resolve_legacy_path(self):
        raw = self.legacy_path
        path = normalize(raw)
        self.legacy_path = path

    def _fill(self):
        if self.draft_steps is None:
            self.draft_steps = 3

    def _resolve_graph_config(self):
        raw = self.graph_config
        config = parse_graph(raw) if raw is not None else default_graph()
        self.graph_config = config

    def _resolve_mesh_config(self):
        raw = self.mesh_config
        if raw is None:
            return
        config = parse_mesh(raw)
        self.mesh_config = config


def add_legacy(parser):
    parser.add_argument("--legacy-path", type=str)
    parser.add_argument("--legacy-size", type=int, default=8)
"""
    flags = build_knowledge({SRT_ARGS: src}).flags_for(SRT_ARGS)
    optional = {d for d, i in flags.items() if i.optional}
    # None means "off" for these; a resolvable flag's None means "pick one", a filled one is set
    # anyway, and a switch or a flag with a real default is never "left out".
    # ``graph_config`` is replaced by what the launch builds on every launch; ``mesh_config`` only
    # when given, and ``legacy_path`` only by a method called when it is given.
    assert optional == {"draft_algorithm", "legacy_path", "mesh_config"}


def test_a_negatable_switch_that_leaving_out_does_not_turn_off_is_turned_off_by_its_no_form() -> None:
    src = b"""\
import argparse
from dataclasses import dataclass
from typing import Annotated as A, Optional


@dataclass
class ServerArgs:
    shared_outer: A[Optional[bool], Arg(help="Detected.", action=argparse.BooleanOptionalAction)] = None
    early_done: A[bool, Arg(help="On.", action=argparse.BooleanOptionalAction)] = True
    strict_load: A[bool, Arg(help="Off.", action=argparse.BooleanOptionalAction)] = False
    enable_trace: A[bool, Arg(help="Trace.")] = False


def add_legacy(parser):
    parser.add_argument("--warm-start", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--cold-start", action=argparse.BooleanOptionalAction)
"""
    flags = build_knowledge({SRT_ARGS: src}).flags_for(SRT_ARGS)
    off = {d: i.off_flag for d, i in flags.items() if i.off_flag}
    # Left out, these are on (their default) or decided at launch (a None written out).
    assert off == {
        "shared_outer": "--no-shared-outer",
        "early_done": "--no-early-done",
        "warm_start": "--no-warm-start",
    }
    # Every one of them is a switch all the same.
    assert all(flags[d].is_bool for d in [*off, "strict_load", "cold_start", "enable_trace"])


def test_a_default_read_back_from_the_class_is_the_fields_own() -> None:
    source = b"""\
from dataclasses import dataclass
from enum import Enum


class Role(str, Enum):
    SOLO = "solo"
    ENCODER = "encoder"


@dataclass
class ServerArgs:
    role: Role = Role.SOLO
    cp_mode: str = "round-robin"

    @classmethod
    def add_cli_args(cls, parser):
        role_default = cls.role.value
        parser.add_argument("--role", type=str, default=role_default)
        parser.add_argument("--cp-mode", type=str, default=ServerArgs.cp_mode)
"""
    flags = build_knowledge({"python/sglang/srt/server_args.py": source}).flag_info
    # An enum member stands for its value; a default the class holds is the flag's.
    assert flags["role"].default == "solo"
    assert flags["cp_mode"].default == "round-robin"


def test_a_default_taken_from_a_module_list_of_choices_is_that_entry() -> None:
    source = b"""\
from dataclasses import dataclass
from typing import Annotated as A

TRANSFER_CHOICES = ["zmq", "rdma", "tcp"]


@dataclass
class ServerArgs:
    transfer: A[str, Arg(help="Transfer backend.", choices=TRANSFER_CHOICES)] = TRANSFER_CHOICES[0]
    fallback: A[str, Arg(help="Fallback backend.", choices=TRANSFER_CHOICES)] = TRANSFER_CHOICES[-1]
    broken: A[str, Arg(help="Out of range.", choices=TRANSFER_CHOICES)] = TRANSFER_CHOICES[7]
"""
    flags = build_knowledge({"python/sglang/srt/server_args.py": source}).flag_info
    # The entry is a fixed default, not a value the launch code picks when the flag is left out.
    assert (flags["transfer"].default, flags["fallback"].default) == ("zmq", "tcp")
    assert flags["broken"].default == ""


def test_a_switch_whose_help_says_it_is_detected_from_the_data_is_marked() -> None:
    source = b"""\
import argparse
from dataclasses import dataclass


@dataclass
class ServerArgs:
    @staticmethod
    def add_cli_args(parser):
        parser.add_argument(
            "--shared-outer",
            action=argparse.BooleanOptionalAction,
            default=None,
            help="Force shared outer factors. Left out, it is auto-detected from adapter weights.",
        )
        parser.add_argument("--fast-path", action=argparse.BooleanOptionalAction, default=True, help="Use it.")
"""
    flags = build_knowledge({"python/sglang/srt/server_args.py": source}).flag_info
    assert flags["shared_outer"].detected and flags["shared_outer"].off_flag == "--no-shared-outer"
    assert not flags["fast_path"].detected
