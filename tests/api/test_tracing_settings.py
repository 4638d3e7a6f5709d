"""Which OTEL_* settings turn tracing on, and which this service refuses (README, Traces)."""

import pytest

from service.api.tracing import TracingSettingError, enabled


@pytest.mark.parametrize(
    ("env", "on"),
    [
        ({}, False),
        ({"OTEL_TRACES_EXPORTER": "none"}, False),
        ({"OTEL_TRACES_EXPORTER": "otlp"}, True),
        ({"OTEL_TRACES_EXPORTER": " OTLP "}, True),
        ({"OTEL_TRACES_EXPORTER": "console"}, True),
        ({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true"}, False),
        ({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, True),
    ],
)
def test_the_standard_variables_turn_tracing_on(env: dict[str, str], on: bool) -> None:
    assert enabled(env) is on


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"OTEL_TRACES_EXPORTER": "jaeger"}, "OTEL_TRACES_EXPORTER=jaeger"),
        ({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc"),
        (
            {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"},
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/json",
        ),
    ],
)
def test_what_it_cannot_do_is_refused_by_name(env: dict[str, str], named: str) -> None:
    with pytest.raises(TracingSettingError, match=named.replace("/", ".")):
        enabled(env)
