"""Checks of the book's prose as a reader meets it: sentences, their length, repeated words and
identifiers that leaked into sentences.

Pure functions over a page's HTML (the standard library's parser; nothing here imports torch,
matplotlib or Sphinx). Code blocks, math and tables are not prose and are left out; inline code
counts as words in a sentence. ``tests/test_prose.py`` checks the functions and
``tests/site/test_prose_site.py`` applies them to every built page.

>>> html = "<article class='bd-article'><p>One short sentence. Another one here.</p></article>"
>>> sentences(html)
['One short sentence.', 'Another one here.']
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from html.parser import HTMLParser

#: The longest sentence a page may hold, in words.
MAX_WORDS = 60

# Elements whose text is not prose: code, math, tables, scripts and the theme's furniture.
_SKIP_TAGS = frozenset({"pre", "table", "script", "style", "nav", "svg", "math", "mjx-container"})
_SKIP_CLASSES = frozenset(
    {"highlight", "math", "headerlink", "cell_input", "toctree-wrapper", "sig"}
)  # "sig": an API signature, which is code
# Elements that end a block of text (a sentence never runs across them).
_BLOCK_TAGS = frozenset(
    {
        "p", "li", "ul", "ol", "dl", "dt", "dd", "div", "section", "blockquote", "figure",
        "figcaption", "caption", "br", "summary", "details", "aside", "h1", "h2", "h3", "h4",
        "h5", "h6", "hr", "img", "article",
    }
)  # fmt: skip
_CELL_TAGS = frozenset({"td", "th", "tr", "table"})
_VOID_TAGS = frozenset({"br", "img", "hr", "input", "meta", "link", "wbr", "source", "col"})
# A sentence ends at . ! or ? (a closing quote or bracket may follow) before a space and
# anything but a lowercase letter.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[^a-z\s])")
_WORD = re.compile(r"\S*[A-Za-z0-9]\S*")
_DOUBLED = frozenset({"had", "that"})  # "it had had", "that that": English, not a slip
_PUNCTUATION = "*_:;,.!?()[]{}\"'“”‘’—–-"


@dataclass
class _Blocks(HTMLParser):
    """Collects the text of each block; inline code is kept apart in ``code_free``."""

    whole_page: bool
    tables: bool = False
    blocks: list[str] = field(default_factory=list)
    code_free: list[str] = field(default_factory=list)
    _text: list[str] = field(default_factory=list)
    _plain: list[str] = field(default_factory=list)
    _skip: list[str] = field(default_factory=list)
    _code: int = 0
    _inside: int = 0

    def __post_init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self._inside = 1 if self.whole_page else 0

    def _flush(self) -> None:
        text = " ".join("".join(self._text).split())
        if text:
            self.blocks.append(text)
            self.code_free.append(" ".join("".join(self._plain).split()))
        self._text, self._plain = [], []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = set((dict(attrs).get("class") or "").split())
        if tag == "article" and "bd-article" in classes:
            self._inside += 1
        if self._skip:
            if tag == self._skip[-1]:
                self._skip.append(tag)
            return
        if not self._inside or (tag in _VOID_TAGS and tag not in _BLOCK_TAGS):
            return
        if tag in _BLOCK_TAGS or (self.tables and tag in _CELL_TAGS):
            self._flush()
        if tag in _VOID_TAGS or (self.tables and tag == "table"):
            return
        if tag in _SKIP_TAGS or classes & _SKIP_CLASSES:
            if "math" in classes and tag == "span":
                self._text.append(" (math) ")
                self._plain.append(" (math) ")
            else:
                self._flush()
            self._skip.append(tag)
        elif tag == "code":
            self._code += 1

    def handle_endtag(self, tag: str) -> None:
        if self._skip:
            if tag == self._skip[-1]:
                self._skip.pop()
            return
        if tag == "code" and self._code:
            self._code -= 1
        if tag in _BLOCK_TAGS or (self.tables and tag in _CELL_TAGS):
            self._flush()
        if tag == "article" and self._inside and not self.whole_page:
            self._inside -= 1

    def handle_data(self, data: str) -> None:
        if self._inside and not self._skip:
            self._text.append(data)
            self._plain.append(" (code) " if self._code else data)


def _parse(html: str, *, tables: bool = False) -> _Blocks:
    parser = _Blocks(whole_page="bd-article" not in html, tables=tables)
    parser.feed(html)
    parser.close()
    parser._flush()
    return parser


def blocks(html: str) -> list[str]:
    """The text of each prose block of a page (its article only, when it has one), whitespace
    collapsed; code blocks, display math and tables left out, inline math as ``(math)``.

    >>> blocks("<p>A <code>x = 1</code> and <span class='math'>\\\\(y\\\\)</span>.</p>"
    ...        "<pre>not prose</pre><table><tr><td>nor this</td></tr></table><h2>Title</h2>")
    ['A x = 1 and (math) .', 'Title']
    """
    return _parse(html).blocks


def split_sentences(text: str) -> list[str]:
    """One block of text as sentences. A sentence ends at ``.``, ``!`` or ``?`` followed by a
    space and anything but a lowercase letter (so ``1.9x``, ``e.g. a`` and ``docs/runs``
    never end one).

    >>> split_sentences("It is 1.9x as fast. Why? Because e.g. rows stream. (It is.)")
    ['It is 1.9x as fast.', 'Why?', 'Because e.g. rows stream.', '(It is.)']
    """
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def word_count(sentence: str) -> int:
    """The words of a sentence: the runs of non-space characters that hold a letter or a digit.

    >>> word_count("A kernel took 13.5 µs — 2.7× the floor.")
    8
    """
    return len(_WORD.findall(sentence))


def sentences(html: str) -> list[str]:
    """Every sentence of a page's prose, in order."""
    return [s for block in blocks(html) for s in split_sentences(block)]


def long_sentences(html: str, limit: int = MAX_WORDS) -> list[str]:
    """The sentences of a page longer than ``limit`` words.

    >>> long_sentences("<p>" + "word " * 61 + ".</p><p>" + "word " * 60 + ".</p>")[0][:9]
    'word word'
    >>> len(long_sentences("<p>" + "word " * 60 + ".</p>"))
    0
    """
    return [s for s in sentences(html) if word_count(s) > limit]


# A run's or a device's name glued in at the start of a sentence ("the NVIDIA H200 bfloat16
# run timed ...") opens it in lower case; a continuation after display math ("which here is",
# "its FLOPs at the peak") is lower case too, but never an article before a capitalised name.
_LOWER_OPENING = re.compile(
    r"(?:^|(?<!e\.g)(?<!i\.e)(?<!vs)(?<!al)[.!?] )((?:the|a|an) [A-Z]\S*)"
)  # not after "e.g." and the like


def lowercase_openings(html: str) -> list[str]:
    """The sentences of a page that open with a lower-case article before a capitalised name:
    a name glued into the page where a sentence begins.

    >>> lowercase_openings("<p>the NVIDIA H200 run timed it. The CPU run did too.</p>"
    ...                    "<p>which here is small. It ran, e.g. the GPU ran. the GPU ran.</p>")
    ['the NVIDIA', 'the GPU']
    """
    return [found for block in blocks(html) for found in _LOWER_OPENING.findall(block)]


def repeated_words(html: str) -> list[str]:
    """Each place where a word follows itself (``undecided: undecided``, ``the the``), with its
    neighbours. A colon or a comma between the two still counts; a sentence or clause end
    (``it; it``) or a bracket (``peaks (Peaks)``, ``prefill (prefill FLOP/s``) does not, nor
    does English's own ``had had``. Inline code is not prose, and each table cell is read as a
    block of its own.

    >>> repeated_words("<p>Verdict undecided: undecided: it straddles.</p><p>A B c.</p>")
    ['Verdict undecided: undecided: it']
    >>> repeated_words("<p>Run <code>x x</code> twice.</p>")
    []
    >>> repeated_words("<p>It had had one; one more (more or less) with it; it stays.</p>")
    []
    >>> repeated_words("<table><tr><td>**undecided**: undecided: a</td><td>b</td></tr></table>")
    ['**undecided**: undecided: a']
    """
    found: list[str] = []
    for text in _parse(html, tables=True).code_free:
        tokens = text.split()
        words = [_bare(t) for t in tokens]
        found.extend(
            " ".join(tokens[max(0, i - 2) : i + 2])
            for i in range(1, len(words))
            if words[i] and words[i] == words[i - 1] and _joined(tokens[i - 1], tokens[i])
        )
    return found


def _bare(token: str) -> str:
    """A token without the punctuation around it, lowercased; "" unless it holds a letter.

    >>> _bare("**Undecided**:"), _bare("FLOP/byte"), _bare("(FLOP/s"), _bare("1.5")
    ('undecided', 'flop/byte', 'flop/s', '')
    """
    word = token.strip(_PUNCTUATION).lower()
    return word if any(c.isalpha() for c in word) else ""


def _joined(first: str, second: str) -> bool:
    """Whether two equal words read as one said twice: nothing but a colon, a comma or
    emphasis between them, and not a word English doubles."""
    if {first, second} & {"(code)", "(math)"} or _bare(first) in _DOUBLED:
        return False
    return not first.endswith((";", ".", "!", "?", ")", "]")) and not second.startswith(("(", "["))


def slugs_in(html: str, slugs: Iterable[str]) -> list[str]:
    """The slugs (identifiers such as a claim's registry key) a page's sentences name outside
    inline code.

    >>> slugs_in("<p>The claim mlp-crossover holds.</p><p>See <code>mlp-crossover</code>.</p>",
    ...          ["mlp-crossover", "kv-cache-exact"])
    ['mlp-crossover']
    """
    wanted = sorted(set(slugs), key=len, reverse=True)
    found: list[str] = []
    for text in _parse(html).code_free:
        found.extend(
            slug for slug in wanted if re.search(rf"(?<![\w-]){re.escape(slug)}(?![\w-])", text)
        )
    return found
