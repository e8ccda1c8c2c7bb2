"""Reach through the user's choices hidden behind a name: an import that only runs on one platform."""

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
