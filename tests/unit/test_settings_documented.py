"""Every setting the service reads from the environment has its row in docs/operations.md's settings table."""

from pathlib import Path

from service.api.config import _READERS, PREFIX

OPERATIONS = Path(__file__).resolve().parents[2] / "docs" / "operations.md"


def test_every_setting_has_its_row_in_the_settings_table() -> None:
    rows = [line for line in OPERATIONS.read_text("utf-8").splitlines() if line.startswith("| `MAUBINH_")]
    missing = [name for name, _, _ in _READERS if not any(f"`{PREFIX}{name}`" in row for row in rows)]
    assert missing == []
