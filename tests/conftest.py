"""Fixtures shared by the primitive tests."""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest

# Each behaviour test runs on the compiled core and on its pure-Python twin.
ENGINES = {"native": "toolparse.primitives", "reference": "toolparse.reference"}


@pytest.fixture(scope="session", params=tuple(ENGINES))
def impl(request: pytest.FixtureRequest) -> ModuleType:
    """The module providing MarkerTrie and JsonScanner for one engine."""
    return importlib.import_module(ENGINES[request.param])
