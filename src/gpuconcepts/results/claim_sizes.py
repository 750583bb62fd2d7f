"""The sizes of the core claims' experiments on one device class, apart from the experiments
that read them, so that every experiment can name its sizes without importing the module that
runs them all.

Sizes come from the ``claims`` table of ``conf/presets.toml`` for the device class (the one
size file of the project): the CPU sizes keep ``--quick`` within about a minute on a 2-core
machine; the CUDA sizes are large enough that kernels outlast their launch overhead.

A run's sizes hold them, resolved once with the rest (:class:`gpuconcepts.sizing.RunSizes`).

>>> from gpuconcepts.sizing import RunSizes
>>> RunSizes.resolve("cpu", quick=True, free_bytes=2**36).claims.mlp_batches[:4]
(1, 2, 4, 8)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

from gpuconcepts.errors import GpuConceptsError


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
