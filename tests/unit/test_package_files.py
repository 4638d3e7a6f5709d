"""Files shipped inside the package read the same from a folder (an install) and from a zip (Spark's
--py-files wheel)."""

from __future__ import annotations

import sys
import zipfile
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest

from service import package_files


@pytest.fixture
def zipped_package(tmp_path: Path) -> Iterator[str]:
    """A package ``zipped_rules`` importable only from a zip, with a data folder of two files."""
    archive = tmp_path / "zipped.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("zipped_rules/__init__.py", "")
        zipped.writestr("zipped_rules/data/b.json", b'{"b": 2}')
        zipped.writestr("zipped_rules/data/a.json", b'{"a": 1}')
    sys.path.insert(0, str(archive))
    try:
        yield "zipped_rules"
    finally:
        sys.path.remove(str(archive))
        sys.modules.pop("zipped_rules", None)


def test_a_zipped_package_is_read_through_importlib_resources(zipped_package: str) -> None:
    assert package_files.names(zipped_package, "data") == ["a.json", "b.json"]
    assert package_files.read_bytes(zipped_package, "data", "b.json") == b'{"b": 2}'


def test_an_installed_package_is_read_from_its_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    def not_here(package: str) -> None:
        raise AssertionError(f"{package} was read through importlib.resources, not from its folder")

    monkeypatch.setattr(resources, "files", not_here)
    folder = Path(sys.modules["service"].__file__ or "").parent
    assert (
        package_files.read_bytes("service.rulesets", "schema.json")
        == (folder / "rulesets" / "schema.json").read_bytes()
    )
    assert package_files.names("service.texts") == sorted(p.name for p in (folder / "texts").iterdir())
    assert "maubinh-2020" in package_files.names("service.rulesets", "builtin")
