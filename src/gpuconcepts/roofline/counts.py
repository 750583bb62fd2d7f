"""What a kernel does, as the roofs and diagnoses read it: the bytes its code moves, its working
set, its matrix products, its activation's elements and its random table, all from its
workload's descriptor (:data:`gpuconcepts.workloads.WORKLOADS`), never from a timing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuconcepts.workloads import WORKLOADS, GemmProduct

if TYPE_CHECKING:
    from gpuconcepts.measurement import Measurement


def gemm_products(m: Measurement) -> tuple[GemmProduct, ...]:
    """The matrix products ``m``'s time rests on, as (count, (rows, columns, depth)), from its
    workload's descriptor (:meth:`~gpuconcepts.workloads.Workload.gemm_products`); none for
    other kernels, and for a call ``analyze`` timed.

    >>> from gpuconcepts.measure import Measurement
    >>> gemm_products(Measurement("mlp", "cpu", {"B": 2, "d_in": 8, "d_out": 4, "s": 4}, (1.0,), 1, 1))
    ((1, (2, 4, 8)),)
    """
    found = WORKLOADS.get(m.workload)
    return () if found is None else found.gemm_products(m.params)


def moved_bytes(m: Measurement) -> float:
    """The bytes ``m``'s code moves, which the memory roofs read: its minimal bytes and what
    its workload's traffic adds to them
    (:meth:`~gpuconcepts.workloads.Workload.extra_bytes`: a lookup's int64 indices).

    >>> from gpuconcepts.measure import Measurement
    >>> moved_bytes(Measurement("dlrm-sequential", "cpu", {"B": 2, "L": 3, "d": 4, "s": 4}, (1.0,), 24, 128))
    192
    >>> moved_bytes(Measurement("mlp", "cpu", {}, (1.0,), 1, 128))
    128
    """
    found = WORKLOADS.get(m.workload)
    return m.bytes + (0 if found is None else found.extra_bytes(m.params))


def activation_elements(m: Measurement) -> int | None:
    """How many elements ``m`` passes through an activation beside its products, from its
    workload's descriptor (:meth:`~gpuconcepts.workloads.Workload.activation_elements`).

    >>> from gpuconcepts.measure import Measurement
    >>> activation_elements(Measurement("rnn-gemm", "cpu", {"B": 1, "S": 4, "d_in": 2, "d_h": 8}, (1.0,), 1, 1))
    32
    """
    found = WORKLOADS.get(m.workload)
    return None if found is None else found.activation_elements(m.params)


def random_table_bytes(m: Measurement) -> int | None:
    """The bytes of the table ``m``'s random rows come from, from its workload's descriptor
    (:meth:`~gpuconcepts.workloads.Workload.random_table_bytes`); None when unknown.

    >>> from gpuconcepts.measure import Measurement
    >>> random_table_bytes(Measurement("dlrm-hot", "cpu", {"N": 10**6, "d": 64, "s": 4}, (1.0,), 1, 1))
    262144
    """
    found = WORKLOADS.get(m.workload)
    return None if found is None else found.random_table_bytes(m.params)


def working_set_bytes(m: Measurement) -> float:
    """The distinct bytes ``m`` touches, which choose the memory level that holds it: the
    bytes its code moves, with the rows of a random lookup counted at most once over its
    table (a hot set of a few rows read many times touches only those rows).

    >>> from gpuconcepts.measure import Measurement
    >>> hot = Measurement("dlrm-hot", "cpu", {"N": 10**6, "d": 64, "s": 4}, (1.0,), 1, 10**7,
    ...                   random_rows=10**4, row_bytes=256)  # 2.56 MB of rows from 256 KiB
    >>> working_set_bytes(hot)
    7702144
    >>> working_set_bytes(Measurement("mlp", "cpu", {}, (1.0,), 1, 128))
    128
    """
    moved = moved_bytes(m)
    table = random_table_bytes(m)
    if not (m.random_rows and m.row_bytes and table):
        return moved
    rows = m.random_rows * m.row_bytes
    return moved - rows + min(rows, table)
