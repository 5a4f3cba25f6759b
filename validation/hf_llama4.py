"""Llama 4's text blocks, op for op as modeling_llama4.py writes them
(transformers commit 000c33fd, read through the code index; configuration
defaults from configuration_llama4.py at the same commit): the attention with
its complex fp32 rotary, the weightless L2 q/k norm on rotary layers, the
temperature scaling of the query on NoPE layers, and Llama4TextMoe, which runs
every expert on every token. Used by hf_blocks.py, chosen by the traits of
the model trainmem's importer made ("qk_norm": "l2", "complex_rotary",
"no_rope_layer_interval", the MoE "router")."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from saved_tensor_ledger import autocast_fp32, dropout, mean_last_dim, op

from hf_moe import GatedMLP
from hf_ops import FlashAttention, activation, repeat_kv


def rotary_table(b, s, d, theta=10000.0):
    """Llama4TextRotaryEmbedding.forward: freqs in fp32 (autocast off), then
    torch.polar(ones, freqs): one complex64 table of d / 2 values per token.
    Batch rows as the other families' tables here (hf_blocks.CausalLM.rotary)."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    pos = torch.arange(s).float()[None, :].expand(b, s)
    freqs = (inv_freq[None, :, None].expand(b, -1, 1) @ pos[:, None, :]).transpose(1, 2)
    return torch.polar(torch.ones_like(freqs), freqs)


def apply_rotary_emb(xq, xk, freqs_cis):
    """modeling_llama4.apply_rotary_emb: complex products on fp32 copies,
    cast back to the inputs' dtype."""
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    xq_out = torch.view_as_real(xq_ * freqs_cis[:, :, None, :]).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis[:, :, None, :]).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def l2_norm(x, eps=1e-5):
    """Llama4TextL2Norm: no weight; the norm on an fp32 copy, cast back. The
    mean as torch >= 2 saves it (nothing), as the other norms here."""
    xf = x.float()
    return (xf * torch.rsqrt(mean_last_dim(xf.pow(2)) + eps)).type_as(x)


def chunked_causal_mask(s, chunk, dtype):
    """create_chunked_causal_mask's eager form: a query sees the keys at or
    before it in its own chunk of attention_chunk_size positions."""
    i = torch.arange(s)[:, None]
    j = torch.arange(s)[None, :]
    allowed = (j <= i) & (i // chunk == j // chunk)
    return torch.zeros((s, s), dtype=dtype).masked_fill(~allowed, torch.finfo(dtype).min)


class Llama4TextAttention(nn.Module):
    def __init__(self, c, index):
        super().__init__()
        h, nh, kv, d = c["hidden_size"], c["num_heads"], c["num_kv_heads"], c["head_dim"]
        self.nh, self.kv, self.d = nh, kv, d
        interval = c["no_rope_layer_interval"]
        self.use_rope = interval <= 0 or (index + 1) % interval != 0
        self.q_proj = nn.Linear(h, nh * d, bias=False)  # Llama4TextConfig forces attention_bias False
        self.k_proj = nn.Linear(h, kv * d, bias=False)
        self.v_proj = nn.Linear(h, kv * d, bias=False)
        self.o_proj = nn.Linear(nh * d, h, bias=False)
        self.scaling = d ** -0.5
        self.dropout = c["attention_dropout"]
        self.flash = c["attention"] == "flash"
        self.qk_norm = c["qk_norm"] == "l2" and self.use_rope
        config = c["config"]
        self.temperature = c["temperature_tuning"] and config.get("attn_temperature_tuning", True)
        self.floor_scale = config.get("floor_scale", 8192)
        self.attn_scale = config.get("attn_scale", 0.1)

    def forward(self, x, freqs_cis, _unused, mask):
        b, s, _ = x.shape
        with op("q_proj"):
            q = self.q_proj(x).view(b, s, -1, self.d)
        with op("k_proj"):
            k = self.k_proj(x).view(b, s, -1, self.d)
        with op("v_proj"):
            v = self.v_proj(x).view(b, s, -1, self.d).transpose(1, 2)
        if self.use_rope:
            with op("rotary"):
                q, k = apply_rotary_emb(q, k, freqs_cis)
        if self.qk_norm:
            with op("q_norm (L2)"):
                q = l2_norm(q)
            with op("k_norm (L2)"):
                k = l2_norm(k)
        if self.temperature and not self.use_rope:
            with op("attention temperature"):
                cache_position = torch.arange(s)
                scales = torch.log1p(torch.floor((cache_position.float() + 1.0) / self.floor_scale)) * self.attn_scale + 1.0
                scales = scales.view((1, s, 1, 1)).expand((b, s, 1, 1))
                q = (q * scales).to(q.dtype)
        q, k = q.transpose(1, 2), k.transpose(1, 2)
        if self.flash:
            with op("flash attention"):
                if torch.is_autocast_cpu_enabled():
                    dt = torch.get_autocast_cpu_dtype()
                    q, k, v = q.to(dt), k.to(dt), v.to(dt)
                o = FlashAttention.apply(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                         self.dropout, self.scaling)
        else:
            # modeling_llama4.eager_attention_forward: softmax without an fp32
            # upcast (CUDA autocast still runs it in fp32: autocast_fp32).
            with op("attention scores"):
                k = repeat_kv(k, self.nh // self.kv)
                v = repeat_kv(v, self.nh // self.kv)
                w = torch.matmul(q, k.transpose(2, 3)) * self.scaling
                w = w + mask
            with op("attention softmax"):
                w = F.softmax(autocast_fp32(w), dim=-1)
            with op("attention dropout"):
                w = dropout(w, self.dropout)
            with op("attention over values"):
                o = torch.matmul(w, v)
                o = o.transpose(1, 2).contiguous()
        o = o.reshape(b, s, -1).contiguous()
        with op("o_proj"):
            return self.o_proj(o)


class Llama4TextMoe(nn.Module):
    """Llama4Router (top-k logits, the rest -inf, sigmoid on an fp32 copy),
    Llama4TextExperts (3-D parameters, one bmm per projection over every
    expert) and the shared expert (Llama4TextMLP)."""

    def __init__(self, c):
        super().__init__()
        h, moe = c["hidden_size"], c["moe"]
        E, f = moe["num_experts"], moe["expert_ffn"]
        self.h, self.E, self.top_k = h, E, moe["experts_per_token"]
        self.router = nn.Linear(h, E, bias=False)
        self.gate_up_proj = nn.Parameter(torch.randn(E, h, 2 * f) * 0.05)
        self.down_proj = nn.Parameter(torch.randn(E, f, h) * 0.05)
        self.act = activation(c["hidden_act"])
        self.shared_expert = GatedMLP(h, moe["shared_expert_ffn"], c["hidden_act"])

    def forward(self, x):
        b, s, h = x.shape
        x = x.reshape(-1, self.h)
        with op("router"):
            logits = self.router(x)
            top_value, top_index = torch.topk(logits, self.top_k, dim=1)
            scores = torch.full_like(logits, float("-inf")).scatter_(1, top_index, top_value)
            scores = torch.sigmoid(scores.float()).to(scores.dtype)
        with op("expert dispatch"):
            routed_in = x.repeat(scores.shape[1], 1)
            routed_in = routed_in * scores.transpose(0, 1).reshape(-1, 1)
        with op("expert gate_up bmm"):
            hs = routed_in.view(self.E, -1, self.h)
            gate_up = torch.bmm(hs, self.gate_up_proj)
            gate, up = gate_up.chunk(2, dim=-1)
        with op("expert act_fn"):
            a = self.act(gate)
        with op("expert act_fn * up"):
            p = up * a
        with op("expert down_proj bmm"):
            routed_out = torch.bmm(p, self.down_proj).view(-1, self.h)
        out = self.shared_expert(x)
        with op("expert combine"):
            out.add_(routed_out.reshape(self.E, -1, routed_out.shape[-1]).sum(dim=0))
        return out.view(b, s, h)
