"""The README keeps the two set-up commands CI runs, verbatim, and stays short; the docs site's
pages exist (mkdocs build --strict checks their links in CI), and its API reference lists every
public class."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_readme_set_up_commands_are_the_ones_ci_runs():
    readme = (ROOT / "README.md").read_text()
    setup = readme.split("## Set-up", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```bash\n(.*?)\n```", setup, flags=re.S)
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.startswith("python -m pip")]
    assert commands == ci and len(ci) == 2
    assert "locsynth demo" in ci[0] and "pytest" in ci[1] and "mkdocs build --strict" in ci[1]


def test_the_readme_is_short_and_its_links_exist():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) < 150
    for link in re.findall(r"\]\((docs/[^)]+)\)", readme):
        assert (ROOT / link).is_file(), link


def test_every_page_of_the_site_exists():
    nav = re.findall(r":\s+(\S+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), flags=re.M)
    assert len(nav) >= 12
    for page in nav:
        assert (ROOT / "docs" / page).is_file(), page


def test_the_api_reference_lists_every_public_class():
    """The protocol, the common checks and every registered method's class (a method registered
    without a page here fails)."""
    from locsynth import registry

    listed = set(re.findall(r"^::: (\S+)", (ROOT / "docs" / "api_reference.md").read_text(), flags=re.M))
    public = {"locsynth.synth.base.Synthesizer", "locsynth.synth.base.Anonymizer", "locsynth.synth.base.Tags",
              "locsynth.testing.check_method", "locsynth.data.traces.TraceSet", "locsynth.synth.registry"}
    for name in registry.names():
        if not registry.method(name).missing():
            cls = registry.get(name)
            public.add(f"{cls.__module__}.{cls.__qualname__}")
    assert public - listed == set()


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site as ``mkdocs build --strict`` makes it (into a temporary folder)."""
    out = tmp_path_factory.mktemp("site")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)], cwd=ROOT,
                            capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 0, result.stderr[-2000:]
    return out


def test_the_site_works_from_disk_every_link_a_page_and_nothing_fetched(site):
    """Opened from file://, a navigation link must name a page, not a folder (no directory URLs),
    and every script the pages load is the site's own (the search worker's shim is vendored)."""
    pages = sorted(p for p in site.rglob("*.html") if p.name != "404.html")      # a server's page only
    assert len(pages) >= 15
    for page in pages:
        html = page.read_text()
        for href in re.findall(r'class="md-nav__link[^"]*"[^>]*href="([^"#]+)"|href="([^"#]+)"[^>]*class="md-nav__link',
                               html):
            target = next(h for h in href if h)
            if not target.startswith(("http:", "https:", "mailto:")):
                assert (page.parent / target).is_file(), (page.name, target)
        assert not re.findall(r'<script[^>]+src="https?:', html), page.name


def test_a_search_from_file_finds_pages(site):
    """Headless Chromium opens the built site from file:// with a query: the search answers."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if chromium is None:
        pytest.skip("no Chromium here (apt-get install -y chromium)")
    dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--virtual-time-budget=10000", "--dump-dom",
                          (site / "index.html").as_uri() + "?q=ledger"], capture_output=True, text=True, timeout=120).stdout
    found = re.search(r'md-search-result__meta">(\d+) matching document', dom)
    assert found and int(found.group(1)) > 0, dom[-500:]


def test_no_raw_sphinx_role_on_the_site_and_every_method_says_what_it_is(site):
    """The docstrings' roles render as links or code (hooks/sphinx_roles.py), never as ':func:'; the
    first line of every method's class docstring (what help() shows) says what it is, not only
    where to look."""
    import inspect

    from locsynth import registry

    for page in site.rglob("*.html"):
        raw = re.findall(r":(?:func|class|meth|mod|attr|data):<code>", page.read_text())
        assert not raw, (page.name, len(raw))
    for name in registry.names():
        if not registry.method(name).missing():
            first = (inspect.getdoc(registry.get(name)) or "").splitlines()[0]
            assert not re.fullmatch(r"\w+ \(module docstring\)\.", first), name


def test_no_literal_double_backquotes_and_no_prose_in_a_type_column(site):
    """A docstring's compact ``name : text`` line puts its text in the API reference's type column,
    shown as code as it is: RST's double backquotes stayed there as they were written (issue 53:
    six on the page, ``privacy_test``, ``status`` ...). No page shows two backquotes outside a code
    block, inside <code> or not, and no parameter's type is prose."""
    import html

    for page in site.rglob("*.html"):
        text = re.sub(r"<pre.*?</pre>", "", page.read_text(), flags=re.S)
        found = re.findall(r"[^\n]{0,60}``[^\n]{0,30}", text)
        assert not found, (page.name, found[:3])
    reference = (site / "api_reference.html").read_text()
    types = re.findall(r'<tr class="doc-section-item">\s*<td>.*?</td>\s*<td>\s*<code>(.*?)</code>', reference,
                       flags=re.S)
    prose = [t for t in (html.unescape(re.sub(r"<[^>]+>", "", t)) for t in types) if len(t) > 50]
    assert len(types) > 100 and not prose, prose[:3]


def test_every_public_name_the_guide_and_the_notebook_use_is_in_the_api_reference(site):
    """locsynth.NAME (a class or function) and every TraceSet method the API guide or the notebook
    calls has its entry on the API reference page."""
    import inspect

    import locsynth
    from locsynth import TraceSet

    ids = set(re.findall(r'id="(locsynth[\w.]*)"', (site / "api_reference.html").read_text()))
    text = (ROOT / "docs" / "api.md").read_text() + (ROOT / "examples" / "dataframes.ipynb").read_text()
    wanted = set()
    for name in set(re.findall(r"locsynth\.([A-Za-z_]\w*)\b", text)):
        obj = getattr(locsynth, name, None)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            wanted.add(f"{obj.__module__}.{obj.__qualname__}")
    for name in set(re.findall(r"\.([a-z_]\w*)\(", text)):
        if not name.startswith("_") and callable(getattr(TraceSet, name, None)):
            wanted.add(f"locsynth.data.traces.TraceSet.{name}")
    assert len(wanted) >= 8 and wanted - ids == set()
