"""Issue 37: the glossary is linked from first use. On each chapter, the first time the prose
names a glossary term it links to the term's entry (the ``{term}`` role); a figure's caption,
a heading, code and glued values are not prose the reader follows a link from."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"

CHAPTERS = (
    "gpu-basics",
    "questions",
    "roofline",
    "claims",
    "dlrm",
    "mlp",
    "cnn",
    "rnn",
    "transformer",
    "model",
    "comparison",
    "bound",
    "hardware",
    "gpu",
    "distributed",
    "analyze",
    "devices",
    "method",
)
"""The chapters of "The comparison", the analyze page and the devices and method appendices.
The roofline and claims pages are another session's to change."""

FORMS: dict[str, tuple[str, ...]] = {
    "Arithmetic intensity": (r"(?i:arithmetic intensit(?:y|ies))", r"(?i:intensit(?:y|ies))"),
    "Activation memory": (r"(?i:activation memory)",),
    "Bubble": (r"(?i:bubbles?)",),
    "Cold start": (r"(?i:cold[- ]starts?)",),
    "cuBLAS and oneDNN": (r"cuBLAS", r"oneDNN"),
    "FlashAttention": (r"(?i:flash[- ]?attention)",),
    "FLOPs per token": (r"(?i:FLOPs per token)",),
    "GEMM": (r"GEMMs?",),
    "GQA": (r"GQA", r"(?i:grouped-query attention)"),
    "HBM": (r"HBM",),
    "IQR": (r"IQRs?",),
    "Knee": (r"(?i:knees?)",),
    "KV cache": (r"(?i:KV[- ]caches?)",),
    "Latency floor": (r"(?i:latency floors?)",),
    "MQA": (r"MQA", r"(?i:multi-query attention)"),
    "Not visible": (r"(?i:not visible)",),
    "Overhead": (r"(?i:overhead)",),
    "Pass region": (r"(?i:pass regions?)",),
    "Pipeline parallelism": (r"(?i:pipeline parallelism)",),
    "Ridge point": (r"(?i:ridge points?)",),
    "Roofline": (r"(?i:rooflines?)",),
    "Sector": (r"(?i:sectors?)",),
    "SM": (r"SMs?", r"(?i:streaming multiprocessors?)"),
    "STREAM": (r"STREAM",),
    "Tensor core": (r"(?i:tensor cores?)",),
    "Tensor parallelism": (r"(?i:tensor parallelism)",),
    "Working set": (r"(?i:working[- ]sets?)",),
    "ZeRO": (r"ZeRO",),
}
"""Each glossary entry and the words that name it in prose."""


def glossary_terms() -> list[str]:
    """The entries of docs/glossary.md's ``{glossary}`` block, as the book defines them."""
    text = (DOCS / "glossary.md").read_text(encoding="utf-8")
    block = text.split("```{glossary}", 1)[1].split("```", 1)[0]
    return [line.strip() for line in block.splitlines() if line and not line[0].isspace()]


_FENCE = re.compile(r"^(`{3,}|:{3,})\s*(\{[\w:-]+\})?")
_PROSE_DIRECTIVES = {None, "{admonition}", "{dropdown}", "{exercise}", "{note}", "{tip}"}
_TERM = re.compile(r"\{term\}`([^`]*)`")
_DROP = re.compile(
    r"\{(?!term\})[\w:-]+\}`[^`]*`"  # any other role: glue, doc, ref, cite, math
    r"|`[^`]*`"  # inline code
    r"|\$\$.*?\$\$|\$[^$\n]+\$"  # math
    r"|\[([^\]]*)\]\([^)]*\)"  # a Markdown link: its text is a link already
)


def prose(page: str) -> str:
    """The page's prose: outside code, glue, math, figures, headings and directive options;
    ``{term}`` roles are kept as ``\\x00target\\x00``."""
    text = page.split("\n---\n", 1)[1] if page.startswith("---\n") else page
    kept, stack = [], []
    for line in text.splitlines():
        fence = _FENCE.match(line)
        if fence and stack and fence.group(1) == stack[-1][0] and not fence.group(2):
            stack.pop()
            continue
        if fence and (fence.group(2) or not stack or fence.group(1)[0] != stack[-1][0][0]):
            stack.append((fence.group(1), fence.group(2)))
            continue
        if any(directive not in _PROSE_DIRECTIVES for _, directive in stack):
            continue
        if stack and stack[-1][0].startswith("`") and stack[-1][1] is None:
            continue  # a plain code block
        if line.startswith(("#", "%", ":")) or re.match(r"^\(.*\)=$", line):
            continue
        kept.append(line)
    joined = "\n".join(kept)

    def target(role: re.Match[str]) -> str:
        inner = role.group(1)
        found = re.search(r"<([^>]*)>$", inner)
        return f"\x00{(found.group(1) if found else inner).strip().lower()}\x00"

    joined = _TERM.sub(target, joined)
    return _DROP.sub(" ", joined)


def first_uses(page: str) -> dict[str, tuple[bool, str]]:
    """Each glossary term the prose names: whether its first naming is a ``{term}`` link, and
    the words around it."""
    text = prose(page)
    out = {}
    for term, forms in FORMS.items():
        linked = text.find(f"\x00{term.lower()}\x00")
        plain = [m for form in forms for m in re.finditer(rf"\b{form}\b", text)]
        unlinked = min((m.start() for m in plain), default=-1)
        if linked < 0 and unlinked < 0:
            continue
        first = linked >= 0 and (unlinked < 0 or linked < unlinked)
        at = linked if first else unlinked
        out[term] = (first, " ".join(text[max(0, at - 40) : at + 40].split()))
    return out


def test_every_glossary_entry_has_its_words() -> None:
    assert sorted(FORMS) == sorted(glossary_terms())


def test_the_checker_tells_a_linked_first_use_from_a_plain_one() -> None:
    linked = "A {term}`ridge point` is where... the ridge point again.\n"
    assert first_uses(linked)["Ridge point"][0]
    plain = "The ridge point, then the {term}`ridge point <Ridge point>`.\n"
    assert not first_uses(plain)["Ridge point"][0]
    hidden = "```{code-cell} python\nridge point\n```\n# The ridge point\nA {term}`ridge point`.\n"
    assert first_uses(hidden)["Ridge point"][0]
    inside = ":::{admonition} Takeaways\n* the KV cache grows\n:::\n"
    assert not first_uses(inside)["KV cache"][0]
    assert "Overhead" not in first_uses("no such word {glue:md}`overhead` here\n")


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_each_glossary_term_is_linked_where_a_chapter_first_names_it(chapter: str) -> None:
    page = (DOCS / f"{chapter}.md").read_text(encoding="utf-8")
    unlinked = {term: words for term, (first, words) in first_uses(page).items() if not first}
    assert not unlinked, unlinked
