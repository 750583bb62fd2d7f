"""The revision page: the post's revision list, each formula as the library defines it.

>>> print(revision().splitlines()[2])
| DLRM | $N d s$ | total embedding memory | `formulas.embedding_memory` |
"""

from __future__ import annotations

from gpuconcepts import formulas
from gpuconcepts.render.markdown import markdown_table

POST = (  # the post's revision list: (architecture, formula, what it calculates)
    ("DLRM", "embedding_memory", "total embedding memory"),
    ("DLRM", "embedding_payload", "embedding payload per batch"),
    ("MLP", "mlp_macs", "MACs"),
    ("MLP", "mlp_flops", "FLOPs"),
    ("MLP", "mlp_weight_memory", "weight memory"),
    ("CNN", "conv_macs", "MACs"),
    ("RNN", "rnn_macs", "MACs"),
    ("Transformer", "attention_flops", "attention computation (forward FLOPs)"),
    ("Transformer", "kv_cache_memory", "KV cache memory per layer"),
)


def revision() -> str:
    """The revision list as the page's Markdown table."""
    return markdown_table(
        ["Architecture", "Formula", "What it calculates", "In the library"],
        [
            [arch, f"${formulas.get(name).latex()}$", what, f"`formulas.{name}`"]
            for arch, name, what in POST
        ],
    )
