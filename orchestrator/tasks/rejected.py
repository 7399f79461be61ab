"""The signal that a scenario draft cannot become a task."""

from __future__ import annotations

__all__ = ["DraftRejected"]


class DraftRejected(Exception):
    """A draft that cannot become a task; ``reason`` is counted in the generation report.

    A signal inside task generation (the generator catches it and tries again), not an error.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
