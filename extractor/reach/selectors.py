"""Selectors: the user's choices that pick code, read from the target's own code and flags.

A :data:`Selector` is ``(kind, name, values)``:

* ``("flag", "--attention-backend", ("dsa", "nsa"))``: the flag set to one of the values; a switch
  or a flag that only has to be set carries no values;
* ``("env", "SGLANG_X", ())``: the environment variable set; ``("env", "SGLANG_X", ("off",))``:
  a boolean variable left off, its default (:data:`ENV_OFF`);
* ``("platform", "hip", ())``: a platform gate (``is_hip()``) or a platform folder (``.../npu/``);
* ``("arch", "DeepseekV3ForCausalLM", ())``: a model file's ``EntryClass``, the architecture a
  checkpoint's ``config.json`` declares;
* ``("config", "index_topk", ())``: the checkpoint's config sets that key; only beside the
  architectures of the predicate that asks for both (``arch in (...) and getattr(config,
  "index_topk", None) is not None``).

Guard atoms become flags through the flag knowledge (``Knowledge.flags_for``); registries become
flags by their name (``register_attention_backend`` / ``ATTENTION_BACKENDS`` ->
``--attention-backend``, ``BASE_QUANTIZATION_METHODS`` -> ``--quantization``) or, failing that, by
their keys being the choices a flag declares. A class that lists model entry classes becomes those
architectures, and so does a test of a class's name (the architectures that build that class).
``if __name__ == "__main__":`` is a ``script`` selector: never said, it only keeps a benchmark's
``main`` from counting as a way in for everyone (:func:`user_ways`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence, Set

from extractor.prose.knowledge import FlagInfo, Knowledge
from extractor.reach.facts import Atom, Call, FileFacts
from extractor.reach.guard_atoms import class_flag_name
from extractor.reach.target_index import TargetIndex

__all__ = [
    "ENV_OFF",
    "PLATFORM_NAMES",
    "PLATFORM_WORDS",
    "SCRIPT",
    "Selector",
    "arch_names",
    "atom_selector",
    "class_value_selector",
    "config_selectors",
    "dead_entry",
    "disjoint_archs",
    "enum_flags",
    "folder_platform",
    "registry_flag",
    "registry_selector",
    "user_ways",
]

Selector = tuple[str, str, tuple[str, ...]]

ENV_OFF = ("off",)
"""The values of an ``env`` selector whose boolean variable must be off, its default: the path runs
unless the user turns it on (``not envs.SGLANG_DISABLE_X.get()``)."""


def arch_names(sel: Selector) -> set[str]:
    """The architectures an ``arch`` selector names: one as its name, or several as its values."""
    _, name, values = sel
    return set(values) | ({name} if name else set())


PLATFORM_WORDS = ("hip", "rocm", "npu", "xpu", "cpu", "cuda", "musa", "mps", "hpu", "mlu")
"""Hardware words that platform gates (``is_<word>()``) and platform folders are spelled with."""
PLATFORM_NAMES = {
    "hip": "ROCm (AMD GPUs)",
    "rocm": "ROCm (AMD GPUs)",
    "npu": "Ascend NPU",
    "xpu": "Intel XPU",
    "cpu": "CPU",
    "cuda": "CUDA (NVIDIA GPUs)",
    "musa": "MUSA GPUs",
    "mps": "Apple MPS",
    "hpu": "Gaudi HPU",
    "mlu": "MLU",
}
"""Each of :data:`PLATFORM_WORDS` as a user names the hardware."""

# A flag read from anything but an args/config object (``self.x``, ``ctx.x``, a bare name) is
# trusted only when its name says it selects something: a switch, or a backend / algorithm /
# mode / format choice, spelled in more than one word.
_CHOICE_SUFFIX = ("_backend", "_algorithm", "_mode", "_format", "_method", "_impl")
_REGISTRY_NOISE = re.compile(
    r"^(?:_+)|^(?:register|get|add)_|_(?:registry|map|mapping|dict|table|classes|cls|choices|methods|method|fns|funcs)$"
)
_KILL_SWITCH = re.compile(r"(?:^|_)(?:DISABLE|SKIP|NO|BYPASS|AVOID)(?:_|$)")
"""A boolean variable named for turning something off."""
_FEATURE_SWITCH = re.compile(r"(?:^|_)(?:ENABLE|USE|DISABLE)(?:_|$)")
"""A variable named for switching a feature on or off."""
_UNSET_WORDS = frozenset({"none", "null", "disabled", "off", "auto", "default", "unset"})
_TOO_GENERIC = frozenset({"name", "type", "mode", "backend", "method", "format", "device", "dtype"})


def _trusted(info: FlagInfo, recv: str) -> bool:
    if recv == "args":
        return True
    dest = info.dest
    if "_" not in dest:
        return False
    return info.is_bool or dest.endswith(_CHOICE_SUFFIX)


SCRIPT = "script"
"""Kind of the selector ``if __name__ == "__main__":`` means: the file run as a script. It is no user
choice of the served model; :func:`user_ways` drops the ways in it stands for when others exist."""


def user_ways(reach: Sequence[Set[Selector]]) -> tuple[frozenset[Selector], ...]:
    """The alternatives without those only a script run of a module reaches (a benchmark's ``main``).

    When every way in is through a script, nothing is said: the serving path to the code is then
    unknown, not absent.
    """
    served = tuple(frozenset(c) for c in reach if not any(s[0] == SCRIPT for s in c))
    return served


def atom_selector(atom: Atom, flags: Mapping[str, FlagInfo], knowledge: Knowledge) -> Selector | None:
    """The selector a guard atom means, or None when it is not a user choice."""
    kind = atom[0]
    if kind == "v" and atom[1:] == ("__name__", "name", "__main__"):
        return (SCRIPT, "__main__", ())
    if kind == "p":
        return ("platform", atom[1], ())
    if kind == "k" or kind == "K":
        # An entry of a table of choices: the flag whose choices its keys are, set to its key.
        table, key, keys = ("", atom[1], atom[2:]) if kind == "k" else (atom[1], atom[2], atom[3:])
        info = registry_flag(table, set(keys), flags)
        if info is None or key not in info.choices or key.lower() in _UNSET_WORDS:
            return None
        return ("flag", info.flag, (key,))
    if kind == "e":
        name = atom[1]
        # Any other package's variable counts when its name says it switches a feature
        # (``ASCEND_USE_FIA``, ``FLEXKV_ENABLE_LAYERWISE_TRANSFER``): one a user sets, not one a
        # launcher or the machine does (``RANK``, ``CUDA_VISIBLE_DEVICES``).
        if not (name in knowledge.env_vars or name.startswith("SGLANG_") or _FEATURE_SWITCH.search(name)):
            return None
        wanted = tuple(atom[2:])
        env = knowledge.env_of(name)
        if wanted == ("0",) and (env is None or not env.on_by_default):
            if (
                env is not None
                and env.kind == "bool"
                and env.default.lower() in ("false", "0")
                and _KILL_SWITCH.search(name)
            ):
                # ``not envs.SGLANG_DISABLE_X.get()``: a kill switch left off, as it starts;
                # turning it on takes the plain path instead of this one. A variable that turns
                # something on (``SGLANG_ENABLE_X``) is no way out: that is the path less taken.
                return ("env", name, ENV_OFF)
            return None  # off is how it starts: nothing sure to turn off or on
        if wanted and env is not None and env.default.strip().strip("'\"") in wanted:
            return None  # the value it holds unless told otherwise: no choice narrows the path
        return ("env", name, wanted)
    if kind == "m":
        # The batch's forward mode of a speculative run: the flag that turns speculation on.
        spec = flags.get("speculative_algorithm")
        return ("flag", spec.flag, ()) if spec is not None and atom[1] == "speculative" else None
    if kind not in ("a", "v", "i"):
        return None
    info = flags.get(atom[1])
    if info is None or atom[1] in _TOO_GENERIC:
        return None
    # ``enum``: a value of a class named after the flag (``MoeRunnerBackend.DEEP_GEMM``).
    if atom[2] == "enum" and (kind == "a" or info.is_bool):
        return None
    if atom[2] != "enum" and not _trusted(info, atom[2]):
        return None
    values: tuple[str, ...] = ()
    if kind == "i" and any(x.lower() in _UNSET_WORDS for x in atom[3:]):
        return None  # ``is_none()``: the path runs when the flag is *not* chosen
    if kind == "i" and not info.choices:
        # ``is_eagle_family()`` names a group, not a value: only "the flag is set" is sure.
        return None if info.is_bool else ("flag", info.flag, ())
    if kind in ("v", "i"):
        # A path taken with the flag left unset (``mode in ("null", "x")``) is taken without the
        # user passing anything: the test selects nothing.
        values = tuple(sorted({v for v in atom[3:] if v}))
        if not values or any(v.lower() in _UNSET_WORDS for v in values):
            return None
        if info.choices:
            # An enum member (``Mode.PREFILL``, ``is_sgl_kernel()``) is spelled as the choice it
            # stands for (``prefill``, ``sgl-kernel``).
            spelled = {c.lower().replace("-", "_"): c for c in info.choices}
            values = tuple(
                sorted(
                    {
                        v if v in info.choices else spelled[key]
                        for v in values
                        if v in info.choices or (key := v.lower().replace("-", "_")) in spelled
                    }
                )
            )
            if not values:
                return None
        elif info.is_bool:
            return None
        else:
            # An enum member's name (``Role.DECODER``) for a flag whose choices are computed: the
            # target spells its choices in lower case (``RoleType.DECODER = "decoder"``).
            values = tuple(sorted({v.lower() if v.isupper() and v.isidentifier() else v for v in values}))
    return ("flag", info.flag, values)


def dead_entry(atom: Atom, flags: Mapping[str, FlagInfo], picked: Mapping[str, Sequence[str]]) -> bool:
    """Whether ``atom`` is the entry of a table of a flag's choices under a key that the flag never
    holds: no declared choice, no value the launch code sets (``"hybrid_linear_attn"`` in a table
    of attention backends). Nothing reaches that entry."""
    if atom[0] not in ("k", "K"):
        return False
    table, key, keys = ("", atom[1], atom[2:]) if atom[0] == "k" else (atom[1], atom[2], atom[3:])
    info = registry_flag(table, set(keys), flags)
    return (
        info is not None
        and bool(info.choices)
        and key not in info.choices
        and key not in picked.get(info.flag, ())
        and key.lower() not in _UNSET_WORDS
    )


def registry_flag(registry: str, keys: set[str], flags: Mapping[str, FlagInfo]) -> FlagInfo | None:
    """The flag whose values a registry is keyed by, judged by its name or else its keys."""
    stem = registry.lower()
    for _ in range(3):
        stem = _REGISTRY_NOISE.sub("", stem)
    # A qualifier may lead the flag's name (``BASE_QUANTIZATION_METHODS``, ``CPU_...``): every tail
    # of two words or more is tried, then a last single word, longest first.
    words = stem.split("_") if stem else []
    tails = ["_".join(words[i:]) for i in range(len(words))]
    candidates = [c for t in tails for c in (t, t.rstrip("s"))]
    for cand in candidates:
        info = flags.get(cand)
        if info is not None and not info.is_bool and cand not in _TOO_GENERIC:
            return info
    if len(keys) < 2:
        return None
    best: tuple[int, int, str] | None = None
    for dest, info in flags.items():
        if not info.choices:
            continue
        overlap = len(keys & set(info.choices))
        if overlap * 2 >= len(keys) and overlap >= 2:
            rank = (-overlap, len(dest), dest)
            if best is None or rank < best:
                best = rank
    return flags[best[2]] if best else None


def registry_selector(
    registry: str, keys: Set[str], siblings: set[str], flags: Mapping[str, FlagInfo], archs: Set[str]
) -> Selector | None:
    """What picks a registered definition: the flag its registry is keyed by, or the architectures.

    A class that lists model entry classes (``models = [LlavaForConditionalGeneration]``, as
    multimodal processors do) is picked by the checkpoint declaring one of them; every key must be
    an ``EntryClass`` name somewhere in the target, so a list of layer types is never read so.
    A flag is judged by the registry's name or by ``siblings``, every key its file registers.
    """
    if keys and keys <= archs:
        values = tuple(sorted(keys))
        return ("arch", values[0], ()) if len(values) == 1 else ("arch", "", values)
    info = registry_flag(registry, siblings, flags)
    if info is None or any(k.lower() in _UNSET_WORDS for k in keys):
        return None  # the entry for the unset flag is taken without the user passing anything
    return ("flag", info.flag, tuple(sorted(keys)))


def class_value_selector(
    atom: Atom,
    classes: Callable[[str], Sequence[str]],
    reach_of: Callable[[str], Sequence[Set[Selector]] | None],
) -> Selector | None:
    """A test against the name of a class of the target (``layer_name == "ToyDecoderLayer"``).

    Code that branches on ``type(x).__name__`` runs only where that class is built: when every way
    to build it is for some architectures, the test selects those architectures. Anything else
    (a name with several definitions, a class anyone may build) selects nothing.
    """
    if atom[0] != "v" or atom[2] == "enum" or len(atom) < 4:
        return None
    names: set[str] = set()
    for value in atom[3:]:
        found = classes(value)
        if len(found) != 1:
            return None
        reach = reach_of(found[0])
        if not reach:
            return None
        for conj in reach:
            archs = [s for s in conj if s[0] == "arch"]
            if not archs:
                return None
            for _kind, name, values in archs:
                names.update(values or (name,))
    if not names:
        return None
    ordered = tuple(sorted(names))
    return ("arch", ordered[0], ()) if len(ordered) == 1 else ("arch", "", ordered)


def folder_platform(path: str) -> str | None:
    """The platform a file's folder is named after (``hardware_backend/npu/x.py`` -> ``npu``)."""
    for part in path.split("/")[:-1]:
        if part in PLATFORM_WORDS:
            return part
    return None


def enum_flags(index: TargetIndex, knowledge: Knowledge) -> dict[str, str]:
    """Enum name (as guards spell it: ``transfer_backend``) -> the flag (dest) whose value builds it.

    ``TransferBackend(server_args.disaggregation_transfer_backend)`` makes ``TransferBackend.NIXL``
    the flag's value ``nixl``. Only enums (a base named ``...Enum``) built from exactly one flag
    count, and only where the enum's own name is no flag already.
    """
    out: dict[str, str] = {}
    # ``DSATopKBackend`` for ``dsa_topk_backend``, ``MoeA2ABackend`` for ``moe_a2a_backend``: the
    # class name splits its acronyms where the flag does not; spelled without separators they agree.
    squashed: dict[str, set[str]] = {}
    for flags in knowledge.scoped.values():
        for dest in flags:
            squashed.setdefault(dest.replace("_", ""), set()).add(dest)
    for node, d in sorted(index.defs.items()):
        if d.kind != "c" or d.owner or not any(b.rpartition(".")[2].endswith("Enum") for b in d.bases):
            continue
        short = d.qualname
        name = class_flag_name(short)
        if name is None or any(name in flags for flags in knowledge.scoped.values()):
            continue
        spelled = squashed.get(name.replace("_", ""), set())
        if len(spelled) == 1:
            out[name] = next(iter(spelled))
            continue
        dests: set[str] = set()
        for f, calls in index.calls_named(short):
            flags = knowledge.flags_for(f.path)
            for raw in calls:
                call = Call._make(raw)
                if call.ref or call.callee.rpartition(".")[2] != short:
                    continue
                for slot, kind, value in call.args:
                    if (
                        slot == "0"
                        and kind == "f"
                        and value in flags
                        and not flags[value].is_bool
                        and index.resolve_dotted(call.callee, f, call.caller) == node
                    ):
                        dests.add(value)
        if len(dests) == 1:
            out[name] = dests.pop()
    return out


def config_selectors(index: TargetIndex, f: FileFacts) -> list[tuple[str, Selector]]:
    """The model configs a model file imports, each picked by the file's architectures.

    A config class (one deriving from a ``PretrainedConfig``) is built from the checkpoint's
    ``config.json`` by its ``model_type``, not by a call of the target: a model file that imports
    it (``EntryClass = NemotronHForCausalLM`` beside ``from ...configs import NemotronHConfig``)
    is what its checkpoints are served by.
    """
    archs = tuple(sorted(n for n in f.entry if f"{f.module}:{n}" in index.defs))
    if not archs:
        return []
    sel: Selector = ("arch", archs[0], ()) if len(archs) == 1 else ("arch", "", archs)
    out = []
    for dotted in sorted(set(f.imports.values())):
        node = index.resolve_dotted(dotted, f, "<module>")
        if node is not None and node.partition(":")[0] != f.module and _is_config(index, node):
            out.append((node, sel))
    return out


def _is_config(index: TargetIndex, node: str) -> bool:
    d = index.defs[node]
    if d.kind != "c":
        return False
    lineage = [d, *(index.defs[a] for a in index.ancestors(node))]
    return any(b.rpartition(".")[2].lower() == "pretrainedconfig" for c in lineage for b in c.bases)


def disjoint_archs(conj: frozenset[Selector]) -> bool:
    """Two sets of architectures of one level with nothing in common (a pipeline and a model may
    both hold: a pipeline loads its models; two pipelines may not)."""
    by_level: dict[bool, list[set[str]]] = {}
    for sel in conj:
        if sel[0] == "arch":
            names = arch_names(sel)
            by_level.setdefault(all(n.endswith("Pipeline") for n in names), []).append(names)
    return any(len(sets) > 1 and not set.intersection(*sets) for sets in by_level.values())
