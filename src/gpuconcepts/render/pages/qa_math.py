"""The worked questions page: each of the post's questions Q10–Q17 in our own words, its
formulas and its worked answer, every number from :mod:`gpuconcepts.questions`.

>>> glue = questions()
>>> glue["q13_prompt"][:60]
'A layer maps $d_{in} = 1{,}024$ inputs to $d_{out} = 512$ ou'
>>> glue["q11_batch"]
'1 MiB'
"""

from __future__ import annotations

from gpuconcepts import units
from gpuconcepts.questions import QUESTIONS, question
from gpuconcepts.render.markdown import worked_answer
from gpuconcepts.render.pages import Glue

_SYMBOLS = {
    "d_in": "d_{in}",
    "d_out": "d_{out}",
    "d_h": "d_h",
    "H_out": "H_{out}",
    "W_out": "W_{out}",
    "C_in": "C_{in}",
    "C_out": "C_{out}",
}


def value(q: int, name: str, step: int = 0) -> str:
    """One input of a question as inline math.

    >>> value(12, "d_in"), value(16, "S", 1)
    ('$d_{in} = 512$', '$S = 2{,}000$')
    """
    number = question(q).steps[step].values[name]
    return f"${_SYMBOLS.get(name, name)} = {units.latex_number(number)}$"


def dtype(q: int) -> str:
    """The data type of a question's values, named from its element size s.

    >>> dtype(10)
    'FP32 ($s = 4$ bytes per value)'
    """
    size = question(q).steps[0].values["s"]
    return f"{ {4: 'FP32', 2: 'FP16'}[int(size)] } ({value(q, 's')} bytes per value)"


def prompts() -> dict[int, str]:
    """The post's questions in our own words, by number."""
    v = value
    n10 = units.in_words(question(10).steps[0].values["N"])
    return {
        10: f"A recommendation model keeps {n10} "
        f"embedding rows ({v(10, 'N')}), each a vector of {v(10, 'd')} numbers stored in "
        f"{dtype(10)}. How much memory does the whole table occupy?",
        11: f"One batch holds {v(11, 'B')} requests, and each looks up on average {v(11, 'L')} "
        f"embedding row of {v(11, 'd')} values in {dtype(11)}. How many bytes of embeddings "
        "does the batch read?",
        12: f"A fully connected layer receives a batch of {v(12, 'B')} samples with "
        f"{v(12, 'd_in')} input features each and produces {v(12, 'd_out')} outputs per "
        "sample. Count its multiply-accumulates (MACs) and its FLOPs.",
        13: f"A layer maps {v(13, 'd_in')} inputs to {v(13, 'd_out')} outputs and stores every "
        f"weight in {dtype(13)}. How much memory do its weights need?",
        14: f"A convolution runs on a batch of {v(14, 'B')} and produces an output map of "
        f"{v(14, 'H_out')} by {v(14, 'W_out')} pixels, using a square kernel of side "
        f"{v(14, 'K')}, {v(14, 'C_in')} input channels and {v(14, 'C_out')} output channels. "
        "How many MACs does it perform?",
        15: f"A plain (vanilla) RNN processes {v(15, 'B')} sequences of {v(15, 'S')} steps, "
        f"with inputs of size {v(15, 'd_in')} and a hidden state of size {v(15, 'd_h')}. "
        "Roughly how many MACs does it perform?",
        16: f"A Transformer's input grows from {v(16, 'S', 0)} to {v(16, 'S', 1)} tokens. What "
        "happens to the number of attention scores, and so to the cost of full attention?",
        17: f"A Transformer layer with standard multi-head attention is generating "
        f"{v(17, 'B')} sequences that have reached {v(17, 'S')} tokens, with model width "
        f"{v(17, 'd')} and values in {dtype(17)}. How much memory does this layer's KV cache "
        "hold?",
    }


def questions() -> Glue:
    """Every question's prompt, formulas and worked answer, and Q11's two sizes."""
    text = prompts()
    glue: Glue = {}
    for q in QUESTIONS:
        glue[f"q{q.number}_prompt"] = text[q.number]
        used = list(dict.fromkeys(step.formula for step in q.steps))
        glue[f"q{q.number}_formula"] = "\n\n".join(f"$${f.equation()}$$" for f in used)
        answer = "\n\n".join(worked_answer(step.formula, **step.values) for step in q.steps)
        if q.ratio is not None:
            answer += f"\n\nThe ratio of the two is **{units.plain_number(q.ratio)}**."
        glue[f"q{q.number}_answer"] = answer
    table, batch = question(10).steps[0], question(11).steps[0]
    glue["q11_table"] = units.decimal_bytes(table.value)
    glue["q11_batch"] = units.binary_bytes(batch.value)
    return glue
