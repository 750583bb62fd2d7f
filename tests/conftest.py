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

from gpuconcepts.roofline import Peaks
from gpuconcepts.run import Run


@pytest.fixture(autouse=True)
def _peaks_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test keeps this machine's peaks in a folder of its own: none reads the user's
    cache folder, or writes to it."""
    monkeypatch.setenv("GPUCONCEPTS_CACHE_DIR", str(tmp_path_factory.mktemp("peaks-cache")))


@pytest.fixture
def run() -> Run:
    """A synthetic run (see :func:`synthetic.synthetic_run`)."""
    return synthetic_run()


# -- this machine's peaks, measured once -------------------------------------------------------
SMALL_PEAKS_SIZES = {
    "peaks": {"gemm_n": 64, "stream_mib": 1},
    "timing": {"repeats": 2},
    "budget": {"seconds": 60, "memory_mib": 512},
    "cnn": {"B": 1, "H": 8, "W": 8, "C_in": 8, "C_out": 8, "K": 3},
}
"""Small sizes for the compute and bandwidth peaks; every roof's sweep still runs at this
machine's measured hierarchy, within a budget of 512 MiB (arrays of at most 64 MiB)."""


@pytest.fixture(scope="session")
def measured_peaks() -> Peaks:
    """This machine's peaks at :data:`SMALL_PEAKS_SIZES`, measured once for the session: the
    slowest setup of the suite (every sweep), which the tests that only need real peaks share."""
    pytest.importorskip("torch")
    from gpuconcepts.kernels import measure_peaks

    return measure_peaks("cpu", presets=SMALL_PEAKS_SIZES)
