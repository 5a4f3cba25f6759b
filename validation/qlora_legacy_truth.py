#!/usr/bin/env python3
"""What older bitsandbytes' 4-bit layers add to a QLoRA step, measured on the CPU.

bitsandbytes' MatMul4Bit.forward keeps its input for backward in the older
code (`ctx.tensors = (A, B)`, TimDettmers/bitsandbytes 29e3420c6de4) and not
in the newer (`ctx.tensors = (None, B)`, bitsandbytes-foundation/bitsandbytes
60a0d8a5084f): trainmem's `training.qlora_backend = bnb-legacy` against
`bnb`. There is no bitsandbytes (and no 4-bit kernel) on this CPU, so each
case runs the whole-step truth of validation/step_truth.py twice on the same
LoRA model, with the frozen base Linears of every block as they are (their
matmul keeps nothing of its input: the newer MatMul4Bit) and as an
autograd.Function that saves its input A as the older MatMul4Bit does
(LegacyMatMul4Bit below). The weights stay in the compute dtype (no 4-bit
storage, no dequantisation), which is the same in both runs: the difference
of the two measured peaks is what the older backend adds, the quantity the
C++ test (tests/core/qlora_legacy_test.cpp) holds trainmem's difference
(bnb-legacy minus bnb, same scenario otherwise) to, for every checkpointing
policy trainmem accepts with bnb-legacy.

Output (--out, default validation/step_truth/qlora_legacy.json): per case
the QLoRA scenario (qlora_backend = bnb-legacy) and `measured`: `legacy`
and `bnb`, each step_truth.measure()'s result.

Needs only PyTorch (Debian's python3-torch 1.13); downloads nothing.
"""
import argparse
import copy
import json
import os
import sys
import time

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import step_truth  # noqa: E402
from truth_output import write_truth  # noqa: E402

CASES = os.path.join(HERE, "qlora_legacy_cases.json")


class LegacyMatMul4Bit(torch.autograd.Function):
    """The older MatMul4Bit's bookkeeping: `ctx.tensors = (A, B)` (A the
    layer's input, B the packed weight, a parameter); backward computes only
    A's gradient (the base is frozen)."""

    @staticmethod
    def forward(ctx, A, weight, bias):
        ctx.save_for_backward(A)
        ctx.weight = weight  # a parameter: no bytes of its own
        return torch.nn.functional.linear(A, weight, bias)

    @staticmethod
    def backward(ctx, grad_output):
        (A,) = ctx.saved_tensors
        del A
        return grad_output @ ctx.weight, None, None


def _legacy_forward(linear):
    def forward(x):
        return LegacyMatMul4Bit.apply(x, linear.weight, linear.bias)
    return forward


def use_legacy_base(model):
    """Every frozen Linear of every block (the 4-bit layers: transformers
    quantises the blocks' Linears, not the LM head) saves its input."""
    swapped = 0
    for layer in model.layers:
        for name, module in layer.named_modules():
            if isinstance(module, nn.Linear) and not module.weight.requires_grad and "lora_" not in name:
                module.forward = _legacy_forward(module)
                swapped += 1
    if swapped == 0:
        raise RuntimeError("no frozen block Linear found")


def measure_pair(scenario, cli):
    """Both backends' measured steps: the scenario as LoRA (step_truth's
    harness runs no QLoRA), once as is, once with the older 4-bit layers."""
    as_lora = copy.deepcopy(scenario)
    t = as_lora["training"]
    t["finetuning"] = "lora"
    t.pop("qlora_backend", None)
    bnb = step_truth.measure(as_lora, cli)
    original = step_truth.apply_lora

    def apply_lora_legacy(model, c):
        original(model, c)
        use_legacy_base(model)

    step_truth.apply_lora = apply_lora_legacy
    try:
        legacy = step_truth.measure(as_lora, cli)
    finally:
        step_truth.apply_lora = original
    return {"legacy": legacy, "bnb": bnb}


def load_cases(path):
    with open(path) as f:
        doc = json.load(f)
    cases = []
    for row in doc["cases"]:
        training = dict(doc["training_defaults"])
        training.update(row.get("training", {}))
        model = copy.deepcopy(doc["models"][row["model"]])
        cases.append({"format": "trainmem-scenario", "version": 2, "name": row["name"],
                      "description": f"bnb-legacy against bnb on the CPU (validation/qlora_legacy_truth.py), "
                                     f"model {row['model']}",
                      "model": model, "training": training, "parallelism": {}, "hardware": {"gpu": "H100-80GB"}})
    return cases


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default=CASES)
    parser.add_argument("--out", default=os.path.join(HERE, "step_truth", "qlora_legacy.json"))
    parser.add_argument("--cli", default=os.path.join(HERE, "..", "build", "app", "trainmem-cli"))
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    results = []
    for scenario in load_cases(args.cases):
        t0 = time.time()
        m = measure_pair(scenario, args.cli)
        results.append({"scenario": scenario, "measured": m})
        print(f"{scenario['name']:44s} legacy {m['legacy']['peak_bytes']:>9d} ({m['legacy']['peak_phase']}) "
              f"bnb {m['bnb']['peak_bytes']:>9d} ({m['bnb']['peak_phase']}) {time.time() - t0:4.1f} s", flush=True)
    write_truth(args.out, "validation/qlora_legacy_truth.py",
                "validation/step_truth.py's measure() on the scenario as LoRA, with the blocks' frozen Linears "
                "as they are (bnb) and saving their input (legacy)", results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
