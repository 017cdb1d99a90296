"""Shared fixtures: real keys are generated once per test session."""

import pytest

import hearth


@pytest.fixture(scope="session")
def digits_keys():
    key = hearth.ClientKey.generate("DIGITS_128")
    return key, key.server_key()
