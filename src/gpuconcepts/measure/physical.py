"""A CPU's physical limit: the fused multiply-adds its cores can issue each cycle, from a table
of microarchitectures keyed on what /proc/cpuinfo says (vendor, family, model), at a clock
measured by timing a chain of dependent additions.

No file says how many FMA units a core has or how wide they are: an AVX-512 flag means the
instructions exist, not that the datapath is 512 bits wide (Zen 4 runs them on 256-bit pipes,
and some Skylake-SP parts have one 512-bit unit). So the limit is drawn only for the
microarchitectures of :data:`FMA_TABLE`, and is unknown elsewhere; and the nominal clock that
/proc/cpuinfo shows is passed by boost clocks (issue 45: a Zen 4 guest's GEMM reached 226
GFLOP/s where its nominal clock allows 166), so the clock is measured (:func:`measured_hz`),
and where it cannot be measured the limit is unknown: /proc/cpuinfo's clock is never used.

>>> core = fma_core(CpuId("AuthenticAMD", 25, 0x11, "AMD EPYC 9654"))
>>> core.family, core.width_bits, core.units
('AMD Zen 4', 256, 2)
>>> fma_core(CpuId("AuthenticAMD", 25, 0x11, "")).lanes(4)
8
>>> fma_core(CpuId("GenuineIntel", 6, 0x55, "Intel Xeon Processor (Cascadelake)")) is None
True
"""

from __future__ import annotations

import ctypes
import mmap
import platform
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CpuId:
    """What /proc/cpuinfo says a CPU is: ``vendor_id``, ``cpu family``, ``model`` and
    ``model name``."""

    vendor: str
    family: int
    model: int
    name: str


@dataclass(frozen=True)
class FmaCore:
    """One core's FMA datapath: ``units`` FMA pipes of ``width_bits`` each (the width the
    hardware executes, not the widest instruction it decodes), for the microarchitecture
    ``family``."""

    family: str
    width_bits: int
    units: int

    def lanes(self, element_bytes: int) -> int:
        """Elements of ``element_bytes`` one FMA pipe takes a cycle."""
        return self.width_bits // (8 * element_bytes)


_ZEN = ("AuthenticAMD",)
_INTEL = ("GenuineIntel",)

FMA_TABLE: tuple[tuple[tuple[str, ...], int, tuple[int, ...], FmaCore], ...] = (
    # AMD family 17h: Zen and Zen+ (models 00h-2Fh: two 128-bit FMA pipes), Zen 2 (30h-FFh:
    # Rome, Renoir, Lucienne, Matisse, Van Gogh, Mendocino; two 256-bit)
    (_ZEN, 0x17, tuple(range(0x30)), FmaCore("AMD Zen/Zen+", 128, 2)),
    (_ZEN, 0x17, tuple(range(0x30, 0x100)), FmaCore("AMD Zen 2", 256, 2)),
    # AMD family 19h: Zen 3 (Milan 00h-0Fh, Vermeer 20h-2Fh, Rembrandt and Cezanne 40h-5Fh) and
    # Zen 4 (Genoa 10h-1Fh, Raphael and Phoenix 60h-7Fh, Bergamo and Siena A0h-AFh), whose
    # AVX-512 runs on the same two 256-bit pipes
    (_ZEN, 0x19, (*range(0x10), *range(0x20, 0x30), *range(0x40, 0x60)),
     FmaCore("AMD Zen 3", 256, 2)),
    (_ZEN, 0x19, (*range(0x10, 0x20), *range(0x60, 0x80), *range(0xA0, 0xB0)),
     FmaCore("AMD Zen 4", 256, 2)),
    # AMD family 1Ah: Zen 5 on server (Turin, 00h-1Fh) and desktop (Granite Ridge, 40h-4Fh)
    # parts, with two full 512-bit FMA pipes (the mobile parts' are 256 bits: not listed)
    (_ZEN, 0x1A, (*range(0x20), *range(0x40, 0x50)), FmaCore("AMD Zen 5", 512, 2)),
    # Intel family 6: Haswell, Broadwell and Skylake to Comet Lake clients, two 256-bit FMAs
    (_INTEL, 6, (0x3C, 0x3F, 0x45, 0x46, 0x3D, 0x47, 0x4F, 0x56, 0x4E, 0x5E, 0x8E, 0x9E, 0xA5,
                 0xA6), FmaCore("Intel Haswell to Comet Lake", 256, 2)),
    # Ice Lake-SP (6Ah, 6Ch), Sapphire Rapids (8Fh), Emerald Rapids (CFh), Granite Rapids
    # (ADh, AEh): two 512-bit FMAs on every server part
    (_INTEL, 6, (0x6A, 0x6C, 0x8F, 0xCF, 0xAD, 0xAE),
     FmaCore("Intel Ice Lake-SP to Granite Rapids", 512, 2)),
)  # fmt: skip
"""(vendors, family, models, core) of the microarchitectures whose FMA datapath is known.
Skylake-SP, Cascade Lake and Cooper Lake (Intel family 6, model 55h) have one or two 512-bit
units by part: :func:`fma_core` reads the part from the model name."""

SKYLAKE_SP = 0x55
"""Intel's model number of Skylake-SP, Cascade Lake and Cooper Lake (family 6)."""

TWO_UNIT_PARTS = ("Platinum", "Gold 6", "Gold 5122", "Gold 5222", "W-")
"""The Skylake-SP and Cascade Lake parts with two 512-bit FMA units (every Platinum, Gold 6000
and Xeon W part; among the Gold 5000 parts, 5122 and 5222). Other named parts (Silver, Bronze,
Gold 5000) have one; a VM's generic name leaves the count unknown."""

ONE_UNIT_PARTS = ("Silver", "Bronze", "Gold 5")


def fma_core(cpu: CpuId) -> FmaCore | None:
    """The FMA datapath of ``cpu``'s microarchitecture (:data:`FMA_TABLE`), or None when the
    table does not know it."""
    if cpu.vendor in _INTEL and cpu.family == 6 and cpu.model == SKYLAKE_SP:
        if any(part in cpu.name for part in TWO_UNIT_PARTS):
            return FmaCore("Intel Skylake-SP/Cascade Lake (two-FMA part)", 512, 2)
        if any(part in cpu.name for part in ONE_UNIT_PARTS):
            return FmaCore("Intel Skylake-SP/Cascade Lake (one-FMA part)", 512, 1)
        return None
    for vendors, family, models, core in FMA_TABLE:
        if cpu.vendor in vendors and cpu.family == family and cpu.model in models:
            return core
    return None


def cpu_id(cpuinfo: Path = Path("/proc/cpuinfo")) -> CpuId | None:
    """The first processor's :class:`CpuId` in /proc/cpuinfo, or None when it does not say
    (an Arm kernel's has no vendor_id or cpu family).

    >>> import tempfile
    >>> info = Path(tempfile.mkdtemp()) / "cpuinfo"
    >>> _ = info.write_text("vendor_id\\t: AuthenticAMD\\ncpu family\\t: 26\\nmodel\\t\\t: 2\\n"
    ...                     "model name\\t: AMD EPYC\\n")
    >>> cpu_id(info)
    CpuId(vendor='AuthenticAMD', family=26, model=2, name='AMD EPYC')
    """
    try:
        lines = cpuinfo.read_text().splitlines()
    except OSError:
        return None
    found: dict[str, str] = {}
    for line in lines:
        key, _, value = line.partition(":")
        found.setdefault(key.strip(), value.strip())
    try:
        return CpuId(
            found["vendor_id"], int(found["cpu family"]), int(found["model"]),
            found.get("model name", ""),
        )  # fmt: skip
    except (KeyError, ValueError):
        return None


CHAIN_ADDS = 8
"""Dependent register additions in each iteration of the clock's loop: each waits one cycle
for the last (an addition's latency is one cycle on every x86 core since 2006), so an
iteration takes this many cycles, and the loop's own decrement and branch run beside them."""

# xor eax,eax; mov edx,1; loop: 8 x (add rax,rdx); dec rdi; jnz loop; ret (System V: n in rdi)
_CHAIN_CODE = bytes.fromhex("31c0ba01000000" + "4801d0" * CHAIN_ADDS + "48ffcf75e3c3")

CLOCK_ITERATIONS = 5_000_000
"""Iterations of one timing of the loop: 40 million cycles, about 10 ms at 4 GHz."""


def measured_hz(tries: int = 5) -> float | None:
    """One core's clock, measured: the cycles of a chain of dependent additions
    (:data:`CHAIN_ADDS` a loop iteration) over the thread's CPU seconds, at the fastest of
    ``tries`` timings (an interrupted timing only reads slower, never faster). None where it
    cannot run: not an x86-64 machine, or one that refuses executable memory.

    >>> hz = measured_hz(tries=1)
    >>> hz is None or 1e8 < hz < 1e10
    True
    """
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return None
    try:
        code = mmap.mmap(
            -1, len(_CHAIN_CODE), prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC
        )
    except (OSError, ValueError, AttributeError):
        return None
    try:
        code.write(_CHAIN_CODE)
        address = ctypes.addressof(ctypes.c_char.from_buffer(code))
        chain = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_uint64)(address)
        chain(CLOCK_ITERATIONS // 10)  # warm: the core leaves its idle clock
        best = 0.0
        for _ in range(tries):
            # the thread's own CPU time: a moment another process held the core is not counted
            start = time.thread_time()
            chain(CLOCK_ITERATIONS)
            seconds = time.thread_time() - start
            if seconds > 0:
                best = max(best, CHAIN_ADDS * CLOCK_ITERATIONS / seconds)
        del chain
        return best or None
    finally:
        code.close()


def covered_families() -> tuple[str, ...]:
    """The microarchitectures whose physical limit can be drawn, as a page names them.

    >>> covered_families()[0], covered_families()[-1]
    ('AMD Zen/Zen+', 'Intel Skylake-SP/Cascade Lake (by part)')
    """
    return (*(core.family for *_, core in FMA_TABLE), "Intel Skylake-SP/Cascade Lake (by part)")
