"""Which ledger counts a claim, and the tally of the post's claims (issue 45: facts and the
model's own predictions are shown apart, never tallied)."""

from __future__ import annotations

from collections.abc import Sequence

from gpuconcepts.results.claim import VERDICTS, ClaimResult, Verdict
from gpuconcepts.results.registry import Ledger, ledger


def tally(claims: Sequence[ClaimResult]) -> dict[Verdict, int]:
    """How many of the post's claims hold, fail, or are not visible: facts and the model's
    own predictions are left out (:func:`in_ledger`; issue 45: a count is not evidence of a
    claim, and the model is scored apart).

    >>> from gpuconcepts.results.claim import example
    >>> tally([example(), example(1.0), example(2.5, interval=(1.8, 3))])
    {'holds': 1, 'fails': 1, 'undecided': 1, 'not visible': 0}
    >>> from dataclasses import replace
    >>> tally([replace(example(), key="kv-cache-exact"), replace(example(), key="decode-knee")])
    {'holds': 0, 'fails': 0, 'undecided': 0, 'not visible': 0}
    """
    counts: dict[Verdict, int] = dict.fromkeys(VERDICTS, 0)
    for result in in_ledger(claims, "post"):
        counts[result.verdict] += 1
    return counts


def in_ledger(claims: Sequence[ClaimResult], which: Ledger) -> tuple[ClaimResult, ...]:
    """The claims counted in ``which`` (:data:`~gpuconcepts.results.registry.Ledger`): the
    post's claims, the facts, or the model's predictions, in their order.

    >>> from dataclasses import replace
    >>> from gpuconcepts.results.claim import example
    >>> [r.key for r in in_ledger([example(), replace(example(), key="kv-cache-exact")], "fact")]
    ['kv-cache-exact']
    """
    return tuple(result for result in claims if ledger(result.key) == which)
