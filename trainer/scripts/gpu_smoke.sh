#!/usr/bin/env bash
# SFT then GRPO on ONE GPU with torch + transformers only (no vLLM, no Ray), in under ten minutes:
# the recipe of trainer/recipe.py at a larger scale. Everything it writes lands in one folder:
#   OUT/run.log          the whole console output (setup, SFT progress, one JSON line per GRPO step)
#   OUT/metrics.jsonl    per step: reward mean, completion rate, tool calls, env aborts, loss, held-out
#   OUT/reward.png       reward mean per step, training and held-out tasks
#   OUT/sft.jsonl        the oracle SFT export (published format) the warm start trained on
#   OUT/rollouts/        one line per rollout (python -m trainer.rollout_log OUT/rollouts)
#
#   bash trainer/scripts/gpu_smoke.sh [OUT]                          # GPU scale, default OUT=out/gpu_smoke
#   bash trainer/scripts/gpu_smoke.sh --device cpu --tiny [--library DIR] [OUT]
#                                                                    # the same plumbing at CPU-test scale
# Needs: pip install -e '.[smoke]' and a built library (default: the starter library, generated_services/).
# Knobs (environment, GPU scale defaults): STEPS=16 GROUP=8 N_TRAIN=24 N_HELDOUT=12 POOL=96 MAX_LEN=3
# SFT_STEPS=150 HIDDEN=512 LAYERS=4 LR=1e-4 CLIP_LOW=0.02 CLIP_HIGH=0.28 MINI_BATCHES=4 TEMPERATURE=0.8 MAX_TURNS=4
# WARM_START=0.5 (SFT stops once the oracle trajectories replay with this probability) EVAL_GROUP=32
# TIME_LIMIT=570 (seconds; the run is killed past it, the log kept). LR, CLIP_LOW/CLIP_HIGH, MINI_BATCHES,
# TEMPERATURE and MAX_TURNS are the CPU recipe's (docs/training.md says why); they are untried at GPU scale.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DEVICE=cuda
TINY=0
LIBRARY=""
OUT=""
while (( $# )); do
  case "$1" in
    --device) DEVICE="$2"; shift 2 ;;
    --tiny) TINY=1; shift ;;
    --library) LIBRARY="$2"; shift 2 ;;
    -h|--help) sed -n '2,19p' "${BASH_SOURCE[0]}"; exit 0 ;;
    -*) echo "gpu_smoke.sh: unknown option $1" >&2; exit 2 ;;
    *) OUT="$1"; shift ;;
  esac
done
OUT="${OUT:-$REPO/out/gpu_smoke}"
mkdir -p "$OUT"
PYTHON="${PYTHON:-python}"
export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"
cd "$REPO"

if [[ "$DEVICE" == cuda ]] && ! "$PYTHON" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)'; then
  echo "gpu_smoke.sh: no CUDA device visible to torch (use --device cpu --tiny for the CPU plumbing run)" >&2
  exit 2
fi

if (( TINY )); then
  # the CPU test's scale (tests/test_trainer_recipe.py): a handful of tasks, the 2-layer model
  : "${STEPS:=2}" "${GROUP:=4}" "${N_TRAIN:=3}" "${N_HELDOUT:=2}" "${POOL:=24}" "${MAX_LEN:=3}"
  : "${SFT_STEPS:=10}" "${HIDDEN:=64}" "${LAYERS:=1}" "${TIME_LIMIT:=570}" "${EVAL_GROUP:=4}"
  PROMPT=(--no-full-prompt --threads 1)
else
  : "${STEPS:=16}" "${GROUP:=8}" "${N_TRAIN:=24}" "${N_HELDOUT:=12}" "${POOL:=96}" "${MAX_LEN:=3}"
  : "${SFT_STEPS:=150}" "${HIDDEN:=512}" "${LAYERS:=4}" "${TIME_LIMIT:=570}" "${EVAL_GROUP:=32}"
  PROMPT=(--full-prompt)  # a GPU affords the system prompt and the gateway tool schemas
fi
: "${LR:=1e-4}" "${CLIP_LOW:=0.02}" "${CLIP_HIGH:=0.28}" "${MINI_BATCHES:=4}" "${TEMPERATURE:=0.8}" "${MAX_TURNS:=4}" "${WARM_START:=0.5}"
LIB_ARGS=()
[[ -n "$LIBRARY" ]] && LIB_ARGS=(--library "$LIBRARY")

{
  echo "gpu_smoke: device=$DEVICE tiny=$TINY out=$OUT $(date -u +%FT%TZ)"
  [[ "$DEVICE" == cuda ]] && { nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true; }
  timeout --signal=TERM "$TIME_LIMIT" "$PYTHON" -m trainer.recipe \
    "${LIB_ARGS[@]}" --out "$OUT" --device "$DEVICE" "${PROMPT[@]}" \
    --steps "$STEPS" --group-size "$GROUP" --n-train "$N_TRAIN" --n-heldout "$N_HELDOUT" \
    --pool "$POOL" --max-len "$MAX_LEN" --sft-steps "$SFT_STEPS" --hidden "$HIDDEN" --layers "$LAYERS" \
    --lr "$LR" --clip-ratio-low "$CLIP_LOW" --clip-ratio-high "$CLIP_HIGH" --mini-batches "$MINI_BATCHES" --temperature "$TEMPERATURE" --max-turns "$MAX_TURNS" \
    --warm-start "$WARM_START" --eval-group-size "$EVAL_GROUP" --eval-every 4 --plot
} 2>&1 | tee "$OUT/run.log"
exit "${PIPESTATUS[0]}"
