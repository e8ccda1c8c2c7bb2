"""Example counts for the property tests: small by default, larger on request.

``HYPOTHESIS_PROFILE=dev`` or ``=long`` runs more examples (``long`` is minutes, not seconds).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_EXAMPLES = {"ci": 1, "dev": 5, "long": 25}
_FACTOR = _EXAMPLES.get(os.environ.get("HYPOTHESIS_PROFILE", "ci"), 1)


def examples(base: int) -> settings:
    """Settings for a property test that runs ``base`` examples under the default profile."""
    return settings(
        max_examples=base * _FACTOR,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
