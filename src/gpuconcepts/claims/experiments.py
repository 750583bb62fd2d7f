"""Which sizes the experiments use, and :func:`judge_claims`, which runs them in the post's order.

Each architecture's experiment (what it asks the lab for) lives beside its judges, in
:mod:`~gpuconcepts.claims.dlrm`, :mod:`~gpuconcepts.claims.mlp`, :mod:`~gpuconcepts.claims.cnn`,
:mod:`~gpuconcepts.claims.rnn` and :mod:`~gpuconcepts.claims.transformer`; the roofline claims
(:mod:`~gpuconcepts.claims.roofline`) judge the measurements those experiments return.

Sizes come from the ``claims`` table of ``conf/presets.toml`` for the device class (the one
size file of the project): the CPU sizes keep ``--quick`` within about two minutes on a
2-core machine; the CUDA sizes are large enough that kernels outlast their launch overhead.
Measurements are asked of a :class:`~gpuconcepts.lab.Lab`, so no experiment runs a kernel
itself: a live lab measures, a replaying one reads a saved run.

>>> claim_sizes("cpu", quick=True).mlp_batches[:4]
(1, 2, 4, 8)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields

from gpuconcepts.claims import cnn, dlrm, mlp, rnn, transformer
from gpuconcepts.claims.result import ClaimResult
from gpuconcepts.claims.roofline import Roles, judge_roles
from gpuconcepts.errors import GpuConceptsError
from gpuconcepts.lab import Lab
from gpuconcepts.measure import Measurement
from gpuconcepts.sizes import load_claim_sizes


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
    rnn_length_B: int
    rnn_length_d: int
    rnn_S: int
    rnn_batches: tuple[int, ...]
    attn_B: int
    attn_d: int
    attn_heads: int
    attn_lengths: tuple[int, ...]
    decode_steps: int
    roof_gemm_n: int
    roof_triad_mib: int

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


def claim_sizes(device: str, quick: bool) -> ClaimSizes:
    """The claims' sizes for a resolved device (``"cpu"`` or ``"cuda"``), from the presets
    (the whole-model experiments keep their own:
    :func:`~gpuconcepts.claims.wholemodel_results.wholemodel_sizes`)."""
    return ClaimSizes.from_table(load_claim_sizes(device, quick))


Found = tuple[list[ClaimResult], Roles]
"""What an experiment returns: its claims, and its measurements for the roofline claims
(keyed by the role they play in :data:`~gpuconcepts.claims.roofline.ROOFLINE_EXPECTATIONS`,
each with its roof's reference kernel timed beside it)."""


EXPERIMENTS: tuple[tuple[str, Callable[[Lab, ClaimSizes], Found]], ...] = (
    ("DLRM", dlrm._dlrm),
    ("MLP", mlp._mlp),
    ("CNN", cnn._cnn),
    ("RNN", rnn._rnn),
    ("Transformer", transformer._transformer),
)
"""The experiments in the order of the post."""


def judge_claims(
    lab: Lab, sizes: ClaimSizes, *, only: Sequence[str] | None = None
) -> tuple[ClaimResult, ...]:
    """Every claim, judged from the measurements a lab gives (measured now, or saved in a Run).

    Args:
        lab: a live :class:`~gpuconcepts.lab.Lab` (kernels run, each size once) or one that
            replays a saved run (nothing runs).
        sizes: the experiments' sizes (:func:`claim_sizes`, or the ones a saved run recorded).
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
    roofline: dict[str, tuple[Measurement, Measurement | None]] = {}
    for name, experiment in EXPERIMENTS:
        if only is not None and name not in only:
            continue
        lab.say(f"claims: {name}")
        found, measured = experiment(lab, sizes)
        results.extend(found)
        roofline.update(measured)
    return (*results, *judge_roles(roofline, lab.peaks, lab.label))
