"""Where a checked value comes from, when the check is not on it directly.

A parser handed a flag's text (``parse_host_port(server_args.dist_addr)``) that rejects a port three
assignments down is about that flag: the record names it and its fix changes it in the launch
command, not "send `value`". A config attribute of a kernel's own settings object
(``meta.config.block``) or one key of one model read on both sides of a comparison is no checkpoint
property.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from extractor.records.model import ErrorRecord
from tests.conftest import records_by_message

ARGS = "python/sglang/srt/server_args.py"
SERVER_ARGS = """\
from dataclasses import dataclass


@dataclass
class ServerArgs:
    dist_addr: str = "127.0.0.1:5000"
    model_path: str = ""
    loader_extra_config: str = "{}"
    peer_file: str = ""
    max_group: int = 8

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--dist-addr", type=str, default="127.0.0.1:5000", help="Where peers meet.")
        parser.add_argument("--model-path", type=str, help="The model weights.")
        parser.add_argument("--loader-extra-config", type=str, default="{}", help="Loader options as JSON.")
        parser.add_argument("--peer-file", type=str, default="", help="Where the peer list is.")
        parser.add_argument("--max-group", type=int, default=8, help="The largest group.")
"""

ADDRESS = "python/sglang/srt/utils/address.py"
ADDRESS_SOURCE = '''\
def parse_host_port(text: str):
    """Split ``host:port``."""
    cleaned = text.strip()
    host, port_text = cleaned.rsplit(":", 1)
    port = int(port_text)
    if port < 0 or port > 65535:
        raise ValueError(f"port out of range: {port}")
    return host, port


def load_tiles(kind: str, layout):
    width = 64 if kind == "K" else 128
    tiles = layout.tile(width)
    count = tiles.size()
    expected = tiles.planned()
    assert count == expected, "tile count mismatch"
    return tiles


def _load_peer_file(path: str):
    assert path.endswith(".json"), "peer list must be a JSON file"
    return path


def _load_scratch(path: str):
    assert path.endswith(".bin"), "scratch must be a .bin file"
    return path


def parse_unused(text: str):
    cleaned = text.strip()
    head, tail = cleaned.split("|", 1)
    width = int(tail)
    if width > 8:
        raise ValueError(f"width too large: {width}")
    return head, width
'''

LAUNCH = "python/sglang/srt/entrypoints/engine.py"
LAUNCH_SOURCE = """\
from sglang.srt.utils.address import _load_peer_file, _load_scratch, load_tiles, parse_host_port, parse_unused


def group(server_args, ranks):
    make_group(ranks, server_args.max_group)


def make_group(ranks, max_size):
    if max_size < len(ranks):
        raise ValueError(f"max_size ({max_size}) must be >= group size ({len(ranks)})")


def start(server_args):
    host, port = parse_host_port(server_args.dist_addr)
    _load_peer_file(server_args.peer_file)
    _load_scratch(f"/tmp/{host}.bin")
    return host, port


def other(payload):
    return parse_unused(payload["text"])


def tile(layout):
    return load_tiles("K", layout)
"""

LOADER = "python/sglang/srt/model_loader/plain_loader.py"
LOADER_SOURCE = """\
class PlainLoader:
    def __init__(self, load_config):
        extra = load_config.loader_extra_config
        allowed = {"threads", "prefetch"}
        unknown = set(extra.keys()) - allowed
        if unknown:
            raise ValueError(f"Unexpected loader config keys: {unknown}")


def make_parallel(**kwargs):
    unknown = set(kwargs) - {"tp", "pp"}
    if unknown:
        raise TypeError(f"unknown parallel field(s): {sorted(unknown)}")
"""

DISPATCH = "python/sglang/srt/layers/moe/dispatcher.py"
DISPATCH_SOURCE = """\
from sglang.srt.environ import envs


class Dispatcher:
    def __init__(self):
        self.max_tokens = envs.SGLANG_DISPATCH_MAX_TOKENS.get()
        self.check(self.max_tokens)

    def check(self, max_tokens):
        assert max_tokens <= 1024, "too many tokens per dispatch"
"""

PATCHES = "python/sglang/srt/debug_utils/patches.py"
PATCHES_SOURCE = """\
from sglang.srt.environ import envs

_PATCHES = {101: "first.yaml", 202: "second.yaml"}


def maybe_apply_patch():
    if (number := envs.SGLANG_DEBUG_PATCH.get()) and number > 0:
        _apply(number)


def _apply(number):
    if number not in _PATCHES:
        raise NotImplementedError(f"patch {number} is not registered")
"""

KERNEL = "sgl-kernel/python/sgl_kernel/paged.py"
KERNEL_SOURCE = """\
def run_paged(meta, block_size):
    assert meta.config.block_size == block_size, "metadata built for another block size"
    return meta
"""

MODEL = "python/sglang/srt/models/tiny_moe.py"
MODEL_SOURCE = """\
class TinyMoE:
    def __init__(self, config, gate_proj, down_proj):
        self.gate_proj = gate_proj
        self.down_proj = down_proj
        assert self.gate_proj.quant_config.block == self.down_proj.quant_config.block, "mixed blocks"
        if config.head_dim != 128:
            raise ValueError("head_dim must be 128")


EntryClass = TinyMoE
"""


def _records(tmp_path: Path) -> dict[str, ErrorRecord]:
    files = {ARGS: SERVER_ARGS, ADDRESS: ADDRESS_SOURCE, LAUNCH: LAUNCH_SOURCE, KERNEL: KERNEL_SOURCE}
    files[MODEL] = MODEL_SOURCE
    files[LOADER] = LOADER_SOURCE
    files[DISPATCH] = DISPATCH_SOURCE
    files[PATCHES] = PATCHES_SOURCE
    return records_by_message(tmp_path, files)


def test_a_parser_handed_a_flag_names_the_flag(tmp_path: Path) -> None:
    got = _records(tmp_path)
    port = got["port out of range: {port}"]
    assert "Cause: a launch flag (`--dist-addr`)" in port.documentation
    assert "as `text`" in port.documentation
    assert port.solutions[0].startswith("Change `--dist-addr` in the launch command")
    assert "--dist-addr <accepted-value>" in port.exampleFix
    assert port.errorType == "configuration"
    # Text from a request payload stays the caller's data.
    width = got["width too large: {width}"]
    assert "Cause: the request or call input (`text`)" in width.documentation
    assert not any("--dist-addr" in s for s in width.solutions)


def test_a_settings_object_of_a_kernel_or_one_key_twice_is_no_checkpoint(tmp_path: Path) -> None:
    got = _records(tmp_path)
    kernel = got["metadata built for another block size"]
    assert "Cause: an internal invariant" in kernel.documentation
    assert not any("config.json" in s for s in kernel.solutions)
    mixed = got["mixed blocks"]
    assert "Cause: an internal invariant" in mixed.documentation
    # Two different objects, one of them the config, still blame the checkpoint.
    head = got["head_dim must be 128"]
    assert "Cause: the model" in head.documentation and "`head_dim`" in head.documentation


def test_keys_a_mapping_may_not_hold_are_the_datas(tmp_path: Path) -> None:
    got = _records(tmp_path)
    loader = got["Unexpected loader config keys: {unknown}"]
    # The mapping is read from the attribute the flag fills by name: the flag's JSON is at fault.
    assert "Cause: the value of `--loader-extra-config`" in loader.documentation
    assert loader.solutions[0] == (
        "Remove or rename the keys of `--loader-extra-config` that the message lists; "
        "`PlainLoader.__init__` accepts `threads`, `prefetch`"
    )
    assert "--loader-extra-config '<the same JSON without it>'" in loader.exampleFix
    assert loader.errorType == "configuration"
    # A call's own keyword arguments are the calling code's: still internal.
    fields = got["unknown parallel field(s): {sorted(unknown)}"]
    assert "Cause: an internal invariant" in fields.documentation


def test_a_value_its_callers_read_from_an_environment_variable_names_the_variable(tmp_path: Path) -> None:
    got = _records(tmp_path)
    tokens = got["too many tokens per dispatch"]
    assert "Cause: an environment variable (`SGLANG_DISPATCH_MAX_TOKENS`)" in tokens.documentation
    assert tokens.solutions[0].startswith("Change `SGLANG_DISPATCH_MAX_TOKENS` so that")
    assert "SGLANG_DISPATCH_MAX_TOKENS=<accepted-value>" in tokens.exampleFix
    assert "internal invariant" not in tokens.documentation


def test_a_private_loader_handed_a_flag_names_the_flag(tmp_path: Path) -> None:
    got = _records(tmp_path)
    peers = got["peer list must be a JSON file"]
    assert "Cause: a launch flag (`--peer-file`): its value reaches `_load_peer_file` as `path`" in (
        peers.documentation
    )
    assert peers.solutions[0].startswith("Change `--peer-file` in the launch command"), peers.solutions
    assert not any("Report it to sglang" in s for s in peers.solutions)
    assert "--peer-file <accepted-value>" in peers.exampleFix
    # Text the code makes itself stays the code's own.
    scratch = got["scratch must be a .bin file"]
    assert "Cause: an internal invariant" in scratch.documentation


def test_a_flag_ordered_against_a_computed_value_is_told_its_bound(tmp_path: Path) -> None:
    got = _records(tmp_path)
    group = got["max_size ({max_size}) must be >= group size ({len(ranks)})"]
    assert "Cause: a launch flag (`--max-group`)" in group.documentation
    assert (
        group.solutions[0]
        == "Give `--max-group` a value at least `len(ranks)`: make_group compares it with that"
    )


def test_a_variable_bound_in_a_test_and_checked_against_a_table_names_its_entries(tmp_path: Path) -> None:
    got = _records(tmp_path)
    patch = got["patch {number} is not registered"]
    # ``number := envs.SGLANG_DEBUG_PATCH.get()`` is handed on: the variable is the cause.
    assert "Cause: an environment variable (`SGLANG_DEBUG_PATCH`)" in patch.documentation
    # The table's whole-number keys are the values to set.
    assert patch.solutions[0].startswith("Set `SGLANG_DEBUG_PATCH` to `101` or `202`"), patch.solutions
    assert "SGLANG_DEBUG_PATCH=101 " in patch.exampleFix


def test_a_value_computed_far_from_a_parameter_is_not_the_callers_text(tmp_path: Path) -> None:
    got = _records(tmp_path)
    # ``kind`` is three computations away, none of them taking text apart: the code's own layout.
    tiles = got["tile count mismatch"]
    assert "Cause: an internal invariant" in tiles.documentation


def test_a_value_its_callers_take_from_the_clients_request_is_the_requests(tmp_path: Path) -> None:
    files = {
        ARGS: SERVER_ARGS,
        "python/sglang/srt/entrypoints/openai/serving_pose.py": textwrap.dedent(
            """\
            def _denormalize(values, method):
                if method == "minmax":
                    return values
                elif method == "meanstd":
                    return values
                else:
                    raise ValueError(f"unknown normalization {method!r}")


            class ServingPose:
                def handle(self, request):
                    return _denormalize(request.values, request.normalization)

                def sample(self, req):
                    return _denormalize(req.values, getattr(req.sampling_params, "normalization", None))
            """
        ),
    }
    record = records_by_message(tmp_path, files)["unknown normalization {method!r}"]
    assert "Cause: the request or call input (`normalization`)" in record.documentation, record.documentation
    assert "`method` from the request's `normalization`" in record.triggerScenarios
    assert record.solutions[0].startswith("Send `normalization` so that"), record.solutions
    assert record.backgroundTag != "internal-invariant"


def test_a_value_the_scheduler_takes_from_a_received_request_is_the_requests(tmp_path: Path) -> None:
    files = {
        ARGS: SERVER_ARGS,
        "python/sglang/srt/managers/tracing_manager.py": textwrap.dedent(
            """\
            class TracingManager:
                def handle_trace_req(self, recv_req):
                    return self._start(recv_req.trace_dir, recv_req.first_step)

                def _start(self, trace_dir, first_step):
                    assert trace_dir != "", "trace directory cannot be empty"
                    return trace_dir
            """
        ),
        "python/sglang/srt/managers/tracing_store.py": textwrap.dedent(
            """\
            def open_store(path, store=None):
                if store is not None and path == "":
                    raise ValueError("store needs a path")


            class StoreUser:
                def handle(self, recv_req):
                    # Never passes ``store``: the check is only reached by a direct call.
                    return open_store(recv_req.trace_dir)
            """
        ),
    }
    got = records_by_message(tmp_path, files)
    record = got["trace directory cannot be empty"]
    assert "Cause: the request or call input (`trace_dir`)" in record.documentation, record.documentation
    assert record.solutions[0].startswith("Send `trace_dir` so that"), record.solutions
    # No caller passes what the raise needs: the request's values never get there.
    store = got["store needs a path"]
    assert not any(s.startswith("Send ") for s in store.solutions), store.solutions
