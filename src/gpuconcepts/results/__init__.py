"""The values a judging produces, below everything that judges or renders them.

* :mod:`~gpuconcepts.results.plot` — :class:`Series` and :class:`PlotSpec`, what a claim draws;
* :mod:`~gpuconcepts.results.twosided` — :class:`TwoSided`, a claim as a two-sided test;
* :mod:`~gpuconcepts.results.claim` — :class:`ClaimResult` and its saved record, the tally;
* :mod:`~gpuconcepts.results.registry` — every claim by key: its judge, chapter and kind.

Each imports only values (records, units, errors), so a Run reads its claims with no judge,
kernel or lab loaded.
"""
