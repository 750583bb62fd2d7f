r"""The post's worked questions (Part B, Q10–Q17) as data, each checked against the catalogue.

Every answer in the book is produced from these records: the formula, the inputs, and the
value the post states. The doctests below are the post's answers.

>>> [q.number for q in QUESTIONS]
[10, 11, 12, 13, 14, 15, 16, 17]
>>> question(10).steps[0].value
51200000000
>>> question(10).answer
'51,200,000,000 bytes (51.2 GB, 47.68 GiB)'
>>> question(11).answer
'1,048,576 bytes (1.05 MB, 1 MiB)'
>>> question(12).steps[0].value, question(12).steps[1].value
(8388608, 16777216)
>>> question(12).answer
'8,388,608 MACs (8.39 million); 16,777,216 FLOPs (16.78 million)'
>>> question(13).answer
'2,097,152 bytes (2.1 MB, 2 MiB)'
>>> question(14).answer
'4,718,592 MACs (4.72 million)'
>>> question(15).answer
'78,643,200 MACs (78.64 million)'
>>> [step.value for step in question(16).steps], question(16).ratio
([1000000, 4000000], 4)
>>> question(17).answer
'4,096,000 bytes (4.1 MB, 3.91 MiB)'
>>> all(q.value_matches_post for q in QUESTIONS)
True
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.formula import Formula
from gpuconcepts.formulas import get
from gpuconcepts.units import describe


@dataclass(frozen=True)
class Step:
    """One evaluation inside an answer: a formula, its inputs and the value the post states."""

    formula_name: str
    inputs: tuple[tuple[str, int | float], ...]
    post_value: int

    @property
    def formula(self) -> Formula:
        return get(self.formula_name)

    @property
    def values(self) -> dict[str, int | float]:
        return dict(self.inputs)

    @property
    def value(self) -> int | float:
        """The value computed by the library (not the post's number)."""
        return self.formula(**self.values)

    @property
    def worked(self) -> str:
        """LaTeX derivation: formula = substituted values = result."""
        return self.formula.worked(**self.values)


@dataclass(frozen=True)
class Question:
    """A worked question of the post: its prompt, the steps of its answer, and any ratio."""

    number: int
    title: str
    prompt: str
    steps: tuple[Step, ...]
    post_ratio: int | None = None

    @property
    def ratio(self) -> int | float | None:
        """Last step over first step, for questions that compare two evaluations (Q16)."""
        if self.post_ratio is None:
            return None
        result = Fraction(self.steps[-1].value) / Fraction(self.steps[0].value)
        return int(result) if result.denominator == 1 else float(result)

    @property
    def answer(self) -> str:
        """The answer in words, with units in the book's style."""
        parts = [describe(step.value, step.formula.kind) for step in self.steps]
        if self.post_ratio is not None:
            return f"{' → '.join(parts)}: ×{self.ratio}"
        return "; ".join(parts)

    @property
    def value_matches_post(self) -> bool:
        """True when every computed value (and ratio) equals the number the post prints."""
        same = all(step.value == step.post_value for step in self.steps)
        return same and (self.post_ratio is None or self.ratio == self.post_ratio)


def _step(name: str, post_value: int, **inputs: int | float) -> Step:
    return Step(name, tuple(inputs.items()), post_value)


QUESTIONS: tuple[Question, ...] = (
    Question(
        10,
        "Total embedding memory of a DLRM model",
        "100 million embeddings of dimension 128 in FP32 (4 bytes): how much memory?",
        (_step("embedding_memory", 51_200_000_000, N=100_000_000, d=128, s=4),),
    ),
    Question(
        11,
        "Embedding payload of one DLRM batch",
        "B = 2048 samples, L = 1 row each, d = 128, FP32: how much embedding data per batch?",
        (_step("embedding_payload", 1_048_576, B=2048, L=1, d=128, s=4),),
    ),
    Question(
        12,
        "MACs and FLOPs of an MLP layer",
        "B = 64, d_in = 512, d_out = 256: how many MACs and FLOPs?",
        (
            _step("mlp_macs", 8_388_608, B=64, d_in=512, d_out=256),
            _step("mlp_flops", 16_777_216, B=64, d_in=512, d_out=256),
        ),
    ),
    Question(
        13,
        "Weight memory of an MLP layer",
        "1024 inputs, 512 outputs, FP32 weights: how much memory do the weights take?",
        (_step("mlp_weight_memory", 2_097_152, d_in=1024, d_out=512, s=4),),
    ),
    Question(
        14,
        "MACs of a convolution layer",
        "B = 1, a 32×32 output, a 3×3 kernel, 16 input and 32 output channels: how many MACs?",
        (_step("conv_macs", 4_718_592, B=1, H_out=32, W_out=32, K=3, C_in=16, C_out=32),),
    ),
    Question(
        15,
        "MACs of a vanilla RNN",
        "B = 32, S = 100, d_in = 64, d_h = 128: about how many MACs?",
        (_step("rnn_macs", 78_643_200, B=32, S=100, d_in=64, d_h=128),),
    ),
    Question(
        16,
        "Attention cost when the sequence doubles",
        "A Transformer goes from 1,000 to 2,000 tokens: how do the attention scores change?",
        (
            _step("attention_scores", 1_000_000, S=1000),
            _step("attention_scores", 4_000_000, S=2000),
        ),
        post_ratio=4,
    ),
    Question(
        17,
        "KV cache memory of a Transformer layer",
        "B = 2, S = 1000, d = 512, FP16 (2 bytes): how big is the KV cache of one layer?",
        (_step("kv_cache_memory", 4_096_000, B=2, S=1000, d=512, s=2),),
    ),
)


def question(number: int) -> Question:
    """The worked question with this number (10–17)."""
    for q in QUESTIONS:
        if q.number == number:
            return q
    known = ", ".join(str(q.number) for q in QUESTIONS)
    raise GpuConceptsError(f"no worked question Q{number}; the post's worked questions are {known}")
