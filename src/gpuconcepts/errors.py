"""The one exception type of gpuconcepts."""

from __future__ import annotations


class GpuConceptsError(ValueError):
    """Bad input to a formula, a kernel or the CLI.

    The message echoes what the caller gave and then says which rule it broke, so that
    the CLI can print it as a single line with no traceback.
    """


class GpuConceptsTypeError(GpuConceptsError, TypeError):
    """A value of the wrong type (a float where a count is required, a string, ...)."""
