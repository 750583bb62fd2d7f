# ruff: noqa: PLC0415
# (torch is imported inside functions, through gpuconcepts.kernels: DESIGN rule 3)
"""The experiments: the measurements each claim needs, judged into :class:`ClaimResult` values.

Sizes come from the ``claims`` table of ``conf/presets.toml`` for the device class (the one
size file of the project): the CPU sizes keep ``--quick`` within about two minutes on a
2-core machine; the CUDA sizes are large enough that kernels outlast their launch overhead.
Measurements are asked of a :class:`~gpuconcepts.lab.Lab`, so nothing here runs a kernel
itself: a live lab measures, a replaying one reads a saved run.

>>> sizes_for("cpu", quick=True).mlp_batches[:4]
(1, 2, 4, 8)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields

from gpuconcepts import formulas
from gpuconcepts.claims.judge import (
    ROOFLINE_EXPECTATIONS,
    WeightCounts,
    judge_attention_doubling,
    judge_attention_exponent,
    judge_conv_vs_depthwise,
    judge_dlrm_lookups,
    judge_kv_cache,
    judge_mlp_crossover,
    judge_mlp_trend,
    judge_prefill_vs_decode,
    judge_rnn_batch,
    judge_rnn_length,
    judge_rnn_loop_vs_gemm,
    judge_roofline,
    judge_weight_sharing,
)
from gpuconcepts.claims.quantities import param
from gpuconcepts.claims.result import ClaimResult
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.lab import Lab
from gpuconcepts.measure import Measurement
from gpuconcepts.units import MiB


@dataclass(frozen=True)
class ClaimSizes:
    """Every size the experiments use on one device class.

    The DLRM table is given in MiB and turned into rows (``N``) at run time, capped by
    free memory; the decode run ends at the second-longest prefill length, so prefill and
    decode are compared at the same S.
    """

    dlrm_table_mib: int
    dlrm_B: int
    dlrm_L: int
    dlrm_d: int
    dlrm_widths: tuple[int, ...]
    mlp_d: int
    mlp_batches: tuple[int, ...]
    cnn_B: int
    cnn_HW: int
    cnn_C: int
    rnn_B: int
    rnn_d: int
    rnn_lengths: tuple[int, ...]
    rnn_S: int
    rnn_batches: tuple[int, ...]
    attn_B: int
    attn_d: int
    attn_heads: int
    attn_lengths: tuple[int, ...]
    decode_steps: int

    @classmethod
    def from_table(cls, table: Mapping[str, object]) -> ClaimSizes:
        """Sizes from a presets ``claims`` table or a saved run (lists become tuples); every
        field must be there, a positive integer or a list of them."""
        values: dict[str, int | tuple[int, ...]] = {}
        for f in fields(cls):
            value = table.get(f.name)
            listed = isinstance(value, list | tuple)
            items = list(value) if isinstance(value, list | tuple) else [value]
            counts = [v for v in items if isinstance(v, int) and not isinstance(v, bool) and v > 0]
            if not items or len(counts) != len(items):
                raise GpuConceptsError(
                    f"claim sizes: {f.name} must be a positive integer or a list of them; "
                    f"got {value!r}"
                )
            values[f.name] = tuple(counts) if listed else counts[0]
        return cls(**values)  # type: ignore[arg-type]

    def __post_init__(self) -> None:
        sweeps = {
            "mlp_batches": self.mlp_batches,
            "rnn_lengths": self.rnn_lengths,
            "rnn_batches": self.rnn_batches,
            "attn_lengths": self.attn_lengths,
        }
        for name, values in sweeps.items():
            if len(values) < 2 or list(values) != sorted(set(values)):
                raise GpuConceptsError(
                    f"ClaimSizes.{name} must hold at least two increasing sizes; got {values}"
                )
        if self.dlrm_d not in self.dlrm_widths or any(
            (self.dlrm_L * self.dlrm_d) % w for w in self.dlrm_widths
        ):
            raise GpuConceptsError(
                f"ClaimSizes.dlrm_widths {self.dlrm_widths} must include dlrm_d={self.dlrm_d} and "
                f"divide dlrm_L·dlrm_d={self.dlrm_L * self.dlrm_d} (same bytes per batch)"
            )
        if self.decode_steps >= self.attn_lengths[-2]:
            raise GpuConceptsError(
                f"ClaimSizes.decode_steps ({self.decode_steps}) must be shorter than the "
                f"second-longest prefill length ({self.attn_lengths[-2]})"
            )


def sizes_for(device: str, quick: bool) -> ClaimSizes:
    """The claims' sizes for a resolved device (``"cpu"`` or ``"cuda"``), from the presets."""
    from gpuconcepts.kernels.presets import load_claim_sizes

    return ClaimSizes.from_table(load_claim_sizes(device, quick))


# -- CNN weight counting (real modules, no timing) --------------------------------------------
POST_IMAGE_SIDE = 4
"""The post's example image is 4×4 pixels (16 inputs)."""
POST_NEURONS = 3
"""...fully connected to 3 output neurons."""
POST_KERNEL = 3
"""...against one 3×3 filter."""


def count_weights(
    image: int = POST_IMAGE_SIDE, neurons: int = POST_NEURONS, K: int = POST_KERNEL
) -> WeightCounts:
    """Build the post's two layers in torch and count their weights, positions and FLOPs.

    >>> c = count_weights()
    >>> c.linear_weights, c.conv_weights, c.positions
    (48, 9, 4)
    """
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    linear = torch.nn.Linear(image * image, neurons, bias=False)
    conv = torch.nn.Conv2d(1, 1, K, bias=False)
    pixels = torch.zeros(1, 1, image, image)
    with torch.no_grad():
        with FlopCounterMode(display=False) as linear_counter:
            linear(pixels.flatten(1))
        with FlopCounterMode(display=False) as conv_counter:
            out = conv(pixels)
    return WeightCounts(
        image=image,
        neurons=neurons,
        K=K,
        linear_weights=sum(p.numel() for p in linear.parameters()),
        conv_weights=sum(p.numel() for p in conv.parameters()),
        positions=int(out.shape[-1] * out.shape[-2]),
        linear_flops=int(linear_counter.get_total_flops()),
        conv_flops=int(conv_counter.get_total_flops()),
    )


# -- the experiments ---------------------------------------------------------------------------
Found = tuple[list[ClaimResult], dict[str, Measurement]]
"""What an experiment returns: its claims, and its measurements for the roofline claims
(keyed by the role they play in :data:`~gpuconcepts.claims.judge.ROOFLINE_EXPECTATIONS`)."""


def _dlrm(lab: Lab, z: ClaimSizes) -> Found:
    s = int(lab.fact("dlrm-element", lambda: {"s": _embedding_element_bytes(lab.device)})["s"])
    table_bytes = min(z.dlrm_table_mib * MiB, lab.free_bytes // 4)
    pairs: dict[int, tuple[Measurement, Measurement]] = {}
    for d in z.dlrm_widths:
        L = z.dlrm_L * z.dlrm_d // d  # the same bytes per batch at every row width
        row_bytes = int(formulas.embedding_memory(N=1, d=d, s=s))
        N = max(z.dlrm_B * L, table_bytes // row_bytes)
        random, sequential = (
            lab.measure(f"dlrm-{pattern}", N=N, B=z.dlrm_B, L=L, d=d)
            for pattern in ("random", "sequential")
        )
        pairs[d] = (random, sequential)
    random, sequential = pairs.pop(z.dlrm_d)
    result = judge_dlrm_lookups(
        random,
        sequential,
        peaks=lab.peaks,
        cache_bytes=lab.cache_bytes,
        device=lab.label,
        widths=tuple(pairs.values()),
    )
    return [result], {"dlrm-random": random}


def _embedding_element_bytes(device: str) -> int:
    import torch

    from gpuconcepts.kernels import default_dtype, torch_dtype

    return int(
        torch.empty((), dtype=torch_dtype(default_dtype(device, "embedding"))).element_size()
    )


def _mlp(lab: Lab, z: ClaimSizes) -> Found:
    sweep = [lab.measure("mlp", B=B, d_in=z.mlp_d, d_out=z.mlp_d) for B in z.mlp_batches]
    results = [
        judge_mlp_trend(sweep, peaks=lab.peaks, device=lab.label),
        judge_mlp_crossover(sweep, peaks=lab.peaks, device=lab.label),
    ]
    return results, {"mlp-small-batch": sweep[0], "mlp-large-batch": sweep[-1]}


def _cnn(lab: Lab, z: ClaimSizes) -> Found:
    counted = lab.fact("cnn-weights", lambda: asdict(count_weights()))
    sharing = judge_weight_sharing(WeightCounts(**counted), device=lab.label)
    shape = {"B": z.cnn_B, "H": z.cnn_HW, "W": z.cnn_HW, "K": 3}
    dense = lab.measure("cnn-conv", C_in=z.cnn_C, C_out=z.cnn_C, **shape)
    depthwise = lab.measure("cnn-depthwise", C=z.cnn_C, **shape)
    results = [
        sharing,
        judge_conv_vs_depthwise(dense, depthwise, peaks=lab.peaks, device=lab.label),
    ]
    return results, {"cnn-conv": dense, "cnn-depthwise": depthwise}


def _rnn(lab: Lab, z: ClaimSizes) -> Found:
    width = {"d_in": z.rnn_d, "d_h": z.rnn_d}
    by_length = [lab.measure("rnn-module", B=z.rnn_B, S=S, **width) for S in z.rnn_lengths]
    loop = lab.measure("rnn-loop", B=z.rnn_B, S=z.rnn_S, **width)
    gemm = lab.measure("rnn-gemm", B=z.rnn_B, S=z.rnn_S, **width)
    by_batch = [lab.measure("rnn-module", B=B, S=z.rnn_S, **width) for B in z.rnn_batches]
    results = [
        judge_rnn_length(by_length, device=lab.label),
        judge_rnn_loop_vs_gemm(loop, gemm, peaks=lab.peaks, device=lab.label),
        judge_rnn_batch(by_batch, device=lab.label),
    ]
    return results, {}


def _transformer(lab: Lab, z: ClaimSizes) -> Found:
    attention = {"B": z.attn_B, "d": z.attn_d, "heads": z.attn_heads}
    sweep = [lab.measure("transformer-prefill", S=S, **attention) for S in z.attn_lengths]
    S = z.attn_lengths[-2]  # decode ends where a prefill was measured, to compare per token
    decode = lab.measure(
        "transformer-decode", S_prompt=S - z.decode_steps, steps=z.decode_steps, **attention
    )
    prefill_at_S = lab.measure("transformer-prefill-causal", S=S, **attention)  # a decoder's
    results = [
        judge_attention_exponent(sweep, device=lab.label),
        judge_attention_doubling(sweep, device=lab.label),
        judge_prefill_vs_decode(prefill_at_S, decode, peaks=lab.peaks, device=lab.label),
        judge_kv_cache(
            B=z.attn_B,
            d=z.attn_d,
            s=param(decode, "s"),
            lengths=tuple(int(n) for n in decode.series["lengths"]),
            cache_bytes=tuple(int(b) for b in decode.series["cache_bytes"]),
            device=lab.label,
        ),
    ]
    return results, {"transformer-prefill": sweep[-1], "transformer-decode": decode}


EXPERIMENTS: tuple[tuple[str, Callable[[Lab, ClaimSizes], Found]], ...] = (
    ("DLRM", _dlrm),
    ("MLP", _mlp),
    ("CNN", _cnn),
    ("RNN", _rnn),
    ("Transformer", _transformer),
)
"""The experiments in the order of the post."""


def judge_claims(
    lab: Lab, sizes: ClaimSizes, *, only: Sequence[str] | None = None
) -> tuple[ClaimResult, ...]:
    """Every claim, judged from the measurements a lab gives (measured now, or saved in a Run).

    Args:
        lab: a live :class:`~gpuconcepts.lab.Lab` (kernels run, each size once) or one that
            replays a saved run (nothing runs).
        sizes: the experiments' sizes (:func:`sizes_for`, or the ones a saved run recorded).
        only: architectures to judge (``"DLRM"``, ``"MLP"``, ...); all when None. The roofline
            claims cover the workloads of the architectures that ran.

    Returns:
        One :class:`ClaimResult` per claim, the roofline claims last.
    """
    known = [name for name, _ in EXPERIMENTS]
    if only is not None:
        unknown = [name for name in only if name not in known]
        if unknown:
            raise GpuConceptsError(
                f"unknown architecture {unknown[0]!r}; choose from {', '.join(known)}"
            )
    results: list[ClaimResult] = []
    roofline: dict[str, Measurement] = {}
    for name, experiment in EXPERIMENTS:
        if only is not None and name not in only:
            continue
        lab.say(f"claims: {name}")
        found, measured = experiment(lab, sizes)
        results.extend(found)
        roofline.update(measured)
    for role, m in roofline.items():
        expected, what, source = ROOFLINE_EXPECTATIONS[role]
        results.append(
            judge_roofline(
                m,
                role=role,
                peaks=lab.peaks,
                expected=expected,
                label=what,
                source=source,
                device=lab.label,
            )
        )
    return tuple(results)
