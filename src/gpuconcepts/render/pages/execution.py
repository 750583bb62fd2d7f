"""The build page: the machine and the libraries the book was executed with.

>>> rows = machine_rows("cpu", "0123abcd")
>>> rows[0][1].startswith("cpu ("), rows[1], rows[4][1], rows[-1][0]
(True, ['device class (kernel presets)', 'cpu'], '`0123abcd`', 'jupyter-cache')
"""

from __future__ import annotations

import platform
import sys
from importlib.metadata import PackageNotFoundError, version

from gpuconcepts.measure.devices import device_name
from gpuconcepts.render.markdown import markdown_table
from gpuconcepts.sizes import device_class

PACKAGES = (
    "gpuconcepts",
    "torch",
    "numpy",
    "sympy",
    "matplotlib",
    "sphinx",
    "myst-nb",
    "sphinx-book-theme",
    "jupyter-cache",
)
"""The libraries the table names, in its order."""


def installed(package: str) -> str:
    """The installed version of ``package``, or ``"not installed"``.

    >>> installed("no-such-package-here")
    'not installed'
    """
    try:
        return version(package)
    except PackageNotFoundError:  # a notebook outside the book's build (Colab) needs no Sphinx
        return "not installed"


def machine_rows(device: str, source_hash: str) -> list[list[str]]:
    """What ran the pages: the device, its preset class, platform, Python, the hash of the
    executed sources (``book.package_hash()``, the cache key), then each library's version."""
    rows = [
        ["device", device_name(device)],
        ["device class (kernel presets)", device_class(device)],
        ["platform", platform.platform()],
        ["python", sys.version.split()[0]],
        ["hash of the executed sources (cache key)", f"`{source_hash}`"],
    ]
    return rows + [[package, installed(package)] for package in PACKAGES]


def machine_table(device: str, source_hash: str) -> str:
    """:func:`machine_rows` as the page's Markdown table."""
    return markdown_table(["What", "Value"], machine_rows(device, source_hash))
