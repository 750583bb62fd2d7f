"""Every development task of gpuconcepts, run through nox (pip/virtualenv backend on purpose:
uv does not see the local CPU wheel of torch and would download a multi-GB CUDA build)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nox

nox.options.default_venv_backend = "virtualenv"
nox.options.sessions = ["lint", "tests", "docs"]

ROOT = Path(__file__).parent
CONSTRAINTS = ("-c", str(ROOT / "conf" / "constraints.txt"))
DOCS_OUT = ROOT / "docs" / "_build" / "html"


def install(session: nox.Session, *args: str) -> None:
    """Install with the pinned constraints, so torch stays the CPU wheel (see DEVELOPERS.md)."""
    session.install(*CONSTRAINTS, *args)


@nox.session(python="3.11")
def tests(session: nox.Session) -> None:
    """Run the unit, property and doctest suite (torch cross-checks included)."""
    install(session, "-e", ".[test,kernels]")
    session.run("pytest", "-m", "not site", *session.posargs)


@nox.session(python="3.11")
def lint(session: nox.Session) -> None:
    """ruff (check and format) and mypy --strict on src."""
    install(
        session, "-e", ".[kernels]", "ruff", "mypy", "matplotlib", "sp-repo-review", "repo-review"
    )
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy", "--strict", "src")
    session.run("repo-review", ".")


@nox.session(python="3.11")
def docs(session: nox.Session) -> None:
    """Build the executed book into docs/_build/html (warnings are errors)."""
    install(session, "-e", ".[docs]")
    session.run(
        "sphinx-build", "-W", "--keep-going", "-b", "html", "docs", str(DOCS_OUT), *session.posargs
    )
    session.log(f"The book is at {DOCS_OUT / 'index.html'}")
    print(DOCS_OUT)


@nox.session(python="3.11")
def site(session: nox.Session) -> None:
    """Drive the built book in headless Debian Chromium (run `nox -s docs` first)."""
    if not (DOCS_OUT / "index.html").exists():
        session.error(f"{DOCS_OUT} has no index.html: run `nox -s docs` first")
    chromium = shutil.which("chromium") or os.environ.get("CHROMIUM")
    if not chromium:
        session.error("Debian's chromium is needed: apt-get install -y chromium")
    install(session, "-e", ".[site]")
    session.run("pytest", "-m", "site", "-p", "no:doctest", "tests/site", *session.posargs)


@nox.session(python="3.11")
def bench(session: nox.Session) -> None:
    """Benchmarks that report ratios against a peer measured in the same run."""
    install(session, "-e", ".[kernels]")
    for script in sorted((ROOT / "benchmarks").glob("bench_*.py")):
        session.run("python", str(script), *session.posargs)


@nox.session(python="3.11")
def audit(session: nox.Session) -> None:
    """pip-audit the pinned constraints for known vulnerabilities."""
    install(session, "pip-audit")
    session.run(
        "pip-audit",
        "--strict",
        "-r",
        str(ROOT / "conf" / "constraints.txt"),
        "--no-deps",
        "--disable-pip",
    )


@nox.session(python="3.11")
def build(session: nox.Session) -> None:
    """Build the sdist and wheel."""
    install(session, "build")
    session.run("python", "-m", "build")
