"""How far reach looks: a choice made eight callers above a kernel still selects it, and a
component that over a dozen architectures build is still said to run only for them."""

from __future__ import annotations

import textwrap

from tests.conftest import site_reach_of

ARGS = "python/sglang/srt/server_args.py"
SERVER_ARGS = """\
from dataclasses import dataclass


@dataclass
class ServerArgs:
    enable_adapters: bool = False

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--enable-adapters", action="store_true")
"""


def _chain(depth: int) -> str:
    # level_0 raises; level_i calls level_(i-1); the top one runs only with the switch.
    lines = ["def level_0(x):", "    if x is None:", "        raise ValueError('no input')", ""]
    for i in range(1, depth + 1):
        lines += [f"def level_{i}(x):", f"    return level_{i - 1}(x)", ""]
    lines += [
        "def serve(server_args, x):",
        "    if server_args.enable_adapters:",
        f"        level_{depth}(x)",
        "",
    ]
    return "\n".join(lines)


def test_a_switch_eight_callers_up_still_selects_the_kernel() -> None:
    files = {ARGS: SERVER_ARGS, "python/sglang/kernels/chain.py": _chain(7)}
    reach = site_reach_of(files, ARGS)
    assert reach.of("python/sglang/kernels/chain.py", "level_0") == (
        frozenset({("flag", "--enable-adapters", ())}),
    )


def test_a_layer_built_by_fourteen_architectures_is_said_to_run_for_them() -> None:
    names = [f"Toy{i}ForCausalLM" for i in range(14)]
    files = {
        ARGS: SERVER_ARGS,
        "python/sglang/srt/layers/shared_mlp.py": textwrap.dedent(
            """\
            class SharedMlp:
                def forward(self, x):
                    if x is None:
                        raise ValueError("no input")
            """
        ),
    }
    for i, name in enumerate(names):
        files[f"python/sglang/srt/models/toy_{i}.py"] = textwrap.dedent(
            f"""\
            from sglang.srt.layers.shared_mlp import SharedMlp


            class {name}:
                def __init__(self):
                    self.mlp = SharedMlp()


            EntryClass = {name}
            """
        )
    reach = site_reach_of(files, ARGS)
    assert reach.of("python/sglang/srt/layers/shared_mlp.py", "SharedMlp.forward") == (
        frozenset({("arch", "", tuple(sorted(names)))}),
    )
