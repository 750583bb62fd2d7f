"""The user's model: a factory from ``FILE.py:FACTORY`` or an importable ``pkg.module:fn``,
called once; the command line fences what the user's code prints or raises. FILE.py is imported and runs with
the user's rights, as ``python FILE.py`` would."""

# torch is imported inside functions (README, Rules: 3).
# ruff: noqa: PLC0415

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from gpuconcepts.analysis.failures import first_line, is_out_of_memory, out_of_memory_message
from gpuconcepts.analysis.inputs import NAME
from gpuconcepts.errors import GpuConceptsError


def load_factory(spec: str) -> Callable[[], Any]:
    """The function ``FACTORY`` of ``FILE.py`` in a ``FILE.py:FACTORY`` spec."""
    import importlib.util
    from pathlib import Path

    file, sep, name = spec.rpartition(":")
    if not sep or not file or not name:
        raise GpuConceptsError(f"{spec!r}: expected FILE.py:FACTORY, e.g. model.py:build")
    path = Path(file)
    if not path.is_file():
        raise GpuConceptsError(f"{spec!r}: no such file {file!r}")
    loader = importlib.util.spec_from_file_location(f"_gpuconcepts_model_{path.stem}", path)
    if loader is None or loader.loader is None:
        raise GpuConceptsError(f"{spec!r}: {file!r} is not a Python file")
    namespace = importlib.util.module_from_spec(loader)
    try:
        loader.loader.exec_module(namespace)
    except Exception as error:  # noqa: BLE001 - whatever the user's file raises, in one line
        raise GpuConceptsError(f"{file} raised {first_line(error)} while loading") from None
    return _factory_in(namespace, file, name)


def import_factory(spec: str) -> Callable[[], Any]:
    """The function of a ``pkg.module:fn`` spec (``--factory``): the module is imported as
    ``import pkg.module`` would, from the installed packages and the working directory."""
    import importlib

    module_name, sep, name = spec.rpartition(":")
    if (
        not sep
        or not module_name
        or not name
        or not all(NAME.match(part) for part in (*module_name.split("."), name))
    ):
        raise GpuConceptsError(
            f"--factory {spec!r}: expected pkg.module:function, e.g. torchvision.models:resnet18"
        )
    if "" not in sys.path and "." not in sys.path:
        sys.path.insert(0, "")  # as `python -c "import pkg.module"` from here would find it
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        raise GpuConceptsError(
            f"--factory {spec!r}: no module named {error.name!r} (is it installed?)"
        ) from None
    except Exception as error:  # noqa: BLE001 - whatever the module raises, in one line
        raise GpuConceptsError(f"{module_name} raised {first_line(error)} while loading") from None
    return _factory_in(module, module_name, name)


def _factory_in(namespace: Any, where: str, name: str) -> Callable[[], Any]:
    factory = getattr(namespace, name, None)
    if factory is None:
        defined = sorted(
            n for n, v in vars(namespace).items() if callable(v) and not n.startswith("_")
        )
        shown = ", ".join(defined[:12]) + (", ..." if len(defined) > 12 else "")
        raise GpuConceptsError(f"{where} defines no {name!r}; its callables are {shown or 'none'}")
    if not callable(factory):
        raise GpuConceptsError(f"{where}: {name} is a {type(factory).__name__}, not a function")
    return factory  # type: ignore[no-any-return]


def build_model(spec: str, *, module: bool = False) -> Any:
    """Call the factory of a ``FILE.py:FACTORY`` spec (or, with ``module``, of a
    ``pkg.module:fn`` one); it must return a ``torch.nn.Module``."""
    import torch

    factory = import_factory(spec) if module else load_factory(spec)
    name = spec.rpartition(":")[2]
    try:
        model = factory()
    except Exception as error:  # noqa: BLE001 - whatever the factory raises, in one line
        if is_out_of_memory(error):
            raise GpuConceptsError(out_of_memory_message(error, f"{name}()", "cpu")) from None
        raise GpuConceptsError(f"factory {name}() raised {first_line(error)}") from None
    if not isinstance(model, torch.nn.Module):
        raise GpuConceptsError(
            f"factory {name}() returned {type(model).__name__} {model!r:.40}, not a torch.nn.Module"
        )
    return model
