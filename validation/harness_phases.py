"""Phases of one training step and the allocator counters read at each
boundary. Used by measure_gpu.py."""
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
from harness_torch import *  # noqa: F401,F403

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


