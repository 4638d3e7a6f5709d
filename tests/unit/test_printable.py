"""What a file or a body says is shown escaped, wherever it is shown: the command line's lines and a
refusal's JSON pointer alike (a key holding a line break and U+202E added a forged line to rulesets
check's output through the pointer, found by an attack)."""

from __future__ import annotations

from service.cli.shared import on_terminal
from service.support.json_places import pointer
from service.support.printable import escaped


def test_control_characters_bidi_controls_and_lone_surrogates_are_escaped() -> None:
    said = "a\nb\x1b[2Jc\u202ed\u2066e\ud800f\x85g"
    assert escaped(said) == "a\\nb\\x1b[2Jc\\u202ed\\u2066e\\ud800f\\x85g"
    assert escaped("Nguyễn Văn A ♠ 10") == "Nguyễn Văn A ♠ 10"  # letters and symbols are not controls
    assert on_terminal(said) == escaped(said)
    assert pointer(("a\nrules/club-y/1.json: ok\u202e", 0)) == "/a\\nrules~1club-y~11.json: ok\\u202e/0"
