"""The one text-table aligner: cells in columns, two spaces apart, the first ``left`` columns
left-aligned and the others right-aligned, each line without trailing spaces.

It sits with the values (it imports nothing of the package), so the hardware table, the
model's table, the analysis report and the command line's text all use it.

>>> print(aligned([["a", "b", "c"], ["long", "x", "1"]], left=2))
a     b  c
long  x  1
>>> print(aligned([["gpu", "TB/s"], ["H100", "3.35"]], indent="  "))
  gpu   TB/s
  H100  3.35
"""

from __future__ import annotations

from collections.abc import Sequence


def aligned(
    rows: Sequence[Sequence[str]],
    *,
    left: int = 1,
    indent: str = "",
    widths: Sequence[int] | None = None,
) -> str:
    """``rows`` aligned in columns as wide as their widest cell (or ``widths``), each line after
    ``indent``; the first ``left`` columns are left-aligned, the others right-aligned."""
    if widths is None:
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [
            cell.ljust(width) if i < left else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append(indent + "  ".join(cells).rstrip())
    return "\n".join(lines)
