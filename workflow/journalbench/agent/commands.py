"""Agent subcommands: `journalbench run` and `journalbench teardown`."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    """Filled in by the agent issue."""
