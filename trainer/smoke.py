"""A verl-compatible GRPO smoke run in plain torch + transformers (not verl, no vLLM, no Ray).

    python -m trainer.smoke                      # one GPU if there is one, else CPU
    python -m trainer.smoke --device cpu --steps 1 --library DIR
    python -m trainer.smoke --orchestrator-url http://127.0.0.1:8000 --tasks tasks.jsonl

By default it loads ``--library`` (default: the starter library, ``Settings().library``),
generates ``--n-tasks`` verified tasks with ``orchestrator.tasks`` (or reads ``--tasks FILE``),
and serves the services and the real orchestrator in-process on 127.0.0.1 (trainer/smoke_env.py).
It plays episodes over that loopback HTTP with the rollout protocol of the verl agent loop: open,
one step per turn's ``<tool_call>``s, finish, release, then the group reward from
``/groups/{id}/reward`` (the Completion-Focused Rubric Reward). It then takes GRPO steps with
verl's advantage and PPO-clip loss (trainer/grpo.py) on a randomly initialised tiny Qwen3
(hidden 128, 2 layers, head_dim 64) with Qwen's real vocabulary (trainer/tokenizer.py).

With random weights the policy almost never emits a tool call, so it proves the loop runs end to
end with finite losses; it is not expected to learn. No shaping reward is added: rewards vary
only when a criterion is passed by chance (a ``no_op_pass`` guard passes for every rollout).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer

from compoworld.errors import CompoWorldError
from compoworld.settings import Settings
from orchestrator.client import OrchestratorClient, OrchestratorError
from orchestrator.models import Task
from orchestrator.tasksource import read_tasks
from trainer.grpo import grpo_advantages, ppo_clip_loss
from trainer.smoke_env import (
    SmokeSetupError,
    generate_smoke_tasks,
    load_services,
    offline_settings,
    select_tasks,
    serve_embedded,
)
from trainer.tokenizer import answer_text
from trainer.turns import observation_ids as _observation_ids
from trainer.turns import parse_tool_calls as _parse_calls

__all__ = ["MAX_POSITIONS", "Rollout", "build_tiny_model", "run_smoke"]

MAX_POSITIONS = 8192  # the tiny model's context: prompt + every turn's tokens must fit


@dataclass
class Rollout:
    """One episode: tokens, which of them the policy produced, and its outcome."""

    task_id: str
    group_id: str
    episode_id: str = ""
    prompt_ids: list[int] = field(default_factory=list)
    response_ids: list[int] = field(default_factory=list)
    mask: list[int] = field(default_factory=list)
    verdicts: list[bool] = field(default_factory=list)
    importance: list[float] = field(default_factory=list)
    tool_calls: int = 0
    aborted: str = ""
    reward: float = 0.0
    pass_rates: list[float] = field(default_factory=list)


def build_tiny_model(vocab_size: int, seed: int, device: str, save_dir: Path | None = None) -> Any:
    """A randomly initialised tiny Qwen3 causal LM (seeded), optionally saved for verl's model.path."""
    import torch
    from transformers import AutoModelForCausalLM, Qwen3Config

    torch.manual_seed(seed)
    config = Qwen3Config(
        vocab_size=vocab_size,
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=64,
        max_position_embeddings=MAX_POSITIONS,
        tie_word_embeddings=True,
    )
    model = AutoModelForCausalLM.from_config(config).to(device)
    if save_dir is not None:
        model.save_pretrained(str(save_dir))
    return model


async def _play(
    client: OrchestratorClient, model: Any, tok: Any, rollout: Rollout, idx: int, opts: dict[str, Any]
) -> None:
    """Play one episode with HF generate; fills ``rollout`` (aborted on orchestrator failure).

    The episode is released (``DELETE``) at the end unless ``opts["release"]`` is False.
    """
    import torch

    im_end = tok.convert_tokens_to_ids("<|im_end|>")
    newline = tok.encode("\n", add_special_tokens=False)
    try:
        opened = await client.open_episode(
            rollout.task_id, mode=opts["mode"], group_id=rollout.group_id, rollout_idx=idx
        )
        rollout.episode_id = opened.episode_id
        rollout.prompt_ids = list(
            tok.apply_chat_template(
                opened.messages, tools=opened.tools, add_generation_prompt=True, tokenize=True
            )["input_ids"]
        )
        if len(rollout.prompt_ids) + opts["max_new_tokens"] > MAX_POSITIONS:
            raise SmokeSetupError(
                f"task {rollout.task_id}: the {opts['mode']} prompt is {len(rollout.prompt_ids)} tokens "
                f"({len(opened.tools)} tools), more than the tiny model's {MAX_POSITIONS} positions; "
                "use --mode gateway (four meta-tools) or a library with fewer tools"
            )
        answer = ""
        for turn in range(opts["max_turns"]):
            if len(rollout.prompt_ids) + len(rollout.response_ids) + opts["max_new_tokens"] > MAX_POSITIONS:
                break  # out of context, like verl's response_length limit: answer with what we have
            context = torch.tensor([rollout.prompt_ids + rollout.response_ids], device=model.device)
            with torch.no_grad():
                out = model.generate(
                    input_ids=context,
                    attention_mask=torch.ones_like(context),
                    do_sample=True,
                    temperature=1.0,
                    top_k=0,
                    top_p=1.0,
                    max_new_tokens=opts["max_new_tokens"],
                    eos_token_id=[im_end, tok.pad_token_id],
                    pad_token_id=tok.pad_token_id,
                )
            gen = out[0, context.shape[1] :].tolist()
            rollout.response_ids += gen
            rollout.mask += [1] * len(gen)
            text = tok.decode(gen, skip_special_tokens=False)
            calls = _parse_calls(text, turn)
            answer = answer_text(tok, gen)
            if not calls or turn == opts["max_turns"] - 1:
                break
            step = await client.step(opened.episode_id, calls, assistant_content=answer)
            rollout.tool_calls += len(calls)
            if not step.results:  # the episode ended (time limit) before the calls ran
                break
            tool_msgs = [
                {"role": "tool", "tool_call_id": r.tool_call_id, "name": r.name, "content": r.content}
                for r in step.results
            ]
            boundary = newline if gen and gen[-1] == im_end else [im_end, *newline]
            obs = boundary + _observation_ids(tok, tool_msgs, opened.tools)
            rollout.response_ids += obs
            rollout.mask += [0] * len(obs)
            if step.done:
                break
        fin = await client.finish(opened.episode_id, answer)
        rollout.verdicts = [c.passed for c in fin.criteria]
        rollout.importance = fin.importance(opts.get("importance", {}).get(rollout.task_id))
    except OrchestratorError as exc:
        rollout.aborted = str(exc)
    finally:
        if rollout.episode_id and opts.get("release", True):
            try:
                await client.release(rollout.episode_id)
            except OrchestratorError as exc:
                typer.echo(f"warning: could not release episode {rollout.episode_id}: {exc}", err=True)


async def _group_rewards(client: OrchestratorClient, group: list[Rollout], timeout_s: float) -> None:
    async def one(r: Rollout) -> None:
        try:
            got = await client.group_reward(
                r.group_id,
                r.episode_id or f"aborted-{id(r)}",
                r.verdicts,
                expected_n=len(group),
                timeout_s=timeout_s,
                importance=r.importance or None,
                aborted=bool(r.aborted),
            )
            r.reward, r.pass_rates = (0.0 if r.aborted else got.reward), got.pass_rates
        except OrchestratorError as exc:
            r.aborted, r.reward = r.aborted or str(exc), 0.0

    await asyncio.gather(*(one(r) for r in group))


def _train_step(model: Any, optim: Any, rollouts: list[Rollout], advantages: list[float]) -> float:
    """One GRPO update (token-mean PPO-clip over the generated tokens of the whole batch)."""
    import torch

    def response_logprobs(r: Rollout) -> torch.Tensor:
        ids = torch.tensor([r.prompt_ids + r.response_ids], device=model.device)
        logits = model(input_ids=ids, logits_to_keep=len(r.response_ids) + 1).logits[0, :-1].float()
        target = ids[0, len(r.prompt_ids) :]
        return torch.log_softmax(logits, dim=-1).gather(-1, target[:, None])[:, 0]

    usable = [(r, a) for r, a in zip(rollouts, advantages, strict=True) if r.response_ids]
    if not usable:
        return 0.0
    with torch.no_grad():
        old = [response_logprobs(r) for r, _ in usable]
    optim.zero_grad()
    new = [response_logprobs(r) for r, _ in usable]
    logp, old_logp = torch.cat(new), torch.cat(old)
    adv = torch.cat([torch.full((len(r.response_ids),), a, device=model.device) for r, a in usable])
    mask = torch.cat([torch.tensor(r.mask, dtype=torch.float32, device=model.device) for r, _ in usable])
    loss = ppo_clip_loss(logp, old_logp, adv, mask)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optim.step()
    return float(loss.item())


async def _run(
    base_url: str, task_ids: list[str], opts: dict[str, Any], log_path: Path | None
) -> list[dict[str, Any]]:
    """Build the model, then ``opts["steps"]`` GRPO steps of rollouts against ``base_url``."""
    import torch

    from trainer.tokenizer import build_qwen_tokenizer

    tok = build_qwen_tokenizer()
    model = build_tiny_model(len(tok), opts["seed"], opts["device"], opts["save_model"])
    if opts["save_model"] is not None:
        tok.save_pretrained(str(opts["save_model"]))
    optim = torch.optim.AdamW(model.parameters(), lr=opts["lr"])
    records: list[dict[str, Any]] = []
    if log_path is not None:
        log_path.parent.mkdir(parents=True, exist_ok=True)
    async with OrchestratorClient(base_url, timeout_s=opts["http_timeout_s"]) as client:
        for step in range(opts["steps"]):
            t0 = time.monotonic()
            batch: list[Rollout] = []
            pass_rates: dict[str, list[float]] = {}
            for task_id in task_ids:
                gid = hashlib.sha256(f"smoke:{opts['seed']}:{step}:{task_id}".encode()).hexdigest()[:16]
                group = [Rollout(task_id=task_id, group_id=gid) for _ in range(opts["group_size"])]
                for i, r in enumerate(group):
                    await _play(client, model, tok, r, i, opts)
                await _group_rewards(client, group, opts["group_timeout_s"])
                pass_rates[task_id] = next((r.pass_rates for r in group if r.pass_rates), [])
                batch += group
            rewards = [r.reward for r in batch]
            adv = grpo_advantages(rewards, [r.group_id for r in batch])
            loss = _train_step(model, optim, batch, adv)
            if not math.isfinite(loss):
                raise RuntimeError(f"step {step}: loss is not finite ({loss})")
            rec = {
                "step": step,
                "reward_mean": sum(rewards) / len(rewards),
                "loss": loss,
                "all_pass_rate": sum(all(r.verdicts) and bool(r.verdicts) for r in batch) / len(batch),
                "pass_rates": pass_rates,
                "tool_calls": sum(r.tool_calls for r in batch),
                "response_tokens_mean": sum(len(r.response_ids) for r in batch) / len(batch),
                "aborted": sum(bool(r.aborted) for r in batch),
                "seconds": round(time.monotonic() - t0, 3),
            }
            records.append(rec)
            typer.echo(json.dumps(rec))
            if log_path is not None:
                with log_path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(rec) + "\n")
    return records


def _options(*, device: str, importance: dict[str, list[float]], **values: Any) -> dict[str, Any]:
    import torch

    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    return {**values, "device": device, "importance": importance, "release": True}


def run_smoke(
    *,
    orchestrator_url: str | None = None,
    library: Path | None = None,
    tasks: list[Task] | None = None,
    task_ids: list[str] | None = None,
    n_tasks: int = 2,
    mode: str = "gateway",
    steps: int = 3,
    group_size: int = 4,
    max_new_tokens: int = 32,
    max_turns: int = 3,
    device: str = "auto",
    lr: float = 1e-4,
    seed: int = 0,
    log_path: Path | None = None,
    save_model: Path | None = None,
    group_timeout_s: float = 60.0,
    http_timeout_s: float = 60.0,
) -> list[dict[str, Any]]:
    """Run the smoke loop; return one metrics record per step.

    Embedded (default): the services of ``library`` (default ``Settings().library``) and the
    orchestrator on 127.0.0.1, with ``tasks`` or ``n_tasks`` generated ones, filtered by
    ``task_ids``. With ``orchestrator_url``: that orchestrator, rolling out ``task_ids`` (or the
    ids of ``tasks``). ``steps=0`` only builds (and saves) the model. ``mode`` defaults to gateway:
    direct exposure of a real library's tools makes prompts of 10^4-10^5 tokens, beyond the tiny
    model's context. Setup problems raise ``SmokeSetupError`` (a ValueError) saying what to do.
    """
    known = {t.id: [c.importance for c in t.rubric] for t in tasks or []}
    if mode not in ("direct", "gateway"):
        raise SmokeSetupError(f"mode must be direct or gateway, not {mode!r}")
    values = dict(
        mode=mode,
        steps=steps,
        group_size=group_size,
        max_new_tokens=max_new_tokens,
        max_turns=max_turns,
        lr=lr,
        seed=seed,
        save_model=save_model,
        group_timeout_s=group_timeout_s,
        http_timeout_s=http_timeout_s,
    )
    if steps == 0 or orchestrator_url is not None:
        ids = list(task_ids or known)
        if steps and not ids:
            raise SmokeSetupError("name the tasks to roll out: --task-id ID (repeatable) or --tasks FILE")
        opts = _options(device=device, importance=known, **values)
        return asyncio.run(_run(orchestrator_url or "", ids, opts, log_path))
    settings = offline_settings(Settings())
    root = library if library is not None else settings.library
    runtimes = load_services(root, settings)
    source = "from the task file" if tasks is not None else "generated by orchestrator.tasks"
    pool = tasks if tasks is not None else generate_smoke_tasks(runtimes, n_tasks, seed)
    chosen = select_tasks(pool, task_ids)
    opts = _options(
        device=device, importance={t.id: [c.importance for c in t.rubric] for t in pool}, **values
    )
    typer.echo(
        f"orchestrator: embedded on 127.0.0.1, {len(runtimes)} services from {root}; "
        f"{len(chosen)} tasks {source}: {', '.join(t.id for t in chosen)}"
    )

    async def embedded() -> list[dict[str, Any]]:
        async with serve_embedded(runtimes, settings, pool) as url:
            return await _run(url, [t.id for t in chosen], opts, log_path)

    return asyncio.run(embedded())


def main(
    orchestrator_url: Annotated[
        str | None, typer.Option(help="Use a running orchestrator instead of the embedded one.")
    ] = None,
    library: Annotated[
        Path | None, typer.Option(help="Library folder to serve (default: Settings().library).")
    ] = None,
    task_id: Annotated[list[str] | None, typer.Option(help="Task to roll out (repeatable).")] = None,
    tasks: Annotated[
        Path | None, typer.Option(help="Tasks JSONL to use instead of generating (all are rolled out).")
    ] = None,
    n_tasks: Annotated[int, typer.Option(min=1, help="Tasks to generate (embedded, no --tasks).")] = 2,
    mode: Annotated[
        str, typer.Option(help="Tool exposure: gateway (4 meta-tools) or direct (every tool).")
    ] = "gateway",
    steps: Annotated[int, typer.Option(min=0)] = 3,
    group_size: Annotated[int, typer.Option(min=1, help="Rollouts per task (GRPO group).")] = 4,
    max_new_tokens: Annotated[int, typer.Option(min=1)] = 32,
    max_turns: Annotated[int, typer.Option(min=1)] = 3,
    device: Annotated[str, typer.Option(help="auto | cpu | cuda")] = "auto",
    lr: float = 1e-4,
    seed: int = 0,
    log: Annotated[Path | None, typer.Option(help="Metrics JSONL.")] = Path("out/smoke/metrics.jsonl"),
    save_model: Annotated[
        Path | None, typer.Option(help="Also save the tiny model + tokenizer here.")
    ] = None,
) -> None:
    """A small GRPO loop against the orchestrator (see the module docstring)."""
    try:
        loaded = None
        if tasks is not None:
            loaded = read_tasks(tasks)
        run_smoke(
            orchestrator_url=orchestrator_url,
            library=library,
            tasks=loaded,
            task_ids=list(task_id or []),
            n_tasks=n_tasks,
            mode=mode,
            steps=steps,
            group_size=group_size,
            max_new_tokens=max_new_tokens,
            max_turns=max_turns,
            device=device,
            lr=lr,
            seed=seed,
            log_path=log,
            save_model=save_model,
        )
    except (CompoWorldError, ValueError, RuntimeError, OSError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=1) from exc


def cli_app() -> typer.Typer:
    """The command line, built on each call (no Typer at module level)."""
    app = typer.Typer(add_completion=False, help=__doc__)
    app.command()(main)
    return app


if __name__ == "__main__":
    cli_app()()
