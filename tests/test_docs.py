"""The README keeps the two set-up commands CI runs, verbatim, and stays short; the docs site's
pages exist (mkdocs build --strict checks their links in CI), and its API reference lists every
public class."""

import re
from pathlib import Path

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
