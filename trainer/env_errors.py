"""Telling the environment's failures from the policy's, for a rollout that must not be punished.

A rollout is ended and masked out of the loss (DESIGN.md, Completion-Focused Rubric Reward) when
the environment broke it: the orchestrator unreachable, timing out or answering an error (an
``OrchestratorError`` in the client), or a step whose answer says so - the orchestrator's
``environment_error``, an episode the orchestrator aborted on its own, or a tool result whose
error code is one of ``ENVIRONMENT_ERROR_CODES`` (a service down, the episode's state lost) for an
orchestrator that does not report ``environment_error`` yet. A tool failing because the policy
called it wrongly (unknown tool, bad arguments, a 404) is an observation, graded as usual.
"""

from __future__ import annotations

import json

from compoworld.contracts import ToolResult
from compoworld.errors import CompoWorldError
from orchestrator.api import ENVIRONMENT_ERROR_CODES, StepResponse

__all__ = ["ENVIRONMENT_ERROR_CODES", "PromptTooLongError", "result_error_code", "step_environment_error"]


class PromptTooLongError(CompoWorldError, ValueError):
    """An episode's prompt does not fit the model's prompt budget: refused, never truncated.

    A configuration error (a direct-mode episode with hundreds of tool schemas), not a failure of
    one rollout: the run stops with a message saying what to change.
    """


def result_error_code(content: str) -> tuple[str, str] | None:
    """(code, message) of a failed tool-result envelope, or None for a success or non-envelope."""
    try:
        result = ToolResult.from_envelope(json.loads(content))
    except (TypeError, ValueError):
        return None
    return None if result.success else (result.code, result.message)


def step_environment_error(step: StepResponse) -> str | None:
    """Why the environment failed this step, or None when every result is the policy's to own."""
    if step.environment_error:
        return step.environment_error
    if step.state == "aborted":
        return f"the orchestrator aborted the episode ({step.finish_reason or 'no reason given'})"
    for result in step.results:
        error = result_error_code(result.content)
        if error is not None and error[0] in ENVIRONMENT_ERROR_CODES:
            return f"{result.name}: {error[0]}: {error[1]}"[:500]
    return None
