"""Reach: which of the user's choices put a site on the path.

``facts`` (one file, plain data) -> ``target_index`` (every file joined: definitions, hierarchy,
callers) -> ``selectors`` (guards, registries, entry classes and platforms as user choices) ->
``paths`` (the selectors on the caller chains of one definition). :class:`SiteReach` is the one
object the pipeline builds per run.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from extractor.prose.knowledge import FlagInfo, Knowledge
from extractor.reach.arguments import PassedFlags
from extractor.reach.facts import Def, FileFacts
from extractor.reach.file_index import module_name
from extractor.reach.guard_atoms import GuardReader
from extractor.reach.paths import Reach, ReachFinder
from extractor.reach.selectors import Selector, arch_names
from extractor.reach.target_index import RUN_BY_FRAMEWORK, Edge, TargetIndex

# Calls that hand an optional parameter on to the next (a public wrapper, its validator) are
# followed this many callers up; past that the argument counts as given.
_FORWARD_DEPTH = 3

__all__ = ["Reach", "SiteReach"]


class SiteReach:
    """Reach and catch facts of the sites of one run, from every file's facts and the knowledge."""

    def __init__(self, plain_facts: Iterable[dict[str, Any]], knowledge: Knowledge) -> None:
        facts = [f for f in (FileFacts.from_plain(p) for p in plain_facts) if f is not None]
        self.index = TargetIndex.build(facts)
        self.passed = PassedFlags(self.index, knowledge)
        self.finder = ReachFinder(self.index, knowledge, self.passed)
        self._readers: dict[str, GuardReader] = {}
        self.agreed = frozenset(
            info.flag
            for f in self.index.files.values()
            for dest in f.agreed
            if (info := knowledge.flags_for(f.path).get(dest)) is not None and not info.is_bool
        )
        """Valued flags that must agree with what the code derives (the checkpoint's own value)."""
        forced: dict[str, dict[str, set[str]]] = {}
        for f in self.index.files.values():
            flags = knowledge.flags_for(f.path)
            for name, value, *archs in f.forced:
                info = flags.get(name)
                if info is not None:
                    forced.setdefault(info.flag, {}).setdefault(value, set()).update(archs)
        self.forced = {
            flag: {v: tuple(sorted(a)) for v, a in sorted(by_v.items())}
            for flag, by_v in sorted(forced.items())
        }
        """flag -> value -> the architectures the code gives that value whatever the command line says."""
        sets: dict[str, set[tuple[str, tuple[str, ...], tuple[str, ...]]]] = {}
        for f in self.index.files.values():
            flags = knowledge.flags_for(f.path)
            for name, values, how, *archs in f.sets:
                info = flags.get(name)
                if info is not None:
                    entry = (how, tuple(v for v in values.split("|") if v), tuple(sorted(archs)))
                    sets.setdefault(info.flag, set()).add(entry)
        self.model_sets = {flag: tuple(sorted(entries)) for flag, entries in sorted(sets.items())}
        """flag -> ``(how, values, architectures)`` of each model override that writes it (see
        :func:`extractor.reach.forced.set_by_function`)."""
        self.override_paths = frozenset(f.path for f in self.index.files.values() if f.sets)
        """The files that hold model overrides: their own checks read the launch's values, before
        the overrides replace them."""

    @property
    def choices(self) -> dict[str, tuple[str, ...]]:
        """flag -> every value some registry of the target is keyed by."""
        return self.finder.choices

    @property
    def scoped_choices(self) -> dict[str, dict[str, tuple[str, ...]]]:
        """namespace -> flag -> the values the registries of that package are keyed by."""
        return self.finder.scoped_choices

    def uncalled(self, path: str, qualname: str) -> bool:
        """Whether nothing of the target runs function ``qualname`` of ``path`` (see
        :meth:`TargetIndex.uncalled`): only code calling it directly gets there."""
        return self.index.uncalled(f"{module_name(path)}:{qualname}")

    def parameters_of(
        self, path: str, qualname: str, tests: Iterable[tuple[str, bool]], line: int = 0
    ) -> tuple[str, ...]:
        """The parameters of function ``qualname`` of ``path`` that ``tests`` need given: each test
        is a name and whether it is tested for truth (else for ``is not None``). A parameter counts
        when leaving it out fails the test: its default is ``None`` (or ``False``, for a truth test).
        A name tested for truth comes back as ``name?`` (see :meth:`Edge.may_pass`)."""
        found = self._filled_by_calls(path, qualname, line)
        if found is None:
            return ()
        d, rebound = found
        # A truth test is marked ``?``: a literal false passed for it gives it no more than leaving it out.
        # A parameter without a default counts too: a call may still pass ``None``, or hand on an
        # optional parameter of its own that its callers leave out.
        return tuple(
            f"{n}?" if truth else n
            for n, truth in tests
            if n not in rebound and (n in d.unset or (truth and f"{n}=" in d.unset) or n in d.required)
        )

    def _filled_by_calls(self, path: str, qualname: str, line: int) -> tuple[Def, set[str]] | None:
        """Function ``qualname`` of ``path``, and the parameters it assigns before ``line`` (the
        site's), which hold a value there whatever a call gave; None for no function whose calls
        fill its parameters one by one (a constructor other than ``__init__`` is reached by
        building its class)."""
        d = self.index.defs.get(f"{module_name(path)}:{qualname}")
        if d is None or d.kind != "f" or qualname.rpartition(".")[2] in ("__new__", "__post_init__"):
            return None
        return d, {n for n, at in d.rebound if at < line}

    def word_parameters(
        self, path: str, qualname: str, tests: Mapping[str, frozenset[str]], line: int = 0
    ) -> dict[str, frozenset[str]]:
        """Of ``tests`` (a name -> the words the site's check lets through, ``kind not in ("self",
        "cross")``), those on parameters of function ``qualname`` of ``path`` that it does not
        assign before ``line``: what a call fills them with decides whether it gets past."""
        found = self._filled_by_calls(path, qualname, line)
        if found is None:
            return {}
        d, rebound = found
        return {
            n: words
            for n, words in tests.items()
            if n not in rebound and (n in d.params or n in d.unset or f"{n}=" in d.unset)
        }

    def passed_anywhere(
        self,
        path: str,
        qualname: str,
        names: Iterable[str],
        words: Mapping[str, frozenset[str]] | None = None,
    ) -> bool:
        """Whether some call of function ``qualname`` of ``path`` may pass every one of ``names``,
        and for each parameter of ``words`` some word other than those (or it has no known call at
        all)."""
        return self._passed(f"{module_name(path)}:{qualname}", tuple(names), 0, words or {})

    def edge_passes(
        self, edge: Edge, names: Iterable[str], words: Mapping[str, frozenset[str]] | None = None
    ) -> bool:
        """Whether call ``edge`` may give every one of ``names`` (see :meth:`parameters_of`), also
        through the optional parameters of its own it hands on, and for each parameter of
        ``words`` something other than those words."""
        return self._edge_passes(edge, tuple(names), 0, words or {})

    def _passed(
        self, node: str, wanted: tuple[str, ...], depth: int, words: Mapping[str, frozenset[str]]
    ) -> bool:
        edges = self.index.callers(node)
        module, _, qualname = node.partition(":")
        owner, _, short = qualname.rpartition(".")
        if short == "__init__" and owner:
            # Built by its class's name (``Conv(...)``), or from a subclass (``super().__init__``).
            edges = [*self.index.callers(f"{module}:{owner}"), *edges]
        if not edges:
            # Called only where the receiver is unknown (``model.load_weights(weights)``): those
            # calls, whatever they run, say what is passed.
            return self.index.named_calls_may_pass(node, wanted)
        return any(self._edge_passes(e, wanted, depth, words) for e in edges)

    def _edge_passes(
        self, edge: Edge, wanted: tuple[str, ...], depth: int, words: Mapping[str, frozenset[str]]
    ) -> bool:
        """Whether ``edge`` may give every one of ``wanted``: a call that hands on an optional
        parameter of its own (``_validate(out)`` in ``def run(x, out=None)``) gives it only where
        its own callers give that parameter. A call that fills a parameter of ``words`` with those
        words alone gets past the check."""
        if not edge.may_pass(wanted):
            return False
        if edge.confident and any(edge.only_words(n, accepted) for n, accepted in words.items()):
            return False
        if not wanted:
            return True
        caller = self.index.defs.get(edge.caller)
        # A call matched by its name alone may be another library's function of that name, whose
        # arguments line up with nothing here.
        if depth >= _FORWARD_DEPTH or not edge.confident or caller is None or caller.kind != "f":
            return True
        # torch runs ``forward`` through ``module(...)``, and a decorator may file the caller in a
        # registry: calls of it that this index does not see may give it anything.
        if caller.decorated or caller.qualname.rpartition(".")[2] in RUN_BY_FRAMEWORK:
            return True
        forwarded = dict(edge.forwards)
        # Assigned anywhere in the caller, the name may hold its own value by the call.
        rebound = {n for n, _ in caller.rebound}
        onward: list[str] = []
        for name in wanted:
            truth = name.endswith("?")
            via = forwarded.get(name.rstrip("?"))
            if via is not None and via not in rebound and (via in caller.unset or via in caller.required):
                onward.append(f"{via}?" if truth else via)
            elif via is not None and truth and f"{via}=" in caller.unset:
                onward.append(f"{via}?")
            else:
                return True
        return self._passed(edge.caller, tuple(onward), depth + 1, {})

    def of(self, path: str, qualname: str, ends: Callable[[Edge], bool] | None = None) -> Reach:
        """The alternatives of selectors that lead to code in ``qualname`` of ``path`` (``()``: anyone);
        with ``ends``, less the calls of it that catch the site's raise (see :meth:`ReachFinder.of_site`)."""
        return self._with_drafts(self.finder.of_site(path, module_name(path), qualname, ends))

    @functools.cached_property
    def _drafts(self) -> tuple[frozenset[str], frozenset[Selector]]:
        """The draft architectures, and the flags every narrowed way to a draft builder needs."""
        names = frozenset(a for f in self.index.files.values() for a in f.drafts)
        if not names:
            return names, frozenset()
        ways = [
            self.finder.of_site(f.path, f.module, q) for f in self.index.files.values() for q in f.drafting
        ]
        # A builder whose own way in is unknown says nothing about the others.
        conjs = [c for r in ways if r for c in r]
        if not conjs:
            return names, frozenset()
        # A flag every way needs, with the values any of them allows (one builder per speculative
        # algorithm still needs the flag set to one of those algorithms).
        by_way = [{s[1]: s[2] for s in c if s[0] == "flag"} for c in conjs]
        common: set[Selector] = set()
        for flag in set(by_way[0]).intersection(*by_way[1:]):
            values = [way[flag] for way in by_way]
            common.add(("flag", flag, () if () in values else tuple(sorted(set().union(*values)))))
        return names, frozenset(common)

    @property
    def draft_names(self) -> frozenset[str]:
        """The architecture names sglang gives a checkpoint it loads as a draft model."""
        return self._drafts[0]

    def _with_drafts(self, reach: Reach) -> Reach:
        names, flags = self._drafts
        if not flags:
            return reach
        out = []
        for conj in reach:
            archs = [arch_names(s) for s in conj if s[0] == "arch"]
            if any(a and a <= names for a in archs):
                conj = conj | flags
            out.append(conj)
        # A way in that needs more than another one adds nothing to it.
        return tuple(c for c in out if not any(o < c for o in out))

    def passed_selector(self, path: str, qualname: str, atom: tuple[str, ...]) -> Selector | None:
        """The selector of a test of a parameter or ``self`` attribute (``atom``) read in ``qualname``
        of ``path``, when its callers fill it from one flag."""
        return self.finder.passed_selector(atom, path, f"{module_name(path)}:{qualname}")

    def test_selector(self, path: str, qualname: str, test: ast.expr) -> Selector | None:
        """The one selector a test in ``qualname`` of ``path`` means, read as a caller's guard is
        (``envs.SGLANG_X.get()``, ``get_x_backend().is_y()``); None when it names none or several."""
        found = self.test_selectors(path, qualname, test)
        return next(iter(found)) if len(found) == 1 else None

    def test_selectors(self, path: str, qualname: str, test: ast.expr) -> frozenset[Selector]:
        """The selectors a one-atom test in ``qualname`` of ``path`` needs, read as a caller's guard
        is (``self.enable_cg`` where the class stores ``_is_cuda and envs.SGLANG_X.get()``)."""
        module = module_name(path)
        f = self.index.files.get(module)
        if f is None:
            return frozenset()
        reader = self._readers.get(module)
        if reader is None:
            reader = self._readers[module] = GuardReader(dict(f.imports))
        atoms = reader.atoms_of(test, {}, {})
        if len(atoms) != 1:
            return frozenset()
        return self.finder.guard_selectors(atoms, path, f"{module}:{qualname}") or self.finder.class_guards(
            atoms
        )

    def tested_values(self, path: str) -> dict[str, tuple[str, ...]]:
        """Valued flag -> the values of it the code of ``path`` tests for (see
        :meth:`ReachFinder.tested_values`)."""
        return self.finder.tested_values(path)

    def passed_flags(self, path: str, qualname: str, token: str) -> tuple[FlagInfo, ...]:
        """The flags the callers fill value ``token`` (``n:param``, ``s:attr``) of ``qualname`` from."""
        return self.passed.of(module_name(path), qualname, token)

    def passed_envs(self, path: str, qualname: str, token: str) -> tuple[FlagInfo, ...]:
        """The environment variables the callers fill value ``token`` of ``qualname`` from (each
        with the default an unset one reads as)."""
        return self.passed.env_infos_of(module_name(path), qualname, token)

    def passed_config(self, path: str, qualname: str, token: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """The model config attributes the callers fill value ``token`` of ``qualname`` from, each
        with the config.json keys it is read from."""
        return self.passed.config_of(module_name(path), qualname, token)

    def passed_request(self, path: str, qualname: str, token: str) -> tuple[str, ...]:
        """The fields of the client's request the callers fill value ``token`` of ``qualname`` from."""
        return self.passed.request_of(module_name(path), qualname, token)

    def runs_when_built(self, path: str, qualname: str) -> bool:
        """Whether method ``qualname`` is a constructor or one calls it on ``self``."""
        return self.passed.runs_when_built(module_name(path), qualname)

    def same_object(self, path: str, qualname: str, other_path: str, other: str) -> bool:
        """Whether ``other`` is a method of the class of ``qualname`` or of one of its bases."""
        return self.passed.same_object(module_name(path), qualname, module_name(other_path), other)

    def caller_catches(self, path: str, qualname: str) -> list[tuple[str, ...]] | None:
        """What each known call of ``qualname`` catches, when every one sits in a ``try`` (else None).

        One entry per call site: the handler names of its innermost ``try`` (``()`` for a bare
        ``except``). A raise is swallowed by its callers when its class is in every entry. Only calls
        resolved with a known receiver count; a definition nobody is known to call gives None.
        """
        edges = [e for e in self.index.callers(f"{module_name(path)}:{qualname}") if e.confident]
        if not edges or any(e.catches is None for e in edges):
            return None
        return [tuple(e.catches or ()) for e in edges]
