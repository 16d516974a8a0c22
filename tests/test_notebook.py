"""The notebook users meet first (examples/dataframes.ipynb) runs, and docs/api.md shows it."""

from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
API = Path(__file__).resolve().parents[1] / "docs" / "api.md"


def cells() -> list[str]:
    import nbformat

    notebook = nbformat.read(EXAMPLES / "dataframes.ipynb", as_version=4)
    return [c.source for c in notebook.cells if c.cell_type == "code"]


def test_docs_api_leads_with_the_notebooks_code():
    pytest.importorskip("nbformat")
    text = API.read_text()
    assert text.index("## From a DataFrame") < text.index("## From files")
    for source in cells():
        assert f"```python\n{source}\n```" in text, source.splitlines()[0]


def test_the_notebook_runs_on_the_public_data(data_dir):
    """Its outputs stay out of the repository: they would show rows of the datasets."""
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("nbclient")
    pytest.importorskip("movingpandas")
    from nbclient import NotebookClient

    path = EXAMPLES / "dataframes.ipynb"
    notebook = nbformat.read(path, as_version=4)
    assert all(not c.get("outputs") for c in notebook.cells if c.cell_type == "code")
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(EXAMPLES)}}).execute()
    errors = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert errors == []
    assert any("LINESTRING" in str(o.get("data", {}).get("text/plain", "")) for c in notebook.cells
               if c.cell_type == "code" for o in c.outputs)
