"""One exception tree: every exception class the package defines descends from errors.Error,
and the envelope is built by errors.error_response wherever an error is answered."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import orjson

import gateway
import gateway_training
from gateway.errors import (
    ConfigError,
    DataError,
    Error,
    GatewayError,
    NotFound,
    UpstreamFailure,
    error_response,
)

# Importing it runs the command line.
_SKIP = ("gateway.__main__",)


def _modules() -> list[str]:
    """Every module of the runtime and of the trainer (its own distribution, under the same rule)."""
    names = []
    for package in (gateway, gateway_training):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if not info.name.startswith(_SKIP):
                names.append(info.name)
    return names


def test_every_exception_the_package_defines_is_in_the_tree():
    outside = []
    for name in _modules():
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == name
                and not attr.startswith("_")  # a module's private control-flow signal (the simulator's)
                and not issubclass(value, Error)
            ):
                outside.append(f"{name}.{attr}")
    assert outside == []


def test_the_old_names_still_import_and_keep_their_bases():
    from gateway.config import ConfigError as FromConfig
    from gateway.errors import ModelError
    from gateway.limits.store import StoreUnavailable
    from gateway.relay import ClientDisconnected
    from gateway.upstream import UpstreamConnectError, UpstreamError
    from gateway_training.data import DataError as FromData

    assert FromConfig is ConfigError and FromData is DataError and issubclass(DataError, ValueError)
    for cls in (StoreUnavailable, ClientDisconnected, ModelError, UpstreamError, UpstreamConnectError):
        assert issubclass(cls, Error) and not issubclass(cls, GatewayError)


def test_error_response_is_the_envelope():
    response = error_response(NotFound("nope", code="unknown_url"))
    assert response.status_code == 404
    assert orjson.loads(response.body) == {
        "error": {"message": "nope", "type": "invalid_request_error", "param": None, "code": "unknown_url"}
    }
    failed = error_response(UpstreamFailure("down", status=503, code="backend_unavailable", backend="d"))
    assert failed.status_code == 503 and failed.headers["x-gateway-backend"] == "d"
