"""The prose checks the site test applies to every built page, and the README's shape."""

from __future__ import annotations

import re
from pathlib import Path

from prose import (
    MAX_WORDS,
    blocks,
    long_sentences,
    lowercase_openings,
    repeated_words,
    sentences,
    slugs_in,
    split_sentences,
    word_count,
)

ROOT = Path(__file__).resolve().parents[1]
ARTICLE = '<article class="bd-article">{}</article>'


def test_only_the_article_is_read() -> None:
    html = "<nav><p>Menu item.</p></nav>" + ARTICLE.format("<p>Body text.</p>") + "<p>Footer.</p>"
    assert sentences(html) == ["Body text."]


def test_code_blocks_math_and_tables_are_not_prose() -> None:
    html = ARTICLE.format(
        '<div class="highlight"><pre>x = 1. y = 2.</pre></div>'
        '<div class="math notranslate">\\[a. b. c.\\]</div>'
        "<table><tr><td>One. Two.</td></tr></table><p>Only this.</p>"
    )
    assert blocks(html) == ["Only this."]


def test_a_sentence_never_runs_across_a_block() -> None:
    html = "<h2>Heading</h2><p>first part</p><ul><li>an item</li></ul>"
    assert sentences(html) == ["Heading", "first part", "an item"]


def test_decimals_units_and_lowercase_continuations_do_not_end_a_sentence() -> None:
    text = "A lookup ran at 1.9x DRAM. The floor is 13.5 µs. so on. Next one!"
    assert split_sentences(text) == [
        "A lookup ran at 1.9x DRAM.",
        "The floor is 13.5 µs. so on.",
        "Next one!",
    ]


def test_words_are_counted_as_a_reader_sees_them() -> None:
    assert word_count("x — y") == 2
    assert word_count("It ran 2.7× the floor (13.5 µs).") == 7


def test_the_limit_is_sixty_words() -> None:
    at, over = " ".join(["word"] * MAX_WORDS) + ".", " ".join(["word"] * (MAX_WORDS + 1)) + "."
    assert long_sentences(f"<p>{at}</p>") == []
    assert long_sentences(f"<p>{over}</p>") == [over]


def test_inline_code_counts_as_words_but_is_not_checked_for_repeats_or_slugs() -> None:
    html = "<p>Run <code>verify verify</code> on mlp-crossover-like input.</p>"
    assert word_count(sentences(html)[0]) == 6
    assert repeated_words(html) == []
    assert slugs_in(html, ["mlp-crossover"]) == []


def test_a_repeated_word_pair_is_found() -> None:
    html = "<p>Three claims: undecided: undecided: undecided.</p>"
    assert len(repeated_words(html)) == 2


def test_a_slug_in_a_sentence_is_found() -> None:
    html = "<p>Of the claims, rnn-loop-vs-gemm fails.</p>"
    assert slugs_in(html, ["rnn-loop-vs-gemm", "mlp-crossover"]) == ["rnn-loop-vs-gemm"]


def test_a_glued_name_opening_a_sentence_in_lower_case_is_found() -> None:
    html = "<p>It ran. the NVIDIA H200 bfloat16 run timed attention.</p><p>which here is 4.</p>"
    assert lowercase_openings(html) == ["the NVIDIA"]
    assert lowercase_openings("<p>In the NVIDIA H200 run, it ran. Its GPU ran.</p>") == []


# The README: a pitch, the two commands, examples and links (issue 37).
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_is_at_most_eight_kilobytes() -> None:
    assert len(README.encode()) <= 8 * 1024


def test_the_readme_gives_the_build_and_the_test_command() -> None:
    commands = re.findall(r"```bash\n(.*?)\n```", README, flags=re.DOTALL)
    assert commands == ["python -m pip install nox && nox -s docs", "nox -s lint tests docs site"]
    assert "nox -s lint tests docs site" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_the_readme_links_resolve() -> None:
    for target in re.findall(r"`(docs/[\w.-]+\.md)`|\]\(([\w.-]+\.md)\)", README):
        path = ROOT / (target[0] or target[1])
        assert path.is_file(), path


def test_the_file_map_lives_in_architecture_md() -> None:
    architecture = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    for module in ("roofline.py", "claims/", "render/", "analysis/", "book.py"):
        assert module in architecture


# Issue 37: "undecided: undecided:" three times on the claims page.
def test_an_undecided_claim_says_undecided_once() -> None:
    from gpuconcepts.render.markdown import markdown_claim, markdown_claims_table
    from gpuconcepts.results.claim import example

    undecided = example(2.5, interval=(1.8, 3))
    assert undecided.verdict == "undecided"
    for table in (markdown_claim(undecided), markdown_claims_table([undecided])):
        cells = "".join(f"<td>{cell}</td>" for cell in table.split("|"))
        assert repeated_words(f"<table><tr>{cells}</tr></table>") == [], table
