"""Reach through what a declaration hands over rather than calls: an argparse action class named in
a flag's declaration, a class registered under a key by its module path and class name, and a class
named in a factory's table in its class body (read by the factory's class methods); and a count
flag tested above its off value (``args.x > 0``)."""

from __future__ import annotations

import textwrap

import pytest

from extractor.reach import SiteReach
from tests.conftest import site_reach_of

ARGS = "python/sglang/srt/server_args.py"
SERVER_ARGS = """\
from dataclasses import dataclass
from typing import Annotated as A, Optional

from sglang.srt.cli.actions import AdapterListAction, SizeAction, parse_size


def Arg(**kwargs):
    return kwargs


@dataclass
class ServerArgs:
    adapter_paths: A[Optional[list], Arg(help="Adapters to load.", action=AdapterListAction)] = None
    page_budget: A[Optional[int], Arg(help="Pages to keep.", type_parser=parse_size)] = None
    spill_backend: A[Optional[str], Arg(help="Where to spill.", choices=["disk", "remote", "ring"])] = None
    event_sink: Optional[str] = None
    spill_pages: A[int, "Pages to spill per step."] = -1

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--swap-budget", type=str, action=SizeAction)
        parser.add_argument("--event-sink", type=str)
"""

FILES = {
    ARGS: SERVER_ARGS,
    "python/sglang/srt/cli/actions.py": """\
        import argparse


        def parse_size(text):
            if not text:
                raise ValueError("empty size")
            return int(text)


        class AdapterListAction(argparse.Action):
            def __call__(self, parser, namespace, values, option_string=None):
                assert isinstance(values, list), "adapters come as a list"
                setattr(namespace, self.dest, values)


        class SizeAction(argparse.Action):
            def __call__(self, parser, namespace, values, option_string=None):
                if values.endswith("X"):
                    raise ValueError("no such unit")
                setattr(namespace, self.dest, values)
    """,
    "python/sglang/srt/cli/main.py": """\
        import argparse

        from sglang.srt.server_args import ServerArgs


        def main():
            parser = argparse.ArgumentParser()
            ServerArgs.add_cli_args(parser)
            return ServerArgs(**vars(parser.parse_args()))
    """,
    # Backends imported by module path and class name when their key is asked for.
    "python/sglang/srt/spill/factory.py": """\
        import importlib


        class SpillFactory:
            _known = {}

            @classmethod
            def register_backend(cls, name, module_path, class_name):
                cls._known[name] = (module_path, class_name)

            @classmethod
            def create(cls, name):
                module_path, class_name = cls._known[name]
                return getattr(importlib.import_module(module_path), class_name)()


        SpillFactory.register_backend("disk", "sglang.srt.spill.disk", "DiskSpill")
        SpillFactory.register_backend("remote", "sglang.srt.spill.remote", "RemoteSpill")
    """,
    "python/sglang/srt/spill/disk.py": """\
        class DiskSpill:
            def write(self, page):
                if page is None:
                    raise ValueError("nothing to spill")
    """,
    "python/sglang/srt/spill/remote.py": """\
        from sglang.srt.events import SocketSink


        class RemoteSpill:
            def write(self, page):
                SocketSink.port_for("tcp://host:1", 0)
    """,
    "python/sglang/srt/spill/run.py": """\
        from sglang.srt.spill.factory import SpillFactory


        def start(server_args):
            if server_args.spill_backend is not None:
                SpillFactory.create(server_args.spill_backend).write(b"x")
    """,
    # A feature a count turns on: off at its unset value.
    "python/sglang/srt/spill/pager.py": """\
        class Pager:
            def __init__(self, pages):
                if pages > 64:
                    raise ValueError("too many pages per step")


        def make_pager(server_args):
            if server_args.spill_pages > 0:
                return Pager(server_args.spill_pages)
            return None
    """,
    # A sink picked from a table in a class body, by a key read from a free-form setting.
    "python/sglang/srt/events.py": """\
        class NullSink:
            pass


        class SocketSink:
            def __init__(self, endpoint="tcp://host:1", rank=0):
                self.endpoint = self.port_for(endpoint, rank)

            @staticmethod
            def port_for(endpoint, rank):
                if "tcp" not in endpoint:
                    raise ValueError("only tcp endpoints take a rank offset")
                return endpoint


        class SinkFactory:
            _kinds = {"null": NullSink, "socket": SocketSink}

            @classmethod
            def create(cls, kind):
                return cls._kinds[kind]()


        def start(server_args):
            return SinkFactory.create(server_args.event_sink)
    """,
}


@pytest.fixture(scope="module")
def reach() -> SiteReach:
    files = {p: textwrap.dedent(src) if p != ARGS else src for p, src in FILES.items()}
    return site_reach_of(files, ARGS)


def test_an_action_class_of_a_field_flag_runs_only_when_the_flag_is_given(reach: SiteReach) -> None:
    found = reach.of("python/sglang/srt/cli/actions.py", "AdapterListAction.__call__")
    assert found == (frozenset({("flag", "--adapter-paths", ())}),)


def test_an_action_class_of_an_add_argument_flag_runs_only_when_that_flag_is_given(
    reach: SiteReach,
) -> None:
    found = reach.of("python/sglang/srt/cli/actions.py", "SizeAction.__call__")
    assert found == (frozenset({("flag", "--swap-budget", ())}),)


def test_a_parser_a_field_declaration_hands_over_is_a_way_in_of_its_own(reach: SiteReach) -> None:
    # ``type_parser=parse_size`` runs for the flag's value; nothing narrows it to a backend.
    assert reach.of("python/sglang/srt/cli/actions.py", "parse_size") == ()


def test_a_class_registered_by_module_path_is_picked_by_its_key(reach: SiteReach) -> None:
    found = reach.of("python/sglang/srt/spill/disk.py", "DiskSpill.write")
    assert found == (frozenset({("flag", "--spill-backend", ("disk",))}),)


def test_a_count_above_its_off_value_is_the_flag_given(reach: SiteReach) -> None:
    found = reach.of("python/sglang/srt/spill/pager.py", "Pager.__init__")
    assert found == (frozenset({("flag", "--spill-pages", ())}),)


def test_a_class_named_in_a_class_body_is_a_way_in_for_anyone(reach: SiteReach) -> None:
    # The table in ``SinkFactory``'s body builds ``SocketSink`` for a free-form setting: its
    # constructor's helper is not narrowed to the one registered backend that also calls it.
    assert reach.of("python/sglang/srt/events.py", "SocketSink.port_for") == ()
