"""Jinja templates generated services are rendered from (shipped as package data)."""

from pathlib import Path

TEMPLATE_DIR = Path(__file__).resolve().parent

__all__ = ["TEMPLATE_DIR"]
