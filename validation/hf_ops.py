"""Building blocks of the Hugging Face eager modeling files, op for op: norms,
GPT-2's Conv1D, activations, rotary embeddings, repeat_kv, PEFT-style LoRA
linears and a flash-attention stand-in that saves what flash_attn's
FlashAttnFunc saves. Used by hf_blocks.py."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

import saved_tensor_ledger as ledger
from saved_tensor_ledger import autocast_fp32, dropout, layer_norm, mean_last_dim, op


# ---------------------------------------------------------------------------
# Flash attention: what flash_attn's FlashAttnFunc keeps, nothing more


class FlashAttention(torch.autograd.Function):
    """flash_attn.flash_attn_interface.FlashAttnFunc.forward saves
    (q, k, v, out_padded, softmax_lse, rng_state); softmax_lse is fp32
    b x H x s; rng_state two int64. k and v keep their KV heads (no repeat).
    Backward recomputes attention (as the kernel does, tile by tile)."""

    @staticmethod
    def forward(ctx, q, k, v, dropout_p, scale):
        # q: (b, s, H, d); k, v: (b, s, KV, d)
        b, s, nh, d = q.shape
        rep = nh // k.shape[2]
        seed = int(torch.randint(0, 2**31 - 1, (1,)).item())
        # The kernel works in fp32 and keeps an fp32 logsumexp whatever autocast says.
        with torch.no_grad(), torch.autocast("cpu", enabled=False):
            out, lse = _reference_attention(q, k, v, rep, dropout_p, scale, seed)
        rng_state = torch.tensor([seed, 0], dtype=torch.int64)
        ctx.save_for_backward(q, k, v, out, lse, rng_state)
        ctx.dropout_p, ctx.scale, ctx.rep = dropout_p, scale, rep
        return out

    @staticmethod
    def backward(ctx, dout):
        q, k, v, out, lse, rng_state = ctx.saved_tensors
        with torch.enable_grad(), torch.autocast("cpu", enabled=False):
            qq, kk, vv = (t.detach().requires_grad_() for t in (q, k, v))
            o, _ = _reference_attention(qq, kk, vv, ctx.rep, ctx.dropout_p, ctx.scale, int(rng_state[0]))
            dq, dk, dv = torch.autograd.grad(o, (qq, kk, vv), dout)
        return dq, dk, dv, None, None


def _reference_attention(q, k, v, rep, dropout_p, scale, seed):
    qh = q.transpose(1, 2).float()
    kh = k.transpose(1, 2).float().repeat_interleave(rep, dim=1)
    vh = v.transpose(1, 2).float().repeat_interleave(rep, dim=1)
    s = q.shape[1]
    scores = torch.matmul(qh, kh.transpose(2, 3)) * scale
    causal = torch.ones(s, s, dtype=torch.bool).tril()
    scores = scores.masked_fill(~causal, float("-inf"))
    lse = torch.logsumexp(scores, dim=-1)
    probs = torch.exp(scores - lse.unsqueeze(-1))
    if dropout_p > 0:
        gen = torch.Generator().manual_seed(seed)
        keep = torch.rand(probs.shape, generator=gen) >= dropout_p
        probs = probs * keep / (1.0 - dropout_p)
    out = torch.matmul(probs, vh).transpose(1, 2).to(q.dtype).contiguous()
    return out, lse


# ---------------------------------------------------------------------------
# Building blocks as the HF eager modeling files write them


class LoraLinear(nn.Module):
    """PEFT's lora.Linear: base(x) + lora_B(lora_A(dropout(x))) * scaling."""

    def __init__(self, base, rank, dropout_p):
        super().__init__()
        self.base = base
        self.lora_A = nn.Linear(base.in_features, rank, bias=False)
        self.lora_B = nn.Linear(rank, base.out_features, bias=False)
        nn.init.normal_(self.lora_B.weight, std=0.02)
        self.dropout_p = dropout_p
        self.scaling = 2.0
        self.to(base.weight.dtype)

    def forward(self, x):
        result = self.base(x)
        with op(ledger.current().op + " lora"):
            return result + self.lora_B(self.lora_A(dropout(x, self.dropout_p))) * self.scaling


class LlamaRMSNorm(nn.Module):
    def __init__(self, h, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(h))
        self.eps = eps

    def forward(self, x):
        input_dtype = x.dtype
        x = x.to(torch.float32)
        variance = mean_last_dim(x.pow(2))
        x = x * torch.rsqrt(variance + self.eps)
        return self.weight * x.to(input_dtype)


class Olmo2RMSNorm(LlamaRMSNorm):
    """modeling_olmo2 Olmo2RMSNorm: the weight multiplies in fp32, before the
    cast back to the input dtype."""

    def forward(self, x):
        input_dtype = x.dtype
        x = x.to(torch.float32)
        variance = mean_last_dim(x.pow(2))
        x = x * torch.rsqrt(variance + self.eps)
        return (self.weight * x).to(input_dtype)


class GemmaRMSNorm(nn.Module):
    def __init__(self, h, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(h))
        self.eps = eps

    def forward(self, x):
        out = x.float()
        out = out * torch.rsqrt(mean_last_dim(out.pow(2)) + self.eps)
        out = out * ledger.current().parameter_derived(1.0 + self.weight.float())
        return out.type_as(x)


class GPT2LayerNorm(nn.LayerNorm):
    def forward(self, x):
        return layer_norm(x, self.weight, self.bias, self.eps)


class Conv1D(nn.Module):
    """transformers.pytorch_utils.Conv1D: addmm(bias, x.view(-1, nx), weight)."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.randn(nx, nf) * 0.02)
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


def activation(name):
    if name in ("silu", "swish"):
        return F.silu
    if name == "gelu":
        return F.gelu
    if name == "gelu_pytorch_tanh":
        return lambda x: F.gelu(x, approximate="tanh")
    if name == "gelu_new":  # transformers.activations.NewGELUActivation, op by op
        return lambda x: 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) *
                                                    (x + 0.044715 * torch.pow(autocast_fp32(x), 3.0))))
    raise ValueError(name)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin):
    cos = cos.unsqueeze(1)
    sin = sin.unsqueeze(1)
    return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)


def repeat_kv(x, n_rep):
    b, kv, s, d = x.shape
    if n_rep == 1:
        return x
    return x[:, :, None, :, :].expand(b, kv, n_rep, s, d).reshape(b, kv * n_rep, s, d)


def apply_partial_rotary_pos_emb(q, k, cos, sin):
    """modeling_glm4_moe apply_rotary_pos_emb: rotate the first cos.shape[-1]
    dims of each head (partial_rotary_factor), pass the rest, concatenate.
    With the whole head rotated it is Llama's."""
    rotary_dim = cos.shape[-1]
    if rotary_dim == q.shape[-1]:
        return apply_rotary_pos_emb(q, k, cos, sin)
    q_rot, q_pass = q[..., :rotary_dim], q[..., rotary_dim:]
    k_rot, k_pass = k[..., :rotary_dim], k[..., rotary_dim:]
    q_rot, k_rot = apply_rotary_pos_emb(q_rot, k_rot, cos, sin)
    return torch.cat([q_rot, q_pass], dim=-1), torch.cat([k_rot, k_pass], dim=-1)


def apply_rotary_pos_emb_halves(q, k, cos, sin):
    """modeling_gpt_oss apply_rotary_pos_emb / _apply_rotary_emb: cos and sin
    hold each frequency once (head_dim / 2 wide); the two halves of the head
    rotate against each other."""
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)

    def rotate(x):
        first_half, second_half = torch.chunk(x, 2, dim=-1)
        first_ = first_half * cos - second_half * sin
        second_ = second_half * cos + first_half * sin
        return torch.cat((first_, second_), dim=-1)

    return rotate(q), rotate(k)


def apply_rotary_pos_emb_interleave(q, k, cos, sin):
    """modeling_deepseek_v3: de-interleave the rope dims, then rotate."""
    cos = cos.unsqueeze(1)
    sin = sin.unsqueeze(1)
    b, h, s, d = q.shape
    q = q.view(b, h, s, d // 2, 2).transpose(4, 3).reshape(b, h, s, d)
    b, h, s, d = k.shape
    k = k.view(b, h, s, d // 2, 2).transpose(4, 3).reshape(b, h, s, d)
    return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)
