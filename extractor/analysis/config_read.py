"""A read of the model's config object: ``config.key`` or ``getattr(config, "key", ...)``.

Its own module so that the readers of passed values (:mod:`extractor.reach.arguments`) and of
parallel sizes (:mod:`extractor.prose.world_size`) read config keys the same way.
"""

from __future__ import annotations

import ast
import re

from extractor.analysis.walk import getattr_read

__all__ = ["CONFIG_METHODS", "config_read"]

# The names a model's config object goes by: ``config``, ``hf_config``, ``text_config`` and the
# like, on their own or as an attribute (``self.config``, ``model_config.hf_config``). sglang's
# own ``model_config`` mixes launch flags in, so it is not one.
_CONFIG_NAME_RE = re.compile(r"^(?:hf_|hf_text_|text_|vision_|audio_|llm_|language_|draft_)?config$")


# What a config object (``PretrainedConfig``, a dict) does rather than holds: ``hasattr(config,
# "to_dict")`` asks what kind of object it is, not what the checkpoint declares.
CONFIG_METHODS = frozenset(
    {
        "copy",
        "from_dict",
        "from_pretrained",
        "get",
        "get_text_config",
        "items",
        "keys",
        "save_pretrained",
        "to_dict",
        "to_diff_dict",
        "to_json_string",
        "update",
        "values",
    }
)


def config_read(node: ast.expr) -> str | None:
    """The key of ``config.key`` or ``getattr(config, "key", ...)`` on a model config object."""
    node = getattr_read(node) or node
    if (
        not isinstance(node, ast.Attribute)
        or not node.attr.isidentifier()
        or node.attr.startswith("_")
        or node.attr in CONFIG_METHODS
    ):
        return None
    recv = node.value
    name = recv.id if isinstance(recv, ast.Name) else recv.attr if isinstance(recv, ast.Attribute) else ""
    return node.attr if _CONFIG_NAME_RE.match(name) else None
