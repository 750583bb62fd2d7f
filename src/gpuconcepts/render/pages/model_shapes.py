"""The model page's shapes and examples: the three published shapes it costs, the GPU of its
tables (the H100), the examples' constants, and each shape's accounting
(:func:`gpuconcepts.model.account`), which the page's parts share.

>>> list(MODELS)
['GPT-2 small', 'Llama-2-7B-like', 'Llama-3-8B-like']
"""

from __future__ import annotations

from gpuconcepts.hardware import GPUS
from gpuconcepts.model import PRESETS, ModelShape, ModelTable, Serving, account

MODELS: dict[str, ModelShape] = {
    "GPT-2 small": PRESETS["gpt2-small"],
    "Llama-2-7B-like": PRESETS["llama-2-7b-like"],
    "Llama-3-8B-like": PRESETS["llama-3-8b-like"],
}
"""The page's three shapes, by the names it shows."""

H100 = GPUS["H100 SXM"]
"""The GPU of the ZeRO table, the serving tables and most exercises."""

ADAM_ITEMS = (
    ("16-bit weights", 2),
    ("16-bit gradients", 2),
    ("fp32 master weights", 4),
    ("Adam's first moment, fp32", 4),
    ("Adam's second moment, fp32", 4),
)
"""What mixed-precision Adam keeps per parameter, in bytes (``formulas.adam_training_memory``
adds them up; its ``k_opt`` of ZeRO, :data:`gpuconcepts.exercises.K_OPT_ADAM`, is the fp32
ones)."""

FP32_ITEMS = (("weights", 4), ("gradients", 4), ("first moment", 4), ("second moment", 4))
"""What Adam keeps per parameter in float32, the dtype of the measured checks (no master
copy): the same 16 bytes as :data:`ADAM_ITEMS` by coincidence, not by the same items."""

ZERO_DEVICES = 64
"""The ZeRO paper's example count of data-parallel devices."""

SPECULATIVE = {"alpha": 0.8, "gamma": 4}
"""The speculative-decoding example: acceptance chance and drafted tokens per step."""
DRAFT_COST = 0.05
"""The example draft step's cost, in large-model steps."""

CONTEXTS = (1024, 8192, 32768, 131072)
"""The context lengths of the attention-share table."""


def tables() -> dict[str, ModelTable]:
    """Each model's accounting, with decode on the default GPU (the H100)."""
    return {name: account(shape) for name, shape in MODELS.items()}


def servings() -> dict[str, Serving]:
    """Each model's serving answer on the H100 at its own context, batch 1, in bf16."""
    return {name: t.serving for name, t in tables().items()}


LATENCY_MODEL = "Llama-2-7B-like"
"""The model whose latency the page states in words."""
