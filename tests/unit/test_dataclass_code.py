"""Dataclasses made under dataclass_code.kept() behave as plain ones, and take their generated
methods' code from the store when it holds them."""

from __future__ import annotations

import dataclasses
import marshal
from collections.abc import Callable
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from typing import Any

import pytest

from service.support.dataclass_code import kept


@pytest.fixture(autouse=True)
def _bytecode_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """As installed: this suite itself runs under PYTHONDONTWRITEBYTECODE."""
    monkeypatch.setattr("sys.dont_write_bytecode", False)


def _made() -> type[Any]:
    @dataclasses.dataclass(frozen=True, order=True)
    class Seat:
        chair: int
        name: str = "p0"
        seen: tuple[str, ...] = dataclasses.field(default=(), compare=False)

    return Seat


def _stored(store: Path) -> dict[str, Any]:
    held = store.read_bytes()
    assert held.startswith(MAGIC_NUMBER)
    codes: dict[str, Any] = marshal.loads(held[len(MAGIC_NUMBER) :])
    return codes


def _behaviour(seat: type[Any]) -> list[Any]:
    one, other = seat(1, "a", ("x",)), seat(2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.chair = 3
    with pytest.raises(TypeError):
        seat()
    same = seat(1, "a")
    return [repr(one), repr(other), one == same, one < other, hash(one) == hash(same), seat.__init__.__annotations__]


def test_cold_then_warm_classes_behave_as_plain_ones(tmp_path: Path) -> None:
    store = tmp_path / "dataclasses.marshal"
    plain = _behaviour(_made())
    with kept(store):
        cold = _behaviour(_made())
    assert any("def __init__" in source for source in _stored(store))
    written = store.stat().st_mtime_ns
    with kept(store):
        warm = _behaviour(_made())
    assert plain == cold == warm
    assert plain[0] == "_made.<locals>.Seat(chair=1, name='a', seen=('x',))"
    assert store.stat().st_mtime_ns == written  # nothing was missing: nothing written


def test_the_stored_code_is_the_code_used(tmp_path: Path) -> None:
    store = tmp_path / "dataclasses.marshal"
    with kept(store):
        _made()
    codes = _stored(store)
    [source] = [s for s in codes if "def __repr__" in s]
    planted = source.replace("self.__class__.__qualname__ +", "'planted' +")
    assert planted != source
    codes[source] = compile(planted, "<string>", "exec")
    store.write_bytes(MAGIC_NUMBER + marshal.dumps(codes))
    with kept(store):
        seat = _made()
    assert repr(seat(1)) == "planted(chair=1, name='p0', seen=())"


@pytest.mark.parametrize(
    "damage",
    [lambda store: store.write_bytes(b"not marshal"), lambda store: store.write_bytes(MAGIC_NUMBER + b"\x00\x01")],
)
def test_a_damaged_store_is_compiled_anew_and_replaced(tmp_path: Path, damage: Callable[[Path], Any]) -> None:
    store = tmp_path / "dataclasses.marshal"
    damage(store)
    with kept(store):
        assert _behaviour(_made()) == _behaviour(_made())
    assert any("def __init__" in source for source in _stored(store))


def test_nothing_is_written_where_bytecode_is_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.dont_write_bytecode", True)
    with kept(tmp_path / "dataclasses.marshal"):
        _made()
    assert list(tmp_path.iterdir()) == []


def test_dataclasses_compile_their_own_code_again_after_the_block_even_when_it_raises(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), kept(tmp_path / "dataclasses.marshal"):
        assert "exec" in vars(dataclasses)
        raise RuntimeError
    assert "exec" not in vars(dataclasses)
