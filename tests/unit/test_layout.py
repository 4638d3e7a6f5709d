"""The layout docs/layout.md describes, held: modules small enough to read, a package per part, each
saying what it may import. (The layers themselves are import-linter's contracts, `make lint`.)"""

from __future__ import annotations

import ast
from pathlib import Path

SERVICE = Path(__file__).resolve().parents[2] / "service"
MOST_LINES = 400
MOST_LOOSE = 6


def test_no_module_is_over_400_lines() -> None:
    long = {
        str(p.relative_to(SERVICE)): n
        for p in SERVICE.rglob("*.py")
        if (n := len(p.read_text("utf-8").splitlines())) > MOST_LINES
    }
    assert long == {}


def test_at_most_six_loose_modules_lie_at_the_top() -> None:
    loose = sorted(p.name for p in SERVICE.glob("*.py") if p.name not in ("__init__.py", "entry_point.py"))
    assert len(loose) <= MOST_LOOSE, loose


def test_every_package_says_what_it_is_and_what_it_may_import() -> None:
    packages = [p.parent for p in SERVICE.rglob("__init__.py") if "__pycache__" not in p.parts and p.parent != SERVICE]
    silent = [
        str(package.relative_to(SERVICE))
        for package in packages
        if "May import" not in (ast.get_docstring(ast.parse((package / "__init__.py").read_text("utf-8"))) or "")
    ]
    assert packages and silent == []


def test_every_package_is_in_the_layers_docs_layout_md_lists() -> None:
    layout = (SERVICE.parent / "docs" / "layout.md").read_text("utf-8")
    top = [p.name for p in SERVICE.iterdir() if (p / "__init__.py").is_file()]
    assert [name for name in top if f"`{name}/`" not in layout] == []
