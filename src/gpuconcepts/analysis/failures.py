"""What went wrong in the user's model, in one line: out of memory (needed and free), or the
first line of whatever it raised."""

# torch is imported inside functions (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import re

from gpuconcepts.units import binary_bytes

_NEEDED = re.compile(
    r"allocate (?:memory: you tried to allocate )?(\d+) bytes|Tried to allocate ([\d.]+) ([KMGT]i?B)"
)
_UNITS = {"KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4}


def is_out_of_memory(error: BaseException) -> bool:
    """True for torch's out-of-memory errors (CUDA's, and the CPU allocator's)."""
    text = str(error)
    return type(error).__name__ == "OutOfMemoryError" or (
        "can't allocate memory" in text or "out of memory" in text.lower()
    )


def out_of_memory_message(error: BaseException, where: str, device: str) -> str:
    """One line: where memory ran out, how much was asked for, how much was free.

    >>> err = RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to "
    ...                    "allocate 2199023255552 bytes. Error code 12")
    >>> out_of_memory_message(err, "layer 'big' (Linear)", "cpu").split(" but ")[0]
    "out of memory in layer 'big' (Linear): it needed 2 TiB"
    """
    from gpuconcepts.measure import free_memory_bytes

    match = _NEEDED.search(str(error))
    if match and match.group(1):
        needed = binary_bytes(int(match.group(1)))
    elif match:
        needed = binary_bytes(float(match.group(2)) * _UNITS.get(match.group(3), 1))
    else:
        needed = "more than was free"
    free = binary_bytes(free_memory_bytes(device))
    return f"out of memory in {where}: it needed {needed} but {free} was free on {device}"


def first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return f"{type(error).__name__}: {lines[0] if lines else ''}".rstrip(": ")
