"""SFT then GRPO on a fixed task set, against the real orchestrator: meant to show a learning signal.

    python -m trainer.recipe --out out/recipe                      # the starter library, CPU or GPU
    python -m trainer.recipe --library DIR --steps 8 --device cpu

1. Tasks: the task generator makes short verified tasks over ``--library``; they are split into
   ``--n-train`` training tasks and ``--n-heldout`` held-out tasks of the same archetypes
   (trainer/recipe_data.py). The services and the orchestrator are served on 127.0.0.1.
2. SFT data: the oracle plays the training tasks over HTTP; ``export sft`` writes them in the
   published format (``OUT/sft.jsonl``), read back as the warm-start data.
3. Policy: a tiny Qwen3 with Qwen's vocabulary whose *output* is restricted to the tokens of the
   SFT conversations and the task prompts (trainer/action_vocab.py: constrained decoding, the same
   distribution for sampling and scoring).
4. SFT warm start: ``--sft-steps`` steps of assistant-only cross-entropy.
5. GRPO: each step plays every training task ``--group-size`` times (gateway mode, batched turns,
   trainer/recipe_rollout.py), takes the group rewards from the orchestrator's board (CFRR), and
   updates with verl's advantage and PPO-clip loss (mini-batches of whole groups, its own AdamW,
   log-probs at the sampling temperature). Held-out tasks are played (never trained on)
   every ``--eval-every`` steps. After the last update both sets are played once more (step N).

Logs: ``OUT/metrics.jsonl`` (one line per step: reward mean, completion rate, tool calls per
rollout, environment-aborted rollouts, the GRPO loss and entropy, held-out figures when played),
``OUT/rollouts/`` (one line per rollout; ``python -m trainer.rollout_log OUT/rollouts``),
``OUT/sft_loss.jsonl`` and, with ``--plot``, ``OUT/reward.png``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from compoworld.errors import CompoWorldError
from compoworld.settings import Settings
from orchestrator.client import OrchestratorClient
from trainer.action_vocab import ActionVocab
from trainer.policy import ModelShape, build_tiny_model
from trainer.recipe_data import TaskSplit, generate_recipe_tasks, oracle_sft_records, split_by_archetype
from trainer.recipe_rollout import Episode, SamplingOptions, play_episodes
from trainer.recipe_train import SftExample, grpo_update, replay_probability, sft_examples, sft_step
from trainer.rollout_log import RolloutRecord, append_rollout, summarize
from trainer.smoke_env import load_services, offline_settings, serve_embedded

__all__ = ["RECIPE_SAMPLING", "RecipeConfig", "run_recipe"]

#: How the recipe's policy plays: 3-call tasks plus an answer fit 4 turns of <= 128 tokens; T 0.8
#: (sampling and the GRPO log-probs alike) keeps the tiny policy's diffuse tail from failing
#: almost every 200-token rollout on one stray token (docs/training.md)
RECIPE_SAMPLING = SamplingOptions(max_turns=4, max_new_tokens=128, temperature=0.8)


@dataclass
class RecipeConfig:
    """Every knob of a recipe run (the CLI's options)."""

    library: Path | None = None
    out: Path = Path("out/recipe")
    n_train: int = 4
    n_heldout: int = 2
    pool: int = 24
    min_len: int = 1
    max_len: int = 3
    sft_steps: int = 120  # at most; the warm start stops once it is as strong as ``warm_start``
    sft_batch: int = 6
    sft_lr: float = 5e-3
    warm_start: float = 0.5  # stop SFT when the policy replays the oracle trajectories with this probability
    steps: int = 16
    group_size: int = 8
    lr: float = 1e-4
    # verl actor.clip_ratio_low/high: the ratio is clipped to [1 - low, 1 + high]. A tight floor bounds how far
    # one update pushes a failure's tokens down; the ceiling is DAPO's clip-higher (docs/training.md)
    clip_ratio_low: float = 0.02
    clip_ratio_high: float = 0.28
    ppo_epochs: int = 2
    mini_batches: int = 4  # optimizer steps per PPO epoch (whole groups each), like ppo_mini_batch_size
    eval_every: int = 0  # 0: only at step 0 and after the last update
    eval_group_size: int = 32  # rollouts per training task in the before/after evaluation (0: none)
    sampling: SamplingOptions = field(default_factory=lambda: replace(RECIPE_SAMPLING))
    shape: ModelShape = field(default_factory=ModelShape)
    device: str = "auto"
    threads: int = 1  # CPU threads for torch; 0 keeps torch's default (see run_recipe)
    seed: int = 0
    progress: bool = True
    plot: bool = False


def _vocab(examples: list[SftExample], tok: Any, split: TaskSplit) -> ActionVocab:
    """Tokens of the SFT conversations, every task's instruction, and the stop tokens."""
    seqs = [e.ids for e in examples]
    seqs += [tok.encode(t.instruction, add_special_tokens=False) for t in [*split.train, *split.heldout]]
    return ActionVocab.from_sequences(seqs, extra=[tok.convert_tokens_to_ids("<|im_end|>"), tok.pad_token_id])


def _episodes(tasks: list[Any], n: int, tag: str) -> list[Episode]:
    out = []
    for task in tasks:
        gid = hashlib.sha256(f"recipe:{tag}:{task.id}".encode()).hexdigest()[:16]
        out += [Episode(task_id=task.id, group_id=gid, rollout_idx=i) for i in range(n)]
    return out


def _summary(episodes: list[Episode], step: int, validation: bool, rollout_dir: Path) -> dict[str, Any]:
    recs = [
        RolloutRecord(
            step=step,
            validation=validation,
            group_id=e.group_id,
            task_id=e.task_id,
            rollout_idx=e.rollout_idx,
            episode_id=e.episode_id,
            reward=e.reward,
            completion=e.completion,
            tool_calls=e.tool_calls,
            response_tokens=len(e.response_ids),
            trained_tokens=e.trained_tokens,
            aborted=bool(e.env_error),
            abort_reason=e.env_error,
        )
        for e in episodes
    ]
    for rec in recs:
        append_rollout(rollout_dir, rec)
    (s,) = summarize(recs)
    return {
        "reward_mean": round(s.reward_mean, 4),
        "completion_rate": round(s.completion_rate, 4),
        "tool_calls_mean": round(s.tool_calls_mean, 3),
        "env_aborted": s.env_aborted,
    }


async def _train(url: str, split: TaskSplit, cfg: RecipeConfig, device: str) -> list[dict[str, Any]]:
    import torch

    from trainer.tokenizer import build_qwen_tokenizer

    cfg.out.mkdir(parents=True, exist_ok=True)
    records, stats = await oracle_sft_records(url, split.train, cfg.out, progress=cfg.progress)
    tok = build_qwen_tokenizer()
    examples = sft_examples(tok, records, short=cfg.sampling.short_prompt)
    vocab = _vocab(examples, tok, split).to(device)
    model = build_tiny_model(len(tok), cfg.seed, device, cfg.shape)
    rng = random.Random(cfg.seed)
    gen = torch.Generator(device=device).manual_seed(cfg.seed)
    importance = {t.id: [c.importance for c in t.rubric] for t in [*split.train, *split.heldout]}
    metrics: list[dict[str, Any]] = []
    log, rollout_dir = cfg.out / "metrics.jsonl", cfg.out / "rollouts"
    stale_rollouts = [
        *rollout_dir.glob("rollouts-*.jsonl"),
        *(cfg.out / "eval_rollouts").glob("rollouts-*.jsonl"),
    ]
    for stale in (log, cfg.out / "sft_loss.jsonl", *stale_rollouts):
        stale.unlink(missing_ok=True)
    bar = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[info]}"),
        disable=not cfg.progress,
    )
    with bar:
        sft_task = bar.add_task("SFT warm start", total=cfg.sft_steps, info=f"{stats.kept} records")
        optim = torch.optim.AdamW(model.parameters(), lr=cfg.sft_lr)
        with (cfg.out / "sft_loss.jsonl").open("w") as fh:
            for i in range(cfg.sft_steps):
                loss = sft_step(model, optim, examples, batch_size=cfg.sft_batch, rng=rng, vocab=vocab)
                row: dict[str, Any] = {"sft_step": i, "loss": round(loss, 5)}
                if cfg.warm_start > 0 and i % 2 == 1:
                    # a token-mean loss says little about whole rollouts: stop on the replay probability
                    replay = replay_probability(
                        model, examples, vocab=vocab, temperature=cfg.sampling.temperature
                    )
                    row["replay_probability"] = round(replay, 5)
                fh.write(json.dumps(row) + "\n")
                fh.flush()
                bar.update(sft_task, advance=1, info=f"loss {loss:.3f}")
                if row.get("replay_probability", 0.0) >= cfg.warm_start:
                    break
        # GRPO gets its own Adam, as a verl actor does: the SFT optimizer's first moments point
        # along the last SFT gradients and its second moments are dominated by the first,
        # large SFT gradients, so carried over they keep pushing SFT and damp the policy gradient
        optim = torch.optim.AdamW(model.parameters(), lr=cfg.lr)  # weight decay 0.01, as verl's actor
        grpo_task = bar.add_task("GRPO", total=cfg.steps + 1, info="")
        async with OrchestratorClient(url, timeout_s=cfg.sampling.group_timeout_s + 60) as client:
            for step in range(cfg.steps + 1):
                t0 = time.monotonic()
                evaluation: dict[str, Any] = {}
                if cfg.eval_group_size and step in (0, cfg.steps):
                    # the training tasks played many times, never trained on: a batch of 8 per task
                    # moves +-0.1 between steps on its own, this measurement by ~1/2 of that
                    ev = _episodes(split.train, cfg.eval_group_size, f"{cfg.seed}:{step}:eval")
                    await play_episodes(
                        client,
                        model,
                        tok,
                        ev,
                        cfg.sampling,
                        vocab=vocab,
                        importance=importance,
                        generator=gen,
                    )
                    summary = _summary(ev, step, True, cfg.out / "eval_rollouts")
                    evaluation = {f"eval_{k}": v for k, v in summary.items()}
                batch = _episodes(split.train, cfg.group_size, f"{cfg.seed}:{step}:train")
                await play_episodes(
                    client, model, tok, batch, cfg.sampling, vocab=vocab, importance=importance, generator=gen
                )
                rec: dict[str, Any] = {
                    "step": step,
                    **_summary(batch, step, False, rollout_dir),
                    **evaluation,
                }
                if step < cfg.steps:
                    update = grpo_update(
                        model,
                        optim,
                        batch,
                        epochs=cfg.ppo_epochs,
                        mini_batches=cfg.mini_batches,
                        clip_ratio_low=cfg.clip_ratio_low,
                        clip_ratio_high=cfg.clip_ratio_high,
                        vocab=vocab,
                        temperature=cfg.sampling.temperature,
                    )
                    rec.update(
                        {k: round(v, 5) if isinstance(v, float) else v for k, v in asdict(update).items()}
                    )
                every = cfg.eval_every or cfg.steps
                if step == cfg.steps or step % every == 0:
                    held = _episodes(split.heldout, cfg.group_size, f"{cfg.seed}:{step}:heldout")
                    await play_episodes(
                        client,
                        model,
                        tok,
                        held,
                        cfg.sampling,
                        vocab=vocab,
                        importance=importance,
                        generator=gen,
                    )
                    rec.update(
                        {f"heldout_{k}": v for k, v in _summary(held, step, True, rollout_dir).items()}
                    )
                rec["seconds"] = round(time.monotonic() - t0, 2)
                metrics.append(rec)
                with log.open("a") as fh:
                    fh.write(json.dumps(rec) + "\n")
                if cfg.progress:
                    bar.console.print(json.dumps(rec), soft_wrap=True, highlight=False)
                bar.update(grpo_task, advance=1, info=f"reward {rec['reward_mean']:.3f}")
    return metrics


def plot_rewards(metrics: list[dict[str, Any]], path: Path) -> None:
    """Reward mean per step, training and held-out tasks, as a PNG (matplotlib, no display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(
        [m["step"] for m in metrics], [m["reward_mean"] for m in metrics], marker="o", label="training tasks"
    )
    held = [m for m in metrics if "heldout_reward_mean" in m]
    ax.plot(
        [m["step"] for m in held],
        [m["heldout_reward_mean"] for m in held],
        marker="s",
        label="held-out tasks",
    )
    ax.set_xlabel("GRPO step (0: after SFT)")
    ax.set_ylabel("reward mean (CFRR)")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run_recipe(cfg: RecipeConfig) -> list[dict[str, Any]]:
    """Run the whole recipe (module docstring); return one metrics record per step."""
    import torch

    device = cfg.device if cfg.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cpu" and cfg.threads > 0:
        # the recipe's matrices are small: on a shared CPU, OpenMP threads mostly wait on each other
        torch.set_num_threads(cfg.threads)
    settings = offline_settings(Settings())
    root = cfg.library if cfg.library is not None else settings.library
    runtimes = load_services(root, settings)
    pool = generate_recipe_tasks(
        runtimes, pool=cfg.pool, seed=cfg.seed, min_len=cfg.min_len, max_len=cfg.max_len
    )
    split = split_by_archetype(pool, cfg.n_train, cfg.n_heldout)
    cfg.out.mkdir(parents=True, exist_ok=True)
    (cfg.out / "tasks.json").write_text(
        json.dumps({"train": [t.id for t in split.train], "heldout": [t.id for t in split.heldout]}, indent=2)
    )

    async def embedded() -> list[dict[str, Any]]:
        async with serve_embedded(runtimes, settings, [*split.train, *split.heldout]) as url:
            return await _train(url, split, cfg, device)

    metrics = asyncio.run(embedded())
    if cfg.plot:
        plot_rewards(metrics, cfg.out / "reward.png")
    return metrics


def main(
    library: Annotated[
        Path | None, typer.Option(help="Library folder (default: Settings().library).")
    ] = None,
    out: Annotated[Path, typer.Option(help="Output folder: metrics, rollouts, SFT data, plot.")] = Path(
        "out/recipe"
    ),
    n_train: Annotated[int, typer.Option(min=1, help="Training tasks (SFT data and GRPO).")] = 4,
    n_heldout: Annotated[int, typer.Option(min=0, help="Held-out tasks of the same archetypes.")] = 2,
    pool: Annotated[int, typer.Option(min=1, help="Tasks to generate before the split.")] = 24,
    max_len: Annotated[int, typer.Option(min=1, max=8, help="Most tool calls of a task's walk.")] = 3,
    sft_steps: Annotated[int, typer.Option(min=0, help="SFT steps at most.")] = 120,
    sft_lr: float = 5e-3,
    warm_start: Annotated[
        float,
        typer.Option(
            min=0.0,
            max=1.0,
            help="Stop SFT once the policy replays the oracle trajectories with this mean probability "
            "(0: run every SFT step).",
        ),
    ] = 0.5,
    steps: Annotated[int, typer.Option(min=0, help="GRPO updates.")] = 16,
    group_size: Annotated[int, typer.Option(min=2, help="Rollouts per task (GRPO group).")] = 8,
    lr: float = 1e-4,
    clip_ratio_low: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="PPO ratio floor 1 - low (verl actor.clip_ratio_low).")
    ] = 0.02,
    clip_ratio_high: Annotated[
        float,
        typer.Option(min=0.0, help="PPO ratio ceiling 1 + high (verl actor.clip_ratio_high; DAPO: 0.28)."),
    ] = 0.28,
    ppo_epochs: Annotated[int, typer.Option(min=1)] = 2,
    mini_batches: Annotated[
        int, typer.Option(min=1, help="Optimizer steps per PPO epoch (each on whole groups).")
    ] = 4,
    eval_every: Annotated[
        int, typer.Option(min=0, help="Play held-out tasks every N steps (0: first and last).")
    ] = 0,
    eval_group_size: Annotated[
        int,
        typer.Option(
            min=0, help="Rollouts per training task in the evaluation before and after GRPO (0: none)."
        ),
    ] = 32,
    max_turns: Annotated[int, typer.Option(min=1)] = 4,
    max_new_tokens: Annotated[int, typer.Option(min=1)] = 128,
    temperature: Annotated[
        float,
        typer.Option(
            min=0.05, help="Sampling temperature; the GRPO log-probs use the same (softmax of logits / T)."
        ),
    ] = 0.8,
    full_prompt: Annotated[
        bool, typer.Option(help="Show the policy the system prompt and tool schemas too (~800 more tokens).")
    ] = False,
    hidden: Annotated[int, typer.Option(min=64, help="Model width (head_dim stays 64).")] = 128,
    layers: Annotated[int, typer.Option(min=1)] = 2,
    device: Annotated[str, typer.Option(help="auto | cpu | cuda")] = "auto",
    threads: Annotated[int, typer.Option(min=0, help="CPU threads for torch (0: torch's default).")] = 1,
    seed: int = 0,
    plot: Annotated[bool, typer.Option(help="Write OUT/reward.png (matplotlib).")] = True,
) -> None:
    """SFT then GRPO against the real orchestrator (see the module docstring)."""
    heads = max(1, hidden // 64)
    cfg = RecipeConfig(
        library=library,
        out=out,
        n_train=n_train,
        n_heldout=n_heldout,
        pool=pool,
        max_len=max_len,
        sft_steps=sft_steps,
        sft_lr=sft_lr,
        warm_start=warm_start,
        steps=steps,
        group_size=group_size,
        lr=lr,
        clip_ratio_low=clip_ratio_low,
        clip_ratio_high=clip_ratio_high,
        ppo_epochs=ppo_epochs,
        mini_batches=mini_batches,
        eval_every=eval_every,
        eval_group_size=eval_group_size,
        sampling=SamplingOptions(
            max_turns=max_turns,
            max_new_tokens=max_new_tokens,
            temperature=temperature,
            short_prompt=not full_prompt,
        ),
        shape=ModelShape(
            hidden=hidden, layers=layers, heads=heads, kv_heads=max(1, heads // 2), intermediate=2 * hidden
        ),
        device=device,
        threads=threads,
        seed=seed,
        plot=plot,
    )
    try:
        metrics = run_recipe(cfg)
    except (CompoWorldError, ValueError, RuntimeError, OSError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=1) from exc
    first, last = metrics[0], metrics[-1]
    key = "eval_reward_mean" if "eval_reward_mean" in first else "reward_mean"
    typer.echo(
        f"reward mean on the training tasks ({key}): {first[key]:.3f} (step 0, after SFT) -> "
        f"{last[key]:.3f} (step {last['step']}); held-out: "
        f"{first.get('heldout_reward_mean', float('nan')):.3f} -> {last.get('heldout_reward_mean', float('nan')):.3f}; "
        f"log {out / 'metrics.jsonl'}"
    )


def cli_app() -> typer.Typer:
    """The command line, built on each call (no Typer at module level)."""
    app = typer.Typer(add_completion=False, help=__doc__)
    app.command()(main)
    return app


if __name__ == "__main__":
    cli_app()()
