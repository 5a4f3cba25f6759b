#!/usr/bin/env python3
"""Measures the GPU memory of trainmem scenarios on one real GPU.

    python3 validation/measure_gpu.py --all            # every validation/cases/*.json
    python3 validation/measure_gpu.py CASE.json ...    # chosen cases
    python3 validation/measure_gpu.py --all --dry-run  # map the cases to runs, no GPU needed

Each case runs in its own process, so the CUDA context and the caching
allocator start clean. The case's model is built with Hugging Face
transformers from its config (random weights, nothing downloaded), trained
for a warm-up step and then --steps measured steps on random token ids, and
PyTorch's allocator counters are read at every phase boundary (forward,
loss, backward, optimizer step, zero_grad). The result goes to
validation/measurements/NAME.json; `trainmem-cli validate` compares those
files with the estimator. Method: docs/accuracy.md.

Exit status: 0 every case measured, 1 a case failed (out of memory, crash),
2 a case asks for something one GPU cannot reproduce, or bad input.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import os
import subprocess
import sys
import tempfile
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


# The scenario format's defaults for the keys read here (core/training_config.h,
# core/parallel_config.h, docs/scenario-format.md): a key a case leaves
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

# Precision recipes, as core/precision.cpp plans them: weights, grads, the
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

OPTIMIZERS = ("sgd", "sgd-momentum", "adam", "adamw", "rmsprop", "adagrad", "lion", "adafactor", "adamw-8bit")
# Optimizers with a single implementation: optimizer_impl does not change what runs.
SINGLE_IMPLEMENTATION = {"adafactor", "adamw-8bit"}
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
    if optimizer not in OPTIMIZERS:
        raise Unsupported(f"training.optimizer: {optimizer!r} is not reproduced here; "
                          f"supported: {', '.join(OPTIMIZERS)}")
    if impl not in ("foreach", "fused", "for-loop"):
        raise Unsupported(f"training.optimizer_impl: unknown {impl!r}")
    if optimizer == "lion" and impl == "fused":
        raise Unsupported("training.optimizer_impl: Lion has no fused kernel; use foreach or for-loop")

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
        lora_dropout=float(t["lora_dropout"]), gpu=str(hardware.get("gpu", "H100-80GB")))


# --- PyTorch side -----------------------------------------------------------

def require_torch():
    if torch is None:
        raise Unsupported("torch is not installed in this Python")


def torch_dtype(name):
    return {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[name]


def autocast_context(plan, device_type):
    """torch.autocast for the AMP recipes, nothing otherwise."""
    if plan.recipe.autocast is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device_type, dtype=torch_dtype(plan.recipe.autocast))


def _impl_kwargs(cls, impl):
    import inspect
    accepted = inspect.signature(cls.__init__).parameters
    if impl == "fused":
        if "fused" not in accepted:
            raise Unsupported(f"training.optimizer_impl: this torch has no fused {cls.__name__}")
        return {"fused": True}
    if "foreach" not in accepted:
        raise Unsupported(f"training.optimizer_impl: this torch's {cls.__name__} has no foreach switch")
    return {"foreach": impl == "foreach"}


def build_optimizer(kind, impl, params):
    """The torch optimizer for a scenario's training.optimizer / optimizer_impl, with library defaults."""
    params = list(params)
    if kind in ("sgd", "sgd-momentum"):
        momentum = 0.9 if kind == "sgd-momentum" else 0.0
        return torch.optim.SGD(params, lr=1e-3, momentum=momentum, **_impl_kwargs(torch.optim.SGD, impl))
    simple = {"adam": torch.optim.Adam, "adamw": torch.optim.AdamW, "rmsprop": torch.optim.RMSprop,
              "adagrad": torch.optim.Adagrad}
    if kind in simple:
        cls = simple[kind]
        return cls(params, lr=1e-3, **_impl_kwargs(cls, impl))
    if kind == "lion":
        return Lion(params, lr=1e-4, foreach=impl == "foreach")
    if kind == "adafactor":
        try:
            from transformers.optimization import Adafactor
        except ImportError as e:
            raise Unsupported("training.optimizer: adafactor needs transformers") from e
        # transformers' defaults: relative step size, beta1 = None (no first moment).
        return Adafactor(params, lr=None, relative_step=True, scale_parameter=True, warmup_init=False)
    if kind == "adamw-8bit":
        try:
            import bitsandbytes as bnb
        except ImportError as e:
            raise Unsupported("training.optimizer: adamw-8bit needs bitsandbytes") from e
        return bnb.optim.AdamW8bit(params, lr=1e-3)
    raise Unsupported(f"training.optimizer: {kind!r} is not reproduced here")


class Lion(torch.optim.Optimizer if torch is not None else object):
    """Lion (Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms", Algorithm 2):
    c = b1*m + (1-b1)*g;  p -= lr*(sign(c) + wd*p);  m = b2*m + (1-b2)*g.
    One state (m). The foreach path builds c for every tensor at once, as
    torch's foreach optimizers build their temporaries; the loop builds one."""

    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0, foreach=True):
        super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay, foreach=foreach))

    def step(self, closure=None):
        with torch.no_grad():
            for group in self.param_groups:
                params = [p for p in group["params"] if p.grad is not None]
                if not params:
                    continue
                grads = [p.grad for p in params]
                exp_avgs = []
                for p in params:
                    state = self.state[p]
                    if "exp_avg" not in state:
                        state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    exp_avgs.append(state["exp_avg"])
                lr, (beta1, beta2), wd = group["lr"], group["betas"], group["weight_decay"]
                if group["foreach"]:
                    if wd:
                        torch._foreach_mul_(params, 1 - lr * wd)
                    updates = torch._foreach_mul(exp_avgs, beta1)
                    torch._foreach_add_(updates, grads, alpha=1 - beta1)
                    for u in updates:
                        u.sign_()
                    torch._foreach_add_(params, updates, alpha=-lr)
                    del updates
                    torch._foreach_mul_(exp_avgs, beta2)
                    torch._foreach_add_(exp_avgs, grads, alpha=1 - beta2)
                else:
                    for p, g, m in zip(params, grads, exp_avgs):
                        if wd:
                            p.mul_(1 - lr * wd)
                        update = m.mul(beta1).add_(g, alpha=1 - beta1).sign_()
                        p.add_(update, alpha=-lr)
                        m.mul_(beta2).add_(g, alpha=1 - beta2)
        return None


class MasterWeightOptimizer:
    """16-bit model weights with an fp32 master copy, as Megatron-LM's
    Float16OptimizerWithFloat16Params does (megatron/core/optimizer/optimizer.py):
    - gradients accumulate into a persistent buffer per parameter (Megatron's
      contiguous main_grad buffer; dtype = training.grad_dtype), filled by a
      post-accumulate-grad hook that then drops the 16-bit .grad;
    - step(): master.grad = buffer.float() (the buffer itself when it is fp32,
      an fp32 copy otherwise), the inner optimizer steps on the fp32 masters,
      the masters are copied into the 16-bit weights and the fp32 grads are
      released;
    - zero_grad() zeroes the buffers: they persist, as Megatron's do.
    Parameters that already are fp32 (PEFT's upcast LoRA adapters) are their
    own master and get an fp32 buffer, as Megatron steps fp32 params directly."""

    def __init__(self, params, make_inner, grad_dtype, loss_scale=1.0):
        self.params = [p for p in params if p.requires_grad]
        self.loss_scale = loss_scale
        with torch.no_grad():
            self.masters = [p if p.dtype == torch.float32 else p.detach().clone().float() for p in self.params]
            self.buffers = [torch.zeros_like(p, dtype=torch.float32 if p.dtype == torch.float32 else grad_dtype)
                            for p in self.params]
        self._buffer_of = {id(p): b for p, b in zip(self.params, self.buffers)}
        self.inner = make_inner(self.masters)
        # torch >= 2.1 folds each .grad into its buffer as soon as it is complete,
        # so the 16-bit .grad tensors never all exist at once.
        self.uses_hooks = bool(self.params) and hasattr(self.params[0], "register_post_accumulate_grad_hook")
        if self.uses_hooks:
            for p in self.params:
                p.register_post_accumulate_grad_hook(self._accumulate)

    def _accumulate(self, param):
        with torch.no_grad():
            self._buffer_of[id(param)].add_(param.grad)
        param.grad = None

    def accumulate_all(self):
        """Moves every pending .grad into its buffer (torch without the hook)."""
        for p in self.params:
            if p.grad is not None:
                self._accumulate(p)

    def backward(self, loss):
        (loss * self.loss_scale if self.loss_scale != 1.0 else loss).backward()
        if not self.uses_hooks:
            self.accumulate_all()

    def step(self):
        with torch.no_grad():
            for master, buffer in zip(self.masters, self.buffers):
                master.grad = buffer.float()
                if self.loss_scale != 1.0:
                    master.grad = master.grad / self.loss_scale
            self.inner.step()
            for p, master in zip(self.params, self.masters):
                if p is not master:
                    p.copy_(master)
                master.grad = None

    def zero_grad(self):
        for b in self.buffers:
            b.zero_()


class PlainOptimizer:
    """A torch optimizer on the model's own parameters; GradScaler for AMP fp16."""

    def __init__(self, inner, scaler=None):
        self.inner, self.scaler = inner, scaler
        self.skipped_steps = 0

    def backward(self, loss):
        (self.scaler.scale(loss) if self.scaler else loss).backward()

    def step(self):
        if self.scaler is None:
            self.inner.step()
            return
        before = self.scaler.get_scale()
        self.scaler.step(self.inner)
        self.scaler.update()
        # The scale only drops when the step was skipped for inf/NaN gradients;
        # a skipped step allocates no optimizer temporaries (or, first, no states).
        if self.scaler.get_scale() < before:
            self.skipped_steps += 1

    def zero_grad(self):
        self.inner.zero_grad(set_to_none=True)


def build_training_optimizer(plan, model):
    trainable = [p for p in model.parameters() if p.requires_grad]
    if plan.recipe.master:
        return MasterWeightOptimizer(trainable, lambda masters: build_optimizer(
            plan.optimizer, plan.optimizer_impl, masters), torch_dtype(plan.grad_dtype), plan.recipe.loss_scale)
    scaler = None
    if plan.recipe.grad_scaler:
        # A modest initial scale so that no warm-up or measured step is skipped.
        scaler = (torch.amp.GradScaler("cuda", init_scale=2.0 ** 10) if hasattr(torch.amp, "GradScaler")
                  else torch.cuda.amp.GradScaler(init_scale=2.0 ** 10))
    return PlainOptimizer(build_optimizer(plan.optimizer, plan.optimizer_impl, trainable), scaler)


# LoRA (Hu et al. 2021) as PEFT applies it (peft/tuners/lora/layer.py): the base
# layer frozen, A (r x in) and B (out x r) trainable, B zero-initialised;
# PEFT's default autocast_adapter_dtype=True upcasts 16-bit adapters to fp32
# (tuners_utils.py, _cast_adapter_dtype), and its forward casts the layer
# input to the adapter's dtype before A.

class LoraAdapted(nn.Module if torch is not None else object):
    def __init__(self, base, rank, alpha, dropout):
        super().__init__()
        in_features, out_features = linear_shape(base)
        self.base_layer = base
        base.requires_grad_(False)
        device = base.weight.device
        self.lora_A = nn.Linear(in_features, rank, bias=False).to(device=device, dtype=torch.float32)
        self.lora_B = nn.Linear(rank, out_features, bias=False).to(device=device, dtype=torch.float32)
        nn.init.kaiming_uniform_(self.lora_A.weight, a=math.sqrt(5))
        nn.init.zeros_(self.lora_B.weight)
        self.dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
        self.scaling = alpha / rank

    def forward(self, x):
        result = self.base_layer(x)
        result_dtype = result.dtype
        x = x.to(self.lora_A.weight.dtype)
        result = result + self.lora_B(self.lora_A(self.dropout(x))) * self.scaling
        return result.to(result_dtype)


def linear_shape(module):
    """(in_features, out_features) of nn.Linear, or of transformers' Conv1D (GPT-2), whose weight is (in, out)."""
    if type(module).__name__ == "Conv1D":
        return tuple(module.weight.shape)
    return module.in_features, module.out_features


def _is_linear(module):
    return isinstance(module, nn.Linear) or type(module).__name__ == "Conv1D"


def lora_target_names(model, targets):
    """Dotted names of the modules LoRA adapts: a module whose last name is a target
    (PEFT's suffix matching), or every linear but the output head for all-linear."""
    names = []
    for name, module in model.named_modules():
        if not name or not _is_linear(module):
            continue
        leaf = name.rsplit(".", 1)[-1]
        if ALL_LINEAR in targets:
            if leaf != "lm_head":
                names.append(name)
        elif leaf in targets:
            names.append(name)
    return names


def apply_lora(model, rank, targets, dropout, alpha=None):
    """Freezes the model and wraps each target with an adapter. Returns the adapted names."""
    model.requires_grad_(False)
    names = lora_target_names(model, targets)
    if not names:
        raise Unsupported(f"training.lora_targets: no module of this model matches {list(targets)}")
    for name in names:
        parent_name, _, leaf = name.rpartition(".")
        parent = model.get_submodule(parent_name) if parent_name else model
        setattr(parent, leaf, LoraAdapted(getattr(parent, leaf), rank, alpha or 2 * rank, dropout))
    return names


def apply_lora_for_plan(plan, model):
    """PEFT when installed (what users run), else the wrapper above, which mirrors it."""
    try:
        import peft
    except ImportError:
        apply_lora(model, plan.lora_rank, plan.lora_targets, plan.lora_dropout)
        return model, "trainmem LoRA wrapper"
    targets = ALL_LINEAR if ALL_LINEAR in plan.lora_targets else list(plan.lora_targets)
    config = peft.LoraConfig(r=plan.lora_rank, lora_alpha=2 * plan.lora_rank, target_modules=targets,
                             lora_dropout=plan.lora_dropout, bias="none", task_type="CAUSAL_LM")
    return peft.get_peft_model(model, config), f"peft {peft.__version__}"


# --- Phases -----------------------------------------------------------------

PHASES = ("forward", "loss", "backward", "optimizer step", "zero_grad")


class CudaMemoryCounters:
    """PyTorch's caching-allocator counters and the driver's view of the device."""

    def synchronize(self):
        torch.cuda.synchronize()

    def reset_peak(self):
        torch.cuda.reset_peak_memory_stats()

    def peak_allocated(self):
        return torch.cuda.max_memory_allocated()

    def peak_reserved(self):
        return torch.cuda.max_memory_reserved()

    def device_used(self):
        # The driver's view: reserved + CUDA context + cuBLAS/cuDNN + anything outside PyTorch.
        free, total = torch.cuda.mem_get_info()
        return total - free


class PhaseRecorder:
    """Resets the allocator's peak counters at every phase boundary and keeps
    the largest peak with the phase it happened in. The reserved peak and the
    device total are maxima over the same phases."""

    def __init__(self, counters):
        self.counters = counters
        self.recording = False
        self.allocated_peak = 0
        self.reserved_peak = 0
        self.device_peak = 0
        self.peak_phase = None
        self.phase_log = []     # (phase, allocated peak) of every recorded phase

    @contextlib.contextmanager
    def phase(self, name):
        if name not in PHASES:
            raise ValueError(f"unknown phase {name!r}")
        self.counters.synchronize()
        self.counters.reset_peak()
        yield
        self.counters.synchronize()
        if not self.recording:
            return
        allocated = self.counters.peak_allocated()
        self.phase_log.append((name, allocated))
        if allocated > self.allocated_peak:
            self.allocated_peak, self.peak_phase = allocated, name
        self.reserved_peak = max(self.reserved_peak, self.counters.peak_reserved())
        self.device_peak = max(self.device_peak, self.counters.device_used())


def causal_lm_loss(model, logits, labels):
    """transformers' own loss when the model has one (ForCausalLMLoss: logits.float(),
    shifted labels, cross-entropy), else the same written out."""
    loss_function = getattr(model, "loss_function", None)
    if callable(loss_function):
        return loss_function(logits=logits, labels=labels, vocab_size=logits.shape[-1])
    logits = logits.float()
    shift_logits = logits[..., :-1, :].contiguous()
    shift_labels = labels[..., 1:].contiguous()
    return torch.nn.functional.cross_entropy(shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1))


def training_step(model, batches, optimizer, recorder, plan, device_type, loss_fn=causal_lm_loss):
    """One optimizer step over gradient_accumulation_steps micro-batches, each phase recorded.
    Logits are dropped after the loss, as a Trainer's compute_loss returns only the loss."""
    accumulation = len(batches)
    for input_ids in batches:
        with recorder.phase("forward"):
            with autocast_context(plan, device_type):
                output = model(input_ids=input_ids)
            logits = output.logits if hasattr(output, "logits") else output
            del output
        with recorder.phase("loss"):
            with autocast_context(plan, device_type):
                loss = loss_fn(model, logits, input_ids) / accumulation
            del logits
        with recorder.phase("backward"):
            optimizer.backward(loss)
            del loss
    with recorder.phase("optimizer step"):
        optimizer.step()
    with recorder.phase("zero_grad"):
        optimizer.zero_grad()


def random_batches(plan, vocab_size, device, generator_seed=0):
    g = torch.Generator(device="cpu").manual_seed(generator_seed)
    return [torch.randint(0, vocab_size, (plan.micro_batch_size, plan.sequence_length), generator=g).to(device)
            for _ in range(plan.gradient_accumulation_steps)]


def run_steps(model, optimizer, recorder, plan, device, vocab_size, warmup, steps, loss_fn=causal_lm_loss):
    """Warm-up steps unrecorded (optimizer states and allocator segments appear), then measured steps."""
    device_type = device.type if hasattr(device, "type") else str(device).split(":")[0]
    batches = random_batches(plan, vocab_size, device)
    recorder.recording = False
    for _ in range(warmup):
        training_step(model, batches, optimizer, recorder, plan, device_type, loss_fn)
    recorder.recording = True
    for _ in range(steps):
        training_step(model, batches, optimizer, recorder, plan, device_type, loss_fn)


# --- One case on the GPU ----------------------------------------------------

def build_model(plan):
    """The HF model on cuda, random weights in the recipe's weight dtype."""
    try:
        import transformers
        from transformers import AutoConfig, AutoModelForCausalLM
    except ImportError as e:
        raise Unsupported("transformers is not installed in this Python") from e
    config = AutoConfig.for_model(plan.model_type, **plan.model_config)
    config.use_cache = False
    dtype = torch_dtype(plan.recipe.weights)
    version = tuple(int(x) for x in transformers.__version__.split(".")[:2] if x.isdigit())
    dtype_key = "dtype" if version >= (4, 56) else "torch_dtype"   # renamed in transformers 4.56
    with torch.device("cuda"):
        model = AutoModelForCausalLM.from_config(config, attn_implementation=plan.attn_implementation,
                                                 **{dtype_key: dtype})
    if any(p.dtype != dtype for p in model.parameters()):
        model.to(dtype)
    return model


def nvidia_smi(query):
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30, check=True).stdout
        return out.strip().splitlines()[0].strip()
    except (OSError, subprocess.SubprocessError, IndexError):
        return "unknown"


def measure_case(case_path, out_dir, warmup, steps):
    """Runs one case in this process and writes out_dir/NAME.json."""
    case_path = Path(case_path)
    scenario = json.loads(case_path.read_text())
    plan = plan_scenario(scenario, case_path.stem)
    require_torch()
    if not torch.cuda.is_available():
        raise Unsupported("no CUDA device: measurements come from a real GPU only")
    if os.environ.get("PYTORCH_CUDA_ALLOC_CONF"):
        # expandable_segments and friends change reserved memory; trainmem models the default allocator.
        raise Unsupported("PYTORCH_CUDA_ALLOC_CONF is set: measure with the default caching allocator")
    torch.manual_seed(0)
    model = build_model(plan)
    lora = None
    if plan.lora_rank:
        model, lora = apply_lora_for_plan(plan, model)
    if plan.checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.train()
    optimizer = build_training_optimizer(plan, model)
    # Model construction leaves cached fp32 init buffers; a real run starts from loaded weights.
    torch.cuda.empty_cache()
    recorder = PhaseRecorder(CudaMemoryCounters())
    start = time.time()
    run_steps(model, optimizer, recorder, plan, torch.device("cuda"), model.config.vocab_size, warmup, steps)
    if getattr(optimizer, "skipped_steps", 0):
        raise MeasurementError(f"GradScaler skipped {optimizer.skipped_steps} step(s): "
                               f"the optimizer step was not measured")
    device_name = torch.cuda.get_device_name()
    expected = plan.gpu.split("-")[0]
    if expected and expected.lower() not in device_name.lower():
        print(f"{plan.name}: warning: the case names {plan.gpu}, measured on {device_name}", file=sys.stderr)
    result = {"scenario": scenario, "measured": {
        "allocated_peak_bytes": int(recorder.allocated_peak),
        "reserved_peak_bytes": int(recorder.reserved_peak),
        "device_bytes": int(recorder.device_peak),
        "peak_phase": recorder.peak_phase,
        "gpu": device_name,
        "driver": nvidia_smi("driver_version"),
        "torch": torch.__version__,
        "transformers": sys.modules["transformers"].__version__,
        "cuda": torch.version.cuda or "unknown",
        "steps": steps,
    }}
    write_json_atomically(Path(out_dir) / f"{plan.name}.json", result)
    note = f", LoRA by {lora}" if lora else ""
    print(f"{plan.name}: measured in {time.time() - start:.1f} s{note}")
    return result


def write_json_atomically(path, document):
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    with os.fdopen(fd, "w") as f:
        json.dump(document, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


# --- Many cases, one process each ------------------------------------------

def case_files(args):
    files = [Path(p) for p in args.cases]
    if args.all:
        files += sorted(CASES.glob("*.json"))
    return files


def gib(n):
    return f"{n / 2**30:8.3f}"


def run_child(case, args):
    command = [sys.executable, str(Path(__file__).resolve()), "--one", str(case), "--out", str(args.out),
               "--warmup", str(args.warmup), "--steps", str(args.steps)]
    start = time.time()
    child = subprocess.run(command, capture_output=True, text=True)
    return child, time.time() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cases", nargs="*", help="scenario files to measure")
    parser.add_argument("--all", action="store_true", help="every validation/cases/*.json")
    parser.add_argument("--out", default=str(MEASUREMENTS), help="folder for NAME.json (default: %(default)s)")
    parser.add_argument("--warmup", type=int, default=1, help="unmeasured steps first (default: %(default)s)")
    parser.add_argument("--steps", type=int, default=3, help="measured steps (default: %(default)s)")
    parser.add_argument("--dry-run", action="store_true", help="map the cases to runs and stop (no GPU)")
    parser.add_argument("--one", help=argparse.SUPPRESS)   # the child process: one case, here
    args = parser.parse_args(argv)
    if args.warmup < 1 or args.steps < 3:
        parser.error("--warmup must be >= 1 and --steps >= 3")

    if args.one:
        try:
            measure_case(args.one, args.out, args.warmup, args.steps)
        except Unsupported as e:
            print(f"{Path(args.one).stem}: unsupported: {e}", file=sys.stderr)
            return EXIT_UNSUPPORTED
        except MeasurementError as e:
            print(f"{Path(args.one).stem}: failed: {e}", file=sys.stderr)
            return EXIT_FAILED
        return EXIT_OK

    files = case_files(args)
    if not files:
        parser.error("no cases: give scenario files or --all")
    status = EXIT_OK
    if args.dry_run:
        for case in files:
            try:
                plan = plan_scenario(json.loads(Path(case).read_text()), Path(case).stem)
            except (Unsupported, OSError, json.JSONDecodeError) as e:
                print(f"{Path(case).stem}: unsupported: {e}")
                status = EXIT_UNSUPPORTED
                continue
            print(f"{plan.name}: {plan.model_type} b={plan.micro_batch_size} s={plan.sequence_length} "
                  f"gas={plan.gradient_accumulation_steps} {plan.precision} {plan.optimizer}/{plan.optimizer_impl} "
                  f"attn={plan.attn_implementation} ckpt={'full' if plan.checkpointing else 'none'}"
                  + (f" lora r={plan.lora_rank} {','.join(plan.lora_targets)}" if plan.lora_rank else ""))
        return status

    rows = []
    for case in files:
        child, seconds = run_child(case, args)
        sys.stderr.write(child.stderr)
        name = Path(case).stem
        if child.returncode == EXIT_OK:
            m = json.loads((Path(args.out) / f"{name}.json").read_text())["measured"]
            rows.append(f"{name:48} ok      {gib(m['allocated_peak_bytes'])} {gib(m['reserved_peak_bytes'])} "
                        f"{gib(m['device_bytes'])}  {m['peak_phase']:15} {seconds:6.1f}")
        else:
            kind = "unsupported" if child.returncode == EXIT_UNSUPPORTED else f"failed({child.returncode})"
            rows.append(f"{name:48} {kind}")
            status = max(status, EXIT_UNSUPPORTED if child.returncode == EXIT_UNSUPPORTED else EXIT_FAILED)
    print(f"{'case':48} status  alloc GiB  resv GiB   dev GiB  peak phase      seconds")
    print("\n".join(rows))
    return status


if __name__ == "__main__":
    sys.exit(main())
