"""The API reference's docstrings name a claim only as inline code (``decode-knee``), never
bare, and no value it prints holds a claim key.

The site check ``tests/site/test_prose_site.py`` finds a bare claim key on the built API pages;
this test finds it in seconds, before a docs build, by reading the docstrings of every module
that the reference (docs/api.md and its layers' pages) documents: the module's, and those of
the classes and functions it defines. autodoc also prints the value of each documented
constant (``READS_GEMM_SWEEP = {'mlp-crossover': ...}``), outside inline code: such a value
is read too, and a constant whose value holds a key hides it (``:meta hide-value:``) and says
in words what it holds.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Iterator

import pytest
from test_api_page import api_pages, on_pages, rendered_values

from gpuconcepts.results.registry import CLAIMS

MODULES = sorted(set(on_pages(api_pages())))
# Inline code and roles (``x``, :func:`x`) are code, not prose. A single-backtick `x` is not:
# Sphinx renders it as plain (emphasised) text, where the site check finds a bare key.
_CODE = re.compile(r":[\w:]+:`[^`]+`|``[^`]+``")
# A doctest block (from a ``>>>`` line to the next blank line) is code too.
_DOCTEST = re.compile(r"^\s*>>>.*?(?=^\s*$|\Z)", re.MULTILINE | re.DOTALL)


def _docstrings(module_name: str) -> Iterator[tuple[str, str]]:
    """(qualified name, docstring) of a module and of what it defines, one level into classes."""
    module = importlib.import_module(module_name)
    yield module_name, inspect.getdoc(module) or ""
    for name, member in vars(module).items():
        if getattr(member, "__module__", None) != module_name or name.startswith("_"):
            continue
        yield f"{module_name}.{name}", inspect.getdoc(member) or ""
        if inspect.isclass(member):
            for attr, value in vars(member).items():
                if not attr.startswith("_") and callable(value):
                    yield f"{module_name}.{name}.{attr}", inspect.getdoc(value) or ""


def bare_slugs(text: str) -> list[str]:
    """The claim keys a docstring names outside inline code."""
    prose = _CODE.sub(" ", _DOCTEST.sub(" ", text))
    return [key for key in CLAIMS if re.search(rf"(?<![\w-]){re.escape(key)}(?![\w-])", prose)]


def test_bare_slugs_finds_a_bare_key_only() -> None:
    key = next(iter(CLAIMS))
    assert bare_slugs(f"the {key} claim's sweep") == [key]
    assert bare_slugs(f"the ``{key}`` claim's sweep") == []
    assert bare_slugs(f"the `{key}` claim's sweep") == [key]  # rendered as plain text
    assert bare_slugs(f">>> judge({key!r})\n'{key}'\n\nProse.") == []


def test_the_api_page_documents_modules() -> None:
    assert "gpuconcepts.claims.decode" in MODULES


@pytest.mark.parametrize("module_name", MODULES)
def test_no_bare_claim_key_in_a_docstring(module_name: str) -> None:
    found = {where: keys for where, doc in _docstrings(module_name) if (keys := bare_slugs(doc))}
    assert found == {}


def test_a_shown_value_holding_a_key_is_found() -> None:
    from gpuconcepts.claims.accuracy import READS_GEMM_SWEEP

    assert bare_slugs(repr(READS_GEMM_SWEEP)) == ["mlp-crossover"]  # why it hides its value
    assert "gpuconcepts.claims.accuracy.READS_GEMM_SWEEP" not in dict(
        rendered_values("gpuconcepts.claims.accuracy")
    )


@pytest.mark.parametrize("module_name", MODULES)
def test_no_claim_key_in_a_shown_value(module_name: str) -> None:
    found = {
        where: keys
        for where, value in rendered_values(module_name)
        if (keys := bare_slugs(repr(value)))
    }
    assert found == {}, "hide each value (:meta hide-value:) and say what it holds in words"
