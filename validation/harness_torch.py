"""The PyTorch side of the GPU harness: dtypes, autocast, optimizers (Lion,
the fp32 master-weight wrapper), LoRA adapters. Used by measure_gpu.py."""
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

from harness_plan import *  # noqa: F401,F403
from harness_plan import Unsupported, MeasurementError, RunPlan  # noqa: F401

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


