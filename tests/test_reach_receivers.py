"""Reach through receivers: a fixture package whose calls go through ``self`` attributes, factories,
annotated parameters, locals bound to constructions, ``super()`` and classes handed around as
values, so that the guard deciding a site sits several files and frames above it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from extractor.api import ExtractOptions, ExtractResult, extract
from extractor.reach import SiteReach
from extractor.reach.target_index import is_test_path
from tests.conftest import site_reach_of
from tests.gitrepos import make_repo

ARGS = "python/sglang/srt/server_args.py"
SERVER_ARGS = """\
from dataclasses import dataclass


@dataclass
class ServerArgs:
    kv_backend: str = "plain"
    enable_host_cache: bool = False
    enable_streaming: bool = False
    enable_probe: bool = False

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--kv-backend", type=str, choices=["plain", "paged", "tiered"])
        parser.add_argument("--enable-host-cache", action="store_true")
        parser.add_argument("--enable-streaming", action="store_true")
        parser.add_argument("--enable-probe", action="store_true")
"""

PKG = "python/sglang/srt/engine"

FILES = {
    ARGS: SERVER_ARGS,
    # The entry point builds the scheduler, which owns a runner built without any guard; each
    # guarded call goes through it.
    f"{PKG}/scheduler.py": """\
        from sglang.srt.engine.runner import ModelRunner, run_probe


        class Scheduler:
            def __init__(self, server_args):
                self.server_args = server_args
                self.runner = ModelRunner(server_args)

            def step(self, batch):
                if self.server_args.enable_streaming:
                    self.runner.stream(batch)
                if self.server_args.enable_host_cache:
                    self.runner.host.load(batch)
                if self.server_args.enable_probe:
                    run_probe(self.runner)
                return self.runner.forward(batch)


        def run_scheduler(server_args):
            Scheduler(server_args).step(None)
        """,
    # Attributes typed by a factory's return annotation, by what a factory returns, by a parameter.
    f"{PKG}/runner.py": """\
        from typing import Optional

        from sglang.srt.engine.backends import KvBackend, make_backend
        from sglang.srt.engine.host import make_host_pool


        class ModelRunner:
            def __init__(self, server_args, backend: Optional["KvBackend"] = None):
                self.backend = backend or make_backend(server_args)
                self.host = make_host_pool(server_args)

            def forward(self, batch):
                return self.backend.prepare(batch)

            def stream(self, batch):
                if batch is None:
                    raise RuntimeError("streaming step without a batch")


        def run_probe(runner: "ModelRunner"):
            probe = Probe()
            probe.stream(runner)


        class Probe:
            def stream(self, runner):
                assert runner is not None, "probe needs a runner"
        """,
    f"{PKG}/host.py": """\
        class HostPool:
            def load(self, batch):
                raise ValueError("host pool is empty")


        class DiskPool:
            def load(self, batch):
                return batch


        def make_host_pool(server_args):
            return HostPool()
        """,
    # A value dispatch in the factory, a base whose method the subclasses reach through super().
    f"{PKG}/backends.py": """\
        class KvBackend:
            def prepare(self, batch):
                return batch

            def _check_layout(self, batch):
                if batch.layout != "nhd":
                    raise ValueError("layout must be nhd")


        def make_backend(server_args) -> KvBackend:
            if server_args.kv_backend == "paged":
                from sglang.srt.engine.paged import PagedBackend

                return PagedBackend()
            if server_args.kv_backend == "tiered":
                from sglang.srt.engine.paged import TieredBackend

                return TieredBackend()
            return KvBackend()
        """,
    f"{PKG}/paged.py": """\
        from sglang.srt.engine.backends import KvBackend


        class PagedBackend(KvBackend):
            def prepare(self, batch):
                super()._check_layout(batch)
                return self.pages(batch)

            def pages(self, batch):
                assert batch.page_size == 16, "paged backend wants 16-token pages"
                return batch


        class TieredBackend(KvBackend):
            def prepare(self, batch):
                pick = {"hot": HotTier, "cold": ColdTier}
                return pick[batch.tier]().fetch(batch)


        class HotTier:
            def fetch(self, batch):
                raise KeyError("hot tier miss")


        class ColdTier:
            def fetch(self, batch):
                return batch
        """,
    # A class nothing builds calls the shared helper: it is no way in and must not void the reach.
    f"{PKG}/orphan.py": """\
        from sglang.srt.engine.host import HostPool


        class Unused:
            def go(self):
                HostPool().load(None)
        """,
    # A test calls the site without any guard: tests are no way in either.
    "python/sglang/test/test_host.py": """\
        from sglang.srt.engine.host import HostPool


        def test_load():
            HostPool().load(None)
        """,
}


def _source(path: str) -> str:
    return FILES[path] if path == ARGS else textwrap.dedent(FILES[path])


def _site_reach(files: dict[str, str]) -> SiteReach:
    return site_reach_of(files, ARGS)


@pytest.fixture(scope="module")
def reach() -> SiteReach:
    return _site_reach({p: _source(p) for p in FILES})


def _flag(name: str, *values: str) -> tuple[frozenset[tuple[str, str, tuple[str, ...]]], ...]:
    return (frozenset({("flag", name, tuple(values))}),)


def test_a_call_on_a_self_attribute_reaches_the_method_of_the_class_stored_there(reach: SiteReach) -> None:
    # ``stream`` is defined twice, so the name alone would tie the call to nothing.
    assert reach.of(f"{PKG}/runner.py", "ModelRunner.stream") == _flag("--enable-streaming")


def test_an_attribute_filled_by_a_factory_takes_the_class_the_factory_returns(reach: SiteReach) -> None:
    # ``load`` is defined twice too; the test file's unguarded call and the unbuilt class add nothing.
    assert reach.of(f"{PKG}/host.py", "HostPool.load") == _flag("--enable-host-cache")


def test_an_annotated_parameter_and_a_local_built_in_place_type_their_calls(reach: SiteReach) -> None:
    assert reach.of(f"{PKG}/runner.py", "Probe.stream") == _flag("--enable-probe")


def test_a_base_typed_attribute_reaches_the_overrides_and_super_reaches_the_base(reach: SiteReach) -> None:
    # forward -> self.backend.prepare (typed KvBackend by the factory's annotation) -> the override
    # in PagedBackend (built only for ``paged``) -> self.pages; and super() back into the base.
    assert reach.of(f"{PKG}/paged.py", "PagedBackend.pages") == _flag("--kv-backend", "paged")
    assert reach.of(f"{PKG}/backends.py", "KvBackend._check_layout") == _flag("--kv-backend", "paged")


def test_a_class_named_in_a_table_is_built_by_the_code_that_names_it(reach: SiteReach) -> None:
    assert reach.of(f"{PKG}/paged.py", "HotTier.fetch") == _flag("--kv-backend", "tiered")


def test_an_unguarded_typed_caller_still_means_nothing_narrows_the_path() -> None:
    files = {p: _source(p) for p in FILES}
    files[f"{PKG}/always.py"] = textwrap.dedent(
        """\
        from sglang.srt.engine.runner import ModelRunner


        def warmup(runner: ModelRunner):
            runner.host.load(None)
        """
    )
    assert _site_reach(files).of(f"{PKG}/host.py", "HostPool.load") == ()


def _with(extra: dict[str, str]) -> SiteReach:
    files = {p: _source(p) for p in FILES}
    files.update({p: textwrap.dedent(src) for p, src in extra.items()})
    return _site_reach(files)


def test_an_attribute_built_by_calling_the_base_itself_runs_the_bases_method() -> None:
    # ``Optional[Cache]`` would allow a subclass, but the attribute is built as ``Cache(...)``: its
    # call runs ``Cache.evict``, never the override of ``TieredCache`` (built only for ``tiered``).
    reach = _with(
        {
            f"{PKG}/cache.py": """\
                from typing import Optional


                class Cache:
                    def evict(self, n):
                        return n


                class TieredCache(Cache):
                    def evict(self, n):
                        if n < 0:
                            raise ValueError("cannot evict a negative count")
                        return n


                class Owner:
                    def __init__(self, server_args):
                        self.cache: Optional[Cache] = None
                        if server_args.kv_backend == "tiered":
                            self.tiered = TieredCache()
                        self.cache = Cache()

                    def trim(self):
                        self.cache.evict(1)


                def serve(server_args):
                    owner = Owner(server_args)
                    if server_args.enable_probe:
                        owner.trim()
                """,
        }
    )
    # (Tied to the override, the probe's call would add ``--enable-probe`` to its way in.)
    assert reach.of(f"{PKG}/cache.py", "TieredCache.evict") == _flag("--kv-backend", "tiered")


def test_a_call_on_an_object_of_another_package_runs_none_of_the_targets_methods() -> None:
    # ``self.engine`` holds an outside library's engine; the one method of the target named
    # ``write_batch`` must not be tied to that unguarded call by its name, which would leave only the
    # streaming call (itself tied by name, on an untyped receiver) as a way in.
    reach = _with(
        {
            f"{PKG}/link.py": """\
                from remote_io import IoEngine


                class Link:
                    def __init__(self):
                        self.engine = self._make()

                    def _make(self) -> IoEngine:
                        return IoEngine()

                    def flush(self, batch):
                        self.engine.write_batch(batch)


                def serve():
                    Link().flush([])
                """,
            f"{PKG}/spool.py": """\
                class Spool:
                    def write_batch(self, batch):
                        if not batch:
                            raise ValueError("nothing to write")


                def stream(server_args, spool):
                    if server_args.enable_streaming:
                        spool.write_batch([1])
                """,
        }
    )
    assert reach.of(f"{PKG}/spool.py", "Spool.write_batch") == _flag("--enable-streaming")


def test_a_method_no_known_caller_reaches_still_runs_only_on_its_folders_platform() -> None:
    reach = _with(
        {
            "python/sglang/srt/hardware_backend/npu/pool.py": """\
                class NpuPool:
                    def translate(self, loc):
                        raise RuntimeError("ring addressing is not supported on this device")
                """,
        }
    )
    assert reach.of("python/sglang/srt/hardware_backend/npu/pool.py", "NpuPool.translate") == (
        frozenset({("platform", "npu", ())}),
    )


def test_a_registered_class_built_only_where_the_factory_tests_its_key_keeps_the_factorys_way_in() -> None:
    # The factory reads its registry only for an attached host cache; the branch that builds the
    # paged store tests the key the controller passes on from ``--kv-backend`` (positionally, though
    # another ``create`` takes something else first). The registration is that same way in, not a
    # second one that any launch with ``--kv-backend paged`` takes.
    files = {
        f"{PKG}/factory.py": """\
            class Factory:
                _registry = {}

                @classmethod
                def register(cls, name, module_path, class_name):
                    cls._registry[name] = (module_path, class_name)

                @classmethod
                def create(cls, backend_name, config):
                    backend_class = load(cls._registry[backend_name])
                    return cls._build(backend_name, backend_class, config)

                @classmethod
                def _build(cls, backend_name, backend_class, config):
                    if backend_name == "paged":
                        return backend_class.from_config(config)
                    return backend_class(config)


            Factory.register("paged", "sglang.srt.engine.paged_store", "PagedStore")
            Factory.register("tiered", "sglang.srt.engine.tiered_store", "TieredStore")
            """,
        f"{PKG}/selector.py": """\
            class Selector:
                def create(self, agent):
                    return agent
            """,
        f"{PKG}/controller.py": """\
            from sglang.srt.engine.factory import Factory


            class Controller:
                def attach(self, kv_backend):
                    self.store = Factory.create(kv_backend, {})


            def serve(server_args):
                if server_args.enable_host_cache:
                    Controller().attach(server_args.kv_backend)
            """,
        f"{PKG}/paged_store.py": """\
            class PagedStore:
                @classmethod
                def from_config(cls, config):
                    return PagedStore(config)

                def __init__(self, config):
                    if not config:
                        raise ValueError("the paged store needs a config")
            """,
    }
    reach = _with(files)
    flags = reach.passed_flags(f"{PKG}/factory.py", "Factory.create", "n:backend_name")
    assert [f.flag for f in flags] == ["--kv-backend"]
    both = (frozenset({("flag", "--enable-host-cache", ()), ("flag", "--kv-backend", ("paged",))}),)
    assert reach.of(f"{PKG}/paged_store.py", "PagedStore.__init__") == both


def test_a_function_stored_in_an_attribute_runs_where_the_attribute_is_called() -> None:
    # ``self.fetch_fn`` holds the paged fetch only for ``--kv-backend paged``, and is called only
    # when streaming: both hold where the fetch runs (the assignment alone would drop the second).
    reach = _with(
        {
            f"{PKG}/loader.py": """\
                from sglang.srt.engine.remote import fetch_remote


                class Loader:
                    def __init__(self, server_args):
                        self.server_args = server_args
                        self.fetch_fn = self._fetch_plain
                        if server_args.kv_backend == "paged":
                            self.fetch_fn = self._fetch_paged
                        self.push_fn = fetch_remote

                    def step(self):
                        if self.server_args.enable_streaming:
                            self.fetch_fn(1)
                        if self.server_args.enable_probe:
                            self.push_fn(2)

                    def _fetch_plain(self, n):
                        return n

                    def _fetch_paged(self, n):
                        if n < 0:
                            raise ValueError("cannot fetch a negative page")
                        return n


                def serve(server_args):
                    Loader(server_args).step()
                """,
            f"{PKG}/remote.py": """\
                def fetch_remote(n):
                    if n < 0:
                        raise ValueError("cannot push a negative page")
                """,
        }
    )
    paged = (frozenset({("flag", "--kv-backend", ("paged",)), ("flag", "--enable-streaming", ())}),)
    assert reach.of(f"{PKG}/loader.py", "Loader._fetch_paged") == paged
    assert reach.of(f"{PKG}/remote.py", "fetch_remote") == _flag("--enable-probe")


def test_a_method_stored_over_a_placeholder_runs_where_another_class_calls_the_attribute() -> None:
    # ``Updater.update`` only declares the signature; ``__init__`` stores the real one in
    # ``self.update``. The backend calls ``self.updater.update`` only when streaming, and its
    # subclass for the paged backend overrides that caller: the paged backend never runs it.
    reach = _with(
        {
            f"{PKG}/updater.py": """\
                class Updater:
                    def __init__(self, server_args):
                        self.update = self.update_single

                    def update(self, n):
                        raise NotImplementedError()

                    def update_single(self, n):
                        if n < 0:
                            raise ValueError("cannot update a negative count")
                """,
            f"{PKG}/attn.py": """\
                from sglang.srt.engine.updater import Updater


                class PlainAttn:
                    def __init__(self, server_args):
                        self.server_args = server_args
                        self.updater = Updater(server_args)

                    def step(self, n):
                        if self.server_args.enable_streaming:
                            self.updater.update(n)


                class PagedAttn(PlainAttn):
                    def step(self, n):
                        return n


                def serve(server_args):
                    if server_args.kv_backend == "paged":
                        PagedAttn(server_args).step(1)
                    elif server_args.kv_backend == "plain":
                        PlainAttn(server_args).step(1)
                """,
        }
    )
    single = reach.of(f"{PKG}/updater.py", "Updater.update_single")
    assert single == (frozenset({("flag", "--kv-backend", ("plain",)), ("flag", "--enable-streaming", ())}),)


def test_a_second_name_of_a_function_leads_to_it_like_its_own() -> None:
    # ``decode_gated = decode_plain`` in the kernel module, and ``import ... as`` in a caller:
    # the calls under either name are calls of the one function.
    reach = _with(
        {
            f"{PKG}/kernel.py": """\
                def decode_plain(x):
                    if x < 0:
                        raise ValueError("cannot decode a negative length")


                decode_gated = decode_plain
                """,
            f"{PKG}/users.py": """\
                from sglang.srt.engine.kernel import decode_gated
                from sglang.srt.engine.kernel import decode_plain as decode_fast


                def stream(server_args):
                    if server_args.enable_streaming:
                        decode_gated(1)


                def probe(server_args):
                    if server_args.enable_probe:
                        decode_fast(1)
                """,
        }
    )
    both = (
        frozenset({("flag", "--enable-probe", ())}),
        frozenset({("flag", "--enable-streaming", ())}),
    )
    assert reach.of(f"{PKG}/kernel.py", "decode_plain") == both


def test_test_files_are_recognised_by_their_folder_or_name() -> None:
    assert is_test_path("python/sglang/test/test_host.py")
    assert is_test_path("python/sglang/srt/mem_cache/storage/x/unit_test.py")
    assert not is_test_path("python/sglang/srt/engine/host.py")


def _run(repo: Path, sha: str, cache: Path, jobs: int) -> ExtractResult:
    return extract(ExtractOptions.build(source=str(repo), sha=sha, jobs=jobs, cache_dir=cache))


def test_a_real_extraction_states_the_reach_and_is_the_same_cold_warm_and_parallel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from extractor.records.jsonl import dumps_line

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    repo, (sha,) = make_repo(tmp_path / "repo", [{p: _source(p).encode() for p in FILES}])

    def lines(result: ExtractResult) -> bytes:
        return b"".join(dumps_line(r, "2026-01-01T00:00:00.000Z") for r in result.records)

    cold = _run(repo, sha, tmp_path / "cache", jobs=1)
    (host,) = [r for r in cold.records if r.filePath.endswith("engine/host.py")]
    assert "--enable-host-cache" in host.documentation
    assert lines(_run(repo, sha, tmp_path / "cache", jobs=2)) == lines(cold)
    assert lines(_run(repo, sha, tmp_path / "other", jobs=2)) == lines(cold)


def test_a_class_built_by_cls_in_its_class_method_is_a_way_into_the_base_method() -> None:
    # ``PlainBuffers.create()`` builds its class through ``cls(...)`` on every launch; the probe's
    # buffers only under ``--enable-probe``. The shared base method runs on any launch.
    files = {
        ARGS: SERVER_ARGS,
        f"{PKG}/buffers.py": textwrap.dedent(
            """\
            class Buffers:
                def share(self):
                    if not self.ready:
                        raise RuntimeError("buffers are not ready")


            class PlainBuffers(Buffers):
                @classmethod
                def create(cls, size):
                    return cls(size)


            class ProbeBuffers(Buffers):
                pass
            """
        ),
        f"{PKG}/graph.py": textwrap.dedent(
            """\
            from sglang.srt.engine.buffers import PlainBuffers, ProbeBuffers


            class Graph:
                def __init__(self, server_args):
                    self.buffers: PlainBuffers = PlainBuffers.create(8)
                    self.buffers.share()
                    if server_args.enable_probe:
                        probe = ProbeBuffers()
                        probe.share()


            def main(server_args):
                return Graph(server_args)
            """
        ),
    }
    reach = _site_reach(files)
    assert reach.of(f"{PKG}/buffers.py", "Buffers.share") == ()
    assert reach.of(f"{PKG}/buffers.py", "PlainBuffers") == ()


def test_a_property_that_returns_a_stored_attribute_reads_what_was_stored_there() -> None:
    # ``self.streaming`` is a property over ``self._streaming``, which the constructor fills from
    # the parameter the scheduler passes ``--enable-streaming`` into.
    reach = _with(
        {
            f"{PKG}/grammar.py": """\
                class BaseGrammar:
                    _streaming: bool = False

                    @property
                    def streaming(self):
                        return self._streaming


                class StrictGrammar(BaseGrammar):
                    def __init__(self, strict=False):
                        self._streaming = strict

                    def excluded(self, tokens):
                        if not self.streaming:
                            return None
                        if not tokens:
                            raise ValueError("no tokens to exclude")
                        return tokens


                def make_grammar(server_args):
                    return StrictGrammar(strict=server_args.enable_streaming)
                """,
        }
    )
    atom = ("a", "streaming", "self")
    assert reach.passed_selector(f"{PKG}/grammar.py", "StrictGrammar.excluded", atom) == (
        "flag",
        "--enable-streaming",
        (),
    )


def test_a_method_only_a_wrapper_of_its_own_name_calls_is_run_by_nothing_of_the_target() -> None:
    # ``Wrapper.rewind`` hands the call on to ``Tracker.rewind``, and nothing else in the target
    # calls ``rewind``: neither runs when ``--enable-probe`` builds them, so that flag is no reach.
    files = {
        f"{PKG}/tracker.py": """\
            class Tracker:
                def __init__(self):
                    self.steps = []

                def record(self, n):
                    self.steps.append(n)

                def rewind(self, n):
                    if n > len(self.steps):
                        raise ValueError("cannot rewind past the first step")


            class Wrapper:
                def __init__(self):
                    self.tracker = Tracker()

                def record(self, n):
                    self.tracker.record(n)

                def rewind(self, n):
                    return self.tracker.rewind(n)


            def probe(server_args):
                if server_args.enable_probe:
                    Wrapper().record(1)
            """,
    }
    assert _with(files).of(f"{PKG}/tracker.py", "Tracker.rewind") == ()
    # Called from anywhere else too, the class's ways in hold again.
    called = {
        **files,
        f"{PKG}/undo.py": "from sglang.srt.engine.tracker import Wrapper\n\n\ndef undo(w: Wrapper):\n    w.rewind(1)\n",
    }
    assert _with(called).of(f"{PKG}/tracker.py", "Tracker.rewind") == _flag("--enable-probe")


def test_a_class_a_factory_returns_is_given_what_the_factorys_value_is_called_with() -> None:
    # ``pick_pool_cls(device)(size, server_args.kv_backend)``: the pool the factory returns is
    # built with those arguments, and its base keeps the layout its ``super().__init__`` hands on.
    reach = _with(
        {
            f"{PKG}/pools.py": """\
                class BasePool:
                    def __init__(self, size, layout):
                        self.layout = layout


                class HostPool(BasePool):
                    def __init__(self, size, layout, pinned=False):
                        super().__init__(size, layout)

                    def backup(self):
                        if self.layout != "paged":
                            raise ValueError(f"unsupported layout {self.layout}")


                class WidePool(HostPool):
                    pass


                def pick_pool_cls(device):
                    if device.wide:
                        return WidePool
                    return HostPool
                """,
            f"{PKG}/cache.py": """\
                from sglang.srt.engine.pools import pick_pool_cls


                class Cache:
                    def __init__(self, server_args, device):
                        self.pool = pick_pool_cls(device)(16, server_args.kv_backend)
                """,
        }
    )
    (info,) = reach.passed_flags(f"{PKG}/pools.py", "HostPool.backup", "s:layout")
    assert info.flag == "--kv-backend"
    # The factory's value built nothing else: no flag reaches a parameter it does not fill.
    assert reach.passed_flags(f"{PKG}/pools.py", "HostPool.__init__", "n:pinned") == ()
