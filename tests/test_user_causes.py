"""Causes the guard alone does not show, read from the target's own code: parallel sizes asked
of the process groups (the flags that size them), a half-precision check in model code (the
dtype flag), code that reads a flag straight from the command line (that flag), and optional
imports guarded at module level (the package to install). Fixtures: ``tests/fixtures/user_causes/``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from extractor.analysis.analyse import analyse
from extractor.analysis.facts import Site
from extractor.analysis.parse import ParsedFile, parse_source
from extractor.api import ExtractOptions, extract
from extractor.prose.commands import launcher_of_path
from extractor.prose.constraints import Constraint
from extractor.prose.enrich import Prose, enrich
from extractor.prose.knowledge import Knowledge, build_knowledge, module_constants
from extractor.prose.wording import constraint_words
from tests.gitrepos import make_repo

FIXTURES = Path(__file__).parent / "fixtures" / "user_causes"
INTERNAL = "Cause: an internal invariant"


def _enriched(name: str, path: str) -> list[tuple[Site, Prose]]:
    """Each site of fixture ``name`` (analysed as if at ``path``) with its prose."""
    knowledge = build_knowledge(
        {"python/sglang/srt/server_args.py": (FIXTURES / "server_args.py").read_bytes()}
    )
    parsed = parse_source(path, (FIXTURES / name).read_bytes())
    assert isinstance(parsed, ParsedFile), parsed
    constants = module_constants(parsed.tree, path)
    return [(site, enrich(site, knowledge, constants)) for site in analyse(parsed)]


def _prose(name: str, path: str) -> dict[str, Prose]:
    return {site.qualname: prose for site, prose in _enriched(name, path)}


def _after(prose: Prose) -> str:
    return prose.exampleFix.split("# after", 1)[1]


def test_a_group_size_is_the_flag_that_sizes_the_group() -> None:
    got = _prose("world_sizes.py", "python/sglang/srt/layers/split.py")
    heads = got["split_heads"]
    # ``tensor_model_parallel`` is spelled by the alias --tensor-parallel-size of --tp-size.
    assert "`--tp-size`" in heads.documentation and heads.errorType == "configuration"
    assert any("--tp-size" in s for s in heads.solutions) and "--tp-size" in _after(heads)
    stage = got["StageModel.__init__"]
    assert "`--pp-size`" in stage.documentation and "--pp-size 1" in _after(stage)
    # A model that must hold every stage itself refuses a pipeline split: no config key, the flag.
    whole = got["WholeModel.__init__"]
    assert "Cause: a launch flag (`--pp-size`)" in whole.documentation, whole.documentation
    assert "--pp-size 1" in _after(whole) and "checkpoint" not in " ".join(whole.solutions)
    # The attention part of the tensor-parallel group, by its group or a size named after it, also
    # where a literal fallback stands in when no group is set up.
    for qualname in ("attn_split", "KVSplit.__init__", "StreamConfig.cache_params"):
        assert "`--tp-size`" in got[qualname].documentation, qualname
        assert got[qualname].errorType == "configuration"
    # Under a switch, another size is a way out beside leaving the switch off.
    batch = got["StreamConfig.batch_params"]
    assert batch.solutions[0].startswith("Change `--tp-size`"), batch.solutions
    assert any(s.startswith("Or launch without `--enable-batch-encode`") for s in batch.solutions)


def test_a_share_of_a_layer_split_over_the_ranks_is_fixed_by_fewer_ranks() -> None:
    got = _prose("world_sizes.py", "python/sglang/srt/layers/split.py")
    packed = got["pack_output"]
    assert "`--tp-size`" in packed.documentation and packed.errorType == "configuration"
    assert packed.solutions[0] == (
        "Use a smaller `--tp-size`: each rank holds `output_partition_size`, this layer's size divided "
        "by it, which must be a multiple of `block_n`"
    )
    assert not any(s.startswith("Change `--tp-size`") for s in packed.solutions)
    assert "--tp-size <a smaller size>" in _after(packed)


def test_a_value_parsed_from_the_draft_models_config_is_that_models() -> None:
    sites = _enriched("draft_settings.py", "python/sglang/srt/speculative/draft_settings.py")
    parsed, other = (prose for _, prose in sorted(sites, key=lambda sp: sp[0].line))
    assert "Cause: the model (its checkpoint or config)" in parsed.documentation
    assert parsed.solutions[0].startswith(
        "The draft model (the one `--draft-model-path` names) does not meet this check (`window_size`)"
    )
    assert "--draft-model-path <a-supported-checkpoint>" in _after(parsed)
    # Parsed from anything but a config object: nothing says it is the checkpoint's.
    assert INTERNAL in other.documentation


def test_an_option_no_launch_parser_declares_is_the_callers_input_not_a_launch_flag() -> None:
    got = _prose("options.py", "python/sglang/srt/layers/options.py")
    picked = got["pick_condition"]
    assert "Cause: the request or call input (`--image-path`, `--video-path`)" in picked.documentation
    assert "launch_server" not in picked.exampleFix and "sglang serve" not in picked.exampleFix
    # ``--tp`` and ``--dp`` abbreviate declared flags (argparse takes a unique prefix): launch flags.
    sizes = got["check_sizes"]
    assert "Cause: a launch flag (`--tp`, `--dp`)" in sizes.documentation, sizes.documentation


def test_a_size_compared_with_a_computed_value_or_unspelled_stays_internal() -> None:
    got = _prose("world_sizes.py", "python/sglang/srt/layers/split.py")
    # One length per rank is the code agreeing with itself.
    assert INTERNAL in got["gather"].documentation
    # A size above 1 beside another test only says the parallel path runs: the other test fails.
    assert INTERNAL in got["all_to_all"].documentation


def test_a_size_ordered_against_the_models_config_is_the_flag_set_against_the_checkpoint() -> None:
    got = _prose("world_sizes.py", "python/sglang/srt/layers/split.py")
    block = got["ExpertBlock.__init__"]
    assert "`--tp-size`" in block.documentation and block.errorType == "configuration"
    assert block.solutions[0].startswith("Change `--tp-size` in the launch command so that")
    assert "`n_routed_experts` is the checkpoint's" in block.solutions[0]
    # More ranks than experts fails: the size to give is bounded by the checkpoint's key.
    assert "--tp-size <at most n_routed_experts>" in _after(block), block.exampleFix
    # A size against a value the code holds is the code agreeing with itself.
    assert INTERNAL in got["pad_experts"].documentation


def test_a_switch_detected_at_launch_is_turned_off_by_its_no_form_never_by_leaving_it_out() -> None:
    by_message = {
        site.message.parts[0] if site.message else "": prose
        for site, prose in _enriched("shared_outer.py", "python/sglang/srt/lora/pool.py")
    }
    on = by_message["shared outer factors need a single factor"]
    # Its help says the launch detects it from the adapter.
    assert "(`--shared-outer` is on (given, or turned on when sglang detects that the data needs it))" in (
        on.documentation
    )
    assert on.solutions == ["Launch with `--no-shared-outer`"]
    assert _after(on).strip().endswith("--no-shared-outer")
    # Off is its no form given: the failing launch carries it.
    off = by_message["this pool keeps shared outer factors only"]
    assert "--no-shared-outer" in off.exampleFix.split("# after", 1)[0]


def test_a_value_outside_every_declared_choice_is_said_to_come_only_from_python() -> None:
    (prose,) = _prose("copy_backend.py", "python/sglang/srt/mem_cache/copy.py").values()
    assert prose.triggerScenarios.startswith("A `copy_backend` outside the choices of `--copy-backend` makes")
    assert prose.triggerScenarios.endswith(
        "The command line refuses such a value (the choices are direct, kernel): only Python code that "
        "sets `copy_backend` on `ServerArgs` or `sglang.Engine` can pass one."
    )
    assert prose.exampleFix.startswith("# before (only from Python: the command line refuses this value)\n")
    assert "--copy-backend direct" in _after(prose)


def test_a_kind_of_adapter_the_message_says_is_unsupported_is_the_adapter_being_loaded() -> None:
    by_message = {
        site.message.parts[0] if site.message else "": prose
        for site, prose in _enriched("adapter_kinds.py", "python/sglang/srt/lora/manager.py")
    }
    kind = by_message["Adapter serving currently doesn't support adapters that add tokens to the vocabulary"]
    assert "Cause: the LoRA adapter being loaded" in kind.documentation
    assert kind.triggerScenarios.startswith("Loading a LoRA adapter (at launch with `--lora-paths`")
    assert any(s.startswith("The LoRA adapter being loaded is of a kind") for s in kind.solutions)
    assert "--lora-paths <another-adapter>" in _after(kind)
    assert not any("report it to sglang" in s for s in kind.solutions)
    # A count of adapters is no kind of adapter: another way out (not an adapter swap) applies.
    count = by_message["LoRA currently supports only one adapter per target"]
    assert "Cause: the LoRA adapter being loaded" not in count.documentation


def test_an_internal_check_whose_message_asks_for_something_says_so_first() -> None:
    (prose,) = _prose("told_internal.py", "python/sglang/srt/mem_cache/host_pool.py").values()
    assert INTERNAL in prose.documentation
    assert prose.solutions[0] == "The message says: Please reduce the size of the host cache."
    assert prose.solutions[1].startswith("This is an internal check of `HostPool.__init__`")


def test_a_dimension_split_over_the_tensor_parallel_ranks_that_does_not_divide_is_the_tp_size() -> None:
    sites = _enriched("world_sizes.py", "python/sglang/srt/layers/split.py")
    by_line = {site.line: prose for site, prose in sites if site.qualname == "pack_weight"}
    split, empty = (by_line[line] for line in sorted(by_line))
    assert "Cause: a launch flag (`--tp-size`)" in split.documentation
    assert split.solutions[0].startswith(
        "Use a smaller `--tp-size`: each rank holds `input_size_per_partition`"
    )
    # The same share compared with a literal is no size of the group.
    assert INTERNAL in empty.documentation


def test_a_later_pipeline_stage_is_said_to_need_its_size_above_one() -> None:
    staged = _prose("world_sizes.py", "python/sglang/srt/layers/split.py")["StagedModel.forward"]
    assert "`not self.pp_group.is_first_rank` (`--pp-size` is above 1)" in staged.documentation
    assert INTERNAL in staged.documentation
    assert (
        "Or launch with `--pp-size 1`, if the model fits without that split: this check only runs when it is above 1"
    ) in staged.solutions


def test_a_path_gated_on_a_size_above_one_offers_that_size_at_one() -> None:
    split = _prose("world_sizes.py", "python/sglang/srt/layers/split.py")["SplitKV.extend"]
    # ``self.dcp_size > 1`` is the decode context-parallel size's path; a split of the KV cache,
    # not of the weights, so no word on whether the model fits.
    assert "`self.dcp_size > 1` (`--dcp-size` is above 1)" in split.documentation
    assert "Or launch with `--dcp-size 1`: this check only runs when it is above 1" in split.solutions


def test_a_message_that_states_the_form_of_a_value_is_about_the_value_handed_in() -> None:
    (prose,) = _prose("address_form.py", "python/sglang/srt/utils/address.py").values()
    assert (
        "Cause: the value handed in (a launch setting, a request field or an argument) is not in the form"
        in (prose.documentation)
    )
    assert prose.solutions[0].startswith(
        "Give the value in the form the message states (tcp://host:port or host:port)"
    )
    assert prose.triggerScenarios.startswith(
        "Passing parse_host_port a value that is not in the form its message states"
    )
    assert not any("report it to sglang" in s.lower() for s in prose.solutions)


def test_a_half_precision_check_in_model_code_is_the_dtype_flag() -> None:
    got = _prose("vision.py", "python/sglang/srt/models/tower.py")
    forward = got["VisionTower.forward"]
    assert "`--dtype`" in forward.documentation
    assert any("`--dtype bfloat16`" in s for s in forward.solutions)
    assert "--dtype bfloat16" in _after(forward) and "--dtype float16" in forward.exampleFix
    # A float32 requirement is a value the code upcasts on purpose: no flag changes it.
    assert INTERNAL in got["VisionTower.modulate"].documentation


def test_the_same_check_outside_model_code_is_left_alone() -> None:
    got = _prose("vision.py", "python/sglang/srt/layers/tower.py")
    assert INTERNAL in got["VisionTower.forward"].documentation


def test_code_that_reads_a_flag_from_the_raw_command_line_is_about_that_flag() -> None:
    got = _prose("settings_merge.py", "python/sglang/srt/settings_merge.py")
    missing = got["SettingsMerger._read"]
    assert "`--settings-file`" in missing.documentation
    assert any("--settings-file" in s for s in missing.solutions)
    # A membership test on what the file holds: the entry can go on the command line instead.
    entry = got["SettingsMerger.convert"]
    assert any("command line instead" in s for s in entry.solutions)
    assert not any("command line instead" in s for s in missing.solutions)
    # A function that reads no flag from the command line keeps its own cause.
    assert "--settings-file" not in got["unrelated"].documentation


def test_an_optional_import_guarded_at_module_level_names_its_package() -> None:
    got = _prose("optional_imports.py", "python/sglang/lang/backend/client.py")
    assert "pip install chatclient" in _after(got["open_client"])
    assert "pip install kernelpack" in _after(got["run_fused"])
    assert "pip install docparse" in _after(got["parse_doc"])
    # The module path the import names is no pip target beside the distribution the message names.
    assert "pip install gpukit-python\n" in _after(got["bind_runtime"])


def test_a_message_that_ends_by_telling_to_install_a_package_is_that_package() -> None:
    got = _prose("optional_imports.py", "python/sglang/lang/backend/client.py")
    quantize = got["quantize_weights"]
    assert INTERNAL not in quantize.documentation
    assert "Cause: an installed package (`fastquant`)" in quantize.documentation
    assert "pip install fastquant" in _after(quantize)
    # Raised from an ``except``: the error it hands on decides, not a package named after "install".
    probe = got["probe_media"]
    assert "installed package" not in probe.documentation
    assert "pip install" not in probe.exampleFix


def test_a_message_that_asks_for_a_newer_version_upgrades() -> None:
    got = _prose("optional_imports.py", "python/sglang/lang/backend/client.py")
    after = _after(got["older"])
    assert "pip install -U 'kernelpack>=2.1'" in after


def test_a_list_flag_is_never_a_str_and_its_length_is_no_value() -> None:
    got = _prose("adapters.py", "python/sglang/srt/lora/adapters.py")
    # nargs="*" hands over a list: a value that must be a str came from somewhere else.
    single = got["normalize_modules"]
    assert "Cause: a launch flag" not in single.documentation
    assert not any("--adapter-modules" in s for s in single.solutions)
    # ``len(modules) != 1`` counts the items: "--adapter-modules 1" would be no fix at all.
    only = got["check_modules"]
    assert "`--adapter-modules`" in only.documentation
    assert "--adapter-modules 1" not in only.exampleFix
    assert not any("--adapter-modules 1" in s for s in only.solutions)


def test_the_package_beside_the_targets_own_import_in_a_try_is_installed() -> None:
    got = _prose("optional_imports.py", "python/sglang/lang/backend/client.py")
    assert "pip install tileattn" in _after(got["resolve_backend"])


def test_a_separately_installed_package_that_fails_to_load_its_own_part_is_reinstalled() -> None:
    got = _prose("ops_loader.py", "kernels-pkg/python/kernels_pkg/ops_loader.py")
    assert "pip install --force-reinstall kernels-pkg" in _after(got["load_ops"])
    # The main package's own files name no package of their own.
    main = _prose("ops_loader.py", "python/sglang/srt/ops_loader.py")
    assert "--force-reinstall" not in main["load_ops"].exampleFix


def test_a_tool_script_that_parses_its_own_command_line_is_fixed_by_running_it() -> None:
    got = _prose("quant_pack.py", "python/sglang/tools/quant_pack.py")
    repack = got["repack"]
    assert "`--group-size`" in repack.documentation
    # Its own default passes: the example gives it.
    assert "python -m sglang.tools.quant_pack --group-size 128" in _after(repack)
    # A value the script computed from a flag through a call fails for what it read.
    assert INTERNAL in got["summarize"].documentation
    # The server's own flags are still the server's, run with its launcher.
    serve = got["serve_check"]
    assert "python -m sglang.launch_server" in serve.exampleFix and "--tp-size 8" in _after(serve)


def test_a_fix_keeps_to_what_the_server_args_validation_accepts() -> None:
    knowledge = build_knowledge(
        {"python/sglang/srt/server_args.py": (FIXTURES / "checked_server_args.py").read_bytes()}
    )
    parsed = parse_source(
        "python/sglang/srt/mem_cache/chunked.py", (FIXTURES / "chunked_cache.py").read_bytes()
    )
    assert isinstance(parsed, ParsedFile), parsed
    constants = module_constants(parsed.tree)
    got = {site.qualname: enrich(site, knowledge, constants) for site in analyse(parsed)}
    # --chunk-pages 0 would pass this check and fail ServerArgs at startup (it must be positive).
    build = got["build_cache"]
    assert "--chunk-pages 0" not in build.exampleFix
    assert not any("--chunk-pages 0" in s for s in build.solutions)


def test_an_unknown_value_read_by_key_from_loaded_data_is_the_callers_data() -> None:
    got = _prose("style_file.py", "python/sglang/srt/parser/layouts.py")
    layout = got["read_layout_file"]
    # The lookup failed on a value the file holds: the fix is the file's entry, not a bug report.
    assert INTERNAL not in layout.documentation and "`layout`" in layout.documentation
    assert any(s.startswith("Correct `layout` in the data") for s in layout.solutions)
    # A missing key the code itself put together says nothing about the user's data.
    assert INTERNAL in got["lookup_slot"].documentation


def test_a_message_about_what_the_checkpoint_lacks_is_the_model() -> None:
    got = _prose("draft_check.py", "python/sglang/srt/speculative/draft_check.py")
    vocab = got["DraftWorker.check_vocab"]
    assert INTERNAL not in vocab.documentation
    # The draft model is the one the path flag whose help names it points at.
    assert any("The draft model (the one `--draft-model-path` names)" in s for s in vocab.solutions)
    assert "--draft-model-path <a-supported-checkpoint>" in _after(vocab)
    mask = got["DraftWorker.check_mask"]
    assert any("(`mask_token_id`)" in s and "another draft model" in s for s in mask.solutions)
    # A tokenizer that is not set up yet is the server's own state, not the checkpoint's.
    assert INTERNAL in got["DraftWorker.check_ready"].documentation


def test_a_check_that_runs_only_while_a_variable_is_set_is_fixed_by_leaving_it_out() -> None:
    got = _prose("env_gate.py", "python/sglang/srt/layers/prepare.py")
    prepare = got["prepare"]
    assert any(s.startswith("Unset `SGLANG_USE_FUSED_PATH`") for s in prepare.solutions)
    before, after = prepare.exampleFix.split("# after", 1)
    assert "SGLANG_USE_FUSED_PATH=" in before and "SGLANG_USE_FUSED_PATH" not in after
    # A variable whose value is checked keeps it, set to one the check accepts.
    assert "SGLANG_PICK_MODE=fast" in _after(got["pick_mode"])
    # Read once at module level (``_FAST_ACT = get_bool_env_var(...)``), the gate is still that
    # variable: unsetting it avoids the check, not a value that makes the parameter ``None``.
    activate = got["activate"]
    assert any(s.startswith("Unset `SGLANG_FAST_ACT`") for s in activate.solutions), activate.solutions
    assert not any("so that" in s for s in activate.solutions)
    assert "SGLANG_FAST_ACT" not in _after(activate)
    # A module-level test of a variable that is on unless set to 0: the way off the path is 0.
    varlen = got["varlen"]
    assert INTERNAL in varlen.documentation
    assert any(s.startswith("Or set `SGLANG_VARLEN_PATH=0`") for s in varlen.solutions), varlen.solutions


def _env_knowledge(name: str, default: bool) -> Knowledge:
    """The fixture's flags, and an environment registry declaring one boolean variable."""
    registry = f"""\
class EnvBool:
    def __init__(self, default):
        self.default = default


class Envs:
    {name} = EnvBool({default})


envs = Envs()
"""
    return build_knowledge(
        {
            "python/sglang/srt/server_args.py": (FIXTURES / "server_args.py").read_bytes(),
            "python/sglang/srt/environ.py": registry.encode(),
        }
    )


def test_a_check_gated_on_a_variable_that_is_on_by_default_is_left_by_turning_it_off() -> None:
    knowledge = _env_knowledge("SGLANG_FUSED_GATE", True)
    source = b"""\
from sglang.srt.environ import envs


def fuse(x):
    if envs.SGLANG_FUSED_GATE.get():
        if x.dim() != 2:
            raise ValueError("the fused gate wants a 2-d input")
    return x


def unfused(x):
    if not envs.SGLANG_FUSED_GATE.get():
        if x.dim() != 3:
            raise ValueError("the split gate wants a 3-d input")
    return x
"""
    parsed = parse_source("python/sglang/srt/layers/gate.py", source)
    assert isinstance(parsed, ParsedFile), parsed
    on, off = (
        enrich(site, knowledge, module_constants(parsed.tree, parsed.path)) for site in analyse(parsed)
    )
    # Unsetting it would leave it on: the way out is to turn it off.
    assert any("set `SGLANG_FUSED_GATE=0`" in s for s in on.solutions), on.solutions
    assert not any("nset `SGLANG_FUSED_GATE`" in s for s in on.solutions)
    # Off only when someone set it so: its default is the way out.
    assert (
        "Or leave `SGLANG_FUSED_GATE` at its default (on): this check only runs when it is set to 0 or false"
        in (off.solutions)
    )


def test_a_package_whose_own_extension_fails_to_load_is_reinstalled_not_installed() -> None:
    got = _prose("attention_ops.py", "kernels-pkg/python/kernels_pkg/attention_ops.py")
    attention = got["attention_metadata"]
    # The message names the package this code belongs to: it is installed, its compiled part is not.
    assert "pip install --force-reinstall kernels-pkg" in _after(attention)
    assert not any(s.startswith("Install the missing package") for s in attention.solutions)


def _by_message(name: str, path: str) -> dict[str, Prose]:
    got = {}
    for site, prose in _enriched(name, path):
        assert site.message is not None, site
        got[site.message.template] = prose
    return got


MODEL_CAUSE = "Cause: the model (its checkpoint or config)"


def test_a_layer_of_a_model_file_checking_what_it_is_built_with_is_about_the_checkpoint() -> None:
    got = _by_message("built_layers.py", "python/sglang/srt/models/owl.py")
    grouped = got["the group size must divide the number of heads"]
    assert MODEL_CAUSE in grouped.documentation
    assert "`group_size`" in grouped.documentation and "`num_heads`" in grouped.documentation
    # What the layer keeps is no key to look up in config.json under that name.
    assert not any("config.json sets" in s for s in grouped.solutions)
    assert grouped.solutions[0].startswith(
        "Use a checkpoint whose config builds this layer with other values"
    )
    assert "`checkpoint`" not in grouped.commonSituations
    # The whole checkpoint is what the cause already says: only the keys are named.
    assert f"{MODEL_CAUSE} (`num_heads`, `group_size`)." in grouped.documentation, grouped.documentation
    assert "(it reads num_heads, group_size)" in grouped.triggerScenarios, grouped.triggerScenarios
    # A builtin or a comprehension's own variable is no value the config gives.
    axes = got["every rotary axis must be even"]
    assert "the check reads `axes`, which" in axes.solutions[0]
    # Locals read from the config by item or slice are that key's, and an entry below it is named.
    shared = got["no earlier layer of the same type to share with"]
    assert shared.solutions[0].startswith("Use a checkpoint whose config.json sets `layer_types` so that")
    theta = got["rope_theta not found in config"]
    assert "`rope_parameters.rope_theta`" in theta.solutions[0]


def test_a_built_layer_check_on_a_parallel_size_or_a_tensor_or_outside_model_files_is_not() -> None:
    got = _by_message("built_layers.py", "python/sglang/srt/models/owl.py")
    # The launch's tensor-parallel size meets the config: not the checkpoint alone.
    assert MODEL_CAUSE not in got["more tensor-parallel ranks than heads"].documentation
    assert MODEL_CAUSE not in got["the gate weight has no dtype"].documentation
    assert MODEL_CAUSE not in got["the input does not match the head count"].documentation
    # The same layer in a kernel folder is no model's.
    layer = _by_message("built_layers.py", "python/sglang/srt/layers/owl.py")
    assert INTERNAL in layer["the group size must divide the number of heads"].documentation
    # A layer's index is the model's own numbering.
    assert INTERNAL in got["the layer index must not be negative"].documentation


def test_a_config_class_check_on_what_from_config_reads_is_about_the_checkpoints_keys() -> None:
    path = "python/sglang/srt/layers/quantization/packed.py"
    got = _by_message("quant_configs.py", path)
    bits = got["only 4 or 8 bits are supported, got {self.weight_bits}"]
    assert MODEL_CAUSE in bits.documentation
    assert "`quantization_config`, `w_bit`, `bits`" in bits.documentation
    assert any("`quantization_config` sets `w_bit` or `bits` to one of 4, 8" in s for s in bits.solutions)
    assert INTERNAL not in bits.documentation
    storage = got["the packed storage must be uint8"]
    assert "`storage`" in storage.documentation and MODEL_CAUSE in storage.documentation
    # A value the class derives itself, and a class no from_config builds, stay internal.
    assert INTERNAL in got["the pack factor went non-positive"].documentation
    assert INTERNAL in got["the helper got an unpacked width"].documentation


def test_a_local_read_from_the_config_names_the_key_it_was_read_from() -> None:
    got = _by_message("built_layers.py", "python/sglang/srt/models/owl.py")
    width = got["the text width is required"]
    assert MODEL_CAUSE in width.documentation
    assert "(`text_config.hidden_size`)" in width.documentation
    assert any("`text_config.hidden_size`" in s for s in width.solutions)


def test_the_attention_tensor_parallel_size_is_every_flag_that_splits_it() -> None:
    got = _by_message("attention_split.py", "python/sglang/srt/models/owl_split.py")
    heads = got["kv heads must split over the attention ranks"]
    assert "Cause: a launch flag (`--tp-size`, `--dp-size`, `--attn-cp-size`)" in heads.documentation
    assert any(
        s.startswith(
            "Change `--tp-size` (the attention part is it divided by `--dp-size` under DP attention and by `--attn-cp-size`)"
        )
        for s in heads.solutions
    ), heads.solutions
    # The whole tensor-parallel group is the one flag's alone.
    width = got["the width must split over the tensor-parallel ranks"]
    assert "Cause: a launch flag (`--tp-size`)" in width.documentation
    # The MoE layers' part: ``--tp-size`` divided by the expert- and MoE data-parallel sizes.
    experts = got["experts must split over the expert-parallel ranks"]
    assert "Cause: a launch flag (`--ep-size`)" in experts.documentation
    moe = got["the expert width must split over the MoE tensor-parallel ranks"]
    assert "Cause: a launch flag (`--tp-size`, `--ep-size`, `--moe-dp-size`)" in moe.documentation
    assert any(
        s.startswith(
            "Change `--tp-size` (the MoE layers' part is it divided by `--ep-size` and by `--moe-dp-size`)"
        )
        for s in moe.solutions
    ), moe.solutions


def test_an_entry_of_configuration_text_the_code_parses_is_the_callers_to_correct() -> None:
    got = _by_message("parsed_config.py", "python/sglang/srt/mem_cache/extra.py")
    bad = got["prefetch_threshold must be an int"]
    assert (
        "Cause: the JSON, YAML or TOML data (a file or text) handed in (`extra_config`)" in bad.documentation
    )
    assert "its `prefetch_threshold` entry" in bad.documentation
    assert any("Correct the `prefetch_threshold` entry" in s for s in bad.solutions)
    assert not any("Report it to sglang" in s for s in bad.solutions)
    # A value the code derives from its own objects is no entry of anyone's configuration.
    assert INTERNAL in got["the buffer count is not an int"].documentation


def test_no_weight_files_at_the_model_path_is_the_model_paths_to_fix() -> None:
    got = _by_message("parsed_config.py", "python/sglang/srt/model_loader/weights.py")
    missing = got["No model weights found in: `{model_path}`"]
    assert MODEL_CAUSE in missing.documentation and "`--model-path`" in missing.documentation
    assert missing.triggerScenarios.startswith("Loading from a `--model-path` that holds no weight files")
    assert any(
        s.startswith("Point `--model-path` at a directory or Hugging Face repo") for s in missing.solutions
    )
    assert not any("Report it to sglang" in s for s in missing.solutions)
    # This command line declares neither --revision nor --load-format: neither is offered.
    assert not any("--load-format" in s or "--revision" in s for s in missing.solutions)


def test_a_raise_that_hands_on_its_caught_error_sends_the_user_to_that_error() -> None:
    got = _by_message("handed_on.py", "python/sglang/srt/disaggregation/encoder_client.py")
    net = got["Cannot reach the encoder at {server_args.encoder_url}: {e}"]
    assert INTERNAL not in net.documentation and net.backgroundTag == "network-error"
    assert 'its text follows "Cannot reach the encoder at {server_args.encoder_url}:"' in net.documentation
    assert any(
        "reachable from this host (its address is given with `--encoder-url`)" in s for s in net.solutions
    )
    assert "curl -sS <the address given with --encoder-url>" in _after(net)
    assert not any("Report it to sglang" in s for s in net.solutions)
    # Chained only (``from err``): the traceback shows it, and the file category says what failed.
    disk = got["could not read the table"]
    assert disk.backgroundTag == "io-error" and "the traceback prints it first" in disk.documentation
    assert any(s.startswith("Check the file or folder it reads or writes") for s in disk.solutions)
    job = got["Job failed: {exc}"]
    assert job.solutions[0].startswith('Fix the error this one hands on: its text follows "Job failed:"')
    assert 'sglang-errors match "<the text after Job failed:>"' in _after(job)
    # A name that does not resolve is no service that is down: the advice is the name itself.
    dns = got["Cannot resolve host {server_args.encoder_url!r}: {e}"]
    assert "did not resolve to an address" in dns.triggerScenarios
    assert any(s.startswith("Give an IP address in `--encoder-url`") for s in dns.solutions), dns.solutions
    assert not any("service it calls is running" in s for s in dns.solutions)
    assert "getent hosts <the host given with --encoder-url>" in _after(dns)


def test_a_raise_that_says_what_is_wrong_itself_is_not_a_handed_on_error() -> None:
    got = _by_message("handed_on.py", "python/sglang/srt/disaggregation/encoder_client.py")
    # A lookup miss chained under a message of its own adds nothing to read.
    assert "hands on" not in got["no endpoint for role {role!r}"].documentation
    # The caught error is not bound, so nothing is handed on.
    assert "hands on" not in got["the reply is not JSON"].documentation


def test_a_handed_on_error_of_another_packages_call_names_that_package() -> None:
    got = _by_message("handed_on.py", "python/sglang/srt/disaggregation/encoder_client.py")
    region = got["Register Buffer Error."]
    # The ``try`` block calls ``fabric.kv.register_region``: that package failed, not sglang's state.
    assert "the call into the `fabric` package inside the `try` block (`fabric.kv.register_region`)" in (
        region.documentation
    ), region.documentation
    assert any(s.startswith("Check the `fabric` package this code calls") for s in region.solutions)
    assert "Report it to sglang as a bug" not in " ".join(region.solutions)
    # A client library's failure is the network it talks to.
    fetched = got["could not fetch the config"]
    assert any("service it calls is running" in s for s in fetched.solutions), fetched.solutions
    # A data error the package raises is about what it was handed, not about the package.
    assert not any("`orjson` package" in s for s in got["tool call arguments must be valid JSON"].solutions)
    # An exception the block raises itself is no call into its package that failed.
    assert not any("`fastapi` package" in s for s in got["{str(e)}"].solutions)


def test_a_message_that_states_what_the_path_supports_is_a_case_left_out_not_a_broken_state() -> None:
    got = _by_message("limits.py", "python/sglang/srt/lora/fused_path.py")
    for message in (
        "the fused LoRA path currently supports gated SwiGLU experts only",
        "ragged layouts can only be used with the paged kernel",
        # A choice taken away has the same way out as one never made: another choice.
        "The paged backend has been deprecated, please use `ragged` instead.",
    ):
        assert got[message].errorType == "not-implemented", message
        assert got[message].backgroundTag == "not-implemented", message
    ragged = got["ragged layouts can only be used with the paged kernel"]
    assert "Cause: a case this code does not support, as its message says, not a broken state" in (
        ragged.documentation
    )
    assert INTERNAL not in ragged.documentation
    assert ragged.triggerScenarios.startswith("A call of pick_kernel with a case it does not support")
    assert (
        "avoid that case" in ragged.solutions[0] and "meets a case it does not support" in ragged.exampleFix
    )
    # An ImportError the code chose for a case it leaves out: no package installs it.
    sparse = got["2:4 sparse checkpoints are not supported now"]
    assert sparse.backgroundTag != "missing-dependency" and "pip install" not in sparse.exampleFix
    mismatch = got["row counts differ between the two halves"]
    assert mismatch.errorType == "internal-invariant" and mismatch.backgroundTag == "internal-invariant"


def test_an_imported_hint_the_message_prints_is_read_as_the_messages_advice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    files = {
        "python/sglang/srt/server_args.py": (FIXTURES / "server_args.py").read_bytes(),
        "python/sglang/srt/runner/__init__.py": b"",
        "python/sglang/srt/runner/hints.py": (
            b'CAPTURE_HINT = (\n    "Possible solutions:\\n"\n'
            b'    "1. set --page-size to a smaller value (e.g., 16)\\n"\n'
            b'    "2. use --tp-size=2 to split the model. (Slower)\\n"\n)\n'
        ),
        "python/sglang/srt/runner/capture.py": (
            b"from sglang.srt.runner.hints import CAPTURE_HINT\n\n\n"
            b"def capture(graph):\n    try:\n        graph.replay()\n    except RuntimeError as e:\n"
            b'        raise Exception(f"Capture failed: {e}\\n{CAPTURE_HINT}")\n'
        ),
    }
    # A second commit changes the hint alone: the raising file's cached result must not be reused.
    changed = {
        **files,
        "python/sglang/srt/runner/hints.py": b'CAPTURE_HINT = "1. use --pp-size=2 instead.\\n"\n',
    }
    repo, shas = make_repo(tmp_path / "repo", [files, changed])
    result = extract(
        ExtractOptions.build(source=str(repo), sha=shas[0], jobs=1, cache_dir=tmp_path / "cache")
    )
    later = extract(ExtractOptions.build(source=str(repo), sha=shas[1], jobs=1, cache_dir=tmp_path / "cache"))
    (after,) = [r for r in later.records if r.filePath.endswith("capture.py")]
    assert after.solutions[0] == "The message says: use --pp-size=2 instead."
    (record,) = [r for r in result.records if r.filePath.endswith("capture.py")]
    # The template keeps the name; the advice is read from the text the user sees.
    assert record.errorMessage == "Capture failed: {e}\n{CAPTURE_HINT}"
    assert "The message itself suggests changing `--page-size`, `--tp-size`" in record.documentation
    assert record.solutions[:2] == [
        "The message says: set --page-size to a smaller value (e.g., 16).",
        "The message says: use --tp-size=2 to split the model.",
    ]
    assert any(
        s.startswith('Fix the error this one hands on: its text follows "Capture failed:"')
        for s in record.solutions
    )


def test_a_compiled_part_that_asks_for_a_driver_sends_the_user_to_the_driver_first() -> None:
    got = _prose("optional_imports.py", "sgl-kernel/python/sgl_kernel/green.py")
    green = got["green_streams"]
    assert green.triggerScenarios.startswith("Running green_streams where the compiled part of sgl-kernel")
    assert green.solutions[0].startswith(
        "Check the NVIDIA driver first: the message asks for one that supports CUDA 12.4 or newer"
    )
    assert "pip install --force-reinstall sgl-kernel" in green.solutions[1]


def test_a_subcommand_modules_fix_runs_that_subcommand() -> None:
    path = "python/sglang/multimodal_gen/runtime/entrypoints/cli/generate.py"
    assert launcher_of_path(path) == "sglang generate --model-path <model>"
    # The command's own entry module, and code outside the subcommands, keep the server's command.
    assert launcher_of_path("python/sglang/multimodal_gen/runtime/entrypoints/cli/main.py") == (
        "sglang serve --model-path <model>"
    )
    assert launcher_of_path("python/sglang/srt/") == "python -m sglang.launch_server --model-path <model>"


def test_an_entry_of_the_config_mapping_model_code_is_handed_is_the_checkpoints() -> None:
    got = _prose("config_entries.py", "python/sglang/srt/configs/sparse.py")
    for qualname in ("score_type_of", "score_type_cfg"):
        entry = got[qualname]
        assert "Cause: the model (its checkpoint or config) (`sparse_score_type`)" in entry.documentation
        assert (
            entry.solutions[0]
            == "Use a model whose `sparse_score_type` is one of max, lse: only those are supported here"
        )
    # A mapping named for a launch setting is no part of the model's config.
    assert INTERNAL in got["storage_mode"].documentation
    # Outside model code the same read says nothing of the checkpoint.
    elsewhere = _prose("config_entries.py", "python/sglang/srt/entrypoints/sparse.py")
    assert INTERNAL in elsewhere["score_type_of"].documentation


def test_a_variable_on_by_default_is_said_turned_off_not_unset() -> None:
    on = Constraint("env", "SGLANG_FAST", "falsy", on_by_default=True)
    assert (
        constraint_words(on)
        == "the environment variable `SGLANG_FAST` is set to 0 or false (it is on by default)"
    )
    off = Constraint("env", "SGLANG_SLOW", "falsy")
    assert constraint_words(off) == "the environment variable `SGLANG_SLOW` is unset or false"


def test_an_attribute_the_model_constructor_copies_from_the_config_is_named_by_its_key() -> None:
    got = _by_message("copied_config.py", "python/sglang/srt/models/owl_draft.py")
    layers = got["only one draft layer is supported"]
    assert f"{MODEL_CAUSE} (`num_nextn_predict_layers`)" in layers.documentation
    assert "Use a model whose `num_nextn_predict_layers` is one of 1" in layers.solutions[0]
    groups = got["top groups must fit the groups"]
    assert f"{MODEL_CAUSE} (`topk_group`, `n_group`)" in groups.documentation
    for message in ("the half width must be a multiple of 64", "more groups than devices"):
        assert "num_nextn_predict_layers" not in got[message].documentation, message
        assert "(`n_group`" not in got[message].documentation, message
    # Outside the model files a ``config`` may be sglang's own: the attribute keeps its name.
    layer = _by_message("copied_config.py", "python/sglang/srt/layers/owl_draft.py")
    assert "num_nextn_predict_layers" not in layer["only one draft layer is supported"].documentation


def test_an_error_code_of_a_gpu_driver_library_is_the_drivers_not_a_bug() -> None:
    got = _prose("driver_calls.py", "python/sglang/srt/utils/driver_calls.py")
    nvml = got["device_count"]
    assert "Cause: the GPU driver: its `NVML` library reported a failure" in nvml.documentation
    assert INTERNAL not in nvml.documentation
    assert "`nvidia-smi`" in nvml.solutions[0] and nvml.exampleFix.endswith("nvidia-smi")
    assert not any(s.startswith("This is an internal check") for s in nvml.solutions)
    nccl = got["all_reduce"]
    assert "its `NCCL` library" in nccl.documentation
    assert nccl.solutions[0].startswith("Rerun with `NCCL_DEBUG=INFO`")
    # A class of sglang's own named after CUDA is no driver's answer.
    assert "GPU driver" not in got["capture"].documentation
    # Nor is the wrapper's own code for a library no one loaded yet.
    assert INTERNAL in got["function_pointer"].documentation


def test_a_local_read_from_the_request_makes_its_check_the_requests() -> None:
    got = _prose("request_fields.py", "python/sglang/srt/managers/request_fields.py")
    ids = got["validate_logprob_ids"]
    assert "Cause: the request or call input (`token_ids_logprob`)" in ids.documentation
    kinds = got["ingest"]
    assert "Cause: the request or call input (`input_types`)" in kinds.documentation
    # ``payload.get("cmd")`` reads the field ``cmd``, not one called ``get``.
    assert "Cause: the request or call input (`cmd`)" in got["dispatch"].documentation
    # The scheduler's own request object, and an assert on the server's state, stay internal.
    assert INTERNAL in got["release"].documentation
    assert INTERNAL in got["check_batch"].documentation
    # A payload another rank scattered is sglang's own.
    assert INTERNAL in got["PeerSync.receive"].documentation


def test_a_check_on_the_devices_major_capability_is_the_hardwares_and_names_the_generation() -> None:
    got = _prose("sm_major.py", "python/sglang/srt/layers/attention/sparse_prefill.py")
    prefill = got["SparsePrefill.__init__"]
    assert "Cause: the hardware or platform (`SM90 (Hopper)`)" in prefill.documentation
    assert prefill.solutions[0] == "Run on SM90 (Hopper) hardware: this path needs it"


def test_a_parallel_size_ordered_against_an_attribute_copied_from_the_config_is_the_flag() -> None:
    got = _by_message("copied_config.py", "python/sglang/srt/models/owl_draft.py")
    experts = got["tensor parallel size {self.tp_size} exceeds the {self.n_experts} experts"]
    assert "Cause: a launch flag (`--tp-size`)" in experts.documentation


def test_a_check_a_platform_fails_says_it_runs_on_that_platform_not_without_it() -> None:
    got = _prose("platform_gaps.py", "python/sglang/srt/layers/platform_gaps.py")
    npu = got["min_capability"]
    assert npu.triggerScenarios.startswith("Running on NPU, where `_is_npu` holds")
    assert npu.commonSituations.startswith("Running `min_capability` on NPU")
    cuda = got["fused_kernel"]
    assert cuda.triggerScenarios.startswith("Running on a platform without CUDA support")


def test_a_check_whose_message_says_the_tensor_parallel_size_does_not_fit_is_that_flag() -> None:
    got = _prose("told_split.py", "python/sglang/srt/layers/told_split.py")
    # A check of the model's own dimension, which the message says the attention TP size splits.
    for scope in ("scatter_hidden", "pad_heads", "ShardConfig.conv_dim"):
        assert "Cause: a launch flag (`--tp-size`)" in got[scope].documentation, scope
        assert "--tp-size <accepted-value>" in got[scope].exampleFix, scope
    # Naming the size is not blaming it.
    assert INTERNAL in got["gather"].documentation


def test_a_flag_tested_against_a_named_collection_is_fixed_with_its_members() -> None:
    got = _prose("bound_choices.py", "python/sglang/srt/layers/bound_choices.py")
    assert got["copy_kernel"].solutions[0].startswith("Set `--copy-backend` to one of direct, kernel")
    assert got["page_kernel"].solutions[0].startswith("Set `--page-size` to one of 16, 32")


def test_a_fix_on_a_flag_a_runnable_script_declares_runs_that_script() -> None:
    got = _prose("own_script.py", "python/sglang/benchmark/own_script.py")
    fracs = got["run_profile"]
    assert "python -m sglang.benchmark.own_script --fracs <accepted-value>" in fracs.exampleFix
    assert "launch_server" not in fracs.exampleFix
    # "Pass --tokenizer-path explicitly." gives the flag no value called "explicitly".
    assert "explicitly" not in got["load_tokenizer"].exampleFix


def test_a_passed_check_is_involved_only_through_what_it_pins() -> None:
    got = _prose("passed_checks.py", "python/sglang/srt/model_executor/runner.py")
    involved = re.compile(r"Command-line flags involved: (.*?)\.(?= [A-Z]|$)")
    # ``dp_size > 1 and lora_paths`` passing leaves either one free: neither is named beside the
    # assert on the page size, nor tagged.
    runner = got["build_runner"]
    named = involved.search(runner.documentation)
    assert named is not None and "`--page-size`" in named.group(1)
    assert "--lora-paths" not in named.group(1) and "--dp-size" not in named.group(1)
    assert "lora-paths" not in runner.tags and "dp-size" not in runner.tags
    split = involved.search(got["check_split"].documentation)
    assert split is not None and "`--page-size`" in split.group(1)
    assert "--shared-outer" not in split.group(1) and "--lora-paths" not in split.group(1)
    # Nor does it tag the record with its topic: that check guards another path.
    assert "lora" not in got["check_split"].tags
    # ``copy_backend not in (...)`` passing pins the backend: it stays involved.
    copy = involved.search(got["pick_copy"].documentation)
    assert copy is not None and "`--copy-backend`" in copy.group(1) and "`--tp-size`" in copy.group(1)


def test_a_flag_the_check_needs_given_is_said_left_out() -> None:
    got = {
        site.message.template: prose
        for site, prose in _enriched("passed_checks.py", "python/sglang/srt/lora/load.py")
        if site.message
    }
    off = got["adapters are off: launch with some first"]
    assert off.commonSituations.startswith(
        "A launch command or deployment script that leaves out `--lora-paths`"
    )
    # Left out, or one of two others: no single omission is the situation.
    both = got["no adapters, and sharded or draftless"]
    assert "leaves out" not in both.commonSituations and "sets `--lora-paths`" in both.commonSituations


def test_a_flag_the_message_asks_for_where_a_value_is_missing_is_given_in_the_fix() -> None:
    got = {
        site.message.template: prose
        for site, prose in _enriched("passed_checks.py", "python/sglang/srt/speculative/load.py")
        if site.message
    }
    draft = got["speculation requires --draft-model-path (or a draft/ folder in the model)"]
    assert draft.solutions[0].startswith("Give `--draft-model-path` at launch: the message asks for it")
    assert draft.exampleFix.endswith("--draft-model-path <value>")
    assert "--draft-model-path" not in draft.exampleFix.split("# after")[0]
    assert "leaves out `--draft-model-path`" in draft.commonSituations


def test_a_value_test_of_a_flags_accessor_and_a_value_the_message_names_give_that_value() -> None:
    got = _prose("told_values.py", "python/sglang/srt/mem_cache/copy.py")
    # ``get_copy_backend().is_direct()`` asks for one value of ``--copy-backend``.
    pinned = got["pinned_copy"]
    assert "Launch with `--copy-backend direct`" in pinned.solutions, pinned.solutions
    assert "--copy-backend direct" in _after(pinned)
    # The message names the value to use: no other value that merely skips the check is offered,
    # and the failing launch gives the value it refuses.
    dtype = got["configure_dtype"]
    assert not any(s.startswith("Set `--dtype` to one of") for s in dtype.solutions), dtype.solutions
    before, after = dtype.exampleFix.split("# after", 1)
    assert "--dtype float\n" in before + "\n" and "--dtype float32" in after


def test_a_switch_the_message_names_by_its_dest_as_unsupported_is_left_out() -> None:
    got = _prose("switch_named.py", "python/sglang/srt/mem_cache/npu_pool.py")
    for name, flag in (
        ("NpuPool.make_pool", "--enable-batch-encode"),
        ("check_batch", "--enable-batch-encode"),
        # Any switch, spelled ``dest=True``: the value says it is the launch's switch.
        ("Detokenizer.words_of", "--skip-detokenize"),
    ):
        prose = got[name]
        assert f"Cause: a launch flag (`{flag}`)" in prose.documentation, prose.documentation
        assert prose.solutions == [
            f"Launch without `{flag}`: the message names it as what this case does not support"
        ]
        before, after = prose.exampleFix.split("# after", 1)
        assert flag in before and flag not in after


def test_a_pip_option_in_the_message_is_no_package() -> None:
    (prose,) = _prose("upgrade_hint.py", "python/sglang/multimodal_gen/runtime/loader.py").values()
    assert "`diffusers`" in prose.documentation
    assert "--upgrade`" not in prose.documentation, prose.documentation


def test_a_batch_row_count_split_over_ranks_is_no_flags_fault() -> None:
    got = _prose("batch_rows.py", "python/sglang/srt/layers/scatter.py")
    # The tokens of a batch change from one batch to the next: no --tp-size divides them all, and
    # padding upstream is what keeps them whole.
    assert INTERNAL in got["scatter_tokens"].documentation
    assert not any("--tp-size" in s for s in got["scatter_tokens"].solutions)
    # A dimension of the model is fixed: the flag set against it is the cause.
    assert "Cause: a launch flag (`--tp-size`)" in got["split_heads"].documentation


def test_the_failing_value_keeps_to_the_earlier_branches_of_the_path() -> None:
    got = _prose("earlier_branch.py", "python/sglang/srt/mem_cache/pager.py")
    prose = got["create_pager"]
    # ``page_size > 0`` returned before the check: only a value below 0 reaches it.
    assert "Launching with `--page-size -1`" in prose.triggerScenarios, prose.triggerScenarios
    before, after = prose.exampleFix.split("# after", 1)
    assert "--page-size -1" in before and "--page-size 0" in after
    # A gate that the flag's default fails (``dp_size > 1``, default 1) is part of the failing launch.
    split = got["split_pages"]
    assert "--dp-size 2" in split.exampleFix.split("# after", 1)[0], split.exampleFix


def test_a_field_another_server_reports_is_not_this_launchs_flag() -> None:
    peer, own, built, plain = (
        p for _, p in _enriched("peer_fields.py", "python/sglang/srt/disaggregation/rank_map.py")
    )
    # ``info.attn_cp_size`` is what the prefill server reported: no flag of this launch sets it.
    assert "--attn-cp-size" not in peer.triggerScenarios, peer.triggerScenarios
    assert not any("--attn-cp-size" in s for s in peer.solutions), peer.solutions
    # Against this server's own value, the mismatch is still this launch's flag to change.
    assert any("--page-size" in s for s in built.solutions), built.solutions
    # This server's own field, named the same way by its message, is the flag; so is a plain
    # parameter's.
    assert "Cause: a launch flag (`--page-size`)" in own.documentation, own.documentation
    assert "Cause: a launch flag (`--page-size`)" in plain.documentation, plain.documentation


def test_a_platforms_own_method_that_only_raises_is_that_platform_unsupported() -> None:
    npu, cuda, hip = (
        p for _, p in _enriched("platform_methods.py", "python/sglang/srt/models/text_model.py")
    )
    # ``forward_prepare_npu`` is what the dispatch runs on Ascend: every call there raises.
    assert "Cause: the hardware or platform (Ascend NPU)" in npu.documentation, npu.documentation
    assert npu.triggerScenarios.startswith("Running on Ascend NPU")
    assert npu.solutions[0].startswith(
        "`TextAttention` has no Ascend NPU implementation: run this model on another platform"
    )
    assert npu.backgroundTag == "hardware-unsupported"
    assert "Report it to sglang" not in " ".join(npu.solutions)
    # The CUDA path is the main one; a raise there only asks subclasses for it. A raise under a
    # test is decided by that test.
    assert "Ascend" not in cuda.documentation and "Cause: the hardware" not in cuda.documentation
    assert "Cause: the hardware or platform (ROCm" not in hip.documentation


def test_a_local_the_function_assigns_is_not_the_flag_its_message_names() -> None:
    (prose,) = _prose("local_names.py", "python/sglang/jit_kernel/paged.py").values()
    # ``page_size`` here is the cache tensor's page width, not ``--page-size``.
    assert "--page-size" not in prose.documentation, prose.documentation
    assert not any("--page-size" in s for s in prose.solutions), prose.solutions


def test_a_flag_a_config_class_works_out_is_no_key_of_the_checkpoint() -> None:
    derived, keyed = (p for _, p in _enriched("derived_keys.py", "python/sglang/srt/models/dense.py"))
    # ``is_checkpoint_int8_serialized`` is worked out from the quantization method: no config.json
    # spells it, so no fix asks for a checkpoint that sets it.
    assert "(`is_checkpoint_int8_serialized`)" not in derived.documentation, derived.documentation
    assert "sets `is_checkpoint_int8_serialized`" not in " ".join(derived.solutions), derived.solutions
    assert "Cause: the model (its checkpoint or config) (`head_dim`)" in keyed.documentation


def test_a_variable_that_only_lets_a_refused_case_through_is_no_cause() -> None:
    knowledge = _env_knowledge("SGLANG_ALLOW_LONGER_LENGTH", False)
    path = "python/sglang/srt/configs/length.py"
    parsed = parse_source(path, (FIXTURES / "override_env.py").read_bytes())
    assert isinstance(parsed, ParsedFile)
    (site,) = analyse(parsed)
    prose = enrich(site, knowledge, module_constants(parsed.tree, path))
    # The case is ``length > derived``; the variable, off by default, only lets it through.
    assert prose.triggerScenarios.startswith("A setup for which `length > derived` holds"), (
        prose.triggerScenarios
    )
    assert prose.solutions[0].startswith("Change what makes `length > derived` hold")
    assert prose.solutions[-1].startswith("Or set `SGLANG_ALLOW_LONGER_LENGTH=1` to let the case through")
    assert '"this may lead to wrong outputs."' in prose.solutions[-1], prose.solutions
    assert "SGLANG_ALLOW_LONGER_LENGTH=0" not in prose.exampleFix


def test_a_config_classs_from_config_refuses_what_the_checkpoints_config_holds() -> None:
    entries, other = (
        p for _, p in _enriched("from_config.py", "python/sglang/srt/layers/quantization/packed.py")
    )
    # The tested sets come from ``config.get("export").get("kv_groups")`` and ``config.get("layer_configs")``.
    assert "Cause: the model (its checkpoint or config) (`kv_groups`, `export`, `layer_configs`)" in (
        entries.documentation
    ), entries.documentation
    assert "Report it to sglang" not in " ".join(entries.solutions)
    # A method that is not ``from_config`` is not handed the checkpoint's config.
    assert INTERNAL in other.documentation


def test_a_request_bodys_own_checks_and_a_validators_are_the_data_sent() -> None:
    got = _prose("request_bodies.py", "python/sglang/srt/managers/request_bodies.py")
    body = got["SummarizeReqInput.normalize"]
    assert "Cause: the request or call input (`text`, `token_ids`)" in body.documentation, body.documentation
    assert body.triggerScenarios.startswith("A request for which"), body.triggerScenarios
    role = got["NoteMessage._known_role"]
    assert "Cause: the request or call input (`role`)" in role.documentation, role.documentation
    assert role.triggerScenarios.startswith("Building `NoteMessage` from data"), role.triggerScenarios
    # A validator runs as its model is built: the call to show is the construction, and pydantic
    # hands its ValueError on inside a ValidationError.
    assert "NoteMessage(...)" in role.exampleFix
    assert "inside a `ValidationError`" in role.triggerScenarios
    catch = role.tryCatchPattern
    assert catch is not None
    assert "except ValidationError as e:" in catch, catch
    assert "err['msg'].partition(', ')[2]" in catch
    # A whole-model validator names the fields its test reads.
    window = got["Window._ordered"]
    assert "Cause: the request or call input (`end`, `start`)" in window.documentation, window.documentation
    assert INTERNAL in got["BatchPlanner.plan"].documentation


def test_an_assert_in_a_request_bodys_class_stays_its_own_invariant() -> None:
    got = _prose("request_bodies.py", "python/sglang/srt/managers/request_bodies.py")
    assert INTERNAL in got["SummarizeReqInput.admit"].documentation


def test_a_variable_whose_declared_default_passes_the_check_is_fixed_by_unsetting_it() -> None:
    registry = b"""\
class EnvInt:
    def __init__(self, default):
        self.default = default


class Envs:
    SGLANG_CHUNK_TOKENS = EnvInt(16)


envs = Envs()
"""
    knowledge = build_knowledge(
        {
            "python/sglang/srt/server_args.py": (FIXTURES / "server_args.py").read_bytes(),
            "python/sglang/srt/environ.py": registry,
        }
    )
    source = b"""\
from sglang.srt.environ import envs


def chunk(x):
    if envs.SGLANG_CHUNK_TOKENS.get() > 64:
        raise ValueError("a chunk holds at most 64 tokens")
    return x
"""
    parsed = parse_source("python/sglang/srt/layers/chunk.py", source)
    assert isinstance(parsed, ParsedFile), parsed
    (prose,) = (enrich(s, knowledge, module_constants(parsed.tree, parsed.path)) for s in analyse(parsed))
    assert prose.solutions[0].startswith("Unset `SGLANG_CHUNK_TOKENS`: its default (16) passes this check"), (
        prose.solutions
    )
    before, after = prose.exampleFix.split("# after", 1)
    assert "SGLANG_CHUNK_TOKENS=" in before and "SGLANG_CHUNK_TOKENS" not in after


def test_a_config_class_is_the_checkpoints_only_when_it_derives_from_a_config_class() -> None:
    got = _prose("config_classes.py", "python/sglang/srt/configs/owl.py")
    assert MODEL_CAUSE in got["OwlConfig.__init__"].documentation, got["OwlConfig.__init__"].documentation
    # Named like one, but built from the server's own settings: no checkpoint holds ``device``.
    device = got["DeviceConfig.__init__"]
    assert MODEL_CAUSE not in device.documentation, device.documentation
    assert not any("checkpoint" in s for s in device.solutions), device.solutions
    # A module constant and the launch's arguments are no keys of the checkpoint's config.
    block = got["BlockConfig.from_server_args"]
    assert MODEL_CAUSE in block.documentation
    assert not any("`PARAMS_BY_ARCH`," in s or "`server_args`" in s for s in block.solutions), block.solutions


def test_a_flag_that_must_be_a_multiple_of_a_literal_is_given_one() -> None:
    knowledge = build_knowledge(
        {"python/sglang/srt/server_args.py": (FIXTURES / "server_args.py").read_bytes()}
    )
    source = b"""\
def index_pages(server_args):
    if server_args.page_size % 16 != 0:
        raise ValueError("the indexer reads pages of 16 tokens")
"""
    parsed = parse_source("python/sglang/srt/layers/indexer.py", source)
    assert isinstance(parsed, ParsedFile), parsed
    (prose,) = (enrich(s, knowledge, module_constants(parsed.tree, parsed.path)) for s in analyse(parsed))
    assert "Cause: a launch flag (`--page-size`)" in prose.documentation, prose.documentation
    assert prose.solutions[0] == "Set `--page-size` to a multiple of 16 (for example `--page-size 16`)", (
        prose.solutions
    )
    assert "--page-size 16" in _after(prose)


def test_a_fix_that_asks_for_a_member_of_a_named_collection_lists_its_members() -> None:
    knowledge = build_knowledge(
        {"python/sglang/srt/server_args.py": (FIXTURES / "server_args.py").read_bytes()}
    )
    source = b"""\
SAMPLING_MODES = ("greedy", "top_k", "top_p")


def pick_sampler(request):
    if request.mode not in SAMPLING_MODES:
        raise ValueError("unknown sampling mode")
"""
    parsed = parse_source("python/sglang/srt/managers/sampler_pick.py", source)
    assert isinstance(parsed, ParsedFile), parsed
    (prose,) = (enrich(s, knowledge, module_constants(parsed.tree, parsed.path)) for s in analyse(parsed))
    assert any(
        "in SAMPLING_MODES` (`SAMPLING_MODES` holds `greedy`, `top_k`, `top_p`)" in s for s in prose.solutions
    ), prose.solutions


def test_a_check_of_the_gpus_compute_capability_against_a_minimum_asks_for_a_newer_gpu() -> None:
    got = _prose("capability_checks.py", "python/sglang/srt/layers/quantization/packed.py")
    for scope in ("PackedConfig.pick_scheme", "tiled_kernel", "legacy_fallback"):
        prose = got[scope]
        assert "Cause: the hardware or platform (`GPU compute capability`)" in prose.documentation, scope
        assert prose.solutions[0].startswith("Run on a newer GPU"), prose.solutions
        assert "on a newer GPU" in _after(prose)
    # The message's own minimum is named where the code names none.
    assert "(sm75)" in got["legacy_fallback"].solutions[0], got["legacy_fallback"].solutions
    # The scheme's own minimum is named; a bare ``major < 9`` names none.
    assert "(`PackedW4Scheme.get_min_capability()`)" in got["PackedConfig.pick_scheme"].solutions[0]
    # Above the range fails too: no newer GPU is promised.
    assert not any("newer GPU" in s for s in got["windowed_kernel"].solutions)
    # An assert's own bound on the device it is handed: a GPU below 9.0, not one without CUDA.
    runner = got["MarlinRunner.run"]
    assert "Cause: the hardware or platform (`GPU compute capability`)" in runner.documentation
    assert runner.solutions[0].startswith("Run on a newer GPU"), runner.solutions
    assert "(9.0)" in runner.solutions[0], runner.solutions


def test_a_setting_whose_text_does_not_parse_is_fixed_by_a_valid_value_not_by_the_parsers_error() -> None:
    got = _prose("parsed_settings.py", "python/sglang/srt/store/settings.py")
    store = got["store_settings"]
    assert "Cause: the value given with `--store-extra-config` does not parse as JSON" in store.documentation
    assert store.solutions[0].startswith("Give `--store-extra-config` a valid JSON value"), store.solutions
    assert '--store-extra-config \'{"key": "value"}\'' in _after(store)
    # Text the code got elsewhere (a peer's reply) is no setting: the error underneath says more.
    reply = got["reply_port"]
    assert "does not parse" not in reply.documentation
    assert reply.solutions[0].startswith("Fix the error this one hands on")


def test_a_flag_tested_against_a_computed_value_gets_a_fix_value_saying_what_it_must_be() -> None:
    got = _prose("bounds.py", "python/sglang/srt/layers/bounds.py")
    assert "--page-size <a multiple of block>" in _after(got["check_pages"])
    assert "--tp-size <at most n_nodes>" in _after(got["check_nodes"])
    # The count of a list flag's items is no value of the flag to give.
    assert "at most" not in got["check_adapters"].exampleFix


def test_a_flag_the_launch_fills_in_when_left_out_is_not_said_to_fail_just_by_leaving_it_out() -> None:
    from extractor.prose.knowledge import FlagInfo

    # ``if server_args.max_running is None: server_args.max_running = 48`` in a launch hook.
    filled = FlagInfo("--max-running", "max_running", "python/sglang/srt/", optional=False)
    assert constraint_words(Constraint("flag", "--max-running", "is-none", (), filled)) == (
        "`--max-running` is left unset and the launch does not fill it in"
    )
    plain = FlagInfo("--draft-path", "draft_path", "python/sglang/srt/", optional=True)
    assert (
        constraint_words(Constraint("flag", "--draft-path", "is-none", (), plain))
        == "`--draft-path` is left unset"
    )
