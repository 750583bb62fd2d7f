"""The built book measures once: a kernel at given sizes shows one time on every page.

Every measurement table marks the run its rows come from (``data-run`` on the sizes, see
:func:`gpuconcepts.render.measurement_table`): the build's own run is ``live``, a recorded run
is named by its device and date. Rows of one run, kernel and sizes must show the same time
wherever they appear, because every page reads the same Run.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import Site

pytestmark = pytest.mark.site

ROW = re.compile(r"<tr[^>]*>(.*?)</tr>", re.DOTALL)
CELL = re.compile(r"<td[^>]*>(.*?)</td>", re.DOTALL)
KERNEL = re.compile(r"<code[^>]*>(?:<span[^>]*>)?([\w-]+)(?:</span>)?</code>")
SIZES = re.compile(r'<small data-run="([^"]+)">(.*?)</small>', re.DOTALL)
TAG = re.compile(r"<[^>]+>")


def rows_by_run(html: str) -> list[tuple[tuple[str, str, str], str]]:
    """``((run, kernel, sizes), time)`` for every measurement-table row of a page."""
    found = []
    for row in ROW.findall(html):
        cells = CELL.findall(row)
        for i, cell in enumerate(cells[:-1]):
            sizes, kernel = SIZES.search(cell), KERNEL.search(cell)
            if sizes and kernel:
                time = TAG.sub("", cells[i + 1]).replace("\xa0", " ").strip()
                found.append(((sizes.group(1), kernel.group(1), sizes.group(2)), time))
    return found


def test_rows_are_read_from_a_table() -> None:
    html = (
        '<table><tr><td>1</td><td><code class="literal"><span class="pre">mlp</span></code>'
        '<br/><small data-run="live">B=4, float32</small></td><td>3\xa0ms\xa0±\xa01\xa0ms</td>'
        "</tr></table>"
    )
    assert rows_by_run(html) == [(("live", "mlp", "B=4, float32"), "3 ms ± 1 ms")]


def test_one_kernel_at_one_size_shows_one_time_everywhere(site: Site) -> None:
    if not site.built:
        pytest.skip("no built book")
    seen: dict[tuple[str, str, str], dict[str, str]] = defaultdict(dict)
    pages: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for page in site.pages:
        html = (site.root / page).read_text(encoding="utf-8")
        for key, time in rows_by_run(html):
            seen[key].setdefault(time, page)
            pages[key].add(page)
    live = [key for key in seen if key[0] == "live"]
    assert len(live) >= 10, "the roofline appendix shows the build's measurements"
    # the check has something to compare: the recorded GPU run's kernels lead each chapter
    # and appear again in the appendices (issue 46 moved the build's tables to an appendix)
    assert sum(len(pages[key]) >= 2 for key in seen) >= 5
    differing = {key: times for key, times in seen.items() if len(times) > 1}
    assert differing == {}, f"one kernel and size, several times: {differing}"


def comparison_columns(html: str) -> list[list[str]]:
    """The run columns of a comparison table (every cell after the first of each row)."""
    columns: list[list[str]] = []
    for row in ROW.findall(html):
        cells = [TAG.sub("", c).replace("\xa0", " ").strip() for c in CELL.findall(row)][1:]
        for i, cell in enumerate(cells):
            if len(columns) <= i:
                columns.append([])
            columns[i].append(cell)
    return columns


def test_two_columns_of_one_comparison_are_read_apart() -> None:
    html = "<table><tr><td>mlp</td><td>1 ms</td><td>2 ms</td></tr></table>"
    assert comparison_columns(html) == [["1 ms"], ["2 ms"]]


def test_machines_side_by_side_shows_each_run_in_its_own_column(site: Site) -> None:
    # two runs that carried one label once made every row show the first run twice
    path = site.find("devices")
    assert path is not None
    html = (site.root / path).read_text(encoding="utf-8")
    workloads = html[html.index("<p>Kernel</p>") :]
    table = workloads[: workloads.index("</table>")]
    columns = comparison_columns(table)
    runs = [c for c in columns if any(cell != "—" for cell in c)]
    assert len(runs) >= 2, "the build's run and at least one recorded run"
    assert all(a != b for i, a in enumerate(runs) for b in runs[i + 1 :])
