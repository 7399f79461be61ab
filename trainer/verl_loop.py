"""verl 0.9.1 agent loop ``compo_agent``: verl's ToolAgentLoop playing a CompoWorld episode.

verl keeps what it is good at (tokenisation with Continuous Token, the Hermes tool-call parser,
response masks, the turn state machine); this subclass swaps the environment: the episode is
opened on the orchestrator, each assistant turn's tool calls go to ``POST /episodes/{id}/step`` as
one step (arguments as the JSON strings the model wrote), the final answer to ``/finish`` for the
rubric verdicts, the episode is released (``DELETE``), and the reward comes from the group board
(``/groups/{uid}/reward``) so it can depend on the sibling rollouts. ``reward_score`` is set on the
output, which makes verl skip its own reward function.

The criterion importance s_c comes from the finish answer when the orchestrator sends it, else
from the data row's ``extra_info.importance`` (written by ``compoworld export verl``), else 1.

Failures: the orchestrator unreachable, timing out or refusing (HTTP >= 300) aborts the rollout
with reward 0 and the reason logged and kept in ``extra_fields["compo_abort_reason"]``; every
request has a timeout, so nothing hangs. An aborted rollout still reports to its group (all
verdicts False, without waiting) so its siblings are not kept waiting. If only the group board
fails after a clean finish, the rollout is scored alone with static weights.

Registered for verl by ``trainer/config/agent_loops.yaml``; one instance plays one trajectory,
so per-episode state lives on ``self``.
"""

from __future__ import annotations

import logging
from typing import Any
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import AgentLoopMetrics, AgentLoopOutput, register
from verl.experimental.agent_loop.tool_agent_loop import AgentData, AgentState, ToolAgentLoop
from verl.experimental.agent_loop.tool_parser import FunctionCall
from verl.tools.schemas import OpenAIFunctionSchema, OpenAIFunctionToolSchema, ToolResponse

from orchestrator.reward import group_reward_report
from trainer.orchestrator_client import OrchestratorClient, OrchestratorError
from trainer.tokenizer import answer_text

__all__ = ["CompoAgentLoop", "EpisodeTool"]

logger = logging.getLogger(__name__)


class EpisodeTool:
    """A name and schema verl's parser can see; execution goes to the orchestrator, not here."""

    def __init__(self, schema: dict[str, Any]) -> None:
        fn = schema["function"]
        self.name: str = fn["name"]
        try:
            self.tool_schema = OpenAIFunctionToolSchema.model_validate(schema)
        except ValueError:
            # verl's schema model is narrower than JSON Schema (nested objects, anyOf); the parser
            # only needs the name, and the prompt is rendered from the raw schema anyway.
            self.tool_schema = OpenAIFunctionToolSchema(
                type="function",
                function=OpenAIFunctionSchema(name=self.name, description=fn.get("description", "")),
            )


def _floats(value: Any) -> list[float] | None:
    """A list of floats from a data-row field (a list or an array), or None when absent."""
    if value is None or isinstance(value, str | bytes):
        return None
    try:
        return [float(x) for x in value]
    except (TypeError, ValueError):
        return None


def _openai_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The OpenAI part of a tool schema (CompoWorld's ``x-*`` annotations dropped)."""
    return {k: v for k, v in schema.items() if not k.startswith("x-")}


@register("compo_agent")
class CompoAgentLoop(ToolAgentLoop):
    """ToolAgentLoop whose environment is a CompoWorld orchestrator episode (see module docstring)."""

    def __init__(
        self,
        *args: Any,
        orchestrator_url: str = "http://127.0.0.1:8000",
        mode: str = "direct",
        http_timeout_s: float = 60.0,
        group_timeout_s: float = 600.0,
        expected_n: int | None = None,
        release_episodes: bool = True,
        transport: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.orchestrator_url = orchestrator_url
        self.mode = mode
        self.http_timeout_s = float(http_timeout_s)
        self.group_timeout_s = float(group_timeout_s)
        self.expected_n_override = expected_n
        # False keeps finished episodes on the orchestrator (until its retain_s) for inspection
        self.release_episodes = bool(release_episodes)
        self._transport = transport
        self._client: OrchestratorClient | None = None
        self._episode_id: str | None = None
        self._abort_reason: str | None = None
        self._done = False
        self._end_reason = ""
        self._importance: list[float] | None = None
        self._agent_data: AgentData | None = None
        self._call_seq = 0
        self._turn_results: dict[str, str] = {}

    # ---- group size -------------------------------------------------------------------------
    def expected_group_size(self, sampling_params: dict[str, Any]) -> int:
        """Rollouts per prompt: rollout.n, or val_kwargs.n when the sampling params are validation's.

        verl does not tell an agent loop whether it validates; its validation sampling
        (temperature/top_p/top_k from val_kwargs) differs from training's by default, which is
        what is compared here. ``expected_n`` in the agent-loop config overrides this.
        """
        if self.expected_n_override:
            return int(self.expected_n_override)
        cfg = self.rollout_config
        val = cfg.val_kwargs
        train_key = (cfg.temperature, cfg.top_p, cfg.top_k)
        val_key = (val.temperature, val.top_p, val.top_k)
        seen = (
            sampling_params.get("temperature"),
            sampling_params.get("top_p"),
            sampling_params.get("top_k"),
        )
        if val_key != train_key and seen == val_key:
            return int(val.n)
        return int(cfg.n)

    # ---- the episode ------------------------------------------------------------------------
    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        extra_info = kwargs.get("extra_info") or {}
        task_id = extra_info.get("task_id") or (kwargs.get("reward_model") or {}).get("ground_truth")
        if not task_id:
            raise ValueError(
                "compo_agent needs extra_info.task_id (or reward_model.ground_truth) in the data row"
            )
        group_id = str(kwargs.get("uid") or uuid4().hex)
        rollout_idx = int(kwargs.get("session_id") or 0)
        expected_n = self.expected_group_size(sampling_params)
        mode = str(extra_info.get("mode") or self.mode)  # the mode the row's prompt was built for
        self._importance = _floats(extra_info.get("importance"))
        async with OrchestratorClient(
            self.orchestrator_url, timeout_s=self.http_timeout_s, transport=self._transport
        ) as client:
            self._client = client
            try:
                opened = await client.open_episode(
                    str(task_id), mode=mode, group_id=group_id, rollout_idx=rollout_idx
                )
            except OrchestratorError as exc:
                self._abort(f"open failed: {exc}")
                await self._report_aborted(group_id, expected_n)
                return await self._empty_output(list(kwargs["raw_prompt"]))
            self._episode_id = opened.episode_id
            self._install_tools(opened.tools)
            try:
                output = await super().run(sampling_params, **{**kwargs, "raw_prompt": opened.messages})
            except Exception:
                self._abort("generation failed")
                await self._close_episode()
                await self._report_aborted(group_id, expected_n)
                raise
            await self._score(output, group_id, expected_n)
        return output

    async def _score(self, output: AgentLoopOutput, group_id: str, expected_n: int) -> None:
        """Finish and release the episode, get the group reward, and write it on ``output``."""
        assert self._client is not None and self._episode_id is not None
        verdicts: list[bool] = []
        importance: list[float] = []
        info = {"rubric_score": 0.0, "completion": 0.0, "n_criteria": 0, "group_fallback": 0, "aborted": 0}
        reward = 0.0
        if self._abort_reason is None:
            try:
                fin = await self._client.finish(self._episode_id, self._final_answer())
            except OrchestratorError as exc:
                self._abort(f"finish failed: {exc}")
            else:
                verdicts = [c.passed for c in fin.criteria]
                importance = fin.importance(self._importance)
                info["n_criteria"] = len(verdicts)
        await self._close_episode()  # free the forks before waiting on the siblings
        if self._abort_reason is None:
            reward = await self._group_reward(group_id, expected_n, verdicts, importance, info)
        else:
            await self._report_aborted(group_id, expected_n)
            info["aborted"] = 1
            reward = 0.0
        output.reward_score = reward
        output.extra_fields["reward_extra_info"] = info
        output.extra_fields["compo_episode_id"] = self._episode_id
        output.extra_fields["compo_abort_reason"] = self._abort_reason or ""
        output.extra_fields["compo_verdicts"] = verdicts

    async def _close_episode(self) -> None:
        """Release the episode (``DELETE``); without release, mark an aborted one aborted. Best effort."""
        if self._client is None or self._episode_id is None:
            return
        try:
            if self.release_episodes:
                await self._client.release(self._episode_id)
            elif self._abort_reason is not None:
                await self._client.abort(self._episode_id, self._abort_reason)
        except OrchestratorError as exc:
            logger.warning("episode %s: could not close it on the orchestrator: %s", self._episode_id, exc)

    async def _group_reward(
        self,
        group_id: str,
        expected_n: int,
        verdicts: list[bool],
        importance: list[float],
        info: dict[str, Any],
    ) -> float:
        assert self._client is not None and self._episode_id is not None
        try:
            got = await self._client.group_reward(
                group_id,
                self._episode_id,
                verdicts,
                expected_n=expected_n,
                timeout_s=self.group_timeout_s,
                importance=importance,
            )
        except OrchestratorError as exc:
            logger.warning("group %s: reward board failed (%s); scoring episode alone", group_id, exc)
            alone = group_reward_report([verdicts], importance)
            info.update(
                rubric_score=alone.rubric_scores[0], completion=alone.completions[0], group_fallback=1
            )
            return alone.rewards[0]
        info.update(
            rubric_score=got.rubric_score, completion=got.completion, group_fallback=int(got.fallback)
        )
        return got.reward

    async def _report_aborted(self, group_id: str, expected_n: int) -> None:
        """Tell the group this rollout is out (all False) without waiting; ignore failures."""
        if self._client is None:
            return
        try:
            await self._client.group_reward(
                group_id,
                self._episode_id or f"aborted-{uuid4().hex}",
                [],
                expected_n=expected_n,
                timeout_s=0.0,
                aborted=True,
            )
        except OrchestratorError as exc:
            logger.warning("group %s: could not report an aborted rollout: %s", group_id, exc)

    def _abort(self, reason: str) -> None:
        if self._abort_reason is None:
            self._abort_reason = reason
            logger.warning("episode %s aborted, reward 0: %s", self._episode_id or "-", reason)

    def _install_tools(self, schemas: list[dict[str, Any]]) -> None:
        """Expose the episode's tools to verl's parser and chat template (this instance only)."""
        raw = [_openai_schema(s) for s in schemas]
        self.tools = {t.name: t for t in (EpisodeTool(s) for s in raw)}  # type: ignore[misc]
        self.tool_schemas = raw

    async def _empty_output(self, messages: list[dict[str, Any]]) -> AgentLoopOutput:
        """A zero-loss output for a rollout that never started: the prompt and one masked token."""
        prompt_ids = await self.ct_build_initial_tokens(messages, tools=[])
        tok: Any = self.tokenizer
        eos = tok.eos_token_id if tok.eos_token_id is not None else 0
        return AgentLoopOutput(
            prompt_ids=prompt_ids,
            response_ids=[eos],
            response_mask=[0],
            reward_score=0.0,
            num_turns=1,
            metrics=AgentLoopMetrics(),
            extra_fields={
                "turn_scores": [],
                "tool_rewards": [],
                "reward_extra_info": {
                    "rubric_score": 0.0,
                    "completion": 0.0,
                    "n_criteria": 0,
                    "group_fallback": 0,
                    "aborted": 1,
                },
                "compo_episode_id": "",
                "compo_abort_reason": self._abort_reason or "",
                "compo_verdicts": [],
            },
        )

    def _final_answer(self) -> str:
        """The last generation's answer text.

        Decoded from the last generated tokens rather than the message list: verl does not append
        the assistant message of a turn that hit the turn or length limit.
        """
        ids = self._agent_data.response_ids if self._agent_data is not None else []
        return answer_text(self.tokenizer, list(ids))

    # ---- verl hooks -------------------------------------------------------------------------
    async def _handle_pending_state(
        self, agent_data: AgentData, sampling_params: dict[str, Any]
    ) -> AgentState:
        self._agent_data = agent_data
        state: AgentState = await super()._handle_pending_state(agent_data, sampling_params)
        return state

    def _build_assistant_message(self, content: str, agent_data: AgentData) -> dict[str, Any]:
        for call in agent_data.tool_calls:
            if call.tool_call_id is None:
                call.tool_call_id = f"call_{self._call_seq}"
                self._call_seq += 1
        message: dict[str, Any] = super()._build_assistant_message(content, agent_data)
        return message

    async def _handle_processing_tools_state(self, agent_data: AgentData) -> AgentState:
        await self._step_turn(agent_data)
        state: AgentState = await super()._handle_processing_tools_state(agent_data)
        if self._abort_reason is not None or self._done:
            return AgentState.TERMINATED
        return state

    async def _step_turn(self, agent_data: AgentData) -> None:
        """Send this turn's calls (those verl will run) as ONE orchestrator step, in order.

        One step per assistant turn keeps the orchestrator's ``max_steps`` (tool-calling turns)
        and its trajectory (one assistant message holding the turn's calls) true to the model's
        turns; verl then asks ``_call_tool`` for each call's result.
        """
        self._turn_results = {}
        calls = agent_data.tool_calls[: self.max_parallel_calls]
        if self._abort_reason is not None or self._client is None or self._episode_id is None or not calls:
            return
        content = answer_text(self.tokenizer, list(agent_data.response_ids))  # text beside the calls
        body = [{"id": c.tool_call_id, "name": c.name, "arguments": c.arguments} for c in calls]
        try:
            result = await self._client.step(self._episode_id, body, assistant_content=content)
        except OrchestratorError as exc:
            self._abort(f"step failed: {exc}")
            return
        if result.done:
            self._done = True
            self._end_reason = result.finish_reason or result.state
        self._turn_results = {r.tool_call_id: r.content for r in result.results}

    async def _call_tool(
        self, tool_call: FunctionCall, tools_kwargs: dict[str, Any], agent_data: AgentData
    ) -> tuple[ToolResponse, float, dict[str, Any]]:
        """The result of one call of the turn ``_step_turn`` already sent."""
        content = self._turn_results.get(tool_call.tool_call_id or "")
        if content is not None:
            return ToolResponse(text=self._truncate(content)), 0.0, {}
        if self._abort_reason is not None:
            return ToolResponse(text="Error: the episode was aborted."), 0.0, {}
        if self._done:  # the episode ended (time limit) before this call ran; it is graded as it is
            return ToolResponse(text=f"Error: the episode has ended ({self._end_reason})."), 0.0, {}
        self._abort(f"step answer has no result for tool call {tool_call.tool_call_id}")
        return ToolResponse(text="Error: the environment returned no result."), 0.0, {}

    def _truncate(self, text: str) -> str:
        """verl's own truncation of long tool responses (same sides, same markers)."""
        limit = self.max_tool_response_length
        if not text or len(text) <= limit:
            return text
        if self.tool_response_truncate_side == "left":
            return "(truncated)..." + text[-limit:]
        if self.tool_response_truncate_side == "right":
            return text[:limit] + "...(truncated)"
        half = limit // 2
        return text[:half] + "...(truncated)..." + text[-half:]
