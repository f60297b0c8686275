"""The notebooks under notebooks/ run top to bottom in a real Jupyter kernel (the venv's own
Python, through a kernelspec written for this interpreter), and every notebook in the repo is
stored without outputs. The headline figures are the bundled case's, as
sample_logs/glm53/truth.json holds them: 155 exposed responses."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import REPO
from ipykernel.kernelspec import write_kernel_spec
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

from forensics.render.figures import bundle

NOTEBOOKS = REPO / "notebooks"
CELL_TIMEOUT = 300
BUNDLED_HEADLINE = (
    "exposed responses: 155 (range 155-158)",  # the 3 unparsable gateway lines: max side
    "affected accounts: 11",
    "excluded (requests, by reason): internal-test 60, security-researcher 50",
    "verdict: consistent_with_normal_usage",
)


def _notebooks() -> list[Path]:
    return sorted(NOTEBOOKS.glob("*.ipynb"))


@pytest.fixture(scope="module")
def kernel_dir(tmp_path_factory) -> Path:
    """A folder holding a `python3` kernelspec whose argv runs this very interpreter."""
    folder = tmp_path_factory.mktemp("kernels")
    write_kernel_spec(folder / "python3")
    return folder


def _execute(nb: nbformat.NotebookNode, kernel_dir: Path) -> nbformat.NotebookNode:
    """Run every cell in a fresh kernel started from `kernel_dir`, cwd = notebooks/."""
    km = KernelManager(
        kernel_name="python3", kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(kernel_dir)])
    )
    client = NotebookClient(
        nb,
        km=km,
        timeout=CELL_TIMEOUT,
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    return client.execute()


@pytest.fixture(scope="module")
def executed(kernel_dir) -> dict[str, nbformat.NotebookNode]:
    """Every notebook, executed once (a cell error fails the fixture, hence the tests)."""
    return {
        path.name: _execute(nbformat.read(path, as_version=4), kernel_dir) for path in _notebooks()
    }


def _text(cell: nbformat.NotebookNode) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            parts.append(out["text"])
        elif "data" in out:
            parts.append(out["data"].get("text/plain", ""))
    return "".join(parts)


def _tagged(nb: nbformat.NotebookNode, tag: str) -> nbformat.NotebookNode:
    cells = [c for c in nb.cells if tag in c.get("metadata", {}).get("tags", [])]
    assert len(cells) == 1, f"expected one cell tagged {tag!r}"
    return cells[0]


def test_there_is_a_walkthrough_and_a_template():
    assert {p.name for p in _notebooks()} >= {
        "walkthrough_glm53.ipynb",
        "new_case_template.ipynb",
    }


@pytest.mark.notebook
def test_the_kernel_runs_this_venvs_interpreter(kernel_dir):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import sys\nprint(sys.executable)\nprint(sys.prefix)")]
    out = _text(_execute(nb, kernel_dir).cells[0]).splitlines()
    assert out == [sys.executable, sys.prefix]


@pytest.mark.notebook
@pytest.mark.parametrize("name", [p.name for p in _notebooks()])
def test_notebook_runs_every_cell_without_error(executed, name):
    nb = executed[name]
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.execution_count is not None for c in code)
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert errors == []


@pytest.mark.notebook
def test_walkthrough_headline_equals_the_demo_figures(executed):
    text = _text(_tagged(executed["walkthrough_glm53.ipynb"], "headline"))
    for line in BUNDLED_HEADLINE:
        assert line in text.splitlines(), line


@pytest.mark.notebook
def test_walkthrough_shows_the_case_summary_as_html(executed):
    nb = executed["walkthrough_glm53.ipynb"]
    shown = [
        o["data"]["text/html"]
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if "data" in o and "kv-forensics-case" in o["data"].get("text/html", "")
    ]
    assert len(shown) == 1
    assert "Exposed responses</td><td" in shown[0] and ">155 (range 155-158)<" in shown[0]


@pytest.mark.notebook
def test_walkthrough_draws_the_timeline_as_a_vega_lite_chart(executed):
    nb = executed["walkthrough_glm53.ipynb"]
    cell = next(c for c in nb.cells if "case.timeline_chart()" in c.source)
    shown = "".join(
        str(value)
        for o in cell.outputs
        for mime, value in o.get("data", {}).items()
        if mime == "text/html" or mime.startswith("application/vnd.vegalite")
    )
    assert "vega" in shown
    assert "Incident timeline (UTC)" in shown


@pytest.mark.notebook
def test_template_with_its_default_parameters_opens_the_bundled_case(executed):
    text = _text(_tagged(executed["new_case_template.ipynb"], "headline"))
    assert "exposed responses: 155 (range 155-158)" in text.splitlines()


def test_template_starts_with_a_parameter_cell_naming_the_case():
    nb = nbformat.read(NOTEBOOKS / "new_case_template.ipynb", as_version=4)
    first = next(c for c in nb.cells if c.cell_type == "code")
    assert "parameters" in first.metadata.get("tags", [])
    assert first.source.splitlines()[1].startswith("CASE = ")


def test_every_notebook_in_the_repo_is_stored_without_outputs():
    paths = [
        p
        for p in REPO.rglob("*.ipynb")
        if not any(part.startswith(".") for part in p.relative_to(REPO).parts)
    ]
    assert paths
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [], f"{path.name}: cell {cell.get('id')} has outputs"
                assert cell.execution_count is None, f"{path.name}: cell {cell.get('id')}"
        assert "widgets" not in nb.metadata, path.name


def _chart_html(nb: nbformat.NotebookNode) -> list[str]:
    """The text/html of every chart output (cells calling a `*_chart()` method)."""
    return [
        o["data"]["text/html"]
        for c in nb.cells
        if c.cell_type == "code" and "_chart()" in c.source
        for o in c.outputs
        if "text/html" in o.get("data", {})
    ]


BUNDLE_SCRIPT = "<script>" + bundle() + "</script>"


@pytest.mark.notebook
@pytest.mark.parametrize("name", [p.name for p in _notebooks()])
def test_notebook_charts_draw_offline_with_vega_inlined_once(executed, name):
    shown = _chart_html(executed[name])
    assert len(shown) >= 2, "fewer than two charts drawn"
    for html in shown:
        assert re.search(r"<script[^>]*\bsrc\s*=", html, re.IGNORECASE) is None
        assert "requirejs" not in html and "cdn.jsdelivr.net" not in html
        assert "vegaEmbed(el, {" in html
    # the Vega + Vega-Lite + Vega-Embed bundle rides with the first chart only
    assert BUNDLE_SCRIPT in shown[0]
    assert all(BUNDLE_SCRIPT not in html for html in shown[1:])
    assert sum(html.count("vega-embed") > 0 for html in shown) >= 1


@pytest.mark.notebook
@pytest.mark.parametrize("name", [p.name for p in _notebooks()])
def test_an_executed_notebook_carries_the_vega_bundle_once(executed, name):
    """Each chart used to inline the bundle (~1 MB): the walkthrough's four charts made a
    4 MB notebook. Now the bundle is there once; the rest is the charts' data and tables."""
    nb = executed[name]
    html = [
        str(value)
        for cell in nb.cells
        for out in cell.get("outputs", [])
        for mime, value in out.get("data", {}).items()
        if mime == "text/html"
    ]
    assert sum(h.count(BUNDLE_SCRIPT) for h in html) == 1
    size = len(nbformat.writes(nb).encode("utf-8"))  # the .ipynb file's bytes
    assert size - len(BUNDLE_SCRIPT) < 1_000_000  # everything but the bundle: under 1 MB


def _notebook_page(nb: nbformat.NotebookNode, path: Path) -> Path:
    """The notebook's chart outputs on one page, in order, as an HTML export shows them."""
    body = "\n".join(_chart_html(nb))
    path.write_text(f"<!DOCTYPE html><html><body>{body}</body></html>", encoding="utf-8")
    return path


@pytest.mark.notebook
@pytest.mark.browser
def test_every_walkthrough_chart_draws_in_an_offline_browser(executed, tmp_path):
    from test_report_browser import Browser

    nb = executed["walkthrough_glm53.ipynb"]
    charts = len(_chart_html(nb))
    page = _notebook_page(nb, tmp_path / "walkthrough.html")
    profile = tmp_path / "chromium-profile"
    profile.mkdir()
    browser = Browser(profile)
    try:
        browser.open(
            page.as_uri(),
            f"document.querySelectorAll('.kv-forensics-chart svg').length === {charts}",
        )
        marks = browser.evaluate(
            "document.querySelectorAll('.kv-forensics-chart')[0]"
            ".querySelectorAll('svg g.role-mark > *').length"
        )
        drawn = browser.evaluate(
            "Array.from(document.querySelectorAll('.kv-forensics-chart'))"
            ".filter(el => el.querySelector('svg g.role-mark')).length"
        )
        errors, requested = browser.console_errors(), browser.requested_urls()
    finally:
        browser.close()
    assert drawn == charts  # each chart drew its marks with the one bundle of the first
    assert marks > 2 * 155  # the bundled case's 155 exposed responses, twice in the timeline
    assert errors == []
    assert requested == []


@pytest.mark.browser
def test_a_chart_without_the_bundle_says_how_to_load_it(tmp_path):
    from test_report_browser import Browser

    from forensics.render import figures

    html = figures.chart_html({"mark": "point", "data": {"values": []}}, with_bundle=False)
    page = tmp_path / "alone.html"
    page.write_text(f"<!DOCTYPE html><html><body>{html}</body></html>", encoding="utf-8")
    profile = tmp_path / "chromium-profile"
    profile.mkdir()
    browser = Browser(profile)
    try:
        # the chart waits BUNDLE_WAIT_MS for the bundle, then says it is missing
        browser.open(
            page.as_uri(),
            "(document.querySelector('.kv-forensics-chart') || {textContent: ''})"
            ".textContent.length > 0",
        )
        text = browser.evaluate("document.querySelector('.kv-forensics-chart').textContent")
    finally:
        browser.close()
    assert text == figures.NOT_LOADED
