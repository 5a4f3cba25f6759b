#!/usr/bin/env python3
"""CPU ground truth for trainmem's `compile` kernel profile: what AOTAutograd's
min-cut partitioner (the one torch.compile uses) keeps for backward.

torch.compile decides what a compiled graph saves for backward in AOTAutograd:
the joint forward/backward graph is split by
min_cut_rematerialization_partition, and inductor then only fuses the kernels
of each side. Debian's PyTorch 1.13 has no torch.compile, but its functorch
ships AOTAutograd with that partitioner (functorch/_src/partitioners.py), so
running each block through

    aot_module(block, fw_compiler=nop, bw_compiler=nop,
               partition_fn=partial(min_cut_rematerialization_partition, compiler="inductor"))

and recording what the compiled forward saves is a measurement of what
compile keeps, at functorch / torch 1.13. `compiler="inductor"` is the
partitioner's mode for inductor (views, casts and clones recomputable; nodes
more than 4 ops away from the backward banned), which is how PyTorch 2.0's
inductor calls it; the default "nvfuser" mode saves more.

Each block is compiled on its own, as torchtitan's apply_compile does
(torch.compile per TransformerBlock); the embedding, final norm, LM head and
loss stay eager (they are the activation truth's, not measured here).

How it records: the compiled forward returns the block's output followed by
the tensors to save, and CompiledFunction.forward calls
ctx.save_for_backward on them; saved_tensors_hooks (saved_tensor_ledger.py)
see exactly those tensors. Each storage is counted once, parameters, buffers,
tensors computed from parameters alone (autocast's weight casts) and 0-dim
scalars are left out, and tensors several blocks share (rotary cos/sin, the
causal mask) are reported apart, as in saved_tensors.py. The forward graph's
node names label each saved tensor (`last_block_ops`). LayerNorm statistics of
16-bit inputs are counted at 4 bytes (CUDA keeps them fp32), as in
saved_tensors.py.

Not measured, and why (see docs/accuracy.md):
  * flash / SDPA attention: PyTorch 1.13 has no such op that AOTAutograd can
    trace; the stand-in FlashAttention Function would be inlined and
    partitioned op by op. In PyTorch 2.x the attention kernel is one
    compute-intensive op of the joint graph whose outputs are saved as the
    flash account says;
  * MoE blocks: the experts' torch.where / nonzero token gathering is
    data-dependent (see the case list's `not_traceable`);

Usage: /usr/bin/python3 validation/compile_truth.py [--out FILE] [--cli build/app/trainmem-cli]
Needs PyTorch 1.13's functorch and networkx (Debian: python3-networkx).
"""
import argparse
import functools
import math
import os
import platform
import sys
import time
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import saved_tensor_ledger as ledger  # noqa: E402
import saved_tensors as activation_truth  # noqa: E402
from hf_blocks import CausalLM  # noqa: E402
from truth_output import write_truth  # noqa: E402

from functorch.compile import aot_module, min_cut_rematerialization_partition  # noqa: E402


class CompiledBlockLedger(ledger.SavedTensorLedger):
    """The activation truth's ledger, labelling each saved storage with the
    forward-graph node that produced it, and counting LayerNorm statistics
    of 16-bit inputs at fp32 (the compiled graph bypasses
    saved_tensor_ledger.layer_norm, which does that for eager blocks)."""

    def __init__(self):
        super().__init__()
        self.labels = {}        # storage pointer -> forward-graph node label
        self.fp32_stats = set()  # storage pointers of native_layer_norm statistics

    def pack(self, t):
        ptr = t.storage().data_ptr() if t.dim() > 0 else None
        outer = self.op
        if ptr in self.labels:
            self.op = self.labels[ptr]
        self.layer_norm_op = ptr in self.fp32_stats
        try:
            return super().pack(t)
        finally:
            self.op = outer
            self.layer_norm_op = False


def _op_name(node):
    packet = getattr(node.target, "_overloadpacket", None)
    return packet.__name__ if packet is not None else getattr(node.target, "__name__", str(node.target))


_VIEWS = ("t", "transpose", "view", "_reshape_alias", "_unsafe_view", "detach", "expand", "permute")


def saved_node_labels(gm, num_outputs):
    """The forward graph's saved values: (label, is a LayerNorm statistic).
    A saved view is labelled with the op whose storage it shares."""
    output = [n for n in gm.graph.nodes if n.op == "output"][0]
    labels = []
    for node in output.args[0][num_outputs:]:
        source = node
        while source.op == "call_function" and _op_name(source) in _VIEWS:
            source = source.args[0]
        stat = (source.op == "call_function" and _op_name(source) == "getitem"
                and _op_name(source.args[0]) == "native_layer_norm" and source.args[1] in (1, 2))
        what = source.name if source.op != "call_function" else f"{source.name} ({_op_name(source)})"
        labels.append((what, stat))
    return labels


def compile_blocks(model, record_ref):
    """Each block through AOTAutograd with the min-cut partitioner
    (inductor mode) and no-op compilers."""
    partition = functools.partial(min_cut_rematerialization_partition, compiler="inductor")
    for i, layer in enumerate(model.layers):
        def fw_compiler(gm, _args, i=i):
            labels = saved_node_labels(gm, 1)

            def run(*args):
                outs = gm(*args)
                record = record_ref()
                if isinstance(record, CompiledBlockLedger):
                    for t, (label, stat) in zip(outs[1:], labels):
                        if isinstance(t, torch.Tensor) and t.dim() > 0:
                            ptr = t.storage().data_ptr()
                            record.labels.setdefault(ptr, label)
                            if stat and t.dtype in (torch.bfloat16, torch.float16):
                                record.fp32_stats.add(ptr)
                return outs
            return run

        model.layers[i] = aot_module(layer, fw_compiler=fw_compiler, bw_compiler=lambda gm, _a: gm,
                                     partition_fn=partition)


def measure(case, cli):
    torch.manual_seed(0)
    c = dict(activation_truth.imported_model(cli, case["model"]))
    c["attention"] = case["training"]["attention"]
    c["config"] = case["model"]
    model = CausalLM(c)
    if case["dtype"] == "bf16":
        model = model.to(torch.bfloat16)
    model.train()
    b, s = case["training"]["micro_batch_size"], case["training"]["sequence_length"]
    input_ids = torch.randint(0, c["vocab_size"], (b, s))
    autocast = functools.partial(torch.autocast, "cpu", dtype=torch.bfloat16, enabled=case["dtype"] == "amp")
    holder = {"record": None}
    compile_blocks(model, lambda: holder["record"])
    # Warm-up: traces and partitions every block (the hooks must not see tracing).
    ledger.begin()
    with autocast():
        model(input_ids, input_ids.clone(), False).backward()
    model.zero_grad(set_to_none=True)
    record = CompiledBlockLedger()
    ledger._CURRENT = record
    holder["record"] = record
    record.exclude_module(model)
    with record.recording(), autocast():
        loss = model(input_ids, input_ids.clone(), False)
    loss_graph_free = loss.detach()
    record.exclude_parameter_casts(model)
    # The warm-up ran backward through the same graphs. (A backward through
    # tensors the hooks unpacked trips PyTorch 1.13's "No grad accumulator
    # for a saved leaf" assert for saved parameters, so it is not repeated.)
    del loss_graph_free
    if not math.isfinite(loss.item()):  # noqa: the forward's value
        raise RuntimeError(f"{case['name']}: loss is {loss.item()}")
    return record.summary(model.n_layers)


# Families whose blocks AOTAutograd 1.13 traces (dense blocks, eager
# attention), each in fp32, bf16 and autocast bf16; dropout; other shapes.
DENSE = ["llama", "mistral", "qwen2", "qwen3", "olmo2", "granite", "gemma", "gemma2", "gemma3_text", "phi3",
         "smollm3", "gpt2"]


def grid():
    cases = []
    for family in DENSE:
        for dtype in ("fp32", "bf16", "amp"):
            case = activation_truth.make_case(family, dtype, "eager", False)
            cases.append(case)
    # Dropout (native_dropout, a random op: never recomputed) on attention
    # probabilities (Llama) and on the residual branches too (GPT-2).
    for family in ("llama", "gpt2"):
        for dtype in ("fp32", "bf16", "amp"):
            cases.append(activation_truth.make_case(family, dtype, "eager", False, dropout_on=True))
    cases.append(activation_truth.make_case("llama", "bf16", "eager", False, batch=1, seq=48, vocab=200))
    cases.append(activation_truth.make_case("mistral", "amp", "eager", False, batch=3, seq=24, vocab=160))
    for case in cases:
        case["training"]["kernels"] = "compile"
        case["name"] = case["name"].replace(" eager ", " eager compile ", 1)
    return cases


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(here, "activations", "compile_saved_tensors.json"))
    parser.add_argument("--cli", default=os.path.join(here, "..", "build", "app", "trainmem-cli"))
    parser.add_argument("--only", default="", help="measure only the cases whose name contains this")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", message="Your compiler for AOTAutograd")
    torch.set_num_threads(1)
    started = time.time()
    results = []
    for case in grid():
        if args.only not in case["name"]:
            continue
        m = measure(case, args.cli)
        results.append({
            "name": case["name"],
            "model": case["model"],
            "training": case["training"],
            "parallelism": case["parallelism"],
            "measured": {
                "block_bytes": m["blocks"],
                "shared_bytes": m["shared"],
                "shared_ops": m["shared_ops"],
                "last_block_ops": m["last_block_ops"],
            },
        })
    import functorch
    write_truth(args.out, "validation/compile_truth.py",
                "each block through functorch.compile.aot_module with min_cut_rematerialization_partition "
                "(compiler='inductor') and no-op compilers; saved_tensors_hooks over one forward pass see "
                "CompiledFunction's save_for_backward; each storage once; parameters, buffers, "
                "parameter-derived tensors (autocast's weight casts) and 0-dim scalars left out; "
                "LayerNorm statistics of 16-bit inputs at 4 bytes (CUDA)", results,
                machine_text=f"{platform.machine()}, {platform.system()} CPU, Debian python3-torch, one thread",
                functorch=functorch.__version__)
    print(f"compile_truth.py: {len(results)} cases in {time.time() - started:.1f} s -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
