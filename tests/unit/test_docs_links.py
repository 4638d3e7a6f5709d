"""Every relative link of the README and docs/ names a file that exists, and a heading of it."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def anchors(page: Path) -> set[str]:
    """GitHub's anchor for each heading of a Markdown page."""
    text = re.sub(r"(?ms)^```.*?^```", "", page.read_text("utf-8"))
    return {
        re.sub(r"[^a-z0-9 _-]", "", heading.lower()).replace(" ", "-")
        for heading in re.findall(r"^#+ (.+)$", text, re.M)
    }


def test_every_relative_link_resolves_to_a_file_and_a_heading() -> None:
    broken = []
    for page in PAGES:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text("utf-8")):
            if re.match(r"[a-z]+:", target):
                continue  # an absolute URL
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert broken == []


def test_the_codes_the_runbook_names_are_codes_the_service_answers() -> None:
    """Before: the runbook named a fault code, ``invalid``, that no longer exists."""
    import yaml

    from service.problem_types import PROBLEM_TYPES

    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text("utf-8"))
    codes = set(spec["components"]["schemas"]["Fault"]["properties"]["code"]["enum"])
    codes |= {slug.replace("-", "_") for slug in PROBLEM_TYPES}  # a problem's own code (maubinh_refusals_total)
    runbook = (ROOT / "docs" / "runbook.md").read_text("utf-8")
    section = runbook.split("## MaubinhRefusalsJumped", 1)[1].split("\n## ", 1)[0]
    named = {code for line in section.splitlines() if line.strip().startswith("- `")
             for code in re.findall(r"`([a-z_]+)`", line.split(":", 1)[0])}  # fmt: skip
    assert len(named) >= 10
    assert named - codes == set()
