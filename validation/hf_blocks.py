"""Small decoder blocks written op for op as the Hugging Face eager modeling
files write them (modeling_llama, _mistral, _qwen2, _qwen3, _olmo2, _gemma,
_gemma2, _gpt2, _mixtral, _deepseek_v3), with PEFT-style LoRA adapters and a
flash-attention stand-in that saves what flash_attn's FlashAttnFunc saves.

Every block is built from the model trainmem's importer produced (the "model"
object of `trainmem-cli estimate --format json`: sizes, the family row's
traits, which layers have experts), never from a second reading of the
config.json: `c` is that object plus the case's run settings ("attention",
LoRA) and, under "config", the config.json itself for the numeric constants
the importer does not model (soft-capping values, query_pre_attn_scalar,
DeepSeek's group routing)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

import saved_tensor_ledger as ledger
from saved_tensor_ledger import autocast_fp32, dropout, layer_norm, mean_last_dim, op

from hf_ops import (Conv1D, FlashAttention, GemmaRMSNorm, GPT2LayerNorm, LlamaRMSNorm,  # noqa: F401
                    LoraLinear, Olmo2RMSNorm, activation, apply_rotary_pos_emb, repeat_kv, rotate_half)


def rms_norm_class(c):
    """The RMSNorm of the modeling file of the family the importer read the
    model as: Gemma's (1 + weight) in fp32, OLMo 2's weight in fp32, else
    Llama's (cast back, then weight)."""
    return {"gemma": GemmaRMSNorm, "gemma2": GemmaRMSNorm, "gemma3_text": GemmaRMSNorm,
            "olmo2": Olmo2RMSNorm, "gpt_oss": Olmo2RMSNorm}.get(c["read_as"], LlamaRMSNorm)


def layer_types(c):
    """Which layers slide (Gemma 2/3, gpt-oss): the config.json's layer_types,
    checked against the count the importer made of it."""
    types = c["config"].get("layer_types", ["full_attention"] * c["num_layers"])
    sliding = sum(t == "sliding_attention" for t in types)
    if sliding != c.get("sliding_window_layers", 0):
        raise ValueError(f"layer_types has {sliding} sliding layers, the importer {c.get('sliding_window_layers')}")
    return types


class LlamaAttention(nn.Module):
    """modeling_llama LlamaAttention + eager_attention_forward (also Mistral,
    Qwen2 with q/k/v biases, Qwen3 with per-head q/k RMSNorm, OLMo 2 with
    q/k RMSNorm over the whole projections (modeling_olmo2 Olmo2Attention,
    transformers 4.47), Gemma, Gemma-2 with tanh soft-capping of the logits,
    Mixtral)."""

    def __init__(self, c, index):
        super().__init__()
        h, nh, kv, d = c["hidden_size"], c["num_heads"], c["num_kv_heads"], c["head_dim"]
        # SmolLM3Attention: no rotary embedding where no_rope_layers[layer] is 0 (NoPE).
        self.use_rope = c["config"].get("no_rope_layers", [1] * (index + 1))[index] != 0
        bias = c["attention_qkv_bias"]
        self.nh, self.kv, self.d = nh, kv, d
        self.q_proj = nn.Linear(h, nh * d, bias=bias)
        self.k_proj = nn.Linear(h, kv * d, bias=bias)
        self.v_proj = nn.Linear(h, kv * d, bias=bias)
        self.o_proj = nn.Linear(nh * d, h, bias=c["attention_output_bias"])
        # Gemma-2 scales by query_pre_attn_scalar; the values do not change what is saved.
        self.scaling = c["config"].get("query_pre_attn_scalar", d) ** -0.5
        self.scaling = c["config"].get("attention_multiplier", self.scaling)  # Granite
        self.dropout = c["attention_dropout"]
        self.flash = c["attention"] == "flash"
        self.softcap = c["config"].get("attn_logit_softcapping", 50.0) if c["attention_softcap"] else None
        self.qk_norm = c["qk_norm"] == "per_head"
        if self.qk_norm:
            self.q_norm = rms_norm_class(c)(d)
            self.k_norm = rms_norm_class(c)(d)
        # GptOssAttention: one learned sink logit per query head.
        self.sinks = nn.Parameter(torch.randn(nh) * 0.5) if c.get("attention_sinks") else None
        self.rotary_halves = c.get("rotary_half_table", False)
        self.qk_norm_projection = c["qk_norm"] == "projection"
        if self.qk_norm_projection:
            self.q_norm = rms_norm_class(c)(nh * d)
            self.k_norm = rms_norm_class(c)(kv * d)

    def forward(self, x, cos, sin, mask):
        b, s, _ = x.shape
        if self.qk_norm_projection:
            with op("q_proj"):
                q = self.q_proj(x)
            with op("q_norm"):
                q = self.q_norm(q).view(b, s, -1, self.d)
            with op("k_proj"):
                k = self.k_proj(x)
            with op("k_norm"):
                k = self.k_norm(k).view(b, s, -1, self.d)
        else:
            with op("q_proj"):
                q = self.q_proj(x).view(b, s, -1, self.d)
            with op("k_proj"):
                k = self.k_proj(x).view(b, s, -1, self.d)
        if self.qk_norm:
            with op("q_norm"):
                q = self.q_norm(q)
            with op("k_norm"):
                k = self.k_norm(k)
        q, k = q.transpose(1, 2), k.transpose(1, 2)
        with op("v_proj"):
            v = self.v_proj(x).view(b, s, -1, self.d).transpose(1, 2)
        if self.use_rope:
            with op("rotary"):
                if self.rotary_halves:
                    q, k = apply_rotary_pos_emb_halves(q, k, cos, sin)
                else:
                    q, k = apply_partial_rotary_pos_emb(q, k, cos, sin)
        if self.flash:
            with op("flash attention"):
                if torch.is_autocast_cpu_enabled():
                    # transformers' _flash_attention_forward casts fp32 inputs
                    # (upcast by the fp32 rotary tables) to the autocast dtype.
                    dt = torch.get_autocast_cpu_dtype()
                    q, k, v = q.to(dt), k.to(dt), v.to(dt)
                o = FlashAttention.apply(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                         self.dropout, self.scaling)
        else:
            with op("attention scores"):
                k = repeat_kv(k, self.nh // self.kv)
                v = repeat_kv(v, self.nh // self.kv)
                w = torch.matmul(q, k.transpose(2, 3)) * self.scaling
            if self.softcap:
                with op("attention softcap"):
                    w = w / self.softcap
                    w = torch.tanh(w)
                    w = w * self.softcap
            with op("attention scores"):
                w = w + mask
            if self.sinks is not None:
                # modeling_gpt_oss eager_attention_forward: the sink column joins
                # the logits, the row max is subtracted, softmax in their dtype,
                # and the sink's column is dropped again.
                with op("attention sinks"):
                    sinks = self.sinks.reshape(1, -1, 1, 1).expand(b, -1, s, -1)
                    combined = torch.cat([w, sinks], dim=-1)
                    combined = combined - combined.max(dim=-1, keepdim=True).values
                with op("attention softmax"):
                    probs = F.softmax(combined, dim=-1, dtype=combined.dtype)
                    w = probs[..., :-1]
            else:
                with op("attention softmax"):
                    w = F.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
            with op("attention dropout"):
                w = dropout(w, self.dropout)
            with op("attention over values"):
                o = torch.matmul(w, v)
                o = o.transpose(1, 2).contiguous()
        o = o.reshape(b, s, -1).contiguous()
        with op("o_proj"):
            return self.o_proj(o)


class GatedMLP(nn.Module):
    def __init__(self, h, f, act):
        super().__init__()
        self.gate_proj = nn.Linear(h, f, bias=False)
        self.up_proj = nn.Linear(h, f, bias=False)
        self.down_proj = nn.Linear(f, h, bias=False)
        self.act = activation(act)

    def forward(self, x):
        with op("gate_proj"):
            g = self.gate_proj(x)
        with op("up_proj"):
            u = self.up_proj(x)
        with op("mlp act_fn"):
            a = self.act(g)
        with op("mlp act * up"):
            p = a * u
        with op("down_proj"):
            return self.down_proj(p)


class MixtralSparseMoeBlock(nn.Module):
    """modeling_mixtral MixtralSparseMoeBlock: a loop over the experts (also
    modeling_qwen3_moe Qwen3MoeSparseMoeBlock with norm_topk_prob true, whose
    experts are named gate_proj / up_proj / down_proj: the same ops)."""

    def __init__(self, c):
        super().__init__()
        h, moe = c["hidden_size"], c["moe"]
        self.E, self.top_k = moe["num_experts"], moe["experts_per_token"]
        self.gate = nn.Linear(h, self.E, bias=False)
        self.experts = nn.ModuleList([GatedMLP(h, moe["expert_ffn"], c["hidden_act"]) for _ in range(self.E)])

    def forward(self, x):
        b, s, h = x.shape
        x = x.view(-1, h)
        with op("router"):
            router_logits = self.gate(x)
            rw = F.softmax(router_logits, dim=1, dtype=torch.float)
            rw, selected = torch.topk(rw, self.top_k, dim=-1)
            rw /= rw.sum(dim=-1, keepdim=True)
            rw = rw.to(x.dtype)
        final = torch.zeros((b * s, h), dtype=x.dtype)
        expert_mask = F.one_hot(selected, num_classes=self.E).permute(2, 1, 0)
        for e in range(self.E):
            idx, top_x = torch.where(expert_mask[e])
            if top_x.numel() == 0:
                continue
            with op("expert tokens"):
                current = x[None, top_x].reshape(-1, h)
            y = self.experts[e](current)
            with op("expert output * routing weight"):
                y = y * rw[top_x, idx, None]
                final.index_add_(0, top_x, y.to(x.dtype))
        return final.reshape(b, s, h)


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


class GptOssMoE(nn.Module):
    """modeling_gpt_oss GptOssMLP: GptOssTopKRouter (a Linear with bias, top-k
    of the logits, softmax over the k) and GptOssExperts' training loop over
    the experts hit, each a clamped SwiGLU on interleaved gate/up columns
    with biases (transformers commit 6edf5b31)."""

    def __init__(self, c):
        super().__init__()
        h, moe = c["hidden_size"], c["moe"]
        E, f = moe["num_experts"], moe["expert_ffn"]
        self.E, self.top_k = E, moe["experts_per_token"]
        self.router_weight = nn.Parameter(torch.randn(E, h) * 0.02)
        self.router_bias = nn.Parameter(torch.randn(E) * 0.02)
        self.gate_up_proj = nn.Parameter(torch.randn(E, h, 2 * f) * 0.05)
        self.gate_up_proj_bias = nn.Parameter(torch.randn(E, 2 * f) * 0.05)
        self.down_proj = nn.Parameter(torch.randn(E, f, h) * 0.05)
        self.down_proj_bias = nn.Parameter(torch.randn(E, h) * 0.05)
        self.alpha = 1.702
        self.limit = c["config"].get("swiglu_limit", 7.0)

    @staticmethod
    def weight_slice(weight, expert_idx):
        """One expert's matrix. Under autocast the matmul keeps a 16-bit cast
        of this slice, which is computed from a parameter alone: a weight
        copy, counted with the weights (made here so the ledger knows it)."""
        w = weight[expert_idx]
        if torch.is_autocast_cpu_enabled():
            w = ledger.current().parameter_derived(w.to(torch.get_autocast_cpu_dtype()))
        return w

    def forward(self, x):
        b, s, h = x.shape
        x = x.reshape(-1, h)
        with op("router"):
            logits = F.linear(x, self.router_weight, self.router_bias)
            top_value, router_indices = torch.topk(logits, self.top_k, dim=-1)
            top_value = F.softmax(top_value, dim=1, dtype=top_value.dtype)
            scores = torch.zeros_like(logits).scatter_(1, router_indices, top_value)
        next_states = torch.zeros_like(x, dtype=x.dtype)
        with torch.no_grad():
            expert_mask = F.one_hot(router_indices, num_classes=self.E + 1).permute(2, 1, 0)
            expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()
        for expert_idx in expert_hit[:]:
            expert_idx = expert_idx[0]
            if expert_idx == self.E:
                continue
            with torch.no_grad():
                _, token_idx = torch.where(expert_mask[expert_idx])
            with op("expert tokens"):
                current = x[token_idx]
            with op("expert gate_up_proj"):
                gate_up = current @ self.weight_slice(self.gate_up_proj, expert_idx) + self.gate_up_proj_bias[expert_idx]
            with op("expert clamped SwiGLU"):
                gate, up = gate_up[..., ::2], gate_up[..., 1::2]
                gate = gate.clamp(min=None, max=self.limit)
                up = up.clamp(min=-self.limit, max=self.limit)
                glu = gate * torch.sigmoid(gate * self.alpha)
                gated = (up + 1) * glu
            with op("expert down_proj"):
                out = gated @ self.weight_slice(self.down_proj, expert_idx) + self.down_proj_bias[expert_idx]
            with op("expert output * routing weight"):
                weighted = out * scores[token_idx, expert_idx, None]
                next_states.index_add_(0, token_idx, weighted.to(x.dtype))
        return next_states.view(b, s, h)


def apply_rotary_pos_emb_interleave(q, k, cos, sin):
    """modeling_deepseek_v3: de-interleave the rope dims, then rotate."""
    cos = cos.unsqueeze(1)
    sin = sin.unsqueeze(1)
    b, h, s, d = q.shape
    q = q.view(b, h, s, d // 2, 2).transpose(4, 3).reshape(b, h, s, d)
    b, h, s, d = k.shape
    k = k.view(b, h, s, d // 2, 2).transpose(4, 3).reshape(b, h, s, d)
    return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)


class DeepseekV3Attention(nn.Module):
    """modeling_deepseek_v3 DeepseekV3Attention: multi-head latent attention."""

    def __init__(self, c):
        super().__init__()
        h, self.nh, mla = c["hidden_size"], c["num_heads"], c["mla"]
        self.q_lora, self.kv_lora = mla["q_lora_rank"], mla["kv_lora_rank"]
        self.nope, self.rope, self.vd = mla["qk_nope_head_dim"], mla["qk_rope_head_dim"], mla["v_head_dim"]
        self.qk = self.nope + self.rope
        if self.q_lora:
            self.q_a_proj = nn.Linear(h, self.q_lora, bias=False)
            self.q_a_layernorm = LlamaRMSNorm(self.q_lora)
            self.q_b_proj = nn.Linear(self.q_lora, self.nh * self.qk, bias=False)
        else:
            self.q_proj = nn.Linear(h, self.nh * self.qk, bias=False)
        self.kv_a_proj_with_mqa = nn.Linear(h, self.kv_lora + self.rope, bias=False)
        self.kv_a_layernorm = LlamaRMSNorm(self.kv_lora)
        self.kv_b_proj = nn.Linear(self.kv_lora, self.nh * (self.nope + self.vd), bias=False)
        self.o_proj = nn.Linear(self.nh * self.vd, h, bias=False)
        self.scaling = self.qk ** -0.5
        self.dropout = c["attention_dropout"]
        self.flash = c["attention"] == "flash"

    def forward(self, x, cos, sin, mask):
        b, s, _ = x.shape
        if self.q_lora:
            with op("q_a_proj"):
                q = self.q_a_proj(x)
            with op("q_a_layernorm"):
                q = self.q_a_layernorm(q)
            with op("q_b_proj"):
                q = self.q_b_proj(q)
        else:
            with op("q_proj"):
                q = self.q_proj(x)
        q = q.view(b, s, -1, self.qk).transpose(1, 2)
        q_pass, q_rot = torch.split(q, [self.nope, self.rope], dim=-1)
        with op("kv_a_proj_with_mqa"):
            compressed = self.kv_a_proj_with_mqa(x)
        k_pass, k_rot = torch.split(compressed, [self.kv_lora, self.rope], dim=-1)
        with op("kv_a_layernorm"):
            k_pass = self.kv_a_layernorm(k_pass)
        with op("kv_b_proj"):
            k_pass = self.kv_b_proj(k_pass).view(b, s, -1, self.nope + self.vd).transpose(1, 2)
        k_pass, v = torch.split(k_pass, [self.nope, self.vd], dim=-1)
        k_rot = k_rot.view(b, 1, s, self.rope)
        with op("rotary"):
            q_rot, k_rot = apply_rotary_pos_emb_interleave(q_rot, k_rot, cos, sin)
        k_rot = k_rot.expand(*k_pass.shape[:-1], -1)
        with op("query / key concatenation"):
            q = torch.cat((q_pass, q_rot), dim=-1)
            k = torch.cat((k_pass, k_rot), dim=-1)
        if self.flash:
            with op("flash attention"):
                v = F.pad(v, [0, self.qk - self.vd])
                if torch.is_autocast_cpu_enabled():
                    dt = torch.get_autocast_cpu_dtype()
                    q, k, v = q.to(dt), k.to(dt), v.to(dt)
                o = FlashAttention.apply(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                         self.dropout, self.scaling)
                o = o[:, :, :, : self.vd]
        else:
            with op("attention scores"):
                w = torch.matmul(q, k.transpose(2, 3)) * self.scaling
                w = w + mask
            with op("attention softmax"):
                w = F.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
            with op("attention dropout"):
                w = dropout(w, self.dropout)
            with op("attention over values"):
                o = torch.matmul(w, v).transpose(1, 2).contiguous()
        o = o.reshape(b, s, -1).contiguous()
        with op("o_proj"):
            return self.o_proj(o)


class DeepseekV3MoE(nn.Module):
    """modeling_deepseek_v3 DeepseekV3TopkRouter + DeepseekV3MoE: an fp32
    sigmoid router with group-limited top-k, a loop over the experts and a
    shared expert."""

    def __init__(self, c):
        super().__init__()
        h, moe, config = c["hidden_size"], c["moe"], c["config"]
        self.E, self.top_k = moe["num_experts"], moe["experts_per_token"]
        self.n_group, self.topk_group = config.get("n_group", 1), config.get("topk_group", 1)
        self.scale = config.get("routed_scaling_factor", 1.0)
        self.weight = nn.Parameter(torch.randn(self.E, h) * 0.02)
        self.register_buffer("e_score_correction_bias", torch.zeros(self.E))
        f = moe["expert_ffn"]
        self.experts = nn.ModuleList([GatedMLP(h, f, c["hidden_act"]) for _ in range(self.E)])
        self.shared_experts = GatedMLP(h, moe["shared_expert_ffn"], c["hidden_act"])

    @torch.no_grad()
    def topk_indices(self, scores):
        choice = scores.view(-1, self.E) + self.e_score_correction_bias.unsqueeze(0)
        group_scores = choice.view(-1, self.n_group, self.E // self.n_group).topk(2, dim=-1)[0].sum(dim=-1)
        group_idx = torch.topk(group_scores, k=self.topk_group, dim=-1, sorted=False)[1]
        group_mask = torch.zeros_like(group_scores)
        group_mask.scatter_(1, group_idx, 1)
        score_mask = group_mask.unsqueeze(-1).expand(-1, self.n_group, self.E // self.n_group).reshape(-1, self.E)
        choice = choice.masked_fill(~score_mask.bool(), 0.0)
        return torch.topk(choice, k=self.top_k, dim=-1, sorted=False)[1]

    def forward(self, x):
        residual = x
        shape = x.shape
        x = x.view(-1, shape[-1])
        with op("router"):
            logits = F.linear(x.type(torch.float32), ledger.current().parameter_derived(self.weight.type(torch.float32)))
            scores = logits.sigmoid()
            idx = self.topk_indices(scores)
            weights = scores.gather(1, idx)
            weights /= autocast_fp32(weights).sum(dim=-1, keepdim=True) + 1e-20  # sum: fp32 under CUDA autocast
            weights = weights * self.scale
        final = torch.zeros_like(x, dtype=weights.dtype)
        expert_mask = F.one_hot(idx, num_classes=self.E).permute(2, 0, 1)
        for e in range(self.E):
            token_indices, weight_indices = torch.where(expert_mask[e])
            if token_indices.numel() == 0:
                continue
            with op("expert tokens"):
                expert_weights = weights[token_indices, weight_indices]
                expert_input = x[token_indices]
            y = self.experts[e](expert_input)
            with op("expert output * routing weight"):
                final.index_add_(0, token_indices, y * expert_weights.unsqueeze(-1))
        out = final.type(x.dtype).view(*shape)
        with op("shared expert"):
            return out + self.shared_experts(residual)


class LlamaBlock(nn.Module):
    """LlamaDecoderLayer; Gemma2DecoderLayer adds norms on the outputs of
    attention and MLP (post_attention / pre_feedforward / post_feedforward);
    Olmo2DecoderLayer has only the norms on the outputs."""

    def __init__(self, c, index):
        super().__init__()
        h = c["hidden_size"]
        norm = rms_norm_class(c)
        self.sandwich = c["norms_per_block"] >= 4
        self.post_norm = c["norm_placement"] == "post"
        if not self.post_norm:
            self.input_layernorm = norm(h)
        self.post_attention_layernorm = norm(h)
        if self.sandwich:
            self.pre_feedforward_layernorm = norm(h)
        if self.sandwich or self.post_norm:
            self.post_feedforward_layernorm = norm(h)
        # GraniteDecoderLayer scales both branches by residual_multiplier (a Python float).
        self.residual_multiplier = c["config"].get("residual_multiplier")
        self.self_attn = DeepseekV3Attention(c) if c["mla"] else LlamaAttention(c, index)
        moe = c["moe"]
        if moe and moe["moe_layers"][index]:
            block = {"sigmoid_fp32": DeepseekV3MoE, "topk_softmax": GptOssMoE}.get(moe["router"], MixtralSparseMoeBlock)
            self.mlp = block(c)
        else:
            self.mlp = GatedMLP(h, c["ffn_hidden_size"], c["hidden_act"])

    def forward(self, x, cos, sin, mask):
        residual = x
        if self.post_norm:
            x = self.self_attn(x, cos, sin, mask)
            with op("post_attention_layernorm"):
                x = self.post_attention_layernorm(x)
            x = residual + x
            residual = x
            x = self.mlp(x)
            with op("post_feedforward_layernorm"):
                x = self.post_feedforward_layernorm(x)
            return residual + x
        with op("input_layernorm"):
            x = self.input_layernorm(x)
        x = self.self_attn(x, cos, sin, mask)
        if self.sandwich:
            with op("post_attention_layernorm"):
                x = self.post_attention_layernorm(x)
            x = residual + x
            residual = x
            with op("pre_feedforward_layernorm"):
                x = self.pre_feedforward_layernorm(x)
            x = self.mlp(x)
            with op("post_feedforward_layernorm"):
                x = self.post_feedforward_layernorm(x)
            return residual + x
        x = residual + self.scale_residual(x)
        residual = x
        with op("post_attention_layernorm"):
            x = self.post_attention_layernorm(x)
        x = self.mlp(x)
        return residual + self.scale_residual(x)

    def scale_residual(self, x):
        return x if self.residual_multiplier is None else x * self.residual_multiplier


class GPT2Block(nn.Module):
    """modeling_gpt2 GPT2Block with GPT2Attention (eager or flash) and GPT2MLP."""

    def __init__(self, c):
        super().__init__()
        h = c["hidden_size"]
        self.nh, self.d = c["num_heads"], c["head_dim"]
        self.ln_1 = GPT2LayerNorm(h, eps=1e-5)
        self.c_attn = Conv1D(3 * h, h)
        self.c_proj = Conv1D(h, h)
        self.ln_2 = GPT2LayerNorm(h, eps=1e-5)
        self.c_fc = Conv1D(c["ffn_hidden_size"], h)
        self.mlp_proj = Conv1D(h, c["ffn_hidden_size"])
        self.act = activation(c["hidden_act"])
        self.attn_pdrop, self.resid_pdrop = c["attention_dropout"], c["hidden_dropout"]
        self.flash = c["attention"] == "flash"
        n = c["max_position_embeddings"]
        self.register_buffer("bias", torch.tril(torch.ones((n, n), dtype=torch.bool)).view(1, 1, n, n),
                             persistent=False)

    def forward(self, x, cos, sin, mask):
        b, s, h = x.shape
        residual = x
        with op("ln_1"):
            x = self.ln_1(x)
        with op("c_attn"):
            q, k, v = self.c_attn(x).split(h, dim=2)
        q = q.view(b, s, -1, self.d).transpose(1, 2)
        k = k.view(b, s, -1, self.d).transpose(1, 2)
        v = v.view(b, s, -1, self.d).transpose(1, 2)
        if self.flash:
            with op("flash attention"):
                o = FlashAttention.apply(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                         self.attn_pdrop, self.d ** -0.5)
        else:
            with op("attention scores"):
                w = torch.matmul(q, k.transpose(-1, -2))
                w = w / torch.full([], v.size(-1) ** 0.5, dtype=w.dtype)
                causal = self.bias[:, :, :s, :s]
                w = torch.where(causal, w.to(w.dtype), torch.full([], torch.finfo(w.dtype).min, dtype=w.dtype))
            with op("attention softmax"):
                w = F.softmax(autocast_fp32(w), dim=-1)
                w = w.type(v.dtype)
            with op("attention dropout"):
                w = dropout(w, self.attn_pdrop)
            with op("attention over values"):
                o = torch.matmul(w, v).transpose(1, 2)
        o = o.reshape(b, s, -1).contiguous()
        with op("c_proj"):
            o = self.c_proj(o)
        with op("resid dropout (attention)"):
            o = dropout(o, self.resid_pdrop)
        x = residual + o
        residual = x
        with op("ln_2"):
            x = self.ln_2(x)
        with op("c_fc"):
            x = self.c_fc(x)
        with op("mlp act_fn"):
            x = self.act(x)
        with op("mlp c_proj"):
            x = self.mlp_proj(x)
        with op("resid dropout (mlp)"):
            x = dropout(x, self.resid_pdrop)
        return residual + x


class CausalLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.gpt2 = c["modules"] == "gpt2"
        h, n_layers, V = c["hidden_size"], c["num_layers"], c["vocab_size"]
        if self.gpt2:
            self.wte = nn.Embedding(V, h)
            self.wpe = nn.Embedding(c["max_position_embeddings"], h)
            self.layers = nn.ModuleList([GPT2Block(c) for _ in range(n_layers)])
            self.norm = GPT2LayerNorm(h, eps=1e-5)
            self.lm_head = nn.Linear(h, V, bias=False)
            self.lm_head.weight = self.wte.weight  # tied, as GPT-2 always is
        else:
            self.embed_tokens = nn.Embedding(V, h)
            self.layers = nn.ModuleList([LlamaBlock(c, i) for i in range(n_layers)])
            self.norm = rms_norm_class(c)(h)
            self.lm_head = nn.Linear(h, V, bias=False)
            if c["tied_embeddings"]:
                self.lm_head.weight = self.embed_tokens.weight
        self.n_layers = n_layers
        self.input_requires_grad = False  # PEFT's enable_input_require_grads
        self.head_loss = None  # step_truth_losses.head_loss(training); None: ForCausalLMLoss

    def rotary(self, b, s, dtype):
        d = self.c["rotary_dim"]  # the importer's width: MLA's rope dims, partial_rotary_factor
        halves = self.c.get("rotary_half_table", False)  # gpt-oss: each frequency once, emb = freqs
        if halves:
            d *= 2
        inv_freq = 1.0 / (10000.0 ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
        pos = torch.arange(s).float()[None, :].expand(b, s)
        freqs = (inv_freq[None, :, None].expand(b, -1, 1) @ pos[:, None, :]).transpose(1, 2)
        emb = freqs if halves else torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(dtype), emb.sin().to(dtype)

    def forward(self, input_ids, labels, checkpointing):
        b, s = input_ids.shape
        ledger.current().scope = "embedding"
        cos = sin = mask = None
        types = layer_types(self.c)
        per_type = {}  # layer type -> (cos, sin, mask)
        with op("embedding"):
            if self.gpt2:
                position_ids = torch.arange(s).unsqueeze(0)
                x = self.wte(input_ids) + self.wpe(position_ids)
                if self.input_requires_grad:
                    x.requires_grad_(True)
                x = dropout(x, self.c["embedding_dropout"])
            else:
                x = self.embed_tokens(input_ids)
                if "embedding_multiplier" in self.c["config"]:
                    x = x * self.c["config"]["embedding_multiplier"]  # GraniteModel
                if self.input_requires_grad:
                    x.requires_grad_(True)
                if self.c["read_as"] in ("gemma", "gemma2", "gemma3_text"):  # GemmaModel scales by sqrt(hidden_size)
                    x = x * torch.tensor(self.c["hidden_size"] ** 0.5, dtype=x.dtype)
                # Gemma3TextModel / Gemma2Model / GptOssModel: one causal mask per
                # layer type (create_causal_mask, create_sliding_window_causal_mask);
                # Gemma 3 also one rotary table per type (rope_local_base_freq).
                for t in sorted(set(types)):
                    with torch.no_grad():
                        if cos is None or self.c["rotary_tables"] > 1:
                            cos, sin = self.rotary(b, s, x.dtype)
                    if self.c["attention"] == "eager":
                        # HF's 4-D additive causal mask (b, 1, s, s) in the compute dtype
                        mask = torch.full((s, s), torch.finfo(x.dtype).min, dtype=x.dtype).triu(1)
                        if t == "sliding_attention":
                            window = self.c["config"]["sliding_window"]
                            mask = mask + torch.full((s, s), torch.finfo(x.dtype).min, dtype=x.dtype).tril(-window)
                            mask = mask.clamp(min=torch.finfo(x.dtype).min)
                        mask = mask[None, None].expand(b, 1, s, s).contiguous()
                    per_type[t] = (cos, sin, mask)
        for i, layer in enumerate(self.layers):
            ledger.current().scope = f"block {i}"
            if per_type:
                cos, sin, mask = per_type[types[i]]
            if checkpointing:
                x = checkpoint(layer, x, cos, sin, mask, use_reentrant=True)
            else:
                x = layer(x, cos, sin, mask)
        ledger.current().scope = "head"
        with op("final norm"):
            x = self.norm(x)
        if self.head_loss is not None:
            # validation/step_truth_losses.py: another loss over the head (training.loss)
            with op("loss"):
                return self.head_loss(self.lm_head, x, labels)
        with op("lm_head"):
            logits = self.lm_head(x)
        if "logits_scaling" in self.c["config"]:
            with op("logits scaling"):
                logits = logits / self.c["config"]["logits_scaling"]  # GraniteForCausalLM
        cap = self.c["config"].get("final_logit_softcapping", 30.0) if self.c["final_logit_softcap"] else None
        if cap:
            with op("final logit softcap"):
                logits = torch.tanh(logits / cap) * cap
        with op("loss"):
            # transformers.loss.loss_utils.ForCausalLMLoss
            logits = logits.float()
            labels = F.pad(labels, (0, 1), value=-100)
            shift_labels = labels[..., 1:].contiguous()
            loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), shift_labels.view(-1),
                                   ignore_index=-100, reduction="mean")
        return loss


def apply_lora(model, c):
    """Frozen base, LoRA adapters on the target linears (PEFT semantics)."""
    for p in model.parameters():
        p.requires_grad_(False)
    targets = c["lora_targets"]
    for layer in model.layers:
        attn = layer.self_attn
        for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
            if name in targets:
                setattr(attn, name, LoraLinear(getattr(attn, name), c["lora_rank"], c["lora_dropout"]))
        mlp = layer.mlp
        for name in ("gate_proj", "up_proj", "down_proj"):
            if name in targets and isinstance(mlp, GatedMLP):
                setattr(mlp, name, LoraLinear(getattr(mlp, name), c["lora_rank"], c["lora_dropout"]))
    model.input_requires_grad = True

