"""Orchestrator exceptions: infrastructure and protocol failures, never tool failures (STYLE #7).

A bad tool call is an observation (``success: false`` in the tool result). These are raised
when a request to the orchestrator itself cannot be served; the HTTP layer maps each to a status.

    CompoWorldError                       (compoworld.errors)
    ├── EpisodeError
    │   ├── EpisodeNotFound      404  unknown (or released) episode id
    │   ├── EpisodeConflict      409  the episode's state forbids the request (finished, aborted, expired)
    │   ├── EpisodeBusy          503  too many live episodes
    │   └── TrajectoryFull       413  a turn past the episode's trajectory budget (the episode ends)
    ├── TaskNotFound             404  a task id that no loaded task file holds
    ├── TaskConflict             409  a task added under an id another task holds
    ├── InvalidRequest           422  a request the orchestrator cannot act on (unknown service, bad mode)
    ├── GroupConflictError       409  a group report that disagrees with what its group holds (also a ValueError)
    ├── BoardClosing             503  the group board is shutting down: the report was not scored
    └── ServiceUnavailable       503  a service did not answer while forking or grading
"""

from __future__ import annotations

from compoworld.errors import CompoWorldError, EpisodeError, ServiceUnavailable

__all__ = [
    "BoardClosing",
    "EpisodeBusy",
    "EpisodeConflict",
    "EpisodeError",
    "EpisodeNotFound",
    "GroupConflictError",
    "InvalidRequest",
    "ServiceUnavailable",
    "TaskConflict",
    "TaskNotFound",
    "TrajectoryFull",
    "http_status",
]


class EpisodeNotFound(EpisodeError):
    """No live episode has this id (never opened, deleted, or reaped long ago)."""


class EpisodeConflict(EpisodeError):
    """The episode exists but its state does not allow the request."""


class EpisodeBusy(EpisodeError):
    """The orchestrator holds as many live episodes as it is allowed to."""


class TrajectoryFull(EpisodeError):
    """A turn would take the episode past its trajectory budget (``orchestrator.budget``)."""


class TaskNotFound(CompoWorldError):
    """A task id that none of the loaded task files holds."""


class TaskConflict(CompoWorldError):
    """A task added under an id that a different task already holds."""


class GroupConflictError(CompoWorldError, ValueError):
    """A report disagrees with what the group already holds (rubric size, expected_n, importance)."""


class BoardClosing(CompoWorldError):
    """The orchestrator is shutting down: the report was not scored; send it again (503)."""


class InvalidRequest(CompoWorldError):
    """A well-formed request that names something the orchestrator cannot serve."""


def http_status(exc: CompoWorldError) -> int:
    """The HTTP status an orchestrator error maps to."""
    if isinstance(exc, EpisodeNotFound | TaskNotFound):
        return 404
    if isinstance(exc, TrajectoryFull):
        return 413
    if isinstance(exc, EpisodeConflict | TaskConflict):
        return 409
    if isinstance(exc, ServiceUnavailable | EpisodeBusy):
        return 503
    if isinstance(exc, InvalidRequest):
        return 422
    return 400
