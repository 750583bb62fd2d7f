#!/usr/bin/env python3
# /// script
# dependencies = ["nox"]
# ///
"""Every development task of gpuconcepts, run through nox (pip/virtualenv backend on purpose:
uv does not see the local CPU wheel of torch and would download a multi-GB CUDA build)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import nox

nox.needs_version = ">=2025.10.14"
nox.options.default_venv_backend = "virtualenv"

ROOT = Path(__file__).parent
CONSTRAINTS = ("-c", str(ROOT / "conf" / "constraints.txt"))
DOCS_OUT = ROOT / "docs" / "_build" / "html"


def install(session: nox.Session, *args: str) -> None:
    """Install with the pinned constraints, so torch stays the CPU wheel (README, Development)."""
    session.install(*CONSTRAINTS, *args)


DEBIAN_PACKAGES = {"chromium": "chromium", "node": "nodejs"}
"""The programs sessions take from the system, and the Debian package that brings each."""
_APT_UPDATED: list[bool] = []  # `apt-get update` once per nox run, however many sessions need it


def system_program(session: nox.Session, program: str, path: str | None = None) -> str | None:
    """Where ``program`` is (``path`` when given, else on PATH). A missing one is installed
    with apt-get, as on a fresh CI machine, where this session runs as root and apt-get
    exists; else None, and the caller says what is missing."""
    found = path or shutil.which(program)
    if found and Path(found).exists():
        return found
    if getattr(os, "geteuid", lambda: -1)() != 0 or not shutil.which("apt-get"):
        return None
    if not _APT_UPDATED:
        session.run_install("apt-get", "update", "-qq", external=True)
        _APT_UPDATED.append(True)
    session.run_install(
        "apt-get",
        "install",
        "-y",
        "-qq",
        DEBIAN_PACKAGES[program],
        env={"DEBIAN_FRONTEND": "noninteractive"},
        external=True,
        silent=True,  # apt's progress; shown whole when it fails
    )
    return shutil.which(program)


@nox.session(python="3.11")
def tests(session: nox.Session) -> None:
    """Run the unit, property and doctest suite (torch cross-checks included)."""
    install(session, "-e", ".[test,kernels]")
    # Node runs the what-if panels' generated script (tests/test_whatif.py, skipped without it)
    system_program(session, "node")
    session.run("pytest", "-m", "not site", *session.posargs)


@nox.session(python="3.11")
def lint(session: nox.Session) -> None:
    """ruff (check and format) and mypy --strict on src."""
    install(
        session,
        "-e",
        ".[kernels]",
        "ruff",
        "mypy",
        "matplotlib",
        "sp-repo-review",
        "repo-review[cli]",
    )
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy", "--strict", "src")
    session.run("repo-review", ".")


@nox.session(python="3.11")
def docs(session: nox.Session) -> None:
    """Build the executed book into docs/_build/html (warnings are errors)."""
    # pip byte-compiles every file it installs, 1 GB with torch: 43 s of a 70 s install on a
    # 2-core machine. The build compiles only what its pages import, once, into this session's
    # own venv, which is why bytecode writes are allowed here even where
    # PYTHONDONTWRITEBYTECODE is set (it would make every page's kernel compile torch again).
    session.env["PYTHONDONTWRITEBYTECODE"] = None
    install(session, "--no-compile", "-e", ".[docs]")
    # -j 2: two pages at a time; docs/conf.py reads the pages that time something first, alone
    session.run(
        "sphinx-build",
        "-j",
        "2",
        "-W",
        "--keep-going",
        "-b",
        "html",
        "docs",
        str(DOCS_OUT),
        *session.posargs,
    )
    session.log(f"The book is at {DOCS_OUT / 'index.html'}")
    print(DOCS_OUT)


@nox.session(python="3.11", default=False)
def site(session: nox.Session) -> None:
    """Drive the built book in headless Debian Chromium (run `nox -s docs` first)."""
    if not (DOCS_OUT / "index.html").exists():
        session.error(f"{DOCS_OUT} has no index.html: run `nox -s docs` first")
    chromium = system_program(session, "chromium", os.environ.get("CHROMIUM"))
    if chromium is None:
        session.error("Debian's chromium is needed: apt-get install -y chromium")
    # Playwright drives that chromium; it must never fetch a browser build of its own.
    env = {"PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1", "CHROMIUM": str(chromium)}
    session.install(*CONSTRAINTS, "-e", ".[site]", env=env)
    session.run("pytest", "-m", "site", "tests/site", *session.posargs, env=env)


@nox.session(python="3.11", default=False)
def bench(session: nox.Session) -> None:
    """Benchmarks that report ratios against a peer measured in the same run."""
    install(session, "-e", ".[kernels]")
    for script in sorted((ROOT / "benchmarks").glob("bench_*.py")):
        session.run("python", str(script), *session.posargs)


@nox.session(python="3.11", default=False)
def audit(session: nox.Session) -> None:
    """pip-audit every pin of conf/constraints.txt against PyPI's advisories (needs that API)."""
    install(session, "pip-audit")
    pins = ROOT / "conf" / "constraints.txt"
    report = Path(session.create_tmp()) / "pip-audit.json"
    # Every line is an exact pin, so no resolution (and no pip) is needed: only the advisory
    # look-up goes to the network. Extra arguments pass through, e.g. `-- -s osv`.
    session.run(
        "pip-audit",
        "-r",
        str(pins),
        "--no-deps",
        "--disable-pip",
        "--progress-spinner",
        "off",
        "--format",
        "json",
        "--output",
        str(report),
        *session.posargs,
        success_codes=[0, 1],
    )
    dependencies = json.loads(report.read_text())["dependencies"]
    vulnerable = [d for d in dependencies if d.get("vulns")]
    skipped = [d for d in dependencies if d.get("skip_reason")]
    for dep in vulnerable:
        ids = ", ".join(
            f"{v['id']} (fixed in {v.get('fix_versions') or 'no release'})" for v in dep["vulns"]
        )
        session.warn(f"{dep['name']} {dep['version']}: {ids}")
    if vulnerable:
        session.error(f"{len(vulnerable)} of {len(dependencies)} pins have known vulnerabilities")
    if skipped and len(skipped) == len(dependencies):
        session.error(
            f"audit impossible here: the advisory service answered for none of the "
            f"{len(dependencies)} pins ({skipped[0]['skip_reason']}). A machine that reaches "
            "only the package index (no JSON API, no OSV) cannot audit; run `nox -s audit` "
            "where PyPI's JSON API is reachable, or `nox -s audit -- -s osv` where OSV is."
        )
    if skipped:
        names = ", ".join(d["name"] for d in skipped)
        session.error(f"{len(skipped)} of {len(dependencies)} pins could not be audited: {names}")
    session.log(f"{len(dependencies)} pins audited: no known vulnerabilities")


@nox.session(python="3.11", default=False)
def build(session: nox.Session) -> None:
    """Build the sdist and wheel."""
    install(session, "build")
    session.run("python", "-m", "build")


if __name__ == "__main__":
    nox.main()
