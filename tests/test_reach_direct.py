"""Code nothing of the target calls: only a direct call of the user's own reaches its raise.

A function whose name no file calls, references, looks up or spells is run by nothing in sglang; an
internal check in it is about the arguments of whoever calls it directly (a script, a notebook), not
a bug to report. Names spelled in strings, in f-strings that build a method name, behind a decorator
or in a class another library derives (``torch.nn.Module`` calls its subclasses' methods by name)
keep the function among the callable ones. Likewise, code that serves decode alone is not run by
the object a prefill-only flag builds: that flag is no way into it.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from extractor.prose.advice import INTERNAL_CHECK
from extractor.prose.passed import INTERNAL_CAUSE
from extractor.reach.file_index import file_facts
from tests.conftest import records_by_message, site_reach_of

ARGS = "python/sglang/srt/server_args.py"
SERVER_ARGS = """\
from dataclasses import dataclass


@dataclass
class ServerArgs:
    tp_size: int = 1

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--tp-size", type=int, default=1)
"""

HELPERS = "python/sglang/srt/utils/pack_helpers.py"
HELPER_SOURCE = '''\
"""Packing helpers; ``pack_rows`` is described here, which calls nothing."""
import torch


def pack_rows(rows, width):
    """Kept for scripts; see also ``pad_rows``."""
    assert len(rows) % width == 0, "rows must fill whole packs"
    return rows


def pad_rows(rows):
    assert rows, "no rows to pad"
    return rows


def by_name(rows):
    assert rows is not None
    return rows


def registered(fn):
    return fn


@registered
def hooked(rows):
    assert rows is not None
    return rows


class Packer:
    def unpack(self, packed):
        assert packed is not None, "nothing to unpack"
        return packed

    def run(self, packed):
        return getattr(self, f"forward_{packed.kind}")(packed)

    def forward_cuda(self, packed):
        assert packed.device is not None, "packed on no device"
        return packed


class PackModule(torch.nn.Module):
    def extra_state(self, packed):
        assert packed is not None, "no extra state"
        return packed


def pack_counts(handle):
    # Looks up the library symbol of its own name: no call of itself.
    fn = _library_function("pack_counts")
    ret = fn(handle)
    if ret != 0:
        raise RuntimeError(f"pack_counts failed after {ret:.1f}s")
    return ret


def _library_function(name):
    return name


def patch_loader(loader):
    def prepare(self, rows):
        assert rows, "nothing to prepare"
        return rows

    setattr(loader, "_prepare", prepare)
'''

USER = "python/sglang/srt/managers/pack_user.py"
USER_SOURCE = """\
from sglang.srt.utils.pack_helpers import Packer, pad_rows


def serve(rows):
    table = {"by_name": "sglang.srt.utils.pack_helpers.by_name"}
    return Packer().run(pad_rows(rows)), table
"""


def test_the_facts_keep_the_names_a_file_spells_other_than_by_a_call() -> None:
    facts = file_facts(HELPERS, ast.parse(HELPER_SOURCE))
    # The f-string's fixed start is kept as a name pattern; a docstring's words are prose.
    assert "forward_*" in facts.mentions
    assert "pad_rows" not in facts.mentions
    assert "pack_rows" not in facts.mentions
    # Names it calls are filed as calls, not mentions.
    assert "getattr" not in facts.mentions and "getattr" in facts.calls
    assert {d.qualname: d.decorated for d in facts.defs if d.kind == "f"}["hooked"] is True
    user = file_facts(USER, ast.parse(USER_SOURCE))
    # A string naming a dotted path spells the function's name.
    assert "by_name" in user.mentions


@pytest.mark.parametrize(
    ("qualname", "uncalled"),
    [
        ("pack_rows", True),  # spelled only in docstrings
        ("pad_rows", False),  # called
        ("by_name", False),  # spelled in a string: it may be looked up by it
        ("hooked", False),  # a decorator may register it
        ("Packer.unpack", True),  # a plain class's method no one calls
        ("Packer.forward_cuda", False),  # built by ``f"forward_{kind}"``
        ("PackModule.extra_state", False),  # torch may call a module's method by its name
        # Its own name, spelled in its own body, is a library symbol; ``{ret:.1f}s`` builds no
        # name ending in ``s``.
        ("pack_counts", True),
        ("patch_loader.<locals>.prepare", False),  # handed out as a value
    ],
)
def test_a_function_is_uncalled_only_when_no_file_can_name_it(qualname: str, uncalled: bool) -> None:
    sites = site_reach_of({ARGS: SERVER_ARGS, HELPERS: HELPER_SOURCE, USER: USER_SOURCE}, ARGS)
    assert sites.uncalled(HELPERS, qualname) is uncalled


def test_an_internal_check_nothing_calls_is_said_to_be_the_direct_callers_arguments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    files = {ARGS: SERVER_ARGS, HELPERS: HELPER_SOURCE, USER: USER_SOURCE}
    records = records_by_message(tmp_path, files)

    packs = records["rows must fill whole packs"]
    assert INTERNAL_CAUSE not in packs.documentation
    assert "Cause: the arguments of a direct call" in packs.documentation
    assert packs.triggerScenarios.startswith("Code of your own calling `pack_rows` directly")
    assert packs.triggerScenarios.endswith(
        "It is reached only when code of your own calls it directly (nothing in sglang outside its tests calls it)."
    )
    assert packs.solutions[0].startswith("Check what your code passes to `pack_rows`")
    assert not any(s.startswith(INTERNAL_CHECK) for s in packs.solutions)
    assert packs.backgroundTag == "invalid-value"
    unpack = records["nothing to unpack"]
    assert "calls `Packer.unpack`" in unpack.solutions[0]

    # What sglang does call keeps its internal cause and its bug report.
    for called in ("no rows to pad", "packed on no device", "no extra state"):
        record = records[called]
        assert "direct call" not in record.documentation, called
        assert INTERNAL_CAUSE in record.documentation, called
        assert any(s.startswith(INTERNAL_CHECK) for s in record.solutions), called


def test_a_function_called_only_by_sglangs_tests_is_still_reached_only_directly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    test_file = "python/sglang/srt/utils/test_pack_helpers.py"
    calls_it = textwrap.dedent(
        """\
        from sglang.srt.utils.pack_helpers import pack_rows


        def test_pack_rows():
            assert pack_rows([1, 2], 2) == [1, 2], "pack_rows changed its rows"
        """
    )
    files = {ARGS: SERVER_ARGS, HELPERS: HELPER_SOURCE, USER: USER_SOURCE, test_file: calls_it}
    records = records_by_message(tmp_path, files)
    assert "Cause: the arguments of a direct call" in records["rows must fill whole packs"].documentation
    # The test itself is run by its runner, not by a call: it is not said to be called directly.
    assert "directly" not in records["pack_rows changed its rows"].triggerScenarios


DISPATCH_ARGS = """\
from dataclasses import dataclass


@dataclass
class ServerArgs:
    kernel_prefill_backend: str = "plain"
    kernel_decode_backend: str = "plain"

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--kernel-prefill-backend", type=str, default="plain", choices=["plain", "flash"])
        parser.add_argument("--kernel-decode-backend", type=str, default="plain", choices=["plain", "flash"])
"""

DISPATCH = """\
from sglang.srt.layers.flash_kernel import FlashKernel
from sglang.srt.layers.plain_kernel import PlainKernel


class Dispatcher:
    def __init__(self, server_args):
        if server_args.kernel_prefill_backend == "flash":
            self.extend_kernel = FlashKernel()
        else:
            self.extend_kernel = PlainKernel()
        self.decode_kernel = PlainKernel()

    def forward(self, batch):
        if batch.is_decode:
            return self.decode_kernel.decode(batch)
        return self.extend_kernel.extend(batch)
"""

FLASH_KERNEL = """\
class FlashKernel:
    def extend(self, batch):
        assert batch is not None, "no batch to extend"
        return batch

    def decode(self, batch):
        raise NotImplementedError("FlashKernel only supports prefill")
"""

MODEL = """\
from sglang.srt.layers.dispatcher import Dispatcher


class OwlForCausalLM:
    def __init__(self, server_args):
        self.dispatcher = Dispatcher(server_args)

    def forward(self, batch):
        return self.dispatcher.forward(batch)


EntryClass = OwlForCausalLM
"""

PLAIN_KERNEL = """\
class PlainKernel:
    def extend(self, batch):
        return batch

    def decode(self, batch):
        return batch
"""


def test_decode_code_is_not_said_to_run_with_a_prefill_only_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    files = {
        ARGS: DISPATCH_ARGS,
        "python/sglang/srt/layers/dispatcher.py": DISPATCH,
        "python/sglang/srt/layers/flash_kernel.py": FLASH_KERNEL,
        "python/sglang/srt/layers/plain_kernel.py": PLAIN_KERNEL,
        "python/sglang/srt/models/owl.py": MODEL,
    }
    records = records_by_message(tmp_path, files)
    # The extend kernel the prefill flag builds runs its extend path...
    assert "with `--kernel-prefill-backend flash`" in records["no batch to extend"].triggerScenarios
    # ...but not its decode, which only the decode kernel's owner would call.
    decode = records["FlashKernel only supports prefill"]
    assert "--kernel-prefill-backend" not in decode.triggerScenarios + " ".join(decode.solutions)
