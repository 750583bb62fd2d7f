"""Rendering, in one home: runs, measurements and claims as text (CLI) and Markdown (book), and
the plots.

:mod:`~gpuconcepts.render.text` (text for the command line, and the sentences the pages say),
:mod:`~gpuconcepts.render.markdown` (the book's tables) are re-exported here;
:mod:`~gpuconcepts.render.style` holds the one plot style, and
:mod:`gpuconcepts.render.plots` the figures (roofline, claims, distributed, the post's
diagrams). This package's namespace leaves the plots out on purpose: importing
:mod:`gpuconcepts.render` must not import the packages the plots draw (the distributed package
imports this one for its text).
"""

from __future__ import annotations

from gpuconcepts.render.markdown import (
    MEASUREMENT_COLUMNS as MEASUREMENT_COLUMNS,
)
from gpuconcepts.render.markdown import (
    markdown_claim as markdown_claim,
)
from gpuconcepts.render.markdown import (
    markdown_claims_summary as markdown_claims_summary,
)
from gpuconcepts.render.markdown import (
    markdown_claims_table as markdown_claims_table,
)
from gpuconcepts.render.markdown import (
    markdown_table as markdown_table,
)
from gpuconcepts.render.markdown import (
    measurement_table as measurement_table,
)
from gpuconcepts.render.text import (
    EXPLAINED as EXPLAINED,
)
from gpuconcepts.render.text import (
    WIDTH as WIDTH,
)
from gpuconcepts.render.text import (
    chain_bound as chain_bound,
)
from gpuconcepts.render.text import (
    chain_sentence as chain_sentence,
)
from gpuconcepts.render.text import (
    cold_read_sentence as cold_read_sentence,
)
from gpuconcepts.render.text import (
    cold_start_sentence as cold_start_sentence,
)
from gpuconcepts.render.text import (
    compare_dict as compare_dict,
)
from gpuconcepts.render.text import (
    compare_rows as compare_rows,
)
from gpuconcepts.render.text import (
    explained as explained,
)
from gpuconcepts.render.text import (
    format_claim as format_claim,
)
from gpuconcepts.render.text import (
    format_claims as format_claims,
)
from gpuconcepts.render.text import (
    format_compare as format_compare,
)
from gpuconcepts.render.text import (
    format_measurements as format_measurements,
)
from gpuconcepts.render.text import (
    format_peaks as format_peaks,
)
from gpuconcepts.render.text import (
    format_run as format_run,
)
from gpuconcepts.render.text import (
    gemm_shape_sentence as gemm_shape_sentence,
)
from gpuconcepts.render.text import (
    observed as observed,
)
from gpuconcepts.render.text import (
    random_access_sentence as random_access_sentence,
)
from gpuconcepts.render.text import (
    tally_sentence as tally_sentence,
)
from gpuconcepts.render.text import (
    tally_text as tally_text,
)
from gpuconcepts.render.text import (
    time_spread as time_spread,
)
from gpuconcepts.render.text import (
    why_unexplained as why_unexplained,
)
