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


PROGRESS_PREFIX = "progress: "  # a step as a command reports it when stderr is not a terminal


def messages(stderr: str) -> list[str]:
    """The messages on a command's stderr (errors, warnings): its non-blank lines less the
    progress lines it shows, one per step, when stderr is not a terminal."""
    return [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith(PROGRESS_PREFIX)]


@pytest.fixture(scope="session")
def bundled_demo(tmp_path_factory) -> Path:
    """`forensics demo` run once per session: its output folder (read it, never write)."""
    from forensics import pipeline

    out = tmp_path_factory.mktemp("bundled-demo") / "out"
    pipeline.demo(out)
    return out
