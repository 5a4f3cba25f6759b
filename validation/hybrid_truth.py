"""Ground truth of what the token mixers of hybrid models keep for backward:
Gated DeltaNet and Qwen3-Next's gated attention, the Mamba-2 mixer of
Nemotron-H, LFM2's short convolution, DeepSeek-V3.2's lightning indexer
(validation/hf_hybrid.py), in the eager torch path and with the fused
training kernels (`flash`), in fp32, pure bf16 and bf16 autocast.

    /usr/bin/python3 validation/hybrid_truth.py [--out FILE] [--only SUBSTRING]

Each case builds one mixer from its family's config.json keys, feeds it an
input x [b, s, h] that requires grad (the pre-norm's output: fp32 under
autocast, as the fp32 norm weight makes it), runs one forward under the
saved-tensor ledger (saved_tensor_ledger.py) and a backward (the graph is
sound). Counted: every storage autograd keeps, once, that a live graph node
still holds after the forward (a node that died with an unused output, such
as the final recurrent state's update, is freed in training too);
parameters, buffers, parameter-derived tensors, autocast's weight casts and
0-dim scalars are left out; the rotary tables and the causal mask are
shared by all layers and left out. The mixer's input x is counted (its
Linears keep it, as attention's q/k/v rows count the norm output).

Each measured op is then checked against the closed form of
docs/hybrid-activations.md (`expected_rows` below), to the byte, and in fp32
the eager copy and the fused-kernel stand-ins of each mixer are compared
(output and input gradient within 1e-4 relative): the script exits 1 on any
difference. About 10 s on one core.
Writes validation/activations/hybrid_saved_tensors.json."""
import argparse
import gc
import json
import math
import os
import sys
import time
import weakref

import torch

import saved_tensor_ledger as ledger
import hf_hybrid as hy


class _Holder:
    __slots__ = ("t", "__weakref__")


class LiveLedger(ledger.SavedTensorLedger):
    """The ledger, with each saved slot wrapped so that a slot whose graph
    node has been freed can be told apart from one that backward will read."""

    def pack(self, t):
        holder = _Holder()
        # Detached: a saved output must not hold its own grad_fn (the graph
        # keeps saved outputs without it; holding it would keep dead nodes).
        holder.t = t.detach()
        if t.dim() == 0:
            return holder
        ptr = ledger._storage_ptr(t)
        nbytes = ledger._storage_bytes(t)
        if ptr in self.excluded or nbytes == 0:
            return holder
        if self.layer_norm_op and t.dtype in (torch.bfloat16, torch.float16) and t.shape[-1] == 1:
            nbytes = nbytes * 2  # fp32 mean / rstd on CUDA
        entry = self.storages.get(ptr)
        if entry is None:
            entry = {"bytes": nbytes, "scopes": set(), "op": self.op, "dtype": str(t.dtype).replace("torch.", ""),
                     "shape": list(t.shape), "keep": holder.t, "holders": []}
            self.storages[ptr] = entry
        entry["scopes"].add(self.scope)
        entry["holders"].append(weakref.ref(holder))
        return holder

    def recording(self):
        return torch.autograd.graph.saved_tensors_hooks(self.pack, lambda h: h.t)

    def live_rows(self):
        gc.collect()
        rows = []
        for ptr, entry in self.storages.items():
            if ptr in self.excluded:  # marked parameter-derived after it was saved (exp of A_log)
                continue
            if not any(r() is not None for r in entry.get("holders", [])):
                continue
            op_name, _, tensor = entry["op"].partition("|")
            rows.append({"op": op_name, "tensor": tensor or "?", "dtype": entry["dtype"],
                         "shape": entry["shape"], "bytes": entry["bytes"]})
        return rows


DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "amp": torch.float32}


def cases():
    out = []
    gdn = [
        ("one padded chunk", dict(hidden_size=64, linear_num_key_heads=2, linear_key_head_dim=16,
                                  linear_num_value_heads=2, linear_value_head_dim=16, linear_conv_kernel_dim=4),
         2, 40),
        ("two chunks, value heads 2x key heads", dict(hidden_size=64, linear_num_key_heads=2, linear_key_head_dim=16,
                                                      linear_num_value_heads=4, linear_value_head_dim=8,
                                                      linear_conv_kernel_dim=4), 1, 100),
        ("one full chunk", dict(hidden_size=48, linear_num_key_heads=1, linear_key_head_dim=8,
                                linear_num_value_heads=3, linear_value_head_dim=8, linear_conv_kernel_dim=3), 1, 64),
        ("three chunks", dict(hidden_size=32, linear_num_key_heads=1, linear_key_head_dim=8,
                              linear_num_value_heads=2, linear_value_head_dim=4, linear_conv_kernel_dim=4), 1, 150),
    ]
    for label, cfg, b, s in gdn:
        cfg = dict(cfg, model_type="qwen3_next", hidden_act="silu", rms_norm_eps=1e-6)
        out.append(("qwen3_next", "gated_deltanet", label, cfg, b, s))
    # Qwen3.5's Gated DeltaNet: the same rule behind four separate projections
    for label, cfg, b, s in gdn[:2]:
        cfg = dict(cfg, model_type="qwen3_5_text", hidden_act="silu", rms_norm_eps=1e-6, split_projections=True)
        out.append(("qwen3_5_text", "gated_deltanet", "Qwen3.5 split projections, " + label, cfg, b, s))
    att = dict(model_type="qwen3_next", hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
               partial_rotary_factor=0.25, rms_norm_eps=1e-6)
    out.append(("qwen3_next", "gated_attention", "GQA 4/2, quarter rotary", att, 2, 24))
    mamba = [
        ("three chunks, last padded", dict(hidden_size=64, mamba_num_heads=4, mamba_head_dim=16, ssm_state_size=8,
                                           n_groups=2, conv_kernel=4, chunk_size=16), 2, 40),
        ("two full chunks, one group", dict(hidden_size=48, mamba_num_heads=3, mamba_head_dim=8, ssm_state_size=16,
                                            n_groups=1, conv_kernel=4, chunk_size=16), 1, 32),
    ]
    for label, cfg, b, s in mamba:
        cfg = dict(cfg, model_type="nemotron_h", mamba_hidden_act="silu", use_conv_bias=True, use_bias=False,
                   layer_norm_epsilon=1e-5, time_step_min=0.001)
        out.append(("nemotron_h", "mamba2", label, cfg, b, s))
    for label, cfg, b, s in [("L 3", dict(hidden_size=64, conv_L_cache=3, conv_bias=False), 2, 24),
                             ("L 4, bias", dict(hidden_size=32, conv_L_cache=4, conv_bias=True), 1, 20)]:
        out.append(("lfm2", "short_conv", label, dict(cfg, model_type="lfm2"), b, s))
    dsa = dict(model_type="deepseek_v32", hidden_size=64, q_lora_rank=32, qk_rope_head_dim=16, index_n_heads=4,
               index_head_dim=32, index_topk=8)
    out.append(("deepseek_v32", "dsa_indexer", "topk 8 of 24", dsa, 2, 24))
    out.append(("deepseek_v32", "dsa_indexer", "topk 32 of 20 (all kept)", dict(dsa, index_topk=32, index_n_heads=2),
                1, 20))
    return out


def variants(kind):
    if kind == "dsa_indexer":
        return ["released", "indexer_loss"]
    if kind == "mamba2":
        # flash_chunk_scan: HF's unfused kernel path, taken in training when the batch has padding
        return ["eager", "flash", "flash_chunk_scan"]
    return ["eager", "flash"]


def build(kind, cfg, attention):
    flash = attention == "flash"
    if kind == "gated_deltanet":
        return hy.Qwen3NextGatedDeltaNet(cfg, flash)
    if kind == "gated_attention":
        return hy.Qwen3NextAttention(cfg, flash)
    if kind == "mamba2":
        return hy.NemotronHMamba2Mixer(cfg, flash, chunk_scan=attention == "flash_chunk_scan")
    if kind == "short_conv":
        return hy.Lfm2ShortConv(cfg, flash)
    if kind == "dsa_indexer":
        return hy.DeepseekV32Indexer(cfg, attention == "indexer_loss")
    raise ValueError(kind)


def rotary(b, s, dim, dtype):
    inv = 1.0 / (10000 ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    freqs = torch.arange(s, dtype=torch.float32)[:, None] * inv[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)[None].expand(b, s, dim)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def measure(family, kind, cfg, b, s, dtype, attention):
    record = LiveLedger()
    ledger._CURRENT = record  # hf_hybrid labels ops on the current ledger
    torch.manual_seed(0)
    module = build(kind, cfg, attention)
    if dtype == "bf16":
        module = module.to(torch.bfloat16)
        if kind == "dsa_indexer":
            module.weights_proj.float()  # _keep_in_fp32_modules = ["indexer.weights_proj"]
    module.train()
    record.exclude_module(module)
    record.scope = "block 0"
    act = DTYPES[dtype]
    h = cfg["hidden_size"]
    x0 = (torch.randn(b, s, h) * 0.5).to(act).requires_grad_()
    x = x0 * 1.0  # not a leaf, as the norm output is not: autocast caches casts of leaves only
    extra = ()
    if kind == "gated_attention":
        cos, sin = rotary(b, s, int(cfg["head_dim"] * cfg["partial_rotary_factor"]), act)
        mask = torch.full((s, s), torch.finfo(act).min).triu(1)[None, None].expand(b, 1, s, s).to(act)
        extra = tuple(record.parameter_derived(t) for t in (cos, sin, mask))
    if attention == "flash_chunk_scan":
        padding = torch.ones(b, s, dtype=torch.int64)
        padding[0, -3:] = 0  # a padded batch: the fused split path is not taken
        extra = (record.parameter_derived(padding),)  # one mask for all layers, like the causal mask
    if kind == "dsa_indexer":
        cos, sin = rotary(b, s, cfg["qk_rope_head_dim"], act)
        mask = torch.full((s, s), float("-inf")).triu(1)[None].expand(b, s, s).contiguous()
        q_resid = (torch.randn(b, s, cfg["q_lora_rank"]) * 0.5).to(act).requires_grad_() * 1.0
        extra = (q_resid,) + tuple(record.parameter_derived(t) for t in (cos, sin, mask))
    autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=dtype == "amp")
    with record.recording(), autocast:
        out = module(x, *extra)
        if kind == "dsa_indexer":
            idx, scores = out
            if scores is not None:
                with torch.no_grad():  # the detached target: zero on masked candidates, as the attention's
                    target = torch.softmax(scores.gather(-1, idx.long()), dim=-1)
                query_mask = torch.ones(b, s, dtype=torch.bool)
                query_mask[:, 0] = False
                loss = hy.indexer_kl_loss(scores, target, idx, query_mask)
            else:
                loss = None
    if kind != "dsa_indexer":
        loss = out.float().pow(2).mean()  # outside the ledger: the next layer's business
    record.exclude_parameter_casts(module)
    rows = record.live_rows()
    if loss is not None:
        loss.backward()  # the graph is sound: every saved tensor is usable
        if not math.isfinite(loss.item()):
            raise RuntimeError(f"{family} {kind}: loss is {loss.item()}")
    result = out[0] if isinstance(out, tuple) else out
    return rows, result.detach().float(), None if x0.grad is None else x0.grad.float()


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(here, "activations", "hybrid_saved_tensors.json"))
    parser.add_argument("--only", default="")
    parser.add_argument("--print", action="store_true", help="print each case's rows")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    started = time.time()
    results = []
    failures = 0
    outputs = {}
    for family, kind, label, cfg, b, s in cases():
        for attention in variants(kind):
            for dtype in ("fp32", "bf16", "amp"):
                name = f"{kind} {label} {dtype} {attention} b{b} s{s}"
                if args.only and args.only not in name:
                    continue
                rows, y, dx = measure(family, kind, cfg, b, s, dtype, attention)
                if dtype == "fp32" and kind != "dsa_indexer":
                    outputs.setdefault((kind, label), {})[attention] = (y, dx)
                rows = merge_solve_rows(rows)
                total = sum(r["bytes"] for r in rows)
                case = {"name": name, "family": family, "mixer": kind, "config": cfg,
                        "training": {"micro_batch_size": b, "sequence_length": s,
                                     "dtype": {"fp32": "fp32", "bf16": "bf16", "amp": "amp-bf16"}[dtype],
                                     "attention": attention},
                        "measured": {"block_bytes": [total], "ops": rows}}
                check = check_case(case)
                case["closed_form"] = check
                failures += 0 if check["holds"] else 1
                results.append(case)
                if args.print or not check["holds"]:
                    print(f"== {name}: {total} B, closed form {check['expected_bytes']} B"
                          f"{'' if check['holds'] else '  MISMATCH'}")
                    if args.print or not check["holds"]:
                        for r in rows:
                            print(f"   {r['bytes']:>8} {r['dtype']:>8} {str(r['shape']):<22} {r['op']} | {r['tensor']}")
                        for d in check["differences"]:
                            print("   !!", d)
    # The eager copy and the fused kernels' stand-ins are independent
    # computations of one mixer (same weights, same input): in fp32 their
    # outputs and input gradients agree, so both compute what the model does.
    agreement = []
    for (kind, label), runs in outputs.items():
        if "eager" in runs and "flash" in runs:
            (y0, g0), (y1, g1) = runs["eager"], runs["flash"]
            dy = (y0 - y1).abs().max().item() / max(y0.abs().max().item(), 1e-30)
            dg = (g0 - g1).abs().max().item() / max(g0.abs().max().item(), 1e-30)
            ok = dy < 1e-4 and dg < 1e-4
            failures += 0 if ok else 1
            agreement.append({"mixer": kind, "case": label, "output_rel_diff": dy, "input_grad_rel_diff": dg,
                              "agree": ok})
            print(f"eager vs flash, {kind} {label}: output {dy:.1e}, input gradient {dg:.1e}"
                  f"{'' if ok else '  DISAGREE'}")
    doc = {
        "generator": "validation/hybrid_truth.py",
        "torch": torch.__version__,
        "method": "saved_tensors_hooks over one forward of one mixer; each storage once, only those a live graph "
                  "node holds after the forward; parameters, buffers, parameter-derived tensors, autocast's weight "
                  "casts, rotary tables, masks and 0-dim scalars left out; PyTorch 2.x CUDA behaviour where 1.13 "
                  "differs (mean saves nothing, CUDA autocast's fp32 list, repeat_interleave by expand + clone, "
                  "fp32 LayerNorm statistics); fused kernels as stand-ins saving what their autograd Functions save",
        "eager_flash_agreement_fp32": agreement,
        "cases": results,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"hybrid_truth.py: {len(results)} cases, {failures} differ from the closed form, "
          f"{time.time() - started:.1f} s -> {args.out}")
    return 1 if failures else 0


def merge_solve_rows(rows):
    """The eager triangular solve keeps two clones per row of each chunk
    (C - 1 rows): listed as one row with their count and summed bytes."""
    solve = [r for r in rows if r["op"] == "triangular solve"]
    if not solve:
        return rows
    merged = {"op": "triangular solve", "tensor": solve[0]["tensor"], "dtype": solve[0]["dtype"],
              "shape": None, "tensors": len(solve), "bytes": sum(r["bytes"] for r in solve)}
    out = [r for r in rows if r["op"] != "triangular solve"]
    out.insert(rows.index(solve[0]), merged)
    return out


# ---------------------------------------------------------------------------
# The closed form of docs/hybrid-activations.md


def check_case(case):
    expected = expected_rows(case)
    measured = {}
    for r in case["measured"]["ops"]:
        key = (r["op"], r["tensor"])
        measured[key] = measured.get(key, 0) + r["bytes"]
    exp = {}
    for op_name, tensor, nbytes in expected:
        if nbytes:
            exp[(op_name, tensor)] = exp.get((op_name, tensor), 0) + nbytes
    diffs = []
    for key in sorted(set(measured) | set(exp)):
        if measured.get(key, 0) != exp.get(key, 0):
            diffs.append(f"{key[0]} | {key[1]}: measured {measured.get(key, 0)}, closed form {exp.get(key, 0)}")
    return {"expected_bytes": sum(exp.values()), "holds": not diffs, "differences": diffs}


def expected_rows(case):
    """The closed form, row by row: (op, tensor, bytes). b micro-batch, s
    sequence, T = b*s; a = 4 in fp32, 2 in bf16 and under autocast; under
    autocast every Linear keeps its own 16-bit cast of an fp32 input."""
    c, t = case["config"], case["training"]
    b, s = t["micro_batch_size"], t["sequence_length"]
    T = b * s
    mode = {"fp32": "fp32", "bf16": "bf16", "amp-bf16": "amp"}[t["dtype"]]
    a = 4 if mode == "fp32" else 2
    amp = mode == "amp"
    f32 = 2 if mode == "bf16" else 4  # an op on CUDA autocast's fp32 list: 16-bit only in pure bf16
    mm = 2 if amp else 4              # a matmul input inside the fp32 chunk algebra: autocast casts it
    flash = t["attention"] == "flash"
    rows = []

    def row(op_name, tensor, n):
        rows.append((op_name, tensor, n))

    kind = case["mixer"]
    h = c["hidden_size"]
    if kind == "gated_deltanet":
        HK, dk, HV, dv, K = (c["linear_num_key_heads"], c["linear_key_head_dim"], c["linear_num_value_heads"],
                             c["linear_value_head_dim"], c["linear_conv_kernel_dim"])
        r = HV // HK
        Kd, Vd = HK * dk, HV * dv
        CD, P = 2 * Kd + Vd, 2 * Kd + 2 * Vd
        C = hy.GDN_CHUNK
        N = -(-s // C)
        Sp = N * C
        split = c.get("split_projections", False)  # Qwen3.5: in_proj_qkv, _z, _b, _a
        if split:
            row("in_proj_qkv", "input", a * T * h)
            for name in ("in_proj_z", "in_proj_b", "in_proj_a"):
                row(name, "input", 2 * T * h if amp else 0)
        else:
            row("in_proj_qkvz", "input", a * T * h)
            row("in_proj_ba", "input", 2 * T * h if amp else 0)
        row("beta sigmoid", "output", a * T * HV)
        row("g softplus", "fp32 a + dt_bias", 4 * T * HV)
        row("g", "softplus output", 4 * T * HV)
        row("out_proj", "input", a * T * Vd)
        if flash:
            row("causal_conv1d_fn", "input (q, k, v concatenated)", a * T * CD)
            row("chunk_gated_delta_rule", "saved by the kernel",
                2 * a * T * HV * dk + 2 * 4 * T * HV + a * T * HV * dv + 4 * T * HV + a * T * HV * C)
            row("FusedRMSNormGated", "x, gate, fp32 rstd", 2 * a * T * Vd + 4 * T * HV)
            return rows
        BH = b * HV
        row("conv1d", "input (q, k, v concatenated)", a * T * CD)
        row("conv1d silu", "conv output (s + kernel - 1 wide)", a * b * CD * (s + K - 1))
        if r == 1:
            row("query l2norm", "input (x * x, x * inv_norm)", a * T * CD)  # the silu output itself
        else:
            row("query l2norm", "input (x * x, x * inv_norm)", a * T * HV * dk)
            row("key l2norm", "input (x * x, x * inv_norm)", a * T * HV * dk)
        row("query l2norm", "inv_norm (rsqrt output)", f32 * T * HV)
        row("key l2norm", "inv_norm (rsqrt output)", f32 * T * HV)
        row("v_beta", "value, beta (padded fp32)", 4 * BH * Sp * dv + 4 * BH * Sp)
        row("k_beta", "key, beta (padded fp32)", 4 * BH * Sp * dk)
        row("decay_mask", "exp output", 4 * BH * N * C * C)
        row("intra-chunk attn", "k_beta, key (matmul)", (2 * 2 if amp else 4) * BH * Sp * dk)
        row("intra-chunk attn", "k_beta @ key, decay_mask (mul)", mm * BH * N * C * C + 4 * BH * N * C * C)
        row("intra-chunk attn", "triu mask (masked_fill)", C * C)
        row("triangular solve", "row and block clones (per row i)", 4 * BH * N * (C - 1) * C * (C + 1) // 3)
        row("value = attn @ v_beta", "attn, v_beta", mm * BH * N * C * C + mm * BH * Sp * dv)
        row("k_cumdecay", "k_beta, exp(g) (mul)", 4 * BH * Sp + (4 * BH * Sp * dk if amp else 0))
        row("k_cumdecay", "attn, k_beta * exp(g) (matmul)", (2 * BH * N * C * C if amp else 0) + mm * BH * Sp * dk)
        row("chunk loop", "q_i @ k_i (matmul)", N * 2 * 2 * BH * C * dk if amp else 4 * BH * Sp * dk)
        row("chunk loop", "q_i @ k_i, decay_mask (mul)", N * mm * BH * C * C)
        row("chunk loop", "strict-triu mask (masked_fill_)", C * C)
        row("chunk loop", "k_cumdecay, state (v_prime matmul)",
            mm * BH * dk * dv + (mm * BH * Sp * dk + (N - 1) * mm * BH * dk * dv if N > 1 else 0))
        row("chunk loop", "q_i, exp(g) (mul)", N * 4 * BH * C + (4 * BH * Sp * dk if amp else 0))
        row("chunk loop", "q_i * exp(g), state (attn_inter matmul)",
            (N - 1) * (2 * BH * C * dk + 2 * BH * dk * dv if amp else 4 * BH * C * dk))
        row("chunk loop", "attn, v_new (matmul)", N * (mm * BH * C * C + mm * BH * C * dv))
        # the state update of every chunk but the last (the last one's dies unused)
        row("chunk loop", "state, exp(g_last) (state decay)",
            (N - 1) * 4 * BH + (max(N - 2, 0) * 4 * BH * dk * dv if amp else 0))
        row("chunk loop", "k_i, exp(g_last - g) (mul)", (N - 1) * 4 * BH * C)
        row("chunk loop", "k_i * decay, v_new (state update matmul)", (N - 1) * mm * BH * C * dk)
        row("norm", "fp32 input", 4 * T * Vd)
        row("norm", "rstd, normalised (fp32)", 4 * T * HV)
        row("norm", "normalised, input dtype", a * T * Vd)
        # fp32, r = 1, fused: z is a view of in_proj_qkvz's output, kept whole;
        # Qwen3.5's z is in_proj_z's own output
        row("norm", "fp32 gate (silu input)", 4 * T * P if (mode == "fp32" and r == 1 and not split) else 4 * T * Vd)
        row("norm", "weighted, silu(gate)", 4 * T * Vd + (2 if mode == "bf16" else 4) * T * Vd)
        return rows
    if kind == "gated_attention":
        H, KV, d = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
        row("q_proj", "input", a * T * h)
        row("k_proj", "input", 2 * T * h if amp else 0)
        row("v_proj", "input", 2 * T * h if amp else 0)
        row("q_norm", "fp32 input (pow, mul)", 4 * T * H * (2 * d if mode == "fp32" else d))
        row("q_norm", "rstd", 4 * T * H)
        row("q_norm", "normalised fp32 (times 1 + weight)", 4 * T * H * d)
        row("k_norm", "fp32 input (pow, mul)", 4 * T * KV * d)
        row("k_norm", "rstd", 4 * T * KV)
        row("k_norm", "normalised fp32 (times 1 + weight)", 4 * T * KV * d)
        if flash:
            row("flash attention", "q, k, v, out, fp32 lse, rng", 2 * a * T * H * d + 2 * a * T * KV * d
                + 4 * b * H * s + 16)
        else:
            row("attention scores", "query, repeated key", 2 * a * T * H * d)
            row("attention softmax", "fp32 output", 4 * b * H * s * s)
            row("attention over values", "probabilities cast, repeated value",
                (0 if mode == "fp32" else 2 * b * H * s * s) + a * T * H * d)
        # with flash the attention output is the kernel's saved out (same storage)
        row("output gate", "attention output, sigmoid(gate)", (1 if flash else 2) * a * T * H * d)
        row("o_proj", "input", a * T * H * d)
        return rows
    if kind == "mamba2":
        nh, hd, N, G, K, L = (c["mamba_num_heads"], c["mamba_head_dim"], c["ssm_state_size"], c["n_groups"],
                              c["conv_kernel"], c["chunk_size"])
        I = nh * hd
        CD, P = I + 2 * G * N, 2 * I + 2 * G * N + nh
        Nc = -(-s // L)
        Sp = Nc * L
        row("in_proj", "input", a * T * h)
        if t["attention"] == "flash_chunk_scan":
            row("causal_conv1d_fn", "input (x, B, C: a view of in_proj's output)", a * T * P)
            row("mamba_chunk_scan_combined", "out, x, dt, B, C, fp32 dA_cumsum",
                a * T * I + a * T * I + a * T * CD + 4 * b * nh * Nc * L)
            row("gated norm", "fp32 gate (silu input)", 0 if mode == "fp32" else 4 * T * I)
            row("gated norm", "y, silu(gate) (mul)", (0 if mode == "fp32" else 4 * T * I) + 4 * T * I)
            row("gated norm", "gated product (pow, mul)", 4 * T * I)
            row("gated norm", "rstd per group", 4 * T * G)
            row("gated norm", "normalised, input dtype (weight)", a * T * I)
            row("out_proj", "input", a * T * I)
            return rows
        if flash:
            row("mamba_split_conv1d_scan_combined", "zxbcdt, out_x, fp32 rstd", a * T * P + a * T * I + 4 * G * T)
            return rows
        row("conv1d", "input (x, B, C)", a * T * P)
        row("conv1d silu", "conv output (s + kernel - 1 wide)", a * b * CD * (s + K - 1))
        row("dt softplus", "dt + dt_bias", f32 * T * nh)
        row("dt clamp", "softplus output", f32 * T * nh)
        row("x * dt", "x (fp32), dt", (4 * T * CD if mode == "fp32" else 4 * T * I) + f32 * T * nh)
        row("D_residual", "padded x (fp32)", 4 * b * Sp * I)
        row("L = exp(segsum)", "segsum masks (bool, chunk^2)", 2 * L * L)
        row("L = exp(segsum)", "exp output", 4 * b * nh * Nc * L * L)
        row("G", "C, B chunks (fp32, heads repeated)", 2 * 4 * b * Sp * nh * N)
        row("M", "G, L", 4 * b * Nc * L * L * nh)
        row("Y_diag", "M, x * dt chunks", 4 * b * Nc * L * L * nh + 4 * b * Sp * I)
        row("decay_states", "exp output", 4 * b * nh * Sp)
        row("chunk states", "B * decay, x * dt", 4 * b * Sp * nh * N)
        row("decay_chunk", "segsum masks (bool, chunk^2)", 2 * (Nc + 1) ** 2)
        row("decay_chunk", "exp output", 4 * b * nh * (Nc + 1) ** 2)
        row("state passing", "decay_chunk, states", 4 * b * (Nc + 1) * nh * hd * N)
        row("state_decay_out", "exp output", 4 * b * nh * Sp)
        row("C * states", "C, passed states", 4 * b * nh * (Nc + 1) * hd * N)
        row("Y_off", "sum(C * states), state_decay_out", 4 * b * Sp * I)
        row("gated norm", "fp32 gate (silu input)", 0 if mode == "fp32" else 4 * T * I)
        row("gated norm", "y, silu(gate) (mul)", 4 * b * Sp * I + 4 * T * I)
        row("gated norm", "gated product (pow, mul)", 4 * T * I)
        row("gated norm", "rstd per group", 4 * T * G)
        row("gated norm", "normalised, input dtype (weight)", 4 * T * I)
        row("out_proj", "input", a * T * I)
        return rows
    if kind == "short_conv":
        Lc = c["conv_L_cache"]
        row("in_proj", "input", a * T * h)
        row("B * x", "in_proj output (B, x views)", 3 * a * T * h)
        row("causal_conv1d_fn" if flash else "conv1d", "input B * x", a * T * h)
        row("C * conv", "conv output (eager: s + L - 1 wide)", a * T * h if flash else a * b * h * (s + Lc - 1))
        row("out_proj", "input", a * T * h)
        return rows
    if kind == "dsa_indexer":
        if t["attention"] == "released":
            return rows
        H, D, q_lora = c["index_n_heads"], c["index_head_dim"], c["q_lora_rank"]
        k = min(c["index_topk"], s)
        row("wq_b", "q_resid", a * T * q_lora)
        row("wk", "input", a * T * h)
        row("k_norm", "input (fp32 under autocast), fp32 mean and rstd", f32 * T * D + 2 * 4 * T)
        row("index scores", "fp32 q (heads flattened), fp32 k (matmul)", 4 * T * H * D + 4 * T * D)
        row("index scores", "relu output (fp32, b*s*H*s)", 4 * T * H * s)
        row("weights_proj", "input (fp32)", 0 if mode == "fp32" else 4 * T * h)
        row("index scores", "weights (fp32), relu output (matmul)", 4 * T * H)
        row("index scores", "clamp_min input (fp32, b*s*s)", 4 * b * s * s)
        row("indexer loss", "gather index (int64, b*s*topk)", 4 * b * s * s + 8 * b * s * k)
        row("indexer loss", "log_softmax output (fp32)", 4 * b * s * k)
        row("indexer loss", "kl_div input, target (fp32)", 4 * b * s * k)
        row("indexer loss", "query mask (bool)", b * s)
        return rows
    raise ValueError(kind)


if __name__ == "__main__":
    sys.exit(main())
