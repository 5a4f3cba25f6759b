"""Token mixers of 2026's hybrid models, op for op as the Hugging Face torch
paths run them in training (the `eager` setting), and stand-ins for the fused
training kernels (the `flash` setting) that save exactly what their
autograd Functions save. Written from reading these files (none copied):

- Gated DeltaNet and Qwen3-Next's gated full attention:
  transformers src/transformers/models/qwen3_next/modeling_qwen3_next.py at
  commit 01cdc6081c7500f9e50c98b1b943c90ecb665db3 (Qwen3NextGatedDeltaNet,
  torch_chunk_gated_delta_rule, l2norm, Qwen3NextRMSNormGated,
  Qwen3NextAttention, Qwen3NextRMSNorm).
- Mamba-2 mixer: src/transformers/models/nemotron_h/modeling_nemotron_h.py at
  commit 008d9e9577b0eb0149aa6bb0c44da582b10e0b6e (NemotronHMamba2Mixer
  torch_forward / cuda_kernels_forward; Zamba2RMSNormGated, the gated RMSNorm
  by groups, from models/zamba2/modeling_zamba2.py).
- LFM2 short convolution: src/transformers/models/lfm2/modeling_lfm2.py at
  commit 0096ba4f66d4f5f7b1d4e162f8a75d0894b40ea8 (Lfm2ShortConv slow_forward
  and cuda_kernels_forward).
- DeepSeek-V3.2 lightning indexer:
  src/transformers/models/deepseek_v32/modular_deepseek_v32.py at commit
  01f8fa55d98fbd77fb6461c47ae14fc6206f2f87 (DeepseekV32Indexer.forward runs
  under @torch.no_grad(): nothing saved), and the revision of the same file
  with `output_indexer_loss` (indexer scores with grad, indexer_kl_loss) held
  in the code index (file id 68483573724; its commit was not given).
- Fused kernels: fla-org/flash-linear-attention v0.5.2
  (fla/ops/gated_delta_rule/chunk.py ChunkGatedDeltaRuleFunction,
  fla/modules/l2norm.py l2norm_fwd, fla/modules/fused_norm_gate.py
  LayerNormGatedFunction, fla/utils/_decorators.py input_guard),
  Dao-AILab/causal-conv1d v1.6.1.post4
  (causal_conv1d/causal_conv1d_interface.py CausalConv1dFn),
  state-spaces/mamba v2.3.2 (mamba_ssm/ops/triton/ssd_combined.py
  MambaSplitConv1dScanCombinedFn and MambaChunkScanCombinedFn,
  layernorm_gated.py _layer_norm_fwd).

Where PyTorch 1.13 on the CPU saves other tensors than PyTorch 2.x on a GPU,
the code does what 2.x does (see saved_tensor_ledger.py and README.md):
`mean` keeps nothing, ops on CUDA autocast's fp32 list (sum, pow, cumsum,
exp, softplus, rsqrt) get fp32 inputs, and `repeat_interleave` with an int
count is 2.x's expand + clone (aten/src/ATen/native/Repeat.cpp,
pytorch/pytorch commit 0434ace5f82b2e9f6182a9e3f36bd2ae401474bf; 1.13 made an
index_select, which keeps an int64 index).

Each op is labelled "op|tensor" so the ledger lists every kept tensor."""
import torch
import torch.nn as nn
import torch.nn.functional as F

import saved_tensor_ledger as ledger
from saved_tensor_ledger import autocast_fp32, layer_norm, mean_last_dim, op
from hf_ops import FlashAttention, apply_partial_rotary_pos_emb, repeat_kv

GDN_CHUNK = 64  # torch_chunk_gated_delta_rule's default and fla's chunk_size (HF passes neither)


def repeat_interleave_int(x, repeats, dim):
    """x.repeat_interleave(int, dim) as PyTorch 2.x runs it: unsqueeze,
    expand, contiguous clone, flatten: nothing saved for backward."""
    if repeats == 1:
        return x
    x = x.unsqueeze(dim + 1)
    shape = list(x.shape)
    shape[dim + 1] = repeats
    return x.expand(shape).clone(memory_format=torch.contiguous_format).flatten(dim, dim + 1)


def param_derived(t):
    return ledger.current().parameter_derived(t)


# ---------------------------------------------------------------------------
# Fused-kernel stand-ins: forward in no_grad, save exactly the kernel's tensors


class CausalConv1dFn(torch.autograd.Function):
    """causal_conv1d CausalConv1dFn (v1.6.1.post4): save_for_backward(x,
    weight, bias, seq_idx, initial_states); x is copied only when neither its
    channel nor its time stride is 1. The output has x's dtype (the kernel
    reads the fp32 weight as is; no autocast)."""

    @staticmethod
    def forward(ctx, x, weight, bias, silu):
        if x.stride(2) != 1 and x.stride(1) != 1:
            x = x.contiguous()
        with torch.no_grad(), torch.autocast("cpu", enabled=False):
            out = _causal_conv(x.float(), weight.float(), None if bias is None else bias.float(), silu).to(x.dtype)
        ctx.save_for_backward(x, weight, bias)
        ctx.silu = silu
        return out

    @staticmethod
    def backward(ctx, dout):
        x, weight, bias = ctx.saved_tensors
        with torch.enable_grad(), torch.autocast("cpu", enabled=False):
            xx = x.detach().float().requires_grad_()
            ww = weight.detach().float().requires_grad_()
            bb = None if bias is None else bias.detach().float().requires_grad_()
            out = _causal_conv(xx, ww, bb, ctx.silu)
            inputs = (xx, ww) if bb is None else (xx, ww, bb)
            grads = torch.autograd.grad(out, inputs, dout.float())
        dx, dw = grads[0].to(x.dtype), grads[1].to(weight.dtype)
        db = grads[2].to(bias.dtype) if bias is not None else None
        return dx, dw, db, None


def _causal_conv(x, weight, bias, silu):
    width = weight.shape[-1]
    out = F.conv1d(F.pad(x, (width - 1, 0)), weight.unsqueeze(1), bias, groups=x.shape[1])
    return F.silu(out) if silu else out


def causal_conv1d_fn(x, weight, bias, activation):
    return CausalConv1dFn.apply(x, weight, bias, activation in ("silu", "swish"))


def _l2norm_rows(x):
    """fla l2norm_fwd: y in x's dtype, rstd fp32 per row."""
    xf = x.float()
    rstd = torch.rsqrt((xf * xf).sum(-1) + 1e-6)
    return (xf * rstd.unsqueeze(-1)).to(x.dtype), rstd


class ChunkGatedDeltaRuleFn(torch.autograd.Function):
    """fla ChunkGatedDeltaRuleFunction (v0.5.2) with use_qk_l2norm_in_kernel
    and g given (HF's call): input_guard makes every input contiguous; the
    forward saves (q, q_rstd, k, k_rstd, v, g, beta_raw, beta, A,
    initial_state, ...): q and k l2-normalised in their dtype, q_rstd and
    k_rstd fp32 [B, T, H], v, g as the chunk-local cumsum in fp32
    (chunk_local_cumsum's output_dtype), beta (raw and used are one tensor
    without the in-kernel sigmoid), A the WY inverse [B, T, HV, 64] in k's
    dtype; initial_state is None in training. The per-chunk states h are not
    saved: chunk_gated_delta_rule_bwd recomputes them
    (chunk_gated_delta_rule_fwd_h). The stand-in computes o token by token
    (the recurrent form) and, in backward, recomputes through it."""

    @staticmethod
    def forward(ctx, q, k, v, g, beta):
        q, k, v, g, beta = (t.contiguous() for t in (q, k, v, g, beta))
        qn, q_rstd = _l2norm_rows(q)
        kn, k_rstd = _l2norm_rows(k)
        with torch.no_grad(), torch.autocast("cpu", enabled=False):
            o, _ = _gdn_recurrent_math(qn.float(), kn.float(), v.float(), g.float(), beta.float())
            g_cum = _chunk_local_cumsum(g.float())
        b, t, hv = beta.shape
        A = torch.zeros(b, t, hv, GDN_CHUNK, dtype=k.dtype)
        ctx.save_for_backward(qn, q_rstd, kn, k_rstd, v, g_cum, beta, A)
        return o.to(q.dtype)

    @staticmethod
    def backward(ctx, do):
        qn, q_rstd, kn, k_rstd, v, g_cum, beta, _A = ctx.saved_tensors
        g = _chunk_local_diff(g_cum)
        with torch.enable_grad(), torch.autocast("cpu", enabled=False):
            ins = [t.detach().float().requires_grad_() for t in (qn, kn, v, g, beta)]
            o, _ = _gdn_recurrent_math(*ins)
            dqn, dkn, dv, dg, dbeta = torch.autograd.grad(o, ins, do.float())
        # l2norm_bwd: dx = rstd * (dy - y * sum(dy * y))
        dq = q_rstd.unsqueeze(-1) * (dqn - qn.float() * (dqn * qn.float()).sum(-1, keepdim=True))
        dk = k_rstd.unsqueeze(-1) * (dkn - kn.float() * (dkn * kn.float()).sum(-1, keepdim=True))
        return dq.to(qn.dtype), dk.to(kn.dtype), dv.to(v.dtype), dg.to(g_cum.dtype), dbeta.to(beta.dtype)


def _chunk_local_cumsum(g):
    b, t, h = g.shape
    pad = (GDN_CHUNK - t % GDN_CHUNK) % GDN_CHUNK
    gp = F.pad(g, (0, 0, 0, pad)).view(b, -1, GDN_CHUNK, h).cumsum(2)
    return gp.reshape(b, -1, h)[:, :t].clone()  # T rows exactly, as fla allocates it


def _chunk_local_diff(g_cum):
    b, t, h = g_cum.shape
    pad = (GDN_CHUNK - t % GDN_CHUNK) % GDN_CHUNK
    gp = F.pad(g_cum, (0, 0, 0, pad)).view(b, -1, GDN_CHUNK, h)
    d = torch.cat([gp[:, :, :1], gp[:, :, 1:] - gp[:, :, :-1]], dim=2)
    return d.reshape(b, -1, h)[:, :t].contiguous()


def _gdn_recurrent_math(q, k, v, g, beta):
    """The gated delta rule token by token (the algebra of
    torch_recurrent_gated_delta_rule, inputs already l2-normalised,
    [B, T, H, D] layout), unlabelled: the stand-in's forward and backward,
    independent of the chunked algorithm the eager path runs."""
    b, t, h, dk = k.shape
    state = q.new_zeros(b, h, dk, v.shape[-1])
    q = q * dk ** -0.5
    outs = []
    for i in range(t):
        state = state * g[:, i].exp()[..., None, None]
        kv_mem = (state * k[:, i, :, :, None]).sum(-2)
        delta = (v[:, i] - kv_mem) * beta[:, i, :, None]
        state = state + k[:, i, :, :, None] * delta[:, :, None, :]
        outs.append((state * q[:, i, :, :, None]).sum(-2))
    return torch.stack(outs, dim=1), state


class RMSNormGatedFn(torch.autograd.Function):
    """fla LayerNormGatedFunction as FusedRMSNormGated calls it (v0.5.2,
    is_rms_norm, activation swish, no residual): input_guard makes x and g
    contiguous; save_for_backward(residual_out = x, g, weight, bias = None,
    mean = None, rstd): rstd fp32, one per row; y in x's dtype."""

    @staticmethod
    def forward(ctx, x, g, weight, eps):
        x, g = x.contiguous(), g.contiguous()
        with torch.no_grad(), torch.autocast("cpu", enabled=False):
            xf = x.float()
            rstd = torch.rsqrt(xf.pow(2).mean(-1) + eps)
            y = (xf * rstd.unsqueeze(-1) * weight.float() * F.silu(g.float())).to(x.dtype)
        ctx.save_for_backward(x, g, weight, rstd)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, g, weight, rstd = ctx.saved_tensors
        with torch.enable_grad(), torch.autocast("cpu", enabled=False):
            xx, gg, ww = (t.detach().float().requires_grad_() for t in (x, g, weight))
            y = xx * rstd.unsqueeze(-1) * ww * F.silu(gg)
            dx, dg, dw = torch.autograd.grad(y, (xx, gg, ww), dy.float())
        # rstd's own dependence on x, added as the kernel's backward does
        xf = x.float()
        n = xf.shape[-1]
        dx = dx - xf * rstd.unsqueeze(-1) ** 2 * (dx * xf).sum(-1, keepdim=True) / n
        return dx.to(x.dtype), dg.to(g.dtype), dw.to(weight.dtype), None


class MambaSplitConv1dScanCombinedFn(torch.autograd.Function):
    """mamba_ssm MambaSplitConv1dScanCombinedFn (v2.3.2) with rmsnorm_weight
    and outproj_weight (HF's training call, norm_before_gate=False):
    save_for_backward(zxbcdt, conv1d_weight, conv1d_bias, out_x, A, D,
    dt_bias, initial_states, seq_idx, rmsnorm_weight, rstd, outproj_weight,
    outproj_bias): zxbcdt is in_proj's output itself, out_x the scan output
    [b, s, nheads, headdim] in x's dtype (the conv output's), rstd fp32
    [ngroups * b * s]; under autocast outproj_weight is its 16-bit cast (a
    weight copy). The chunk states (fp32) and dA_cumsum are not saved: the
    backward reruns the conv and the chunk scan. The stand-in computes the
    output with the torch chunk algorithm and recomputes it in backward."""

    @staticmethod
    def forward(ctx, zxbcdt, mixer, conv_w, conv_b, dt_bias, A, D, norm_w, out_w, out_b):
        with torch.no_grad():
            out_x, rstd, out = mixer.split_scan_math(zxbcdt, conv_w, conv_b, dt_bias, A, D, norm_w, out_w, out_b)
        if torch.is_autocast_cpu_enabled():
            out_w = out_w.to(torch.get_autocast_cpu_dtype())
        ctx.mixer = mixer
        ctx.save_for_backward(zxbcdt, conv_w, conv_b, out_x, A, D, dt_bias, norm_w, rstd, out_w, out_b)
        return out

    @staticmethod
    def backward(ctx, dout):
        zxbcdt, conv_w, conv_b, _out_x, A, D, dt_bias, norm_w, _rstd, out_w, out_b = ctx.saved_tensors
        with torch.enable_grad(), torch.autocast("cpu", enabled=False):
            ins = [t.detach().float().requires_grad_() for t in (zxbcdt, conv_w, conv_b, dt_bias, A, D, norm_w,
                                                                  out_w)]
            bias = None if out_b is None else out_b.detach().float().requires_grad_()
            _, _, out = ctx.mixer.split_scan_math(*ins, bias)
            grads = torch.autograd.grad(out, ins + ([bias] if bias is not None else []), dout.float())
        g = [gr.to(t.dtype) for gr, t in zip(grads, (zxbcdt, conv_w, conv_b, dt_bias, A, D, norm_w, out_w))]
        d_out_b = grads[8].to(out_b.dtype) if out_b is not None else None
        return g[0], None, g[1], g[2], g[3], g[4], g[5], g[6], g[7], d_out_b


class MambaChunkScanCombinedFn(torch.autograd.Function):
    """mamba_ssm MambaChunkScanCombinedFn (v2.3.2) as HF's
    cuda_kernels_forward calls it when the fused split path is not taken
    (padding in the batch; z None, dt_softplus, dt_bias given):
    save_for_backward(out, x, dt, dA_cumsum, A, B, C, D, z, dt_bias,
    initial_states, seq_idx): out [b, s, nheads, headdim] in x's dtype, x, dt,
    B, C as passed (views), dA_cumsum fp32 [b, nheads, nchunks, chunk_size];
    the fp32 chunk states are recomputed in backward, not saved."""

    @staticmethod
    def forward(ctx, x, dt, A, B, C, D, dt_bias, chunk_size):
        with torch.no_grad(), torch.autocast("cpu", enabled=False):
            dtf = F.softplus(dt.float() + dt_bias.float())
            out = _ssd_reference(x.float(), dtf, A.float(), B.float(), C.float(), D.float()).to(x.dtype)
        b, s, nh = dt.shape
        nchunks = -(-s // chunk_size)
        dA_cumsum = torch.zeros(b, nh, nchunks, chunk_size, dtype=torch.float32)
        ctx.save_for_backward(out, x, dt, dA_cumsum, A, B, C, D, dt_bias)
        return out

    @staticmethod
    def backward(ctx, dout):
        _out, x, dt, _dA, A, B, C, D, dt_bias = ctx.saved_tensors
        with torch.enable_grad(), torch.autocast("cpu", enabled=False):
            ins = [t.detach().float().requires_grad_() for t in (x, dt, A, B, C, D, dt_bias)]
            xx, dd, aa, bb, cc, DD, db = ins
            y = _ssd_reference(xx, F.softplus(dd + db), aa, bb, cc, DD)
            grads = torch.autograd.grad(y, ins, dout.float())
        return tuple(g.to(t.dtype) for g, t in zip(grads, (x, dt, A, B, C, D, dt_bias))) + (None,)


# ---------------------------------------------------------------------------
# Qwen3-Next: Gated DeltaNet and gated full attention


class Qwen3NextRMSNormGated(nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x, gate):
        input_dtype = x.dtype
        with op("norm|fp32 input"):
            h = x.to(torch.float32)
            var = mean_last_dim(h.pow(2))
        with op("norm|rstd, normalised (fp32)"):
            h = h * torch.rsqrt(var + self.eps)
        with op("norm|normalised, input dtype"):
            h = self.weight * h.to(input_dtype)
        with op("norm|fp32 gate (silu input)"):
            s = F.silu(gate.to(torch.float32))
        with op("norm|weighted, silu(gate)"):
            h = h * s
        return h.to(input_dtype)


class Qwen3NextGatedDeltaNet(nn.Module):
    """Qwen3NextGatedDeltaNet.forward in training (no cache, no padding
    mask): eager = causal_conv1d_fn and fla absent (F.silu(conv1d),
    torch_chunk_gated_delta_rule, Qwen3NextRMSNormGated); flash = both
    present (causal_conv1d_fn, chunk_gated_delta_rule, FusedRMSNormGated)."""

    def __init__(self, c, flash):
        super().__init__()
        h = c["hidden_size"]
        self.nk, self.nv = c["linear_num_key_heads"], c["linear_num_value_heads"]
        self.dk, self.dv = c["linear_key_head_dim"], c["linear_value_head_dim"]
        self.key_dim, self.value_dim = self.nk * self.dk, self.nv * self.dv
        self.kernel = c["linear_conv_kernel_dim"]
        self.conv_dim = 2 * self.key_dim + self.value_dim
        self.conv1d = nn.Conv1d(self.conv_dim, self.conv_dim, self.kernel, bias=False, groups=self.conv_dim,
                                padding=self.kernel - 1)
        # Qwen3.5 (modeling_qwen3_5.py Qwen3_5GatedDeltaNet at transformers
        # d8c1e284): four Linears, in_proj_qkv, in_proj_z, in_proj_b,
        # in_proj_a, in place of the fused per-key-head in_proj_qkvz / in_proj_ba.
        self.split_projections = c.get("split_projections", False)
        if self.split_projections:
            self.in_proj_qkv = nn.Linear(h, self.conv_dim, bias=False)
            self.in_proj_z = nn.Linear(h, self.value_dim, bias=False)
            self.in_proj_b = nn.Linear(h, self.nv, bias=False)
            self.in_proj_a = nn.Linear(h, self.nv, bias=False)
        else:
            self.in_proj_qkvz = nn.Linear(h, 2 * self.key_dim + 2 * self.value_dim, bias=False)
            self.in_proj_ba = nn.Linear(h, 2 * self.nv, bias=False)
        self.dt_bias = nn.Parameter(torch.ones(self.nv))
        self.A_log = nn.Parameter(torch.log(torch.empty(self.nv).uniform_(1, 16)))
        self.eps = c.get("rms_norm_eps", 1e-6)
        self.norm = Qwen3NextRMSNormGated(self.dv, self.eps)
        self.out_proj = nn.Linear(self.value_dim, h, bias=False)
        self.flash = flash

    def split_heads(self, qkvz, ba):
        """fix_query_key_value_ordering: per key head [q, k, v-group, z-group]."""
        b, s = qkvz.shape[:2]
        r = self.nv // self.nk
        qkvz = qkvz.view(b, s, self.nk, 2 * self.dk + 2 * r * self.dv)
        ba = ba.view(b, s, self.nk, 2 * r)
        q, k, v, z = torch.split(qkvz, [self.dk, self.dk, r * self.dv, r * self.dv], dim=3)
        bb, a = torch.split(ba, [r, r], dim=3)
        v = v.reshape(b, s, -1, self.dv)
        z = z.reshape(b, s, -1, self.dv)
        return q, k, v, z, bb.reshape(b, s, self.nv), a.reshape(b, s, self.nv)

    def forward(self, x):
        b, s, _ = x.shape
        if self.split_projections:
            with op("in_proj_qkv|input"):
                mixed = self.in_proj_qkv(x).transpose(1, 2)
            with op("in_proj_z|input"):
                z = self.in_proj_z(x).reshape(b, s, -1, self.dv)
            with op("in_proj_b|input"):
                bb = self.in_proj_b(x)
            with op("in_proj_a|input"):
                a = self.in_proj_a(x)
        else:
            with op("in_proj_qkvz|input"):
                qkvz = self.in_proj_qkvz(x)
            with op("in_proj_ba|input"):
                ba = self.in_proj_ba(x)
            q, k, v, z, bb, a = self.split_heads(qkvz, ba)
            q, k, v = (t.reshape(b, s, -1) for t in (q, k, v))
            mixed = torch.cat((q, k, v), dim=-1).transpose(1, 2)
        if self.flash:
            with op("causal_conv1d_fn|input (q, k, v concatenated)"):
                mixed = causal_conv1d_fn(mixed, self.conv1d.weight.squeeze(1), self.conv1d.bias, "silu")
        else:
            with op("conv1d|input (q, k, v concatenated)"):
                conv = self.conv1d(mixed)
            with op("conv1d silu|conv output (s + kernel - 1 wide)"):
                mixed = F.silu(conv[:, :, :s])
        mixed = mixed.transpose(1, 2)
        q, k, v = torch.split(mixed, [self.key_dim, self.key_dim, self.value_dim], dim=-1)
        q = q.reshape(b, s, -1, self.dk)
        k = k.reshape(b, s, -1, self.dk)
        v = v.reshape(b, s, -1, self.dv)
        with op("beta sigmoid|output"):
            beta = bb.sigmoid()
        with op("g softplus|fp32 a + dt_bias"):
            sp = F.softplus(a.float() + self.dt_bias)
        with op("g|softplus output"):
            g = param_derived(-param_derived(self.A_log.float().exp())) * sp
        r = self.nv // self.nk
        if r > 1:
            q = repeat_interleave_int(q, r, 2)
            k = repeat_interleave_int(k, r, 2)
        if self.flash:
            with op("chunk_gated_delta_rule|saved by the kernel"):
                core = ChunkGatedDeltaRuleFn.apply(q, k, v, g, beta)
        else:
            core = torch_chunk_gated_delta_rule(q, k, v, g, beta)
        z_shape = z.shape
        core = core.reshape(-1, core.shape[-1])
        z = z.reshape(-1, z.shape[-1])
        if self.flash:
            with op("FusedRMSNormGated|x, gate, fp32 rstd"):
                core = RMSNormGatedFn.apply(core, z, self.norm.weight, self.eps)
        else:
            core = self.norm(core, z)
        core = core.reshape(z_shape).reshape(b, s, -1)
        with op("out_proj|input"):
            return self.out_proj(core)


def l2norm(x, label):
    """modeling_qwen3_next l2norm: x * rsqrt(sum(x * x) + eps); sum is on
    CUDA autocast's fp32 list."""
    with op(f"{label} l2norm|input (x * x, x * inv_norm)"):
        sq = x * x
    with op(f"{label} l2norm|inv_norm (rsqrt output)"):
        inv = torch.rsqrt(autocast_fp32(sq).sum(dim=-1, keepdim=True) + 1e-6)
        return x * inv


def torch_chunk_gated_delta_rule(query, key, value, g, beta, chunk_size=GDN_CHUNK):
    """torch_chunk_gated_delta_rule with use_qk_l2norm_in_kernel=True,
    initial_state None, output_final_state False, op for op."""
    initial_dtype = query.dtype
    query = l2norm(query, "query")
    key = l2norm(key, "key")
    query, key, value, beta, g = [x.transpose(1, 2).contiguous().to(torch.float32)
                                  for x in (query, key, value, beta, g)]
    b, h, t, dk = key.shape
    dv = value.shape[-1]
    pad = (chunk_size - t % chunk_size) % chunk_size
    query = F.pad(query, (0, 0, 0, pad))
    key = F.pad(key, (0, 0, 0, pad))
    value = F.pad(value, (0, 0, 0, pad))
    beta = F.pad(beta, (0, pad))
    g = F.pad(g, (0, pad))
    total = t + pad
    query = query * (1 / (query.shape[-1] ** 0.5))
    with op("v_beta|value, beta (padded fp32)"):
        v_beta = value * beta.unsqueeze(-1)
    with op("k_beta|key, beta (padded fp32)"):
        k_beta = key * beta.unsqueeze(-1)
    query, key, value, k_beta, v_beta = [x.reshape(x.shape[0], x.shape[1], -1, chunk_size, x.shape[-1])
                                         for x in (query, key, value, k_beta, v_beta)]
    g = g.reshape(g.shape[0], g.shape[1], -1, chunk_size)
    mask = torch.triu(torch.ones(chunk_size, chunk_size, dtype=torch.bool), diagonal=0)
    g = autocast_fp32(g).cumsum(dim=-1)
    with op("decay_mask|exp output"):
        decay_mask = ((g.unsqueeze(-1) - g.unsqueeze(-2)).tril().exp().float()).tril()
    with op("intra-chunk attn|k_beta, key (matmul)"):
        kk = k_beta @ key.transpose(-1, -2)
    with op("intra-chunk attn|k_beta @ key, decay_mask (mul)"):
        kk = kk * decay_mask
    with op("intra-chunk attn|triu mask (masked_fill)"):
        attn = -kk.masked_fill(mask, 0)
    with op("triangular solve|row and block clones (per row i)"):
        for i in range(1, chunk_size):
            row = attn[..., i, :i].clone()
            sub = attn[..., :i, :i].clone()
            attn[..., i, :i] = row + (row.unsqueeze(-1) * sub).sum(-2)
    attn = attn + torch.eye(chunk_size, dtype=attn.dtype)
    with op("value = attn @ v_beta|attn, v_beta"):
        value = attn @ v_beta
    with op("k_cumdecay|k_beta, exp(g) (mul)"):
        kg = k_beta * autocast_fp32(g).exp().unsqueeze(-1)
    with op("k_cumdecay|attn, k_beta * exp(g) (matmul)"):
        k_cumdecay = attn @ kg
    state = torch.zeros(b, h, dk, dv).to(value)
    core = torch.zeros_like(value)
    mask = torch.triu(torch.ones(chunk_size, chunk_size, dtype=torch.bool), diagonal=1)
    for i in range(0, total // chunk_size):
        q_i, k_i, v_i = query[:, :, i], key[:, :, i], value[:, :, i]
        with op("chunk loop|q_i @ k_i (matmul)"):
            qk = q_i @ k_i.transpose(-1, -2)
        with op("chunk loop|q_i @ k_i, decay_mask (mul)"):
            qk = qk * decay_mask[:, :, i]
        with op("chunk loop|strict-triu mask (masked_fill_)"):
            a_i = qk.masked_fill_(mask, 0)
        with op("chunk loop|k_cumdecay, state (v_prime matmul)"):
            v_prime = k_cumdecay[:, :, i] @ state
        v_new = v_i - v_prime
        with op("chunk loop|q_i, exp(g) (mul)"):
            qg = query[:, :, i] * autocast_fp32(g[:, :, i, :, None]).exp()
        with op("chunk loop|q_i * exp(g), state (attn_inter matmul)"):
            attn_inter = qg @ state
        with op("chunk loop|attn, v_new (matmul)"):
            core[:, :, i] = attn_inter + a_i @ v_new
        with op("chunk loop|state, exp(g_last) (state decay)"):
            decayed = state * autocast_fp32(g[:, :, i, -1, None, None]).exp()
        with op("chunk loop|k_i, exp(g_last - g) (mul)"):
            kd = k_i * autocast_fp32(g[:, :, i, -1, None] - g[:, :, i]).exp()[..., None]
        with op("chunk loop|k_i * decay, v_new (state update matmul)"):
            state = decayed + kd.transpose(-1, -2) @ v_new
    core = core.reshape(core.shape[0], core.shape[1], -1, core.shape[-1])[:, :, :t]
    return core.transpose(1, 2).contiguous().to(initial_dtype)


class Qwen3NextRMSNorm(nn.Module):
    """Qwen3NextRMSNorm: (x.float() normalised) * (1 + weight.float()), cast back."""

    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(d))
        self.eps = eps

    def forward(self, x, label):
        with op(f"{label}|fp32 input (pow, mul)"):
            xf = x.float()
            var = mean_last_dim(xf.pow(2))
        with op(f"{label}|rstd"):
            out = xf * torch.rsqrt(var + self.eps)
        with op(f"{label}|normalised fp32 (times 1 + weight)"):
            out = out * param_derived(1.0 + self.weight.float())
        return out.type_as(x)


class Qwen3NextAttention(nn.Module):
    """Qwen3NextAttention: q_proj gives query and an output gate per head;
    per-head q/k RMSNorm (1 + weight); partial rotary; eager or flash
    attention; output times sigmoid(gate); o_proj."""

    def __init__(self, c, flash):
        super().__init__()
        h, self.nh, self.kv, self.d = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"], \
            c["head_dim"]
        self.q_proj = nn.Linear(h, self.nh * self.d * 2, bias=False)
        self.k_proj = nn.Linear(h, self.kv * self.d, bias=False)
        self.v_proj = nn.Linear(h, self.kv * self.d, bias=False)
        self.o_proj = nn.Linear(self.nh * self.d, h, bias=False)
        self.q_norm = Qwen3NextRMSNorm(self.d)
        self.k_norm = Qwen3NextRMSNorm(self.d)
        self.scaling = self.d ** -0.5
        self.flash = flash

    def forward(self, x, cos, sin, mask):
        b, s, _ = x.shape
        with op("q_proj|input"):
            qg = self.q_proj(x).view(b, s, -1, self.d * 2)
        query, gate = torch.chunk(qg, 2, dim=-1)
        gate = gate.reshape(b, s, -1)
        query = self.q_norm(query.reshape(b, s, -1, self.d), "q_norm").transpose(1, 2)
        with op("k_proj|input"):
            k = self.k_proj(x).view(b, s, -1, self.d)
        key = self.k_norm(k, "k_norm").transpose(1, 2)
        with op("v_proj|input"):
            value = self.v_proj(x).view(b, s, -1, self.d).transpose(1, 2)
        with op("rotary|cos, sin (shared)"):
            query, key = apply_partial_rotary_pos_emb(query, key, cos, sin)
        if self.flash:
            with op("flash attention|q, k, v, out, fp32 lse, rng"):
                if torch.is_autocast_cpu_enabled():
                    dt = torch.get_autocast_cpu_dtype()
                    query, key, value = query.to(dt), key.to(dt), value.to(dt)
                o = FlashAttention.apply(query.transpose(1, 2), key.transpose(1, 2), value.transpose(1, 2), 0.0,
                                         self.scaling)
        else:
            with op("attention scores|query, repeated key"):
                kr = repeat_kv(key, self.nh // self.kv)
                vr = repeat_kv(value, self.nh // self.kv)
                w = torch.matmul(query, kr.transpose(2, 3)) * self.scaling
                w = w + mask
            with op("attention softmax|fp32 output"):
                w = F.softmax(w, dim=-1, dtype=torch.float32)
            with op("attention over values|probabilities cast, repeated value"):
                w = w.to(query.dtype)
                o = torch.matmul(w, vr).transpose(1, 2).contiguous()
        o = o.reshape(b, s, -1).contiguous()
        with op("output gate|attention output, sigmoid(gate)"):
            o = o * torch.sigmoid(gate)
        with op("o_proj|input"):
            return self.o_proj(o)


# ---------------------------------------------------------------------------
# Nemotron-H's Mamba-2 mixer


class Zamba2RMSNormGated(nn.Module):
    """Gate first (x * silu(gate.float())), then RMSNorm over groups of
    group_size channels, weight times the cast back."""

    def __init__(self, d, group_size, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps
        self.group_size = group_size

    def forward(self, x, gate):
        input_dtype = x.dtype
        x = x.to(torch.float32)
        with op("gated norm|fp32 gate (silu input)"):
            sg = F.silu(gate.to(torch.float32))
        with op("gated norm|y, silu(gate) (mul)"):
            x = x * sg
        *prefix, last = x.shape
        xg = x.view(*prefix, last // self.group_size, self.group_size)
        with op("gated norm|gated product (pow, mul)"):
            var = mean_last_dim(xg.pow(2))
        with op("gated norm|rstd per group"):
            xg = xg * torch.rsqrt(var + self.eps)
        x = xg.view(*prefix, last)
        with op("gated norm|normalised, input dtype (weight)"):
            return self.weight * x.to(input_dtype)


def segment_sum(x):
    c = x.size(-1)
    x = x[..., None].expand(*x.size(), c)
    m = torch.tril(torch.ones(c, c, dtype=torch.bool), diagonal=-1)
    with op(ledger.current().op.split("|")[0] + "|segsum masks (bool, chunk^2)"):
        x = x.masked_fill(~m, 0)
        x = torch.cumsum(autocast_fp32(x), dim=-2)
        m = torch.tril(torch.ones(c, c, dtype=torch.bool), diagonal=0)
        return x.masked_fill(~m, -torch.inf)


def pad_seq(t, pad):
    shape = (0, 0, 0, 0, 0, pad, 0, 0) if t.dim() == 4 else (0, 0, 0, pad, 0, 0)
    return F.pad(t, shape, mode="constant", value=0)


def into_chunks(t, pad, chunk):
    t = pad_seq(t, pad)
    if t.dim() == 3:
        return t.reshape(t.shape[0], -1, chunk, t.shape[2])
    return t.reshape(t.shape[0], -1, chunk, t.shape[2], t.shape[3])


class NemotronHMamba2Mixer(nn.Module):
    def __init__(self, c, flash, chunk_scan=False):
        super().__init__()
        h = c["hidden_size"]
        self.chunk_scan = chunk_scan
        self.nh, self.hd, self.N = c["mamba_num_heads"], c["mamba_head_dim"], c["ssm_state_size"]
        self.G, self.K, self.chunk = c["n_groups"], c["conv_kernel"], c["chunk_size"]
        self.I = self.nh * self.hd
        self.conv_dim = self.I + 2 * self.G * self.N
        self.conv1d = nn.Conv1d(self.conv_dim, self.conv_dim, self.K, bias=c.get("use_conv_bias", True),
                                groups=self.conv_dim, padding=self.K - 1)
        self.in_proj = nn.Linear(h, self.I + self.conv_dim + self.nh, bias=c.get("use_bias", False))
        self.dt_bias = nn.Parameter(torch.ones(self.nh))
        self.A_log = nn.Parameter(torch.log(torch.arange(1, self.nh + 1, dtype=torch.float32)))
        self.eps = c.get("layer_norm_epsilon", 1e-5)
        self.norm = Zamba2RMSNormGated(self.I, self.I // self.G, self.eps)
        self.D = nn.Parameter(torch.ones(self.nh))
        self.out_proj = nn.Linear(self.I, h, bias=c.get("use_bias", False))
        self.time_step_min = c.get("time_step_min", 0.001)
        self.flash = flash

    def forward(self, x, attention_mask=None):
        if self.chunk_scan:
            return self.chunk_scan_forward(x, attention_mask)
        if self.flash:
            with op("in_proj|input"):
                zxbcdt = self.in_proj(x)
            A = param_derived(-param_derived(torch.exp(self.A_log.float())))
            with op("mamba_split_conv1d_scan_combined|zxbcdt, out_x, fp32 rstd"):
                return MambaSplitConv1dScanCombinedFn.apply(
                    zxbcdt, self, self.conv1d.weight.squeeze(1), self.conv1d.bias, self.dt_bias, A, self.D,
                    self.norm.weight, self.out_proj.weight, self.out_proj.bias)
        return self.torch_forward(x)

    def chunk_scan_forward(self, x, attention_mask):
        """cuda_kernels_forward's unfused branch, taken in training when the
        batch has padding (input_not_masked False): padding zeroed,
        causal_conv1d_fn, padding zeroed again, mamba_chunk_scan_combined,
        the gated norm in torch (Zamba2RMSNormGated), out_proj."""
        b, s, _ = x.shape
        dtype = x.dtype
        x = (x * attention_mask[:, :, None]).to(dtype)
        with op("in_proj|input"):
            proj = self.in_proj(x)
        A = param_derived(-param_derived(torch.exp(self.A_log.float())))
        gate, xBC, dt = torch.split(proj, [self.I, self.conv_dim, self.nh], dim=-1)
        with op("causal_conv1d_fn|input (x, B, C: a view of in_proj's output)"):
            xBC = causal_conv1d_fn(xBC.transpose(1, 2), self.conv1d.weight.squeeze(1), self.conv1d.bias,
                                   "silu").transpose(1, 2)[:, :s]
        hs, B, C = torch.split(xBC, [self.I, self.G * self.N, self.G * self.N], dim=-1)
        hs = (hs * attention_mask[:, :, None]).to(hs.dtype)  # HF re-reads dtype from the conv output here
        with op("mamba_chunk_scan_combined|out, x, dt, B, C, fp32 dA_cumsum"):
            y = MambaChunkScanCombinedFn.apply(hs.view(b, s, -1, self.hd), dt, A, B.view(b, s, self.G, -1),
                                               C.view(b, s, self.G, -1), self.D, self.dt_bias, self.chunk)
        y = y.view(b, s, -1)
        out = self.norm(y, gate)
        with op("out_proj|input"):
            return self.out_proj(out)

    def torch_forward(self, x):
        b, s, _ = x.shape
        dtype = x.dtype
        with op("in_proj|input"):
            proj = self.in_proj(x)
        gate, hs, dt = proj.split([self.I, self.conv_dim, self.nh], dim=-1)
        hs = hs.transpose(1, 2)
        with op("conv1d|input (x, B, C)"):
            conv = self.conv1d(hs)
        with op("conv1d silu|conv output (s + kernel - 1 wide)"):
            hs = F.silu(conv[..., :s].transpose(1, 2))
        hs, B, C = torch.split(hs, [self.I, self.G * self.N, self.G * self.N], dim=-1)
        A = param_derived(-param_derived(torch.exp(self.A_log.float())))
        with op("dt softplus|dt + dt_bias"):
            dt = F.softplus(autocast_fp32(dt + self.dt_bias))
        with op("dt clamp|softplus output"):
            dt = torch.clamp(dt, self.time_step_min)
        hs = hs.reshape(b, s, -1, self.hd).float()
        B = B.reshape(b, s, -1, self.N).float()
        C = C.reshape(b, s, -1, self.N).float()
        B = repeat_interleave_int(B, self.nh // self.G, 2)
        C = repeat_interleave_int(C, self.nh // self.G, 2)
        pad = (self.chunk - s % self.chunk) % self.chunk
        with op("D_residual|padded x (fp32)"):
            D_residual = self.D[..., None] * pad_seq(hs, pad)
        with op("x * dt|x (fp32), dt"):
            hs = hs * dt[..., None]
        A = A.to(hs.dtype) * dt
        hs, A, B, C = [into_chunks(t, pad, self.chunk) for t in (hs, A, B, C)]
        A = A.permute(0, 3, 1, 2)
        A_cumsum = torch.cumsum(autocast_fp32(A), dim=-1)
        with op("L = exp(segsum)|exp output"):
            L = torch.exp(segment_sum(A))
        with op("G|C, B chunks (fp32, heads repeated)"):
            G = (C[:, :, :, None, :, :] * B[:, :, None, :, :, :]).sum(dim=-1)
        with op("M|G, L"):
            M = (G[..., None] * L.permute(0, 2, 3, 4, 1)[..., None]).sum(dim=-1)
        with op("Y_diag|M, x * dt chunks"):
            Y_diag = (M[..., None] * hs[:, :, None]).sum(3)
        with op("decay_states|exp output"):
            decay_states = torch.exp(autocast_fp32(A_cumsum[:, :, :, -1:] - A_cumsum))
        with op("B * decay|B, decay_states"):
            B_decay = B * decay_states.permute(0, 2, 3, 1)[..., None]
        with op("chunk states|B * decay, x * dt"):
            states = (B_decay.permute(0, 1, 3, 2, 4)[..., None] * hs.permute(0, 1, 3, 2, 4)[..., None, :]) \
                .sum(dim=3).permute(0, 1, 2, 4, 3)
        states = torch.cat([torch.zeros_like(states[:, :1]), states], dim=1)
        with op("decay_chunk|exp output"):
            decay_chunk = torch.exp(segment_sum(F.pad(A_cumsum[:, :, :, -1], (1, 0))))
        with op("state passing|decay_chunk, states"):
            result = (decay_chunk[..., None, None] * states.permute(0, 2, 1, 3, 4)[:, :, None, ...]).sum(dim=2)
        states = result.permute(0, 2, 1, 3, 4)[:, :-1]
        with op("state_decay_out|exp output"):
            state_decay_out = torch.exp(autocast_fp32(A_cumsum))
        with op("C * states|C, passed states"):
            C_times_states = C[..., None, :] * states[:, :, None, ...]
        with op("Y_off|sum(C * states), state_decay_out"):
            Y_off = C_times_states.sum(-1) * state_decay_out.permute(0, 2, 3, 1)[..., None]
        y = (Y_diag + Y_off).reshape(b, -1, self.nh, self.hd)
        y = y + D_residual
        if pad > 0:
            y = y[:, :s, :, :]
        y = y.reshape(b, s, -1)
        out = self.norm(y, gate)
        with op("out_proj|input"):
            return self.out_proj(out.to(dtype))

    def split_scan_math(self, zxbcdt, conv_w, conv_b, dt_bias, A, D, norm_w, out_w, out_b):
        """What the fused split-conv-scan computes (unlabelled, fp32), for the
        stand-in's output and its backward: returns (out_x in the conv
        output's dtype, rstd fp32 [G * b * s], out)."""
        b, s, _ = zxbcdt.shape
        dtype = zxbcdt.dtype
        with torch.autocast("cpu", enabled=False):
            zf = zxbcdt.float()
            z, xBC, dt = zf.split([self.I, self.conv_dim, self.nh], dim=-1)
            xBC = _causal_conv(xBC.transpose(1, 2), conv_w.float(), None if conv_b is None else conv_b.float(),
                               True).transpose(1, 2)
            xs, B, C = torch.split(xBC, [self.I, self.G * self.N, self.G * self.N], dim=-1)
            dt = F.softplus(dt + dt_bias.float())
            y = _ssd_reference(xs.reshape(b, s, self.nh, self.hd), dt, A.float(),
                               B.reshape(b, s, self.G, self.N), C.reshape(b, s, self.G, self.N), D.float())
            out_x = y.to(dtype)
            yg = (y.reshape(b, s, self.I) * F.silu(z)).view(b, s, self.G, -1)
            rstd = torch.rsqrt(yg.pow(2).mean(-1) + self.eps)
            normed = (yg * rstd.unsqueeze(-1)).view(b, s, self.I) * norm_w.float()
            out = F.linear(normed, out_w.float(), None if out_b is None else out_b.float())
        rstd = rstd.permute(2, 0, 1).reshape(-1).contiguous()
        if torch.is_autocast_cpu_enabled():
            out = out.to(torch.get_autocast_cpu_dtype())
        else:
            out = out.to(dtype)
        return out_x, rstd, out


def _ssd_reference(x, dt, A, B, C, D):
    """The SSD recurrence, step by step (fp32): h_t = exp(dt A) h + dt B x,
    y = C h + D x."""
    b, s, nh, hd = x.shape
    g = B.shape[2]
    B = B.repeat_interleave(nh // g, dim=2)
    C = C.repeat_interleave(nh // g, dim=2)
    h = x.new_zeros(b, nh, hd, B.shape[-1])
    ys = []
    for t in range(s):
        h = h * torch.exp(dt[:, t] * A)[..., None, None] + \
            (dt[:, t, :, None, None] * x[:, t, :, :, None]) * B[:, t, :, None, :]
        ys.append((h * C[:, t, :, None, :]).sum(-1) + D[:, None] * x[:, t])
    return torch.stack(ys, dim=1)


# ---------------------------------------------------------------------------
# LFM2's short convolution


class Lfm2ShortConv(nn.Module):
    def __init__(self, c, flash):
        super().__init__()
        h = c["hidden_size"]
        self.L = c["conv_L_cache"]
        bias = c.get("conv_bias", False)
        self.conv = nn.Conv1d(h, h, self.L, groups=h, bias=bias, padding=self.L - 1)
        self.in_proj = nn.Linear(h, 3 * h, bias=bias)
        self.out_proj = nn.Linear(h, h, bias=bias)
        self.flash = flash

    def forward(self, x):
        s = x.shape[1]
        with op("in_proj|input"):
            BCx = self.in_proj(x).transpose(-1, -2)
        B, C, xx = BCx.chunk(3, dim=-2)
        with op("B * x|in_proj output (B, x views)"):
            Bx = B * xx
        if self.flash:
            with op("causal_conv1d_fn|input B * x"):
                conv_out = causal_conv1d_fn(Bx, self.conv.weight.view(self.conv.weight.size(0), -1),
                                            self.conv.bias, None)
        else:
            with op("conv1d|input B * x"):
                conv_out = self.conv(Bx)[..., :s]
        with op("C * conv|conv output (eager: s + L - 1 wide)"):
            y = C * conv_out
        y = y.transpose(-1, -2).contiguous()
        with op("out_proj|input"):
            return self.out_proj(y)


# ---------------------------------------------------------------------------
# DeepSeek-V3.2's lightning indexer


class DeepseekV32Indexer(nn.Module):
    """modular_deepseek_v32.py DeepseekV32Indexer: q = wq_b(q_resid) per
    index head, k = LayerNorm(wk(x)) (one head), half-split rotary on the
    first qk_rope_head_dim dims, relu(q k^T) * softmax_scale weighted by
    weights_proj(x) * n_heads^-0.5 and summed over heads, masked, top-k.
    `train_indexer` False: the released forward under @torch.no_grad()
    (commit 01f8fa55). True: the revision with output_indexer_loss, where
    the indexer runs with grad on detached inputs (fp32 scores with autocast
    off) and indexer_kl_loss distills the attention into it."""

    def __init__(self, c, train_indexer):
        super().__init__()
        h = c["hidden_size"]
        self.H, self.D, self.rope = c["index_n_heads"], c["index_head_dim"], c["qk_rope_head_dim"]
        self.topk = c["index_topk"]
        self.wq_b = nn.Linear(c["q_lora_rank"], self.H * self.D, bias=False)
        self.wk = nn.Linear(h, self.D, bias=False)
        self.k_norm = nn.LayerNorm(self.D, eps=1e-6)
        self.weights_proj = nn.Linear(h, self.H, bias=False)
        self.softmax_scale = self.D ** -0.5
        self.train_indexer = train_indexer

    def forward(self, x, q_resid, cos, sin, mask):
        if not self.train_indexer:
            with torch.no_grad():
                return self.scores(x, q_resid, cos, sin, mask, released=True)[0], None
        return self.scores(x, q_resid, cos, sin, mask, released=False)

    def scores(self, x, q_resid, cos, sin, mask, released):
        b, s, _ = x.shape
        if not released:
            x, q_resid = x.detach(), q_resid.detach()
        with op("wq_b|q_resid"):
            q = self.wq_b(q_resid).view(b, s, self.H, self.D)
        q_rot, q_pass = torch.split(q, [self.rope, self.D - self.rope], dim=-1)
        with op("wk|input"):
            k = self.wk(x)
        with op("k_norm|input (fp32 under autocast), fp32 mean and rstd"):
            # layer_norm is on CUDA autocast's fp32 list: a 16-bit input is cast first
            k = layer_norm(autocast_fp32(k), self.k_norm.weight, self.k_norm.bias, 1e-6).unsqueeze(2)
        k_rot, k_pass = torch.split(k, [self.rope, self.D - self.rope], dim=-1)
        with op("indexer rotary|cos, sin (shared)"):
            cu, su = cos.unsqueeze(2), sin.unsqueeze(2)
            half = self.rope // 2
            rot = lambda t: torch.cat((-t[..., half:], t[..., :half]), dim=-1)  # noqa: E731
            q_rot, k_rot = q_rot * cu + rot(q_rot) * su, k_rot * cu + rot(k_rot) * su
        q = torch.cat([q_rot, q_pass], dim=-1)
        k = torch.cat([k_rot, k_pass], dim=-1).squeeze(2)
        if released:
            scores = torch.matmul(q.float(), k.transpose(-1, -2).float().unsqueeze(1)) * self.softmax_scale
            scores = F.relu(scores)
            weights = self.weights_proj(x.to(self.weights_proj.weight.dtype)).float() * (self.H ** -0.5)
            index = torch.matmul(weights.unsqueeze(-2), scores).squeeze(-2)
        else:
            with torch.autocast("cpu", enabled=False):
                with op("index scores|fp32 q (heads flattened), fp32 k (matmul)"):
                    sc = torch.matmul(q.flatten(1, 2).float(), k.transpose(-1, -2).float()) * self.softmax_scale
                with op("index scores|relu output (fp32, b*s*H*s)"):
                    sc = F.relu(sc).view(b, s, self.H, k.shape[1])
                with op("weights_proj|input (fp32)"):
                    w = self.weights_proj(x.to(self.weights_proj.weight.dtype)).float() * (self.H ** -0.5)
                with op("index scores|weights (fp32), relu output (matmul)"):
                    index = torch.matmul(w.unsqueeze(-2), sc).squeeze(-2)
        index = index + mask
        topk = min(self.topk, index.shape[-1])
        idx = index.topk(topk, dim=-1).indices.to(torch.int32)  # its TopkBackward dies with the values
        if released:
            return idx, None
        with op("index scores|clamp_min input (fp32, b*s*s)"):
            kept = index.clamp_min(torch.finfo(torch.float32).min)
        return idx, kept


def indexer_kl_loss(scores, target_probs, candidates, query_mask):
    """indexer_kl_loss's graph on the indexer side: gather the candidates'
    scores, fp32 log-softmax, KL against the detached target (the mean
    attention over the candidates, computed in no_grad), masked sum."""
    with op("indexer loss|gather index (int64, b*s*topk)"):
        sc = scores.gather(-1, candidates.long())
    with op("indexer loss|log_softmax output (fp32)"):
        ls = F.log_softmax(sc, dim=-1, dtype=torch.float32)
    with op("indexer loss|kl_div input, target (fp32)"):
        kl = F.kl_div(ls, target_probs, reduction="none").sum(dim=-1)
    with op("indexer loss|query mask (bool)"):
        return kl.masked_fill(~query_mask, 0.0).sum()
