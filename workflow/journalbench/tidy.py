"""Placeholder: subcommands of this module are added by a later issue."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    """No subcommands yet."""
