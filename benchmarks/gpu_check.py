"""One prepared check for a lent GPU (an H200 in the plan): about 2-3 minutes, every section guarded.

Run from the repository root on the GPU machine::

    python benchmarks/gpu_check.py            # writes $OUT/gpu_check.json when $OUT is set

Sections (each in try/except: an error is printed and the next section runs):

1. environment: torch, CUDA and cuDNN versions, the device, its memory and L2;
2. GEMM (``kernels.peaks.gemm_flops``) in bf16, fp16 and tf32 against the datasheet row;
3. STREAM copy and triad bandwidth against the datasheet HBM bandwidth;
4. embedding-bag gathers (random, sequential, hot) against the copy bandwidth;
5. two full-size Runs (``gpuconcepts.run.collect``): peaks, every workload, every claim, in
   the book's tensor-core dtype (bfloat16) and in tf32, saved as ``$OUT/runs/<gpu>-<dtype>.json``
   to be committed in ``docs/runs/``; the book's roofline chart of each as a PNG;
6. the CUDA tests of the test-suite (``pytest -k cuda``).

Nothing here asserts a time; the figures are for the closing note of the issue.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # works without an install, from a bare checkout

BUDGET_SECONDS = 480.0
"""Sections that would start after this many seconds are skipped (one command may run 10 min)."""

RESULTS: dict[str, Any] = {}
STARTED = time.perf_counter()


def elapsed() -> float:
    return time.perf_counter() - STARTED


def section(name: str, fn: Callable[[], Any], *, min_left: float = 0.0) -> None:
    """Run one section, store its result, print any error and carry on."""
    print(f"\n=== {name} (t = {elapsed():.1f} s) ===", flush=True)
    if elapsed() + min_left > BUDGET_SECONDS:
        print(f"skipped: {BUDGET_SECONDS - elapsed():.0f} s left of the budget")
        RESULTS[name] = {"skipped": "time budget"}
        return
    start = time.perf_counter()
    try:
        RESULTS[name] = fn()
    except Exception as error:  # noqa: BLE001 - report and continue is the point
        traceback.print_exc()
        RESULTS[name] = {"error": f"{type(error).__name__}: {error}"}
    print(f"--- {name}: {time.perf_counter() - start:.1f} s", flush=True)


def environment() -> dict[str, Any]:
    import torch

    info: dict[str, Any] = {
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "cuda_available": torch.cuda.is_available(),
    }
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        free, total = torch.cuda.mem_get_info()
        info |= {
            "device": torch.cuda.get_device_name(0),
            "capability": list(torch.cuda.get_device_capability(0)),
            "sm_count": props.multi_processor_count,
            "total_memory": props.total_memory,
            "free_memory": free,
            "l2_cache_size": props.L2_cache_size,
        }
        del total
    from gpuconcepts.hardware import current_gpu
    from gpuconcepts.kernels import device_class

    gpu = current_gpu()
    info["datasheet_row"] = gpu.name if gpu else None
    info["device_class"] = device_class("cuda") if torch.cuda.is_available() else None
    for key, value in info.items():
        print(f"{key}: {value}")
    return info


def datasheet() -> Any:
    from gpuconcepts.hardware import GPUS, current_gpu

    gpu = current_gpu()
    if gpu is None:
        print("device not in the datasheet table; comparing against the H200 row")
        gpu = GPUS["H200"]
    return gpu


def gemm() -> dict[str, Any]:
    from gpuconcepts.kernels.peaks import gemm_flops

    gpu = datasheet()
    out: dict[str, Any] = {"datasheet": gpu.name}
    for dtype, n in (("bfloat16", 8192), ("float16", 8192), ("tf32", 8192)):
        rate = gemm_flops("cuda", n=n, dtype=dtype, repeats=20)
        sheet = gpu.peak(dtype)
        ratio = rate / sheet if sheet else None
        out[dtype] = {"n": n, "flops_per_s": rate, "datasheet": sheet, "fraction": ratio}
        shown = f"{ratio:.1%} of datasheet {sheet / 1e12:g} TFLOP/s" if sheet else "no datasheet"
        print(f"GEMM {n}^3 {dtype}: {rate / 1e12:.1f} TFLOP/s ({shown})")
    return out


def bandwidth() -> dict[str, Any]:
    from gpuconcepts.kernels.peaks import copy_bandwidth, stream_array_bytes, triad_bandwidth
    from gpuconcepts.measure import free_memory_bytes, last_level_cache_bytes

    gpu = datasheet()
    array = stream_array_bytes(
        2 * 1024**3, last_level_cache_bytes("cuda"), free_memory_bytes("cuda")
    )
    copy = copy_bandwidth("cuda", array_bytes=array, repeats=20)
    triad = triad_bandwidth("cuda", array_bytes=array, repeats=20)
    for name, rate in (("copy", copy), ("triad", triad)):
        print(
            f"{name} on {array / 1024**3:.1f} GiB arrays: {rate / 1e12:.2f} TB/s = "
            f"{rate / gpu.bytes_per_s:.1%} of {gpu.name} HBM {gpu.bytes_per_s / 1e12:g} TB/s"
        )
    return {
        "array_bytes": array,
        "copy_bytes_per_s": copy,
        "triad_bytes_per_s": triad,
        "datasheet_bytes_per_s": gpu.bytes_per_s,
        "copy_fraction": copy / gpu.bytes_per_s,
        "triad_fraction": triad / gpu.bytes_per_s,
    }


def gather() -> dict[str, Any]:
    from gpuconcepts.kernels import dlrm, load_presets
    from gpuconcepts.kernels.peaks import copy_bandwidth
    from gpuconcepts.roofline import Peaks

    copy = RESULTS.get("bandwidth", {}).get("copy_bytes_per_s") or copy_bandwidth(
        "cuda", array_bytes=1024**3, repeats=10
    )
    sizes = load_presets("cuda", False)["dlrm"]
    peaks = Peaks("cuda", flops_per_s=1e15, bytes_per_s=copy, dtype="bfloat16")
    out: dict[str, Any] = {"sizes": sizes, "copy_bytes_per_s": copy}
    for pattern in dlrm.PATTERNS:
        m = dlrm.embedding_lookup("cuda", peaks, pattern=pattern, repeats=20, **sizes)
        out[pattern] = {
            "seconds": m.seconds,
            "iqr_seconds": m.iqr_seconds,
            "bytes_per_s": m.bytes_per_s,
            "vs_copy": m.bytes_per_s / copy,
        }
        print(
            f"embedding_bag {pattern:10s} {m.seconds * 1e3:8.3f} ms  "
            f"{m.bytes_per_s / 1e12:.2f} TB/s = {m.bytes_per_s / copy:.1%} of copy"
        )
    return out


def runs() -> dict[str, Any]:
    from gpuconcepts.files import save_figure
    from gpuconcepts.hardware import current_gpu
    from gpuconcepts.lab import profile_all
    from gpuconcepts.render import format_claims, format_run
    from gpuconcepts.render.plots import roofline_chart

    gpu = current_gpu()
    name = (gpu.name if gpu else "gpu").lower().replace(" ", "-")
    out = Path(os.environ.get("OUT") or ROOT / ".bench") / "runs"
    saved: dict[str, Any] = {}
    for dtype in ("bfloat16", "tf32"):
        run = collect_run(dtype)
        print(format_run(run))
        print(format_claims(run))
        path = out / f"{name}-{dtype}.json"
        run.save(path)
        sizes = run.provenance.sizes
        chart = roofline_chart(run.peaks, profile_all(run.lab(), sizes["presets"], sizes["sweeps"]))
        save_figure(chart, out / f"{name}-{dtype}.png", dpi=110)
        saved[dtype] = {"path": str(path), "claims": run.counts, "seconds": run.provenance.seconds}
        print(f"wrote {path}")
    return saved


def collect_run(dtype: str) -> Any:
    from gpuconcepts.run import collect

    return collect(
        "cuda",
        quick=False,
        dtype=dtype,
        command=f"python benchmarks/gpu_check.py (dtype {dtype})",
        progress=lambda line: print(line, flush=True),
    )


def cuda_tests() -> dict[str, Any]:
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-k",
        "cuda",
        "tests/test_measure.py",
        "tests/test_kernels.py",
        "tests/test_hardware.py",
    ]
    env = os.environ | {"PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    tail = (done.stdout + done.stderr)[-3000:]
    print(tail)
    return {"returncode": done.returncode, "tail": tail}


def main() -> int:
    section("environment", environment)
    section("gemm", gemm, min_left=20)
    section("bandwidth", bandwidth, min_left=15)
    section("gather", gather, min_left=20)
    section("runs", runs, min_left=120)
    section("cuda_tests", cuda_tests, min_left=20)
    RESULTS["wall_seconds"] = elapsed()
    print(f"\ntotal {elapsed():.1f} s")
    out = os.environ.get("OUT")
    if out:
        from gpuconcepts.files import write_atomic

        path = Path(out) / "gpu_check.json"
        write_atomic(path, json.dumps(RESULTS, indent=1, default=str))
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
