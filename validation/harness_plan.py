"""The scenario side of the GPU harness: a trainmem scenario file -> a RunPlan
(what one GPU runs). Needs no torch. Used by measure_gpu.py."""
from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import sys
import time
from pathlib import Path

try:
    import torch
    from torch import nn
except ImportError:  # --dry-run and the plan tests need no torch
    torch = None

REPO = Path(__file__).resolve().parent.parent
PRESET_MODELS = REPO / "presets" / "models"
CASES = REPO / "validation" / "cases"
MEASUREMENTS = REPO / "validation" / "measurements"

EXIT_OK, EXIT_FAILED, EXIT_UNSUPPORTED = 0, 1, 2


class Unsupported(Exception):
    """A scenario this harness cannot reproduce on one GPU (exit status 2)."""


class MeasurementError(Exception):
    """A run that ran but cannot be trusted (e.g. GradScaler skipped a step)."""


# The scenario format's defaults for the keys read here (core/training/training_config.h,
# core/training/parallel_config.h, docs/scenario-format.md): a key a case leaves
# out means what it means to trainmem.
TRAINING_DEFAULTS = {
    "micro_batch_size": 1, "sequence_length": 2048, "gradient_accumulation_steps": 1,
    "precision": "mixed-bf16", "grad_dtype": "auto", "optimizer": "adamw", "optimizer_impl": "foreach",
    "optimizer_state_dtype": "auto", "activation_checkpointing": "none", "checkpoint_every": 1,
    "attention": "flash", "kernels": "eager", "loss": "standard", "loss_chunks": 8, "finetuning": "full",
    "lora_rank": 16, "lora_targets": ["q_proj", "k_proj", "v_proj", "o_proj"], "lora_dropout": 0.0,
}
# Keys that change nothing in a single-GPU run (learning-rate helpers).
TRAINING_IGNORED = {"base_batch_size", "base_learning_rate", "warmup_steps"}
# Degrees that must stay 1 on one GPU, and settings that then mean nothing.
PARALLEL_ONE = ("data", "tensor", "pipeline", "context", "expert")
PARALLEL_IGNORED = {"shard_group", "pipeline_schedule", "virtual_stages", "microbatches"}
# hardware.* are estimator settings (overheads, capacity), not run settings.

# Precision recipes, as core/training/precision.cpp plans them: weights, grads, the
# autocast dtype, whether an fp32 master copy is kept, and the state dtype.
@dataclasses.dataclass(frozen=True)
class Recipe:
    weights: str
    grads: str
    autocast: str | None
    master: bool
    states: str
    grad_scaler: bool = False   # torch.amp.GradScaler (AMP fp16)
    loss_scale: float = 1.0     # static loss scale of the master-weight optimizer (mixed fp16)


RECIPES = {
    "fp32": Recipe("fp32", "fp32", None, False, "fp32"),
    "amp-bf16": Recipe("fp32", "fp32", "bf16", False, "fp32"),
    "amp-fp16": Recipe("fp32", "fp32", "fp16", False, "fp32", grad_scaler=True),
    "pure-bf16": Recipe("bf16", "bf16", None, False, "bf16"),
    "mixed-bf16": Recipe("bf16", "bf16", None, True, "fp32"),
    # Megatron-LM's constant loss scale option; memory does not depend on its value.
    "mixed-fp16": Recipe("fp16", "fp16", None, True, "fp32", loss_scale=1024.0),
}

def load_optimizer_catalogue(path=None):
    """trainmem's optimizer catalogue (core/training/optimizer_state.cpp) as
    `trainmem-cli optimizers --format json` writes it: key -> its label and
    the implementations training.optimizer_impl may name. The committed copy,
    validation/optimizers.json, is held equal to the CLI's output by
    Cli.OptimizersJsonIsTheHarnessCatalogue (tests/cli/cli_test.cpp), so the
    harness and the estimator accept the same optimizers and kernels."""
    path = path or os.path.join(os.path.dirname(os.path.abspath(__file__)), "optimizers.json")
    with open(path) as f:
        return {o["key"]: o for o in json.load(f)}


OPTIMIZER_CATALOGUE = load_optimizer_catalogue()
# Catalogue optimizers harness_torch.build_optimizer cannot build, and why.
NOT_REPRODUCED = {"muon": "Muon is not in torch.optim and no implementation of it is loaded here"}
OPTIMIZERS = tuple(k for k in OPTIMIZER_CATALOGUE if k not in NOT_REPRODUCED)
ALL_LINEAR = "all-linear"


@dataclasses.dataclass(frozen=True)
class RunPlan:
    """What one case runs: the scenario mapped onto PyTorch settings."""
    name: str
    model_type: str
    model_config: dict          # HF config keys, without model_type
    micro_batch_size: int
    sequence_length: int
    gradient_accumulation_steps: int
    precision: str
    recipe: Recipe
    grad_dtype: str             # the master-weight optimizer's gradient buffer
    optimizer: str
    optimizer_impl: str
    checkpointing: bool
    attn_implementation: str    # "sdpa" or "eager"
    lora_rank: int              # 0: full fine-tuning
    lora_targets: tuple
    lora_dropout: float
    gpu: str                    # hardware.gpu, to warn when measured on another card
    routed_experts: bool = False  # a MoE model: transformers 5 must be told to run its experts eagerly


def _section(scenario, key):
    value = scenario.get(key, {})
    if not isinstance(value, dict):
        raise Unsupported(f"{key}: expected an object")
    return value


def resolve_model(model):
    """The scenario's model as an HF config dict: {"preset": NAME} reads presets/models/NAME.json."""
    if not isinstance(model, dict):
        raise Unsupported("model: expected {\"preset\": NAME} or a Hugging Face config object")
    if "preset" in model:
        path = PRESET_MODELS / f"{model['preset']}.json"
        if not path.is_file():
            raise Unsupported(f"model.preset: no preset {model['preset']!r} in {PRESET_MODELS}")
        model = json.loads(path.read_text())
    config = dict(model)
    if "model_type" not in config:
        raise Unsupported("model.model_type: required to build the model with transformers")
    # The checkpoint's storage dtype: the recipe decides the dtype here.
    config.pop("torch_dtype", None)
    config.pop("dtype", None)
    return config


def plan_scenario(scenario, name):
    """Maps a scenario (as in its JSON file) to a RunPlan, or raises Unsupported naming the key."""
    training = _section(scenario, "training")
    parallelism = _section(scenario, "parallelism")
    hardware = _section(scenario, "hardware")
    for key in training:
        if key not in TRAINING_DEFAULTS and key not in TRAINING_IGNORED:
            raise Unsupported(f"training.{key}: not known to this harness; update validation/measure_gpu.py")
    t = {**TRAINING_DEFAULTS, **training}

    for key in PARALLEL_ONE:
        if parallelism.get(key, 1) != 1:
            raise Unsupported(f"parallelism.{key}: must be 1 on one GPU (got {parallelism[key]})")
    if parallelism.get("zero_stage", 0) != 0:
        raise Unsupported("parallelism.zero_stage: ZeRO shards over data-parallel ranks; one GPU has none")
    for key in ("offload_optimizer", "offload_parameters", "sequence_parallel"):
        if parallelism.get(key, False):
            raise Unsupported(f"parallelism.{key}: not reproduced on one GPU")
    if parallelism.get("gpus") not in (None, 1):
        raise Unsupported(f"parallelism.gpus: must be 1 (got {parallelism['gpus']})")
    for key in parallelism:
        if key not in PARALLEL_ONE + ("zero_stage", "offload_optimizer", "offload_parameters",
                                      "sequence_parallel", "gpus") and key not in PARALLEL_IGNORED:
            raise Unsupported(f"parallelism.{key}: not known to this harness")

    precision = t["precision"]
    if precision not in RECIPES:
        raise Unsupported(f"training.precision: {precision!r} is not reproduced here "
                          f"(fp8 needs Transformer Engine); supported: {', '.join(RECIPES)}")
    recipe = RECIPES[precision]
    grad_dtype = recipe.grads if t["grad_dtype"] in (None, "auto") else t["grad_dtype"]
    if grad_dtype != recipe.grads and not recipe.master:
        raise Unsupported(f"training.grad_dtype: {precision} keeps .grad in the weights' dtype; "
                          f"only the master-weight recipes have a separate gradient buffer")
    states = t["optimizer_state_dtype"]
    if states not in (None, "auto") and states != recipe.states:
        raise Unsupported(f"training.optimizer_state_dtype: {precision} keeps {recipe.states} states "
                          f"(PyTorch optimizers allocate states like their parameters)")

    optimizer, impl = t["optimizer"], t["optimizer_impl"]
    if optimizer not in OPTIMIZER_CATALOGUE:
        raise Unsupported(f"training.optimizer: {optimizer!r} is not in trainmem's catalogue; "
                          f"one of {', '.join(OPTIMIZER_CATALOGUE)}")
    if optimizer in NOT_REPRODUCED:
        raise Unsupported(f"training.optimizer: {optimizer!r} is not reproduced here ({NOT_REPRODUCED[optimizer]}); "
                          f"supported: {', '.join(OPTIMIZERS)}")
    impls = OPTIMIZER_CATALOGUE[optimizer]["implementations"]
    if impl not in impls:
        raise Unsupported(f"training.optimizer_impl: {OPTIMIZER_CATALOGUE[optimizer]['label']} has no {impl!r} "
                          f"implementation; trainmem's catalogue lists {', '.join(impls)}")

    checkpointing = t["activation_checkpointing"]
    if checkpointing not in ("none", "full"):
        raise Unsupported(f"training.activation_checkpointing: {checkpointing!r} is not offered by "
                          f"transformers' gradient checkpointing; use none or full")
    if t["kernels"] != "eager":
        raise Unsupported("training.kernels: transformers' modeling code is the eager profile")
    if t["loss"] != "standard":
        raise Unsupported("training.loss: the harness computes the standard (unchunked) loss")
    attention = {"flash": "sdpa", "eager": "eager"}.get(t["attention"])
    if attention is None:
        raise Unsupported(f"training.attention: unknown {t['attention']!r}")

    finetuning = t["finetuning"]
    if finetuning == "qlora":
        raise Unsupported("training.finetuning: qlora needs bitsandbytes 4-bit base layers, "
                          "which this harness does not build")
    if finetuning not in ("full", "lora"):
        raise Unsupported(f"training.finetuning: unknown {finetuning!r}")
    lora_rank = int(t["lora_rank"]) if finetuning == "lora" else 0

    for key in ("micro_batch_size", "sequence_length", "gradient_accumulation_steps"):
        if not isinstance(t[key], int) or t[key] < 1:
            raise Unsupported(f"training.{key}: must be a positive integer (got {t[key]!r})")

    config = resolve_model(scenario.get("model"))
    model_type = config.pop("model_type")
    limit = config.get("n_positions") if model_type == "gpt2" else None
    if limit is not None and t["sequence_length"] > limit:
        raise Unsupported(f"training.sequence_length: {t['sequence_length']} exceeds the model's "
                          f"learned positions (n_positions = {limit})")
    return RunPlan(
        name=name, model_type=model_type, model_config=config,
        micro_batch_size=t["micro_batch_size"], sequence_length=t["sequence_length"],
        gradient_accumulation_steps=t["gradient_accumulation_steps"], precision=precision, recipe=recipe,
        grad_dtype=grad_dtype, optimizer=optimizer, optimizer_impl=impl, checkpointing=checkpointing == "full",
        attn_implementation=attention, lora_rank=lora_rank, lora_targets=tuple(t["lora_targets"]),
        lora_dropout=float(t["lora_dropout"]), gpu=str(hardware.get("gpu", "H100-80GB")),
        routed_experts=has_routed_experts(config))


# The HF config keys that give a model routed experts (Mixtral, Qwen2-MoE, DeepSeek).
EXPERT_COUNT_KEYS = ("num_local_experts", "num_experts", "n_routed_experts")


def has_routed_experts(config):
    return any(int(config.get(key) or 0) > 1 for key in EXPERT_COUNT_KEYS)


