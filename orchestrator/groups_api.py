"""The group reward board over HTTP: ``POST /groups/{group_id}/reward`` and its request and answer.

The board itself (in one process, ``orchestrator.groups``; shared by replicas,
``orchestrator.groups_redis``) is what the route calls; see ``orchestrator.groups`` for how a
group is scored and why the route takes the verdicts from the orchestrator's own grading.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from fastapi import APIRouter, HTTPException, Path
from pydantic import BaseModel, Field, create_model

from orchestrator.api import error_responses
from orchestrator.errors import BoardClosing, EpisodeBusy, GroupConflictError

if TYPE_CHECKING:
    from orchestrator.groups import RewardBoard

__all__ = ["GroupRewardRequest", "GroupRewardResponse", "groups_router"]


class GroupRewardRequest(BaseModel):
    """One rollout's report to its group."""

    episode_id: str = Field(
        min_length=1, max_length=256, description="Episode that produced the verdicts (unique in the group)."
    )
    verdicts: list[bool] | None = Field(
        default=None,
        description="Optional, never trusted: the verdicts are the orchestrator's own grading of the "
        "episode; when sent they must equal it (else 409).",
    )
    importance: list[float] | None = Field(
        default=None,
        description="Static importance s_c per criterion (each finite and > 0); default 1 each.",
        # checked by ``check_report`` (a 422 naming the field); the schema says so too
        json_schema_extra={
            "anyOf": [{"type": "array", "items": {"type": "number", "exclusiveMinimum": 0}}, {"type": "null"}]
        },
    )
    expected_n: int = Field(ge=1, le=4096, description="Rollouts in the group (verl's rollout.n).")
    timeout_s: float = Field(
        ge=0.0, le=3600.0, description="How long to wait for the siblings (at most group_timeout_max_s)."
    )
    aborted: bool = Field(
        default=False,
        description="Forfeit this rollout: every verdict counts as False whatever its grading was.",
    )


class GroupRewardResponse(BaseModel):
    """The reward of one rollout and the state of its group."""

    reward: float = Field(description="r_i in [0, 1].")
    group_complete: bool = Field(description="All expected rollouts reported before the timeout.")
    n_reported: int = Field(description="Rollouts that had reported when the reward was computed.")
    pass_rates: list[float] = Field(description="p_c over the rollouts counted (just this one on fallback).")
    fallback: bool = Field(description="Not complete in time: scored alone with static weights (n = 1).")
    reason: str = Field(
        default="",
        description="Why the group was not complete: '' (it was), 'timeout' (not every sibling reported "
        "within timeout_s) or 'siblings_not_opened' (fewer than expected_n rollouts of the group opened "
        "and none opened for group_open_deadline_s).",
    )
    rubric_score: float = Field(description="R_i, the weighted fraction of criteria passed.")
    completion: float = Field(description="C_i: 1.0 if every criterion passed, else 0.0.")


def groups_router(board: RewardBoard, timeout_max_s: float = 900.0) -> APIRouter:
    """Routes of the group reward board, for the orchestrator app to ``include_router``."""
    router = APIRouter(tags=["groups"])
    # the configured bound in the schema (the handler refuses past it with a 422 naming the limit)
    bounded = create_model(
        "GroupRewardRequest",
        __base__=GroupRewardRequest,
        timeout_s=(
            float,
            Field(
                ge=0.0,
                le=3600.0,
                json_schema_extra={"maximum": timeout_max_s},
                description="How long to wait for the siblings, in seconds (at most group_timeout_max_s).",
            ),
        ),
    )
    responses = error_responses(400, 404, 409, 413, 422, 503)
    responses[404]["description"] = "No ended episode of that id"
    responses[409]["description"] = "Verdicts not the orchestrator's, another group's episode, or a conflict"

    async def post_group_reward(
        group_id: Annotated[str, Path(max_length=256)], body: GroupRewardRequest
    ) -> GroupRewardResponse:
        """Report an ended episode to its group; answers once the group is complete or the timeout
        passes. The verdicts are the orchestrator's own grading of the episode, never the caller's."""
        if body.timeout_s > timeout_max_s:
            raise HTTPException(
                status_code=422, detail=f"timeout_s {body.timeout_s} is above the limit {timeout_max_s}"
            )
        try:
            held = await board.outcome(body.episode_id)
        except EpisodeBusy as exc:
            raise HTTPException(status_code=503, detail=str(exc)) from exc
        if held is None:
            raise HTTPException(
                status_code=404,
                detail=f"no ended episode {body.episode_id!r} here: report an episode this orchestrator "
                "ran, after its finish or abort",
            )
        graded, opened_in = held
        if opened_in is not None and opened_in != group_id:
            raise HTTPException(
                status_code=409,
                detail=f"episode {body.episode_id!r} was opened in another group; it reports to that group only",
            )
        if not body.aborted and body.verdicts is not None and graded is not None and body.verdicts != graded:
            raise HTTPException(
                status_code=409,
                detail=f"the verdicts sent are not the orchestrator's grading of episode {body.episode_id!r}",
            )
        try:
            return await board.reward(
                group_id,
                body.episode_id,
                graded,
                body.expected_n,
                body.timeout_s,
                importance=body.importance,
                aborted=body.aborted or graded is None,
            )
        except GroupConflictError as exc:
            raise HTTPException(status_code=409, detail=str(exc)) from exc
        except ValueError as exc:
            raise HTTPException(status_code=422, detail=str(exc)) from exc
        except (EpisodeBusy, BoardClosing) as exc:  # the report can be sent again
            raise HTTPException(status_code=503, detail=str(exc)) from exc

    # the bounded model itself, not its name (this module's annotations are strings)
    post_group_reward.__annotations__["body"] = bounded
    router.post("/groups/{group_id}/reward", response_model=GroupRewardResponse, responses=responses)(
        post_group_reward
    )
    return router
