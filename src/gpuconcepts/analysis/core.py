"""The analysis: count one forward pass, time each distinct call alone, place each one under
this machine's roofs and predict it on each datasheet GPU (:func:`analyze`)."""

# torch is imported inside functions (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from gpuconcepts.analysis.calls import Call, call_name, count, storages, uncounted
from gpuconcepts.analysis.checks import check_arguments, check_launch_floors
from gpuconcepts.analysis.failures import first_line, is_out_of_memory, out_of_memory_message
from gpuconcepts.analysis.layers import gathers
from gpuconcepts.analysis.peaks import peaks_warnings
from gpuconcepts.analysis.predict import predictions
from gpuconcepts.analysis.report import Layer, Report, observed_bound
from gpuconcepts.analysis.timing import Progress, Replay, time_calls, time_forward
from gpuconcepts.analysis.trace import Recorder
from gpuconcepts.errors import GpuConceptsError, Terminated
from gpuconcepts.hardware import dtype_name
from gpuconcepts.measure import Measurement
from gpuconcepts.roofline import Peaks, classify, faster_path, verdict

if TYPE_CHECKING:
    from gpuconcepts.sizing import RunSizes


def _prepare(
    model: Any,
    inputs: tuple[Sequence[Any], Mapping[str, Any]],
    device: str,
    dtype: str | None,
    root: str,
) -> tuple[Any, tuple[Any, ...], dict[str, Any]]:
    """The model and inputs on ``device`` in ``dtype`` (a name or alias): the model is copied,
    never moved; a copy that runs out of memory is one line."""
    import torch

    from gpuconcepts.kernels import torch_dtype

    target = torch_dtype(dtype_name(dtype)) if dtype is not None else None
    params = [*model.parameters(), *model.buffers()]
    moves = any(p.device.type != device for p in params)
    casts = target is not None and any(p.is_floating_point() and p.dtype != target for p in params)

    def convert(value: Any) -> Any:
        if not isinstance(value, torch.Tensor):
            return value
        cast = target if target is not None and value.is_floating_point() else None
        return value.to(device=device, dtype=cast)

    try:
        if moves or casts:
            model = copy.deepcopy(model).to(device=device, dtype=target)
        args, kwargs = inputs
        return model, tuple(convert(v) for v in args), {k: convert(v) for k, v in kwargs.items()}
    except RuntimeError as error:
        if is_out_of_memory(error):
            where = f"moving {root} to {device}"
            raise GpuConceptsError(out_of_memory_message(error, where, device)) from None
        raise


def analyze(
    model: Any,
    *args: Any,
    device: str = "auto",
    dtype: str | None = None,
    peaks: Peaks | None = None,
    repeats: int = 5,
    progress: Progress | None = None,
    launch_floors: Sequence[tuple[str, float]] = (),
    sizes: RunSizes | None = None,
    **kwargs: Any,
) -> Report:
    """Count, time and place every leaf module call of one forward pass of ``model``.

    ``model(*args, **kwargs)`` is the forward pass: positional and keyword inputs as the
    model takes them (``analyze(model, input_ids=ids, attention_mask=mask)``); the keywords
    named below are analyze's own.

    Args:
        model: a ``torch.nn.Module``; it is not changed (a copy is made when it has to move
            to ``device`` or change ``dtype``) and runs in eval mode, as for inference.
        args, kwargs: the forward pass's inputs.
        device: ``"auto"``, ``"cpu"`` or ``"cuda"`` (:func:`gpuconcepts.measure.resolve_device`).
        dtype: a dtype name or alias (``float32``/``fp32``, ``float16``/``fp16``,
            ``bfloat16``/``bf16``) for the weights and floating-point inputs; None keeps the
            model's.
        peaks: this device's measured peaks (:class:`gpuconcepts.roofline.Peaks`, e.g. a
            saved Run's ``run.peaks``); measured with :func:`gpuconcepts.kernels.measure_peaks`
            when None, with a warning when they are far from a recorded run of this machine.
        repeats: timed repetitions of each call (identical calls are timed once).
        progress: told what is done now, for a progress line.
        launch_floors: latency floors measured by GPU runs elsewhere, each a run's label
            naming its device and the floor in seconds
            (:func:`gpuconcepts.book.gpu_latency_floors` of the recorded runs): the datasheet
            GPUs' predictions use them in place of the assumed
            :data:`gpuconcepts.hardware.LAUNCH_FLOOR_SECONDS`
            (:class:`~gpuconcepts.analysis.predict.LaunchFloors`).
        sizes: the sizes to measure the peaks at, resolved by the caller for this device
            (:class:`~gpuconcepts.sizing.RunSizes`); None resolves them (quick on a CPU).

    Raises:
        GpuConceptsError: no input, a model that is not a module (or a TorchScript one), a
            meta-device model or input, a shape a layer rejects (naming the layer and the
            shapes), or running out of memory (needed and free).
        KeyboardInterrupt: Ctrl-C while the calls are timed; its ``report`` attribute holds
            the report of the calls timed so far (:attr:`Report.interrupted`).
    """
    root = check_arguments(model, args, kwargs, device, dtype, peaks, repeats)
    check_launch_floors(launch_floors)
    resolved = _resolved(device, sizes)
    model, args, kwargs = _prepare(model, (args, kwargs), resolved, dtype, root)
    training = {m: m.training for m in model.modules()}
    try:
        model.eval()
        recorder, total = _counting_pass(model, (args, kwargs), root, resolved, progress)
        options = (resolved, (peaks, sizes), repeats, progress, tuple(launch_floors))
        return _report(model, (args, kwargs), recorder, total, *options)
    finally:
        for module, mode in training.items():
            module.train(mode)


def _resolved(device: str, sizes: RunSizes | None) -> str:
    """``device`` resolved (:func:`gpuconcepts.measure.resolve_device`), once the ``sizes``
    given, if any, are that device's."""
    from gpuconcepts.measure import resolve_device

    resolved = resolve_device(device)
    if sizes is not None and sizes.device != resolved:
        raise GpuConceptsError(
            f"analyze: sizes were resolved for {sizes.device}; the analysis runs on {resolved}"
        )
    return resolved


def _counting_pass(
    model: Any,
    inputs: tuple[tuple[Any, ...], dict[str, Any]],
    root: str,
    device: str,
    progress: Progress | None,
) -> tuple[Recorder, int]:
    """One forward pass under the recorder and ``FlopCounterMode``: the calls it saw and
    ``FlopCounterMode``'s total. A failure is one line naming the layer it happened in."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    recorder = Recorder(model, counter, root)
    if progress is not None:
        progress("counting: one forward pass")
    try:
        # no_grad, not inference_mode: tensors keep their version counters, so an in-place
        # write is told from a view
        with torch.no_grad(), counter, recorder.mode:
            model(*inputs[0], **inputs[1])
    except GpuConceptsError:
        raise
    except Exception as error:  # noqa: BLE001 - whatever the user's model raises, named in one line
        where = recorder.where()
        if is_out_of_memory(error):
            raise GpuConceptsError(
                out_of_memory_message(error, where.rstrip(","), device)
            ) from None
        raise GpuConceptsError(f"{root}: {where} failed with {first_line(error)}") from None
    finally:
        recorder.remove()
    return recorder, int(counter.get_total_flops())


def _report(
    model: Any,
    inputs: tuple[tuple[Any, ...], dict[str, Any]],
    recorder: Recorder,
    counter_total: int,
    device: str,
    given: tuple[Peaks | None, RunSizes | None],
    repeats: int,
    progress: Progress | None,
    launch_floors: Sequence[tuple[str, float]] = (),
) -> Report:
    """The recorded calls timed, placed and predicted; on Ctrl-C or SIGTERM the report of what
    was timed rides on the signal's exception, which is raised again."""
    from gpuconcepts.measure import device_name

    root = type(model).__name__
    peaks, source, warnings = _peaks(*given, device, progress)
    # a call on empty tensors moves nothing and computes nothing: it has no place on a roofline
    calls = [call for call in recorder.calls if call.tensor_bytes > 0 or call.counter_flops > 0]
    if not calls:
        raise GpuConceptsError(
            f"{root}: the forward pass ran no layer and no tensor operation to analyze"
        )
    counted = [count(call) for call in calls]
    # the kernels' flush policy: a call runs cold (after a cache flush) when memory-bound
    cold = [classify(flops / traffic, peaks) == "memory" for flops, _, traffic, _ in counted]
    first, times, stop = _timed_calls(calls, cold, root, device, repeats, progress)
    forward: tuple[float, ...] = ()
    if stop is None:
        forward, stop = _timed_forward(model, inputs, device, repeats, progress)
    dtype = _model_dtype(model)
    layers = _layers(calls, counted, cold, (first, times), device, peaks)
    launch_here = peaks.latency_seconds if device == "cuda" else None
    gpus, per_layer, assumed = predictions(layers, dtype, launch_here, launch_floors)
    report = Report(
        model=root,
        device=device,
        device_name=device_name(device),
        dtype=dtype,
        peaks=peaks,
        layers=tuple(
            Layer(**{**vars(layer), "predicted": predicted})
            for layer, predicted in zip(layers, per_layer, strict=True)
        ),
        counter_total=counter_total,
        forward_raw_seconds=forward,
        gpus=gpus,
        views=tuple(recorder.views),
        warnings=warnings,
        assumptions=assumed,
        peaks_source=source,
        interrupted="" if stop is None else _signal_name(stop),
        calls_counted=len(calls),
    )
    if stop is not None:
        stop.report = report  # type: ignore[attr-defined]
        raise stop
    return report


def _model_dtype(model: Any) -> str:
    """The dtype of the model's first floating-point weight (float32 when it has none)."""
    return next(
        (str(p.dtype).removeprefix("torch.") for p in model.parameters() if p.is_floating_point()),
        "float32",
    )


def _peaks(
    peaks: Peaks | None, sizes: RunSizes | None, device: str, progress: Progress | None
) -> tuple[Peaks, str, tuple[str, ...]]:
    """The peaks given, or this machine's measured now (at ``sizes``, resolved here when None)
    with the warnings they deserve; and which of the two they are."""
    if peaks is not None:
        return peaks, "given", ()
    from gpuconcepts.kernels import measure_peaks
    from gpuconcepts.sizing import RunSizes

    if progress is not None:
        progress("measuring this machine's peaks (--peaks RUN.json reuses a saved run's)")
    measured = measure_peaks(device, sizes or RunSizes.resolve(device, quick=device == "cpu"))
    return measured, "measured now", peaks_warnings(measured, device)


def _timed_calls(
    calls: Sequence[Call],
    cold: Sequence[bool],
    root: str,
    device: str,
    repeats: int,
    progress: Progress | None,
) -> tuple[dict[object, int], dict[object, tuple[float, ...]], BaseException | None]:
    """Each call replayed alone and timed, identical calls (same configuration, weights' and
    inputs' shapes) once: the index of each key's first call, each key's seconds, and the
    signal that stopped the timing (None when it ran to the end)."""
    first: dict[object, int] = {}
    for i, call in enumerate(calls):
        first.setdefault(call.key, i)
    timed_first = sorted(first.values())
    replays = [
        Replay(call_name(calls[i]), _replay(calls[i], root, device), cold[i], storages(calls[i]))
        for i in timed_first
    ]
    raw, stop = time_calls(replays, device, repeats, progress)
    times = {calls[i].key: seconds for i, seconds in zip(timed_first, raw, strict=True) if seconds}
    return first, times, stop


def _timed_forward(
    model: Any,
    inputs: tuple[tuple[Any, ...], dict[str, Any]],
    device: str,
    repeats: int,
    progress: Progress | None,
) -> tuple[tuple[float, ...], BaseException | None]:
    """The plain forward pass timed in inference mode, or the signal that stopped it."""
    import torch

    if progress is not None:
        progress("timing the plain forward pass")
    try:
        with torch.inference_mode():
            plain = _failing_as_one_line(
                lambda: model(*inputs[0], **inputs[1]),
                f"{type(model).__name__}: the plain forward pass (in inference mode)",
                device,
            )
            return time_forward(plain, device, repeats), None
    except (KeyboardInterrupt, Terminated) as interrupt:
        return (), interrupt


def _layers(
    calls: Sequence[Call],
    counted: Sequence[tuple[int, str, int, str]],
    cold: Sequence[bool],
    timings: tuple[dict[object, int], dict[object, tuple[float, ...]]],
    device: str,
    peaks: Peaks,
) -> list[Layer]:
    """A row for each timed call (a call the interruption left untimed has none), placed
    under ``peaks``."""
    first, times = timings
    layers = []
    for index, (call, (flops, formula, traffic, traffic_source), flushed) in enumerate(
        zip(calls, counted, cold, strict=True), start=1
    ):
        if call.key not in times:
            continue  # interrupted before its timing
        seconds = times[call.key]
        rows, row_bytes = gathers(call.module, call.input_shapes)
        timing = Measurement(
            call.path, device, {}, tuple(seconds), flops, traffic,
            random_rows=rows, row_bytes=row_bytes,
        )  # fmt: skip
        layers.append(
            Layer(
                index=index,
                path=call.path,
                type=call.type,
                call=call.call,
                input_shapes=call.input_shapes,
                output_shapes=call.output_shapes,
                dtype=call.dtype,
                flops=flops,
                flops_source=formula,
                counter_flops=call.counter_flops,
                bytes=traffic,
                bytes_source=traffic_source,
                raw_seconds=seconds,
                flushed=flushed,
                bound=observed_bound(timing, peaks),
                above_roof=verdict(timing, peaks).beaten,
                faster_path=faster_path(timing, peaks),
                warning=uncounted(call) if flops == 0 else "",
                shares_timing_of=None if first[call.key] == index - 1 else first[call.key] + 1,
            )
        )
    return layers


def _replay(call: Call, root: str, device: str) -> Callable[[], object]:
    """The call again, alone, on its copied arguments."""
    target, args, kwargs = call.target, call.args, call.kwargs
    shapes = ", ".join("×".join(map(str, s)) or "scalar" for s in call.input_shapes)
    what = f"{root}: {call.type} {call_name(call)!r}, replayed alone on inputs of shape {shapes},"
    return _failing_as_one_line(lambda: target(*args, **kwargs), what, device)


def _failing_as_one_line(fn: Callable[[], object], what: str, device: str) -> Callable[[], object]:
    """``fn``, whose failure (a call that ran in the counting pass but not again, out of
    memory) is one GpuConceptsError saying ``what`` failed; Ctrl-C and SIGTERM pass."""

    def checked() -> object:
        try:
            return fn()
        except Exception as error:  # noqa: BLE001 - whatever the user's model raises, in one line
            if is_out_of_memory(error):
                message = out_of_memory_message(error, what.rstrip(","), device)
                raise GpuConceptsError(message) from None
            raise GpuConceptsError(f"{what} failed with {first_line(error)}") from None

    return checked


def _signal_name(stop: BaseException) -> str:
    return "Ctrl-C" if isinstance(stop, KeyboardInterrupt) else "SIGTERM"
