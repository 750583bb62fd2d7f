"""Size expressions: how a workload names a size it derives from a kernel's params, such as
``S*B``, ``d_in+d_h`` or ``d/heads`` (names, whole numbers, ``+``, ``*`` and ``/``).

>>> size_of("2*B*heads", {"B": 4, "heads": 8}), size_of("d_in+d_h", {"d_in": 3, "d_h": 5})
(64, 8)
>>> all_known(["d/heads"], {"d": 512}), all_known(["d/heads"], {"d": 512, "heads": 8})
(False, True)
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import cast


def all_known(names: list[str], params: Mapping[str, object]) -> bool:
    """Whether ``params`` hold, as whole numbers, every size the expressions ``names`` use."""
    parts = {part for name in names for part in re.split(r"[+*/]", name) if not part.isdigit()}
    return all(isinstance(params.get(part), int) for part in parts)


def size_of(name: str, params: Mapping[str, object]) -> int:
    """The value of a size expression (names, whole numbers, ``+``, ``*`` and ``/``; ``+``
    binds loosest) for a kernel's params, which hold each name (:func:`all_known`)."""
    if "+" in name:
        return sum(size_of(part, params) for part in name.split("+"))
    if "*" in name:
        return math.prod(size_of(part, params) for part in name.split("*"))
    if "/" in name:
        whole, part = name.split("/")
        return size_of(whole, params) // size_of(part, params)
    return int(name) if name.isdigit() else cast("int", params[name])
