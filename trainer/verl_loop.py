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

Failures of the environment never punish the policy (DESIGN.md): the orchestrator unreachable,
timing out or refusing (HTTP >= 300), or a step whose answer says the environment broke the
episode (trainer/env_errors.py: ``environment_error``, a service down, the episode's state lost)
ends the rollout with its whole response masked out of the loss (``response_mask`` all 0), the
reason logged and kept in ``extra_fields["compo_abort_reason"]`` and ``reward_extra_info.aborted``.
It still reports to its group as aborted (all verdicts False, kept in p_c and n, as the reward
defines) without waiting, so its siblings are not held up; every request has a timeout, so
nothing hangs. If only the group board fails after a clean finish, the rollout is scored alone
with static weights. A prompt longer than ``rollout.prompt_length`` (a direct-mode episode with
hundreds of tool schemas) is refused with ``PromptTooLongError`` instead of being cut from the left.

The group size each rollout waits for is configuration, not a guess: ``rollout.n``, or
``rollout.val_kwargs.n`` for the ``compo_agent_val`` registration that validation rows name
(``compoworld export verl --validation``); ``expected_n`` overrides both. Each rollout's outcome
is appended to the rollout log (trainer/rollout_log.py) when ``rollout_log_dir`` is set.

Registered for verl by ``trainer/config/agent_loops.yaml``; one instance plays one trajectory,
so per-episode state lives on ``self``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import AgentLoopMetrics, AgentLoopOutput, register
from verl.experimental.agent_loop.tool_agent_loop import AgentData, AgentState, ToolAgentLoop
from verl.experimental.agent_loop.tool_parser import FunctionCall
from verl.tools.schemas import OpenAIFunctionSchema, OpenAIFunctionToolSchema, ToolResponse

from orchestrator.client import OrchestratorClient, OrchestratorError
from orchestrator.reward import group_reward_report
from trainer.env_errors import PromptTooLongError, step_environment_error
from trainer.rollout_log import RolloutRecord, append_rollout
from trainer.tokenizer import answer_text

__all__ = ["CompoAgentLoop", "EpisodeTool", "PromptTooLongError"]

logger = logging.getLogger(__name__)


def _reward_info(**values: float) -> dict[str, float]:
    """``reward_extra_info`` with every key present (verl builds its arrays from the first row's keys)."""
    info = {"rubric_score": 0.0, "completion": 0.0, "n_criteria": 0, "group_fallback": 0, "aborted": 0}
    info.update(values)
    return info


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
        mode: str = "gateway",
        http_timeout_s: float = 60.0,
        group_timeout_s: float = 600.0,
        expected_n: int | None = None,
        validation: bool = False,
        release_episodes: bool = True,
        rollout_log_dir: str = "",
        transport: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.orchestrator_url = orchestrator_url
        self.mode = mode
        self.http_timeout_s = float(http_timeout_s)
        self.group_timeout_s = float(group_timeout_s)
        self.expected_n_override = expected_n
        self.validation = bool(validation)
        # False keeps finished episodes on the orchestrator (until its retain_s) for inspection
        self.release_episodes = bool(release_episodes)
        self.rollout_log_dir = str(rollout_log_dir or "")
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
        self._task_id = ""
        self._n_calls = 0
        self._dropped_calls = 0

    # ---- group size -------------------------------------------------------------------------
    def expected_group_size(self) -> int:
        """Rollouts per prompt, from the configuration: ``expected_n``, else val_kwargs.n / n."""
        if self.expected_n_override:
            return int(self.expected_n_override)
        cfg = self.rollout_config
        return int(cfg.val_kwargs.n if self.validation else cfg.n)

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
        expected_n = self.expected_group_size()
        mode = str(extra_info.get("mode") or self.mode)  # the mode the row's prompt was built for
        self._task_id = f"{task_id} ({mode} mode)"
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
                output = await self._empty_output(list(kwargs["raw_prompt"]))
                self._log_rollout(output, kwargs, group_id, rollout_idx, str(task_id))
                return output
            self._episode_id = opened.episode_id
            self._install_tools(opened.tools)
            try:
                output = await super().run(sampling_params, **{**kwargs, "raw_prompt": opened.messages})
            except PromptTooLongError as exc:  # a configuration error: stop, saying so
                self._abort_reason = f"refused: {exc}"
                logger.error("%s", exc)
                await self._close_episode()
                await self._report_aborted(group_id, expected_n)
                raise
            except Exception as exc:
                self._abort(f"generation failed: {type(exc).__name__}")
                await self._close_episode()
                await self._report_aborted(group_id, expected_n)
                raise
            await self._score(output, group_id, expected_n)
        self._log_rollout(output, kwargs, group_id, rollout_idx, str(task_id))
        return output

    async def _score(self, output: AgentLoopOutput, group_id: str, expected_n: int) -> None:
        """Finish and release the episode, get the group reward, and write it on ``output``."""
        assert self._client is not None and self._episode_id is not None
        verdicts: list[bool] = []
        importance: list[float] = []
        info = _reward_info()
        reward = 0.0
        if self._abort_reason is None:
            try:
                fin = await self._client.finish(self._episode_id, self._final_answer())
            except OrchestratorError as exc:
                self._abort(f"finish failed: {exc}")
            else:
                if fin.environment_error:
                    self._abort(f"environment failed: {fin.environment_error}")
                verdicts = [c.passed for c in fin.criteria]
                importance = fin.importance(self._importance)
                info["n_criteria"] = len(verdicts)
        await self._close_episode()  # free the forks before waiting on the siblings
        if self._abort_reason is None:
            reward = await self._group_reward(group_id, expected_n, verdicts, importance, info)
        else:
            await self._report_aborted(group_id, expected_n)
            info["aborted"] = 1
            # the environment's failure, not the policy's: nothing of this rollout is trained on
            output.response_mask = [0] * len(output.response_mask)
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
            logger.warning(
                "episode %s aborted by the environment, masked out of the loss: %s",
                self._episode_id or "-",
                reason,
            )

    def _log_rollout(
        self, output: AgentLoopOutput, kwargs: dict[str, Any], group_id: str, rollout_idx: int, task_id: str
    ) -> None:
        """Append this rollout to the rollout log (trainer/rollout_log.py), when one is configured."""
        if not self.rollout_log_dir:
            return
        info = output.extra_fields.get("reward_extra_info") or {}
        step = kwargs.get("global_steps")
        record = RolloutRecord(
            step=int(step) if isinstance(step, int | float) else None,
            validation=self.validation,
            group_id=group_id,
            task_id=task_id,
            rollout_idx=rollout_idx,
            episode_id=self._episode_id or "",
            reward=float(output.reward_score or 0.0),
            completion=float(info.get("completion", 0.0)),
            tool_calls=self._n_calls,
            dropped_calls=self._dropped_calls,
            response_tokens=len(output.response_ids),
            trained_tokens=sum(output.response_mask),
            aborted=self._abort_reason is not None,
            abort_reason=self._abort_reason or "",
        )
        try:
            append_rollout(Path(self.rollout_log_dir), record)
        except OSError as exc:
            logger.warning("could not write the rollout log under %s: %s", self.rollout_log_dir, exc)

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
                "reward_extra_info": _reward_info(aborted=1),
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
    def _cap_text_prompt_length(self, prompt_ids: list[int]) -> list[int]:
        """Refuse a prompt over ``rollout.prompt_length`` (verl would left-truncate it silently)."""
        if len(prompt_ids) > self.prompt_length:
            raise PromptTooLongError(
                f"task {self._task_id}: the episode's prompt is {len(prompt_ids)} tokens "
                f"({len(self.tool_schemas)} tool schemas), over rollout.prompt_length="
                f"{self.prompt_length} (data.max_prompt_length); verl would cut it from the left. "
                "Export the rows with `compoworld export verl --mode gateway` (four meta-tools, "
                "about 800 tokens) or raise data.max_prompt_length."
            )
        return prompt_ids

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
        dropped = len(agent_data.tool_calls) - len(calls)
        if dropped:
            self._dropped_calls += dropped
            logger.warning(
                "episode %s: %d tool calls of a turn beyond multi_turn.max_parallel_calls=%d are not run",
                self._episode_id,
                dropped,
                self.max_parallel_calls,
            )
        content = answer_text(self.tokenizer, list(agent_data.response_ids))  # text beside the calls
        body = [{"id": c.tool_call_id, "name": c.name, "arguments": c.arguments} for c in calls]
        try:
            result = await self._client.step(self._episode_id, body, assistant_content=content)
        except OrchestratorError as exc:
            self._abort(f"step failed: {exc}")
            return
        self._n_calls += len(calls)
        env_error = step_environment_error(result)
        if env_error is not None:
            self._abort(f"environment failed: {env_error}")
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
