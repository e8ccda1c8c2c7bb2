"""Guards stay linear in the size of the code: huge generated functions are analysed, every site
found, each guard keeping the atoms nearest to its site (issue 18, item 3).

Each site's guard carries the negation of every earlier early exit, ``elif`` test or ``match``
case; unbounded, a function of n guarded raises gives n²/2 atoms in all. Only the sibling atoms
nearest to a site are kept; the atoms of the path itself always are.
"""

from __future__ import annotations

from extractor.analysis.analyse import analyse
from extractor.analysis.conditions import MAX_SIBLING_ATOMS
from extractor.analysis.facts import Site
from extractor.analysis.parse import ParsedFile, parse_source


def _sites(source: str) -> list[Site]:
    parsed = parse_source("generated.py", source.encode())
    assert isinstance(parsed, ParsedFile), parsed
    return analyse(parsed)


def _atoms(site: Site) -> list[str]:
    return [a.text for a in site.guard.atoms]


def test_thousands_of_early_exits_give_bounded_guards() -> None:
    n = 3_000
    source = "def check(x):\n" + "".join(
        f"    if x == {i}:\n        raise ValueError('bad {i}')\n" for i in range(n)
    )
    sites = _sites(source)
    assert len(sites) == n
    assert sum(len(s.guard.atoms) for s in sites) <= n * (MAX_SIBLING_ATOMS + 1)
    last = _atoms(sites[-1])
    assert last[-1] == f"x == {n - 1}"
    assert f"not x == {n - 2}" in last  # the nearest early exit is one of the atoms kept
    assert "not x == 0" not in last


def test_a_long_elif_chain_gives_bounded_guards() -> None:
    n = 500
    source = "def pick(x):\n    if x == 0:\n        raise ValueError('zero')\n" + "".join(
        f"    elif x == {i}:\n        raise ValueError('bad {i}')\n" for i in range(1, n)
    )
    sites = _sites(source)
    assert len(sites) == n
    last = _atoms(sites[-1])
    assert last == [f"not x == {i}" for i in range(n - 1 - MAX_SIBLING_ATOMS, n - 1)] + [f"x == {n - 1}"]
    assert max(len(s.guard.atoms) for s in sites) == MAX_SIBLING_ATOMS + 1


def test_a_long_match_gives_bounded_guards() -> None:
    n = 500
    source = "def pick(x):\n    match x:\n" + "".join(
        f"        case {i}:\n            raise ValueError('bad {i}')\n" for i in range(n)
    )
    sites = _sites(source)
    assert len(sites) == n
    last = _atoms(sites[-1])
    assert last[-1] == f"x == {n - 1}"
    assert len(last) == MAX_SIBLING_ATOMS + 1 and last[-2] == f"not x == {n - 2}"


def test_ordinary_guards_keep_every_atom() -> None:
    """Below the bound nothing changes: every earlier exit, else and case is in the guard."""
    n = MAX_SIBLING_ATOMS
    early = "def check(x):\n" + "".join(f"    if x == {i}:\n        return {i}\n" for i in range(n))
    early += "    raise ValueError('none')\n"
    (site,) = _sites(early)
    assert _atoms(site) == [f"not x == {i}" for i in range(n)]
    chain = "def pick(x, y):\n    if y:\n        if x == 0:\n            return 0\n" + "".join(
        f"        elif x == {i}:\n            return {i}\n" for i in range(1, 5)
    )
    chain += "        else:\n            raise ValueError('none')\n"
    (site,) = _sites(chain)
    assert _atoms(site) == ["y"] + [f"not x == {i}" for i in range(5)]


def test_a_deep_path_keeps_its_own_atoms_past_the_bound() -> None:
    """The atoms of the path (the ``if`` tests around the site) are never dropped."""
    exits = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(2 * MAX_SIBLING_ATOMS))
    source = f"def check(x, a, b):\n{exits}    if a:\n        if b:\n            raise ValueError('both')\n"
    (site,) = _sites(source)
    atoms = _atoms(site)
    assert atoms[-2:] == ["a", "b"]
    assert len(atoms) == MAX_SIBLING_ATOMS + 2
