"""Checks their own path rules out (:mod:`extractor.analysis.ruled_out`): found where the path
already requires the opposite of the failing test, and not where the value may have changed."""

from __future__ import annotations

import textwrap

import pytest

from extractor.analysis.analyse import analyse
from extractor.analysis.facts import GuardAtom, Site
from extractor.analysis.parse import ParsedFile, parse_source
from extractor.prose.enrich import enrich
from extractor.prose.knowledge import build_knowledge

SOURCE = textwrap.dedent(
    """
    class Layer:
        def __init__(self, config):
            self.n = config.n
            if self.n > 0:
                self.moe = True
            else:
                raise NotImplementedError("dense layers are not supported")
            self.norm = Norm(config.size)
            if self.n > 0:
                self.ffn = self.moe
            else:
                raise NotImplementedError()

        def load(self, fp8, mx):
            if fp8:
                if mx and not fp8:
                    raise ValueError("mx needs an fp8 checkpoint")

        def head(self, module, name):
            if name == "lm_head" and module is not None:
                assert module is not None

        def fetch(self, url):
            response = get(url)
            if response.ok:
                return response
            response = get(url + "?retry")
            if not response.ok:
                raise RuntimeError("fetch failed")

        def rebuild(self, config):
            if self.n > 0:
                return
            self.setup(config)
            if self.n <= 0 and not self.n > 0:
                raise ValueError("still no experts")

        def experts(self, w1, w2, s):
            assert w1.shape[0] == w2.shape[0], "expert count mismatch"
            assert w1.shape[0] == w2.shape[0], "weight expert count mismatch"
            assert s.ready() and s.size > 0
            assert s.size > 0, "empty"

        def steps(self, r):
            assert r.done
            yield
            assert r.done, "still done after a step"
            assert r.poll() == 0
            assert r.poll() == 0, "polled twice"

        def pick_pool(self, mla, sparse, hybrid):
            if sparse and not mla:
                return None
            elif mla and sparse:
                return "sparse"
            elif mla and not hybrid:
                assert not sparse
                return "dense"
            elif hybrid:
                if mla and sparse:
                    raise ValueError("hybrid sparse pools are not supported")
            return None

        def typed(self, x):
            if TYPE_CHECKING:
                assert isinstance(x, Layer)
            if typing.TYPE_CHECKING:
                raise TypeError("only for the checker")
            if not TYPE_CHECKING:
                assert x is not None, "x is needed"
            return x

        def reset(self, args):
            if args.k != 1:
                raise ValueError("k must be 1")
            normalize(args)
            if args.k != 1:
                raise ValueError("k must still be 1")
    """
)


@pytest.fixture(scope="module")
def sites() -> list[Site]:
    parsed = parse_source("python/sglang/srt/models/layer.py", SOURCE.encode())
    assert isinstance(parsed, ParsedFile)
    return analyse(parsed)


def _site(sites: list[Site], qualname: str, nth: int = 0) -> Site:
    return [s for s in sites if s.qualname == qualname][nth]


def _dead(sites: list[Site], qualname: str, nth: int = 0) -> GuardAtom | None:
    """The path atom that rules the site out."""
    found = _site(sites, qualname, nth).guard.ruled_out
    return found[1] if found is not None else None


def test_the_second_of_two_identical_else_raises_is_ruled_out(sites: list[Site]) -> None:
    assert _dead(sites, "Layer.__init__", 0) is None
    dead = _dead(sites, "Layer.__init__", 1)
    assert dead is not None and dead.text == "self.n > 0" and dead.line == 5


def test_a_negated_switch_under_the_switch_and_an_assert_of_what_the_path_requires(
    sites: list[Site],
) -> None:
    dead = _dead(sites, "Layer.load")
    assert dead is not None and dead.text == "fp8"
    # Of the two failing conditions, the one the path contradicts is named.
    found = _site(sites, "Layer.load").guard.ruled_out
    assert found is not None and found[0].text == "not fp8"
    dead = _dead(sites, "Layer.head")
    assert dead is not None and dead.text == "module is not None"


def test_a_value_assigned_mutated_or_handed_on_between_the_tests_is_not_ruled_out(
    sites: list[Site],
) -> None:
    assert _dead(sites, "Layer.fetch", 0) is None  # ``response`` is fetched again
    assert _dead(sites, "Layer.rebuild", 0) is None  # ``self.setup()`` may set ``self.n``
    assert _dead(sites, "Layer.reset", 1) is None  # ``normalize(args)`` may change ``args.k``


def test_an_assert_already_made_on_the_way_rules_out_the_same_test_again(sites: list[Site]) -> None:
    # The second of two identical asserts, and a part of an earlier ``and`` asserted again.
    assert _dead(sites, "Layer.experts", 0) is None
    dead = _dead(sites, "Layer.experts", 1)
    assert dead is not None and dead.text == "w1.shape[0] == w2.shape[0]" and dead.kind == "assert"
    dead = _dead(sites, "Layer.experts", 3)
    assert dead is not None and dead.text == "s.size > 0"
    # Other code runs at a ``yield``; a call may answer otherwise the second time.
    assert _dead(sites, "Layer.steps", 1) is None
    assert _dead(sites, "Layer.steps", 3) is None


def test_a_case_an_earlier_elif_took_is_ruled_out(sites: list[Site]) -> None:
    # ``elif mla and sparse:`` took every sparse case with ``mla``; the later ``elif mla`` cannot
    # meet ``sparse``, asserted or tested.
    for nth in (0, 1):
        found = _site(sites, "Layer.pick_pool", nth).guard.ruled_out
        assert found is not None and found[1].text == "not (mla and sparse)", found
    # The first branch (``if sparse and not mla``) says nothing here: ``not mla`` is not on the path.
    prose = enrich(_site(sites, "Layer.pick_pool", 0), build_knowledge({}))
    assert "which rules out `sparse`" in prose.documentation, prose.documentation


def test_a_check_under_type_checking_never_runs(sites: list[Site]) -> None:
    for nth in (0, 1):
        found = _site(sites, "Layer.typed", nth).guard.ruled_out
        assert found is not None and found[1].text.endswith("TYPE_CHECKING"), found
    prose = enrich(_site(sites, "Layer.typed", 0), build_knowledge({}))
    assert "This check never runs: it sits under `if TYPE_CHECKING:` (line" in prose.documentation
    assert "runs only when `TYPE_CHECKING`" not in prose.documentation
    assert prose.dead  # the run's reach states no way in for it
    assert prose.triggerScenarios.startswith("None:") and prose.backgroundTag == "internal-invariant"
    # Its ``else`` (``if not TYPE_CHECKING``) runs.
    assert _site(sites, "Layer.typed", 2).guard.ruled_out is None


def test_a_ruled_out_check_says_it_cannot_fail_and_blames_no_setting(sites: list[Site]) -> None:
    prose = enrich(_site(sites, "Layer.__init__", 1), build_knowledge({}))
    assert prose.backgroundTag == "internal-invariant"
    assert "cannot fail as the code stands" in prose.documentation
    assert "`self.n > 0` (line 5)" in prose.triggerScenarios
    assert prose.commonSituations.startswith("None: this is a dead check.")
    # No "reaching it is a bug" beside "cannot fail": a traceback ending here ran other code.
    assert "reaching it is a bug" not in prose.documentation
    assert "Cause: nothing in this version" in prose.documentation
    assert len(prose.solutions) == 1 and "compare its file and line" in prose.solutions[0]
    assert prose.exampleFix.endswith("python3 -m sglang.check_env")


CALLERS = textwrap.dedent(
    """\
    class World:
        def __init__(self, config):
            self.embedder = make(config) if config.use_embedder else None
            self.cache = None

        def forward(self, x):
            needs = self.use_extra and self.embedder is not None
            if needs:
                x = self._embed(x)
            if self.embedder:
                x = self._embed(x)
            if self.cache is not None:
                x = self._cached(x)
            return self._cached(x) if self.ready else x

        def _embed(self, x):
            if self.embedder is None:
                raise ValueError("embedder not built")
            return self.embedder(x)

        def _cached(self, x):
            assert self.cache is not None, "no cache"
            return x

        def public(self, x):
            if self.embedder is None:
                raise ValueError("public embedder not built")
            return x
    """
)


def test_a_private_method_every_caller_guards_is_ruled_out_by_its_callers() -> None:
    parsed = parse_source("python/sglang/srt/models/world.py", CALLERS.encode())
    assert isinstance(parsed, ParsedFile), parsed
    by_name = {s.qualname: s for s in analyse(parsed)}
    dead = by_name["World._embed"].guard.ruled_out
    assert dead is not None and dead[1].text == "self.use_extra and self.embedder is not None", dead
    # One call of ``_cached`` is unguarded: the check may fail.
    assert by_name["World._cached"].guard.ruled_out is None
    # A public method may be called from anywhere.
    assert by_name["World.public"].guard.ruled_out is None
