#!/bin/bash
# A Megatron-LM launch script written for trainmem's tests with the flags of
# Megatron-LM core_v0.15.0rc7-2333-gd98e8a64dd (megatron/training/arguments.py),
# in the shape of its examples/llama/train_llama3_8b_h100_fp8.sh: variables,
# arrays, a branch on DTYPE, commented-out flags.

GPUS_PER_NODE=8
NUM_NODES=1
WORLD_SIZE=$(($GPUS_PER_NODE*$NUM_NODES))
CHECKPOINT_PATH=${1:-"checkpoints/llama3_8b"}

TP_SIZE=1
CP_SIZE=1
MICRO_BATCH_SIZE=1
GLOBAL_BATCH_SIZE=128
NUM_LAYERS=32
DTYPE="bf16"
SEQ_LENGTH=8192

DISTRIBUTED_ARGS=(
    --nproc_per_node $GPUS_PER_NODE
    --nnodes $NUM_NODES
)

MODEL_ARGS=(
    --num-layers $NUM_LAYERS
    --hidden-size 4096
    --ffn-hidden-size 14336
    --num-attention-heads 32
    --group-query-attention
    --num-query-groups 8
    --seq-length $SEQ_LENGTH
    --max-position-embeddings $SEQ_LENGTH
    --swiglu
    --untie-embeddings-and-output-weights
)

TRAINING_ARGS=(
    --micro-batch-size $MICRO_BATCH_SIZE
    --global-batch-size $GLOBAL_BATCH_SIZE
    --lr 0.00015
    # --recompute-granularity full   (commented out: not read)
    --bf16
    --grad-reduce-in-bf16
    --cross-entropy-loss-fusion
)

DTYPE_ARGS=()
if [[ "$DTYPE" == "fp8" ]]; then
    DTYPE_ARGS+=(
        "--fp8-format hybrid"
        "--fp8-param-gather"
    )
fi

MODEL_PARALLEL_ARGS=(
    --tensor-model-parallel-size $TP_SIZE
    --context-parallel-size $CP_SIZE
    --sequence-parallel
)

DDP_ARGS=(
    --use-distributed-optimizer
    --overlap-grad-reduce
)
TRAINING_ARGS+=("${DDP_ARGS[@]}")

torchrun ${DISTRIBUTED_ARGS[@]} \
    pretrain_gpt.py \
    ${MODEL_ARGS[@]} \
    ${TRAINING_ARGS[@]} \
    ${DTYPE_ARGS[@]} \
    ${MODEL_PARALLEL_ARGS[@]} \
    --save "$CHECKPOINT_PATH"
