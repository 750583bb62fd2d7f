"""The figures added to existing chapters, each with the sizes its page already uses.

* the CNN chapter: the post's architecture picture (:func:`cnn`);
* the model chapter: stacked memory-budget bars of ZeRO's stages for the page's Llama-2-70B
  shape over its devices, against an H100's memory (:func:`model`);
* the hardware chapter: every datasheet GPU's roofline with the post's examples (:func:`hardware`);
* the distributed chapter: a ring all-reduce of the post's MLP gradient and the three pipeline
  schedules at the page's number of stages (:func:`distributed`).

Every number a figure shows comes from :mod:`gpuconcepts.formulas` and the pages' own sizes.

>>> sorted(distributed())
['pipeline_fig', 'ring_fig']
"""

from __future__ import annotations

from gpuconcepts import exercises as answers
from gpuconcepts import formulas
from gpuconcepts.hardware import DEFAULT_GPU, GPUS, datasheet_peaks
from gpuconcepts.model import PRESETS, account
from gpuconcepts.questions import question
from gpuconcepts.render.pages import Glue
from gpuconcepts.render.pages.distributed import PIPELINE_STAGES
from gpuconcepts.render.pages.hardware_examples import examples
from gpuconcepts.render.pages.model import H100, ZERO_DEVICES
from gpuconcepts.render.plots import budgets, cnn_diagrams, gpu_diagrams, schedules

PIPELINE_MICRO_BATCHES = 2 * PIPELINE_STAGES
"""Micro-batches in the schedule figure: a multiple of the stages, as the interleaved
schedule needs, and enough that the steady state shows."""

RING_DEVICES = 4
"""Devices on the drawn ring: few enough that every chunk can be seen."""


def cnn() -> Glue:
    """The CNN chapter's architecture figure."""
    return {"cnn_arch": cnn_diagrams.cnn_architecture()}


def model() -> Glue:
    """The model chapter's memory-budget bars: ZeRO's stages for the Llama-2-70B shape over
    the page's devices, with an H100's memory dashed."""
    big = account(PRESETS["llama-2-70b"])
    return {
        "budget_fig": budgets.memory_budget(
            n_params=int(big.value("params")),
            N_d=ZERO_DEVICES,
            k_opt=answers.K_OPT_ADAM,
            device_bytes=H100.memory_bytes,
            device_name=H100.name,
        )
    }


def distributed() -> Glue:
    """The distributed chapter's ring all-reduce (the post's MLP gradient in FP16) and its
    pipeline schedules (the page's stages)."""
    mlp = question(12).steps[0].values  # the post's MLP layer, as the page's ring table
    n_params = formulas.mlp_weights(d_in=mlp["d_in"], d_out=mlp["d_out"])
    return {
        "ring_fig": schedules.ring_allreduce(W=RING_DEVICES, n_params=int(n_params), s=2),
        "pipeline_fig": schedules.pipeline_schedules(
            p=PIPELINE_STAGES, m=PIPELINE_MICRO_BATCHES, v=2
        ),
    }


OVERLAY_DTYPE = "fp16"
"""The data type of the overlay: the post's examples are FP16 but for the FP32 lookup."""


def hardware() -> Glue:
    """The hardware chapter's overlay: each datasheet GPU's FP16 roofline, and the post's
    examples (the page's table, numbered in its order) on the default GPU's roof."""
    on = GPUS[DEFAULT_GPU].datasheet_peaks(OVERLAY_DTYPE)
    return {
        "overlay_fig": gpu_diagrams.datasheet_overlay(
            datasheet_peaks(OVERLAY_DTYPE),
            [(label, intensity) for label, intensity, _ in examples()],
            on=on,
        )
    }
