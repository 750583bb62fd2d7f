"""The build's one extra step: ship ``conf/presets.toml`` inside the package.

``conf/presets.toml`` is the one copy of every size (the repository holds no second copy and
no link). A wheel carries it as ``gpuconcepts/presets.toml``, copied here at build time; an
editable install and ``PYTHONPATH=src`` read ``conf/presets.toml`` of the checkout itself
(``gpuconcepts.sizes.presets_path``). Everything else is in ``pyproject.toml``.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

PRESETS = Path(__file__).resolve().parent / "conf" / "presets.toml"


class BuildWithPresets(build_py):  # type: ignore[misc]
    """``build_py``, then the presets file copied into the built package."""

    def run(self) -> None:
        super().run()
        if not self.editable_mode:  # an editable install reads conf/ where it is
            target = Path(self.build_lib) / "gpuconcepts" / "presets.toml"
            self.mkpath(str(target.parent))
            self.copy_file(str(PRESETS), str(target))


setup(cmdclass={"build_py": BuildWithPresets})
