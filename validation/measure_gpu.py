#!/usr/bin/env python3
"""Measures the GPU memory of trainmem scenarios on one real GPU.

    python3 validation/measure_gpu.py --all            # every validation/cases/*.json
    python3 validation/measure_gpu.py CASE.json ...    # chosen cases
    python3 validation/measure_gpu.py --all --dry-run  # map the cases to runs, no GPU needed
    python3 validation/measure_gpu.py --all --shard 1/2  # half of them (the other: --shard 2/2)

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


# The harness in three parts: the scenario plan (no torch), the PyTorch
# recipe (optimizers, master weights, LoRA) and the phase recorder.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness_plan import *  # noqa: E402,F401,F403
from harness_torch import *  # noqa: E402,F401,F403
from harness_phases import *  # noqa: E402,F401,F403
from harness_plan import _section  # noqa: E402,F401
from harness_torch import _impl_kwargs, _is_linear  # noqa: E402,F401

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
    version = transformers_version(transformers.__version__)
    options = {"attn_implementation": plan.attn_implementation,
               "dtype" if version >= (4, 56) else "torch_dtype": dtype}   # renamed in transformers 4.56
    if plan.routed_experts and version >= (5, 0):
        # transformers 5 runs MoE experts with torch._grouped_mm by default; the
        # eager profile is the reference loop over the experts, so ask for it.
        options["experts_implementation"] = "eager"
    with torch.device("cuda"):
        model = AutoModelForCausalLM.from_config(config, **options)
    if any(p.dtype != dtype for p in model.parameters()):
        model.to(dtype)
    return model


def transformers_version(text):
    """(major, minor) of a version string such as "5.17.0" or "4.57.0.dev0"."""
    parts = []
    for piece in text.split(".")[:2]:
        digits = "".join(ch for ch in piece if ch.isdigit()) if piece[:1].isdigit() else ""
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def implementation_words(plan, model, lora):
    """What ran, in words, for the measurement file: the kernels the model really uses."""
    config = model.config
    words = [f"attention {getattr(config, '_attn_implementation', plan.attn_implementation)}"]
    if plan.routed_experts:
        words.append(f"experts {getattr(config, '_experts_implementation', None) or 'eager'}")
    if plan.checkpointing:
        words.append("non-reentrant checkpointing per decoder layer")
    if lora:
        words.append(f"LoRA by {lora}")
    return ", ".join(words)


def nvidia_smi(query):
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30, check=True).stdout
        return out.strip().splitlines()[0].strip()
    except (OSError, subprocess.SubprocessError, IndexError):
        return "unknown"


def measure_case(case_path, out_dir, warmup, steps, snapshot_dir=None):
    """Runs one case in this process and writes out_dir/NAME.json (and, with
    snapshot_dir, the allocator's history of the measured steps as NAME.pickle)."""
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
    with memory_history(plan.name, snapshot_dir):
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
        "implementation": implementation_words(plan, model, lora),
    }}
    write_json_atomically(Path(out_dir) / f"{plan.name}.json", result)
    note = f", LoRA by {lora}" if lora else ""
    print(f"{plan.name}: measured in {time.time() - start:.1f} s{note}")
    return result


@contextlib.contextmanager
def memory_history(name, snapshot_dir):
    """Records the caching allocator's events while the steps run and dumps them
    as snapshot_dir/NAME.pickle, the file `trainmem-cli snapshot` reads. Python
    stacks only: C++ stacks make the file large and slow to symbolise. Recording
    changes no allocation, so the counters stay those of a plain run."""
    if not snapshot_dir:
        yield
        return
    torch.cuda.memory._record_memory_history(enabled="all", context="all", stacks="python",
                                             max_entries=1_000_000)
    try:
        yield
        path = Path(snapshot_dir) / f"{name}.pickle"
        path.parent.mkdir(parents=True, exist_ok=True)
        torch.cuda.memory._dump_snapshot(str(path))
    finally:
        torch.cuda.memory._record_memory_history(enabled=None)


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
    if args.shard:
        index, count = args.shard
        files = [f for i, f in enumerate(files) if i % count == index - 1]
    return files


def shard(text):
    """--shard K/N: the K-th of N interleaved parts of the case list (1 <= K <= N)."""
    try:
        index, count = (int(x) for x in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected K/N such as 1/2, got {text!r}") from None
    if not 1 <= index <= count:
        raise argparse.ArgumentTypeError(f"K must be between 1 and N, got {text!r}")
    return index, count


def gib(n):
    return f"{n / 2**30:8.3f}"


def run_child(case, args):
    command = [sys.executable, str(Path(__file__).resolve()), "--one", str(case), "--out", str(args.out),
               "--warmup", str(args.warmup), "--steps", str(args.steps)]
    if args.snapshot:
        command += ["--snapshot", str(args.snapshot)]
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
    parser.add_argument("--shard", type=shard, metavar="K/N",
                        help="run only the K-th of N interleaved parts of the cases (to split a long run)")
    parser.add_argument("--snapshot", metavar="DIR",
                        help="also dump each case's allocator history as DIR/NAME.pickle (trainmem-cli snapshot)")
    parser.add_argument("--one", help=argparse.SUPPRESS)   # the child process: one case, here
    args = parser.parse_args(argv)
    if args.warmup < 1 or args.steps < 3:
        parser.error("--warmup must be >= 1 and --steps >= 3")

    if args.one:
        try:
            measure_case(args.one, args.out, args.warmup, args.steps, args.snapshot)
        except Unsupported as e:
            print(f"{Path(args.one).stem}: unsupported: {e}", file=sys.stderr)
            return EXIT_UNSUPPORTED
        except MeasurementError as e:
            print(f"{Path(args.one).stem}: failed: {e}", file=sys.stderr)
            return EXIT_FAILED
        return EXIT_OK

    files = case_files(args)
    if not files:
        parser.error("no cases: give scenario files or --all" + (" (this shard holds none)" if args.shard else ""))
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
