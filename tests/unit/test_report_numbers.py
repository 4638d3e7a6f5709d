"""The reports' figures written as every other text writes them (fifth review of the texts): the true
minus sign, not an ASCII hyphen, in the tables and on the axes, in either language."""

from service.bulk.report_page import compact, number


def test_a_negative_amount_has_the_true_minus_sign() -> None:
    assert number(-32_098_742, "vi") == "−32.098.742"
    assert number(-32_098_742, "en") == "−32,098,742"
    assert number(1_200_000, "vi") == "1.200.000"
    assert compact(-1_500_000, "vi") == "−1,5 triệu" and compact(-1_500_000, "en") == "−1.5 M"
