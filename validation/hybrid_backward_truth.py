#!/usr/bin/env python3
"""What the backward of each hybrid token mixer holds at its worst (CPU).

The activation account adds to every block's saved tensors a backward
transient (core/activations/activations.cpp, mixerBackwardTransient for the
Gated DeltaNet, Mamba-2 and short-convolution mixers). This script measures
it for the mixers' torch paths (hf_hybrid.py: transformers' eager code): the
mixer alone, its input x a leaf of shape (b, s, hidden), one warm-up backward
(the weights' .grad exist, as in a training step), then one forward and
backward under torch.profiler with profile_memory, started before the forward
(the profiler reports the frees only of what it saw allocated, so the saved
tensors' frees count). The running sum of its [memory] events
(validation/step_truth.py's live_curve) at the start of the backward is what
the forward left (saved tensors, the output and its gradient); the
backward's peak above it, less the input's gradient dx (which the account
counts as one of the two residual-stream gradients), is `transient_bytes`:
saved tensors freed before the peak count as freed, as in a training step.
`peak_ops` are the ops running at the peak. docs/hybrid-activations.md
(Backward) compares it with the account.

The fused kernels' backward (fla, mamba_ssm, causal-conv1d) is not measured:
the CPU runs hf_hybrid.py's stand-ins, which save what the kernels save but
recompute in torch, so their backward says nothing about the kernels'.

Output (--out, default validation/activations/hybrid_backward.json): one
case per mixer, shape and dtype. Needs PyTorch only (/usr/bin/python3,
torch 1.13); about 15 s on one core.
"""
import argparse
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile, record_function

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import hf_hybrid as hy  # noqa: E402
import saved_tensor_ledger  # noqa: E402
from step_truth import StepLedger, live_curve  # noqa: E402
from truth_output import write_truth  # noqa: E402

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


def gated_deltanet(heads_k=2, heads_v=4, dk=16, dv=8, hidden=64):
    return hy.Qwen3NextGatedDeltaNet(dict(
        hidden_size=hidden, linear_num_key_heads=heads_k, linear_num_value_heads=heads_v, linear_key_head_dim=dk,
        linear_value_head_dim=dv, linear_conv_kernel_dim=4, rms_norm_eps=1e-6, split_projections=False), False)


def mamba2(heads=4, head_dim=16, state=8, groups=2, chunk=8, hidden=64):
    return hy.NemotronHMamba2Mixer(dict(
        hidden_size=hidden, mamba_num_heads=heads, mamba_head_dim=head_dim, ssm_state_size=state, n_groups=groups,
        conv_kernel=4, chunk_size=chunk, use_conv_bias=True, use_bias=False, layer_norm_epsilon=1e-5,
        time_step_min=0.001), False)


def short_conv(hidden=64, kernel=3):
    return hy.Lfm2ShortConv(dict(hidden_size=hidden, conv_L_cache=kernel, conv_bias=False), False)


# (mixer, its sizes, b, s): the step truth's models (validation/step_cases.json)
# and one size changed at a time.
CASES = [
    ("gated_deltanet", {}, 2, 32), ("gated_deltanet", {}, 2, 64), ("gated_deltanet", {}, 1, 128),
    ("gated_deltanet", {"heads_v": 8}, 2, 32), ("gated_deltanet", {"dk": 32}, 2, 32),
    ("gated_deltanet", {"dv": 16}, 2, 32),
    ("mamba2", {}, 2, 32), ("mamba2", {}, 1, 32), ("mamba2", {}, 2, 64), ("mamba2", {"head_dim": 32}, 2, 32),
    ("mamba2", {"state": 16}, 2, 32), ("mamba2", {"heads": 8}, 2, 32), ("mamba2", {"chunk": 16}, 2, 32),
    ("mamba2", {"groups": 1}, 2, 32),
    ("short_conv", {}, 2, 32), ("short_conv", {}, 2, 64), ("short_conv", {"kernel": 4}, 2, 32),
]
BUILD = {"gated_deltanet": gated_deltanet, "mamba2": mamba2, "short_conv": short_conv}


def measure(module, b, s, dtype, hidden=64):
    module = module.to(dtype)
    for _ in range(2):  # the first backward makes the weights' .grad
        x = torch.randn(b, s, hidden, dtype=dtype, requires_grad=True)
        # The profiler reports the frees of what it saw allocated: it runs
        # from before the forward, so the saved tensors' frees count.
        with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            y = module(x)
            g = torch.randn_like(y)
            with record_function("mixer backward"):
                y.backward(g)
        del y
    events = prof.profiler.kineto_results.events()
    curve = live_curve(events)
    a, z = next((e.start_us(), e.start_us() + e.duration_us()) for e in events if e.name() == "mixer backward")
    start = [live for t, live in curve if t < a][-1]
    peak_time, peak = max(((t, live) for t, live in curve if a <= t <= z), key=lambda p: p[1])
    ops = sorted(((e.duration_us(), e.name()) for e in events
                  if e.name() not in ("[memory]", "mixer backward")
                  and a <= e.start_us() <= peak_time <= e.start_us() + e.duration_us()),
                 key=lambda p: -p[0])
    dx = x.numel() * x.element_size()
    return {"transient_bytes": peak - start - dx, "live_after_forward_bytes": start, "backward_peak_bytes": peak,
            "input_grad_bytes": dx, "peak_ops": [n for _, n in ops][:6]}


def nemotron_h_config(heads=4, head_dim=16, state=8, groups=2, chunk=8):
    """The activation truth's Nemotron-H config.json (saved_tensors.HYBRIDS)
    cut to one Mamba-2 layer (pattern "M") of a case's sizes: the C++ test
    (tests/core/hybrid_backward_test.cpp) imports it and holds the account's
    backward of that layer to the measurement."""
    from saved_tensors import HYBRIDS
    c = dict(HYBRIDS["nemotron_h"])
    c.update(hybrid_override_pattern="M", num_hidden_layers=1, mamba_num_heads=heads, mamba_head_dim=head_dim,
             ssm_state_size=state, n_groups=groups, chunk_size=chunk, vocab_size=512, max_position_embeddings=128)
    return c


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(HERE, "activations", "hybrid_backward.json"))
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    saved_tensor_ledger.begin(StepLedger())  # hf_hybrid marks exp(A_log) through the ledger
    results = []
    for mixer, sizes, b, s in CASES:
        for dtype in ("fp32", "bf16"):
            m = measure(BUILD[mixer](**sizes), b, s, DTYPES[dtype])
            case = {"mixer": mixer, "sizes": sizes, "b": b, "s": s, "dtype": dtype}
            if mixer == "mamba2":
                case["model"] = nemotron_h_config(**sizes)
                case["training"] = {"micro_batch_size": b, "sequence_length": s, "attention": "eager",
                                    "kernels": "eager", "checkpointing": "none", "loss": "standard",
                                    "finetuning": "full",
                                    "precision": {"fp32": "fp32", "bf16": "pure-bf16"}[dtype]}
            results.append({**case, "measured": m})
            print(f"{mixer:15s} {str(sizes):18s} b{b} s{s:<4d} {dtype:5s} {m['transient_bytes']:>9d} "
                  f"{' > '.join(m['peak_ops'][-2:])}", flush=True)
    write_truth(args.out, "validation/hybrid_backward_truth.py",
                "torch.profiler (CPU, profile_memory=True): the mixer's backward after a warm-up backward, every "
                "saved tensor held to the end; the running sum's maximum less the input's gradient", results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
