"""Test-suite settings shared by every test module."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

# The machines that run this suite are small and shared: a property that normally takes a
# millisecond can take far longer while another process runs, so hypothesis must judge
# properties, never their speed (no deadline, no too-slow health check).
settings.register_profile(
    "gpuconcepts", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("gpuconcepts")


# -- a synthetic Run (tests/synthetic.py) as a fixture -----------------------------------------
import pytest
from synthetic import synthetic_run

from gpuconcepts.run import Run


@pytest.fixture
def run() -> Run:
    """A synthetic run (see :func:`synthetic.synthetic_run`)."""
    return synthetic_run()
