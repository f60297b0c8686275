"""Shared fixtures: paths, a UTC-pinned engine, and the CLI runner."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

os.environ.setdefault("TZ", "UTC")

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()
