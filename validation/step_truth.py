#!/usr/bin/env python3
"""Whole-step CPU ground truth for trainmem's allocated peak.

Every case of validation/step_cases.json is a trainmem scenario (a Hugging
Face config.json for the model, scenario keys for training). This script
builds the model with validation/hf_blocks.py (the same blocks, and the same
config.json keys, as the activation truth validation/saved_tensors.py), trains
it on the CPU one real step at a time -- a warm-up step, then measured steps:
forward, loss, backward, optimizer step, zero_grad -- under PyTorch's
profiler with profile_memory=True, and writes the peak of live bytes and the
phase it happened in.

The live-bytes curve is the running sum, in time order, of the profiler's
`[memory]` events (kineto results; each a signed byte count with a time
stamp): every CPU allocation and free. Profiling starts before the model is
built, so the curve is the absolute number of bytes the run holds: weights,
gradients, optimizer states and master weights included, nothing before.
Bytes are the bytes each tensor asked for (no allocator rounding).

Output (--out, default validation/step_truth/step_truth.json): for every case
its complete scenario and `measured`: `peak_bytes`, `peak_phase`
("forward", "loss", "backward", "optimizer step"), per-phase maxima
(`phase_peak_bytes`), `steps`. The C++ test tests/core/step_truth_test.cpp
estimates each scenario through the scenario reader and holds
Estimate.peak.exact_allocated_bytes within 2% of peak_bytes.

Needs only PyTorch (Debian's python3-torch 1.13); downloads nothing.
"""
import argparse
import copy
import gc
import json
import os
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile, record_function
from torch.utils.checkpoint import checkpoint

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from harness_plan import Unsupported, plan_scenario  # noqa: E402
from harness_torch import autocast_context, build_optimizer, build_training_optimizer, torch_dtype  # noqa: E402
from hf_blocks import CausalLM, apply_lora  # noqa: E402
from saved_tensors import imported_model  # noqa: E402
from step_truth_losses import head_loss  # noqa: E402
from step_truth_offload import apply_deepspeed_checkpointing, apply_offloading  # noqa: E402
from step_truth_policies import OpCheckpointedBlock  # noqa: E402
from truth_output import write_truth  # noqa: E402
import saved_tensor_ledger  # noqa: E402

CASES = os.path.join(HERE, "step_cases.json")
PHASE_MARK = "trainmem-phase:"
# Ops of the cross-entropy in hf_blocks' CausalLM.forward (ForCausalLMLoss):
# a peak inside one of them is the loss's, not the forward's.
LOSS_OPS = ("aten::cross_entropy_loss", "aten::log_softmax", "aten::_log_softmax", "aten::nll_loss_nd",
            "aten::nll_loss", "aten::nll_loss_forward", "step_truth_losses.head_loss")


def load_cases(path=CASES):
    """The case file: shared models and training defaults, then one row per case.
    A row names a model and the training keys it changes; the result is a
    complete scenario, written out with the measurement."""
    with open(path) as f:
        doc = json.load(f)
    cases = []
    for row in doc["cases"]:
        training = dict(doc["training_defaults"])
        training.update(row.get("training", {}))
        model = copy.deepcopy(doc["models"][row["model"]])
        model.update(row.get("model_changes", {}))
        scenario = {
            "format": "trainmem-scenario", "version": 2, "name": row["name"],
            "description": f"Whole-step CPU ground truth (validation/step_truth.py), model {row['model']}",
            "model": model, "training": training, "parallelism": {}, "hardware": {"gpu": "H100-80GB"},
        }
        case = {"scenario": scenario}
        if "cpu_differs" in row:
            case["cpu_differs"] = row["cpu_differs"]
        if "loss_variant" in row:  # step_truth_losses.head_loss: which code of the loss runs
            case["loss_variant"] = row["loss_variant"]
        cases.append(case)
    return cases


def blocks_config(scenario, cli):
    """The blocks of the model trainmem's importer makes of the scenario's
    config.json (saved_tensors.imported_model: the one path from a config to
    a model), with the attention implementation and LoRA's settings."""
    c = dict(imported_model(cli, scenario["model"]))
    t = scenario["training"]
    c["attention"] = t["attention"]
    c["config"] = scenario["model"]
    if t["finetuning"] == "lora":
        c["lora_rank"], c["lora_dropout"], c["lora_targets"] = t["lora_rank"], t["lora_dropout"], t["lora_targets"]
    return c


class CheckpointedChunk(torch.nn.Module):
    """Megatron-LM's recompute_method = "uniform" (megatron/core/recompute.py
    at core_v0.15.0rc7-2333-gd98e8a64dd): one reentrant checkpoint over a chunk
    of consecutive blocks (tensor_parallel.checkpoint is reentrant too): the
    chunk keeps its input, and its backward replays every block of it."""

    def __init__(self, blocks):
        super().__init__()
        self.blocks = torch.nn.ModuleList(blocks)

    def run(self, x, *rest):
        for block in self.blocks:
            x = block(x, *rest)
        return x

    def forward(self, *args):
        return checkpoint(self.run, *args, use_reentrant=True)


class ChunkMember(torch.nn.Module):
    """A block that runs inside the CheckpointedChunk before it: passes its
    input through, so the model keeps one entry per layer."""

    def forward(self, x, *_rest):
        return x


class CheckpointedBlock(torch.nn.Module):
    """A block whose forward runs under torch.utils.checkpoint, as
    CausalLM.forward(checkpointing=True) runs every block (reentrant, as
    Hugging Face's gradient checkpointing did before use_reentrant=False)."""

    def __init__(self, block):
        super().__init__()
        self.block = block
        # A hybrid layer says what CausalLM hands it (hf_hybrid_blocks.py:
        # the mask to attention layers only, no rotary tables to Nemotron-H):
        # what the reentrant checkpoint keeps is what its layer is handed.
        for name in ("takes_mask", "takes_rotary"):
            if hasattr(block, name):
                setattr(self, name, getattr(block, name))

    def forward(self, *args):
        return checkpoint(self.block, *args, use_reentrant=True)


def apply_checkpointing(model, training):
    """none / full / every-k / megatron-block / torchtitan-layer / op as
    trainmem defines them (checkpointsLayer, core/activations/activations_op_policy.cpp):
    full checkpoints every block, every-k the blocks l with l % k == 0,
    megatron-block the first k blocks, torchtitan-layer the blocks with
    (l + 1) % k == 0, op every block with a save list (step_truth_policies.py).
    One stage: the model's layers are the stage's."""
    policy = training["activation_checkpointing"]
    if policy == "none":
        return
    if policy == "op":
        for i, block in enumerate(model.layers):
            model.layers[i] = OpCheckpointedBlock(block, training["checkpoint_save_ops"])
        return
    if policy == "selective" and training["attention"] == "flash":
        # Megatron's selective recomputation recomputes the attention core;
        # a flash kernel keeps none of it anyway (trainmem: "with flash
        # nothing is left to drop"), so the run checkpoints nothing.
        return
    k = training.get("checkpoint_every", 1)
    if policy == "megatron-uniform":
        blocks = list(model.layers)
        for start in range(0, len(blocks), k):
            model.layers[start] = CheckpointedChunk(blocks[start:start + k])
            for i in range(start + 1, min(start + k, len(blocks))):
                model.layers[i] = ChunkMember()
        if training["finetuning"] != "full":
            model.input_requires_grad = True  # PEFT's enable_input_require_grads
        return
    chosen = {"full": lambda i: True, "every-k": lambda i: i % k == 0, "megatron-block": lambda i: i < k,
              "torchtitan-layer": lambda i: (i + 1) % k == 0}.get(policy)
    if chosen is None:
        raise Unsupported(f"training.activation_checkpointing: {policy!r} with {training['attention']!r} "
                          f"attention is not run by this script")
    for i, block in enumerate(model.layers):
        if chosen(i):
            model.layers[i] = CheckpointedBlock(block)
    if training["finetuning"] != "full":
        model.input_requires_grad = True  # PEFT's enable_input_require_grads


class OptimizerInBackward:
    """The optimizer step in backward (torchtune's optimizer_in_bwd: one
    optimizer per parameter, stepped and its gradient set to None by a hook
    that runs as soon as the parameter's gradient is accumulated). PyTorch
    1.13 has no Tensor.register_post_accumulate_grad_hook (2.1); the same
    moment is the post-hook of the parameter's AccumulateGrad node, kept
    alive here so that every graph uses it."""

    def __init__(self, plan, model):
        if plan.recipe.master or plan.recipe.grad_scaler:
            raise Unsupported("training.optimizer_in_backward: only recipes without master weights or a grad scaler")
        self.nodes = []
        for p in model.parameters():
            if not p.requires_grad:
                continue
            opt = build_optimizer(plan.optimizer, plan.optimizer_impl, [p])
            node = p.expand_as(p).grad_fn.next_functions[0][0]

            def hook(_inputs, _outputs, opt=opt):
                opt.step()
                opt.zero_grad(set_to_none=True)
            node.register_hook(hook)
            self.nodes.append(node)

    def backward(self, loss):
        loss.backward()

    def step(self):
        pass

    def zero_grad(self):
        pass


def build(scenario, cli, loss_variant=None):
    # The recipe, the optimizer and the master-weight wrapper are those of the
    # GPU harness (harness_plan.py, harness_torch.py); checkpointing is applied
    # block by block here, so the plan is asked without it.
    for_plan = copy.deepcopy(scenario)
    for_plan["training"]["activation_checkpointing"] = "none"
    for_plan["training"].pop("checkpoint_save_ops", None)  # step_truth_policies.py
    for_plan["training"]["loss"] = "standard"  # the loss is step_truth_losses.py's
    for_plan["training"]["kernels"] = "eager"  # compile: the same modules, compiled below
    for_plan["training"].pop("optimizer_in_backward", None)  # OptimizerInBackward below
    for_plan["training"].pop("activation_offloading", None)  # step_truth_offload.py
    for_plan["training"].pop("deepspeed_partition_activations", None)  # (tensor parallelism 1: nothing to do)
    for_plan["training"].pop("deepspeed_cpu_checkpointing", None)  # step_truth_offload.py
    plan = plan_scenario(for_plan, scenario["name"])
    torch.manual_seed(0)
    c = blocks_config(scenario, cli)
    model = CausalLM(c)
    if plan.recipe.weights != "fp32":
        model = model.to(torch_dtype(plan.recipe.weights))
    if plan.lora_rank:
        apply_lora(model, c)
        if plan.recipe.autocast:
            # trainmem keeps a frozen base in the compute dtype (core/account/stage_parameters.cpp:
            # "a frozen base in 16-bit"); the adapters train in fp32 under autocast.
            with torch.no_grad():
                for p in model.parameters():
                    if not p.requires_grad:
                        p.data = p.data.to(torch_dtype(plan.recipe.autocast))
    apply_checkpointing(model, scenario["training"])
    if scenario["training"]["kernels"] == "compile":
        # torch.compile per block as compile_truth.py measures it: AOTAutograd's
        # min-cut partitioner (functorch 1.13), no-op compilers.
        if scenario["training"]["activation_checkpointing"] != "none":
            raise Unsupported("training.kernels: compile is measured without checkpointing here")
        from compile_truth import compile_blocks  # functorch.compile; needs networkx
        compile_blocks(model, lambda: None)
    offload = apply_offloading(model, scenario["training"]) or apply_deepspeed_checkpointing(model, scenario["training"])
    model.head_loss = head_loss(scenario["training"], loss_variant)
    if model.head_loss is not None and scenario["model"].get("final_logit_softcapping"):
        raise Unsupported("training.loss: the losses of step_truth_losses.py take no logit soft-capping")
    if scenario["training"]["loss"] == "fused_linear" and plan.recipe.autocast:
        raise Unsupported("training.loss: fused_linear under autocast needs addmm(out_dtype=) (PyTorch >= 2.8), "
                          "which this PyTorch lacks")
    model.train()
    if scenario["training"].get("optimizer_in_backward"):
        optimizer = OptimizerInBackward(plan, model)
    else:
        optimizer = build_training_optimizer(plan, model)
    model.offload = offload
    return plan, model, optimizer


def train_step(plan, model, optimizer, batches):
    """One optimizer step: per micro-batch forward + loss (hf_blocks' CausalLM
    returns ForCausalLMLoss's loss) and backward; then step and zero_grad."""
    for input_ids in batches:
        with record_function(PHASE_MARK + "forward"):
            with autocast_context(plan, "cpu"):
                loss = model(input_ids, input_ids, False) / len(batches)
        with record_function(PHASE_MARK + "backward"):
            optimizer.backward(loss)
            del loss
    with record_function(PHASE_MARK + "optimizer step"):
        optimizer.step()
    with record_function(PHASE_MARK + "zero_grad"):
        optimizer.zero_grad()


class StepLedger(saved_tensor_ledger.SavedTensorLedger):
    """The blocks label their ops and tensors made from weights alone through
    the activation truth's ledger. The saved-tensor ledger holds those (Gemma
    and Qwen3-Next's `1 + weight`, autocast's casts of expert weights,
    Nemotron-H's fp32 router weight, Mamba's `exp(A_log)`) to the end of its
    one forward; over whole steps that would be a leak in the measured curve,
    so here they live as long as the model's own code keeps them."""

    def parameter_derived(self, t):
        return t


def live_curve(events):
    """(time, live bytes) after every [memory] event, in time order."""
    mem = sorted((e.start_us(), i, e.nbytes()) for i, e in enumerate(events) if e.name() == "[memory]")
    live, curve = 0, []
    for t, _, n in mem:
        live += n
        curve.append((t, live))
    return curve


def measure(scenario, cli, measured_steps=1, loss_variant=None):
    t = scenario["training"]
    # A previous case's compiled blocks (kernels = compile) sit in reference
    # cycles: collected now, not as negative [memory] events inside this profile.
    gc.collect()
    saved_tensor_ledger.begin(StepLedger())
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        plan, model, optimizer = build(scenario, cli, loss_variant)
        g = torch.Generator().manual_seed(0)
        vocab = scenario["model"].get("vocab_size")
        batches = [torch.randint(0, vocab, (t["micro_batch_size"], t["sequence_length"]), generator=g)
                   for _ in range(t["gradient_accumulation_steps"])]
        with record_function("trainmem-warmup"):
            train_step(plan, model, optimizer, batches)
        if model.offload is not None:
            model.offload.host_peak = 0  # the host side of the measured steps only
        with record_function("trainmem-measured"):
            for _ in range(measured_steps):
                train_step(plan, model, optimizer, batches)
    events = prof.profiler.kineto_results.events()
    curve = live_curve(events)
    spans = [(e.start_us(), e.start_us() + e.duration_us(), e.name()) for e in events]
    window = next((a, z) for a, z, n in spans if n == "trainmem-measured")
    phases = [(a, z, n[len(PHASE_MARK):]) for a, z, n in spans
              if n.startswith(PHASE_MARK) and window[0] <= a <= window[1]]
    loss_ops = [(a, z) for a, z, n in spans if n in LOSS_OPS and window[0] <= a <= window[1]]
    peak, peak_time = -1, None
    for time_us, live in curve:
        if window[0] <= time_us <= window[1] and live > peak:
            peak, peak_time = live, time_us
    per_phase = {}
    peak_phase = None
    for a, z, name in phases:
        m = max((live for time_us, live in curve if a <= time_us <= z), default=0)
        per_phase[name] = max(per_phase.get(name, 0), m)
        if a <= peak_time <= z:
            peak_phase = name
    if peak_phase == "forward" and any(a <= peak_time <= z for a, z in loss_ops):
        peak_phase = "loss"
    # The ops running at the peak, outermost first: says what the peak is, and
    # shows when it falls inside a CPU stand-in (FlashAttentionBackward).
    enclosing = sorted(((z - a, n) for a, z, n in spans
                        if a <= peak_time <= z and n != "[memory]" and not n.startswith("trainmem")
                        and window[0] <= a),
                       key=lambda x: -x[0])
    peak_ops = []
    for _, n in enclosing:
        if n not in peak_ops:
            peak_ops.append(n)
    out = {"peak_bytes": peak, "peak_phase": peak_phase, "peak_ops": peak_ops[:6],
           "phase_peak_bytes": per_phase, "steps": measured_steps,
           "parameter_bytes": sum(p.numel() * p.element_size() for p in model.parameters())}
    if model.offload is not None:
        # Activation offloading: the host copies' peak (numpy memory, outside
        # the profiler's curve, which is the device side): step_truth_offload.py.
        out["host_peak_bytes"] = model.offload.host_peak
        out["offloaded_tensors_per_step"] = model.offload.offloaded_packs // (1 + measured_steps)
    return out


def compile_available():
    try:
        import functorch.compile  # noqa: F401
        import networkx  # noqa: F401
    except ImportError:
        return False
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default=CASES)
    parser.add_argument("--out", default=os.path.join(HERE, "step_truth", "step_truth.json"))
    parser.add_argument("--only", help="run the cases whose name contains this")
    parser.add_argument("--cli", default=os.path.join(HERE, "..", "build", "app", "trainmem-cli"),
                        help="trainmem-cli, whose importer turns each case's config.json into the model")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    started = time.time()
    results = []
    for case in load_cases(args.cases):
        scenario = case["scenario"]
        if args.only and args.only not in scenario["name"]:
            continue
        if scenario["training"]["kernels"] == "compile" and not compile_available():
            print(f"{scenario['name']:48s} skipped: AOTAutograd's min-cut partitioner needs functorch.compile "
                  "and networkx", flush=True)
            continue
        t0 = time.time()
        m = measure(scenario, args.cli, loss_variant=case.get("loss_variant"))
        results.append({**case, "measured": m})
        print(f"{scenario['name']:48s} {m['peak_bytes']:>10d} {m['peak_phase']:14s} {time.time() - t0:5.1f} s",
              flush=True)
    write_truth(args.out, "validation/step_truth.py",
                "torch.profiler (CPU, profile_memory=True): running sum of the [memory] events of one measured "
                "step after a warm-up step, from before the model was built; requested bytes", results)
    print(f"step_truth.py: {len(results)} cases in {time.time() - started:.1f} s -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
