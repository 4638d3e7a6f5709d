"""The contract names every fault code and problem type the service can answer, and no other."""

import ast
from pathlib import Path

import yaml

from service.api.problem_pages import problem_page
from service.problem_types import PROBLEM_TYPES
from service.validation.faults import CODES, UNEXPECTED

ROOT = Path(__file__).resolve().parents[2]
SPEC = yaml.safe_load((ROOT / "openapi.yaml").read_text())
SCHEMAS = SPEC["components"]["schemas"]


def codes_in_the_code() -> dict[str, str]:
    """Every fault code written in the service: the code argument (third, or ``code=``) of each Fault,
    RulesetFault and Bound, the defaults of fields named ``code``, and faults.py's map and fallback."""
    found: dict[str, str] = {code: "faults.py" for code in (*CODES.values(), UNEXPECTED)}
    for path in (ROOT / "service").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("Fault", "RulesetFault", "Bound"):
                given = [node.args[2]] if len(node.args) > 2 else []
                given += [kw.value for kw in node.keywords if kw.arg == "code"]
                for value in given:
                    if isinstance(value, ast.Constant):
                        found.setdefault(value.value, f"{path.name}:{node.lineno}")
            elif isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) == "code" and node.value:
                assert isinstance(node.value, ast.Constant)
                found.setdefault(node.value.value, f"{path.name}:{node.lineno}")
    return found


def test_every_fault_code_the_service_writes_is_in_the_contract_and_no_other() -> None:
    listed = SCHEMAS["Fault"]["properties"]["code"]["enum"]
    written = codes_in_the_code()
    assert "invalid" not in written
    assert {code: where for code, where in written.items() if code not in listed} == {}
    assert sorted(set(listed) - set(written)) == []  # no code the service never answers
    described = SCHEMAS["Fault"]["properties"]["code"]["description"]
    assert all(f"- `{code}`: " in described for code in listed)  # each with its meaning


def test_every_problem_type_is_in_the_contract_and_has_its_page_in_both_languages() -> None:
    listed = SCHEMAS["Problem"]["properties"]["type"]["enum"]
    assert listed == [f"/problems/{slug}" for slug in PROBLEM_TYPES]
    [parameter] = SPEC["paths"]["/problems/{slug}"]["get"]["parameters"]
    assert parameter["schema"]["enum"] == list(PROBLEM_TYPES)
    for slug in PROBLEM_TYPES:
        english, vietnamese = problem_page(slug, "en"), problem_page(slug, "vi")
        assert english and vietnamese and english != vietnamese
        assert b'<html lang="vi">' in vietnamese and "Cách khắc phục".encode() in vietnamese
    assert problem_page("no-such-type", "en") is None
