"""Exceptions for infrastructure failures. Tool failures are observations, not exceptions (STYLE #7).

CompoWorldError
├── SpecError              a specification cannot be ingested (file + JSON pointer)
├── LibraryError           a library folder or a generated service cannot be loaded
├── EpisodeError           an episode id is unknown, finished, or over its limits
├── ServiceUnavailable     a service did not answer (dead, slow, unreachable)
└── LLMError               the configured model endpoint failed after retries
"""

from __future__ import annotations

__all__ = [
    "CompoWorldError",
    "EpisodeError",
    "LLMError",
    "LibraryError",
    "ServiceUnavailable",
]


class CompoWorldError(Exception):
    """Base of every infrastructure error raised by CompoWorld."""


class LibraryError(CompoWorldError):
    """A library or one of its services cannot be loaded."""


class EpisodeError(CompoWorldError):
    """An episode is unknown, already finished, or over its limits."""


class ServiceUnavailable(CompoWorldError):
    """A service did not answer in time or refused the connection."""

    def __init__(self, service: str, reason: str) -> None:
        super().__init__(f"service '{service}' unavailable: {reason}")
        self.service = service
        self.reason = reason


class LLMError(CompoWorldError):
    """The model endpoint failed after retries."""
