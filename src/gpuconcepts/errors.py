"""The one exception type of gpuconcepts."""

from __future__ import annotations


class GpuConceptsError(ValueError):
    """Bad input to a formula, a kernel or the CLI.

    The message echoes what the caller gave and then says which rule it broke, so that
    the CLI can print it as a single line with no traceback.
    """


class GpuConceptsTypeError(GpuConceptsError, TypeError):
    """A value of the wrong type (a float where a count is required, a string, ...)."""


class Terminated(BaseException):
    """SIGTERM, raised where the program is, as Ctrl-C raises KeyboardInterrupt.

    The command line turns the signal into this exception so that every ``finally`` and
    ``with`` block on the way out runs: worker processes are stopped, temporary folders
    removed, a half-written file never replaces its destination. Like KeyboardInterrupt it
    is not an :class:`Exception`, so ``except Exception`` in user code does not swallow it.
    """


def require(module: str, user: str, extra: str) -> None:
    """Raise a one-line GpuConceptsError when the optional ``module`` is not installed.

    ``user`` names what needs it (a command, a module) and ``extra`` the pip extra that
    brings it, so the message says exactly what to run:

    >>> require("no_such_module", "`profile`", "kernels")
    Traceback (most recent call last):
    ...
    gpuconcepts.errors.GpuConceptsError: `profile` needs no_such_module: pip install gpuconcepts[kernels]
    """
    import importlib.util  # noqa: PLC0415  (only the callers that need a check pay for it)

    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a module set to None in sys.modules, a broken install
        found = False
    if not found:
        raise GpuConceptsError(f"{user} needs {module}: pip install gpuconcepts[{extra}]")
