"""Sentences of the target's own prose: where one ends, what a message says of its own line, and what a
model config holds rather than does (also through a local read straight from it)."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from extractor.analysis.config_read import config_read
from extractor.prose.fixes import advice_sentences
from extractor.prose.sentences import split_sentences
from tests.conftest import records_by_message


def test_a_sentence_goes_on_after_an_abbreviation() -> None:
    text = "Use a backend without it (e.g. mooncake, simm). Then retry; or i.e. nothing."
    assert split_sentences(text) == [
        "Use a backend without it (e.g. mooncake, simm).",
        "Then retry; or i.e. nothing.",
    ]
    assert split_sentences(text, semicolons=True) == [
        "Use a backend without it (e.g. mooncake, simm).",
        "Then retry;",
        "or i.e. nothing.",
    ]
    assert split_sentences("One. Two! Three?") == ["One.", "Two!", "Three?"]


def test_the_advice_of_a_message_keeps_its_example() -> None:
    message = "Flat pages are not supported. Use a backend that does not use them (e.g. mooncake, simm)."
    assert advice_sentences(message) == ["Use a backend that does not use them (e.g. mooncake, simm)."]


def test_a_message_names_a_flag_whole_and_says_where_to_point_it() -> None:
    from extractor.prose.cause import FLAG_RE

    message = "Streaming needs the causal VAE. Point --component_paths.vae at its weights when streaming."
    # ``--component_paths.vae`` is a key of an option the parser expands, not a flag ``--component``.
    assert FLAG_RE.findall(message) == []
    assert FLAG_RE.findall("Invalid modality in --limit-mm.Allowed ones: image") == ["--limit-mm"]
    assert FLAG_RE.findall("set --tp-size=2, or --dp-size.") == ["--tp-size", "--dp-size"]
    assert advice_sentences(message) == ["Point --component_paths.vae at its weights when streaming."]


def test_a_method_of_the_config_object_is_no_key_of_it() -> None:
    assert config_read(ast.parse('getattr(config, "head_dim", 64)', mode="eval").body) == "head_dim"
    assert config_read(ast.parse("hf_config.to_dict", mode="eval").body) is None
    assert config_read(ast.parse('getattr(config, "to_dict", None)', mode="eval").body) is None


def test_a_model_check_that_asks_what_kind_of_object_a_config_is_names_no_method_as_a_key(
    tmp_path: Path,
) -> None:
    files = {
        "python/sglang/srt/models/wren.py": textwrap.dedent(
            """\
            class WrenForCausalLM:
                def __init__(self, config):
                    self.audio = self._as_dict(config)

                def _as_dict(self, config):
                    if config is not None and not isinstance(config, dict) and not hasattr(config, "to_dict"):
                        raise ValueError(f"audio config must be dict-like, got {type(config)}")
                    return config


            EntryClass = WrenForCausalLM
            """
        ),
    }
    record = records_by_message(tmp_path, files)["audio config must be dict-like, got {type(config)}"]
    assert "`to_dict`" not in record.documentation.partition("Cause:")[2].partition(".")[0], (
        record.documentation
    )
    assert not any("sets `to_dict`" in s for s in record.solutions), record.solutions


def test_a_message_that_calls_its_line_unreachable_is_an_internal_check(tmp_path: Path) -> None:
    files = {
        "python/sglang/srt/server_args.py": textwrap.dedent(
            """\
            class ServerArgs:
                enable_layered_draft: bool = False

                @staticmethod
                def add_cli_args(parser):
                    parser.add_argument("--enable-layered-draft", action="store_true", help="Draft in layers.")
            """
        ),
        "python/sglang/srt/speculative/algo.py": textwrap.dedent(
            """\
            def create_worker(algo, server_args):
                if algo == "plain":
                    return 1
                elif algo == "layered" and server_args.enable_layered_draft:
                    return 2
                else:
                    raise ValueError("Unreachable code path in create_worker.")
            """
        ),
    }
    record = records_by_message(tmp_path, files)["Unreachable code path in create_worker."]
    # The flag in the test chain is not the cause: the message says the branch is never taken.
    assert "Cause: an internal invariant" in record.documentation, record.documentation
    assert "<current-value>" not in record.exampleFix


def test_a_local_read_straight_from_the_model_config_is_the_checkpoints(tmp_path: Path) -> None:
    files = {
        "python/sglang/srt/models/finch.py": textwrap.dedent(
            """\
            class FinchForCausalLM:
                def __init__(self, config):
                    self.config = config
                    self._extra_layers()

                def _extra_layers(self):
                    extra = self.config.num_extra_layers
                    assert extra == 1, "Only 1 extra layer is supported"


            EntryClass = FinchForCausalLM
            """
        ),
    }
    record = records_by_message(tmp_path, files)["Only 1 extra layer is supported"]
    assert "Cause: the model (its checkpoint or config) (`num_extra_layers`)" in record.documentation, (
        record.documentation
    )
    # The fix names the config key, not the local that holds it.
    assert record.solutions[0].startswith("Use a model whose `num_extra_layers` is one of 1"), (
        record.solutions
    )


def test_an_attribute_the_model_class_keeps_from_its_config_is_the_checkpoints(tmp_path: Path) -> None:
    files = {
        "python/sglang/srt/models/heron.py": textwrap.dedent(
            """\
            class HeronForConditionalGeneration:
                def __init__(self, config):
                    vision_config = getattr(config, "vision_config", None)
                    if vision_config is not None:
                        self.visual = build_tower(vision_config)
                    else:
                        self.visual = None
                    self.experts = build_experts(config) if config.n_experts else None
                    self.scratch = None

                def image_features(self, items):
                    if self.visual is None:
                        raise ValueError("Visual tower not built")
                    return self.visual(items)

                def expert_parts(self):
                    # A part of what the config built, checked against another part: internal.
                    assert same_backend(self.experts.up, self.experts.down), "experts split"

                def scratch_space(self):
                    if self.scratch is None:
                        raise RuntimeError("scratch space not allocated")


            EntryClass = HeronForConditionalGeneration
            """
        ),
    }
    records = records_by_message(tmp_path, files)
    visual = records["Visual tower not built"]
    assert "Cause: the model (its checkpoint or config) (`vision_config`)" in visual.documentation, (
        visual.documentation
    )
    assert "`vision_config`" in visual.solutions[0], visual.solutions
    # Kept from no config key (another method or nothing fills it from the config): internal.
    assert "Cause: an internal invariant" in records["scratch space not allocated"].documentation
    assert "Cause: an internal invariant" in records["experts split"].documentation


def test_a_config_key_the_check_finds_missing_is_fixed_by_adding_it(tmp_path: Path) -> None:
    files = {
        "python/sglang/srt/models/wren.py": textwrap.dedent(
            """\
            def get_head_dim(config):
                if hasattr(config, "head_dim"):
                    return int(config.head_dim)
                if hasattr(config, "attention_head_dim"):
                    return int(config.attention_head_dim)
                raise ValueError("head dim missing from config")


            class WrenForCausalLM:
                def __init__(self, config):
                    self.head_dim = get_head_dim(config)
                    if getattr(config.text_config, "num_layers", None) is None:
                        raise ValueError("text layers missing")


            EntryClass = WrenForCausalLM
            """
        ),
    }
    records = records_by_message(tmp_path, files)
    head = records["head dim missing from config"]
    assert "config.json leaves out `head_dim` and `attention_head_dim`" in head.commonSituations, (
        head.commonSituations
    )
    # Either key passes the check.
    assert head.solutions[0].startswith(
        "Add `head_dim` (or `attention_head_dim`) to the checkpoint's config.json"
    )
    layers = records["text layers missing"]
    assert layers.solutions[0].startswith("Add `text_config.num_layers` to the checkpoint's config.json"), (
        layers.solutions
    )
