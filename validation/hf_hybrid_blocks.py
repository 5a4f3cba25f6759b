"""Whole decoder layers of the hybrid families, op for op as the Hugging Face
modeling files write them, for validation/saved_tensors.py's CausalLM
(hf_blocks.py). Their token mixers are validation/hf_hybrid.py's (Gated
DeltaNet, Qwen3-Next's gated attention, the Mamba-2 mixer, LFM2's short
convolution, each with the fused-kernel stand-ins under `flash`); this file
adds the norms, residuals and MLP / MoE around them. Read from (none copied):

- Qwen3-Next: transformers src/transformers/models/qwen3_next/
  modeling_qwen3_next.py at commit 01cdc6081c7500f9e50c98b1b943c90ecb665db3
  (Qwen3NextDecoderLayer, Qwen3NextRMSNorm, Qwen3NextMLP,
  Qwen3NextSparseMoeBlock, Qwen3NextTopKRouter, Qwen3NextExperts with the
  "eager" experts implementation: a loop over the experts hit, gate and up
  chunked out of one fused gate_up_proj).
- Nemotron-H: src/transformers/models/nemotron_h/modeling_nemotron_h.py at
  commit 008d9e9577b0eb0149aa6bb0c44da582b10e0b6e (NemotronHBlock: one
  NemotronHRMSNorm, one mixer, a residual add; NemotronHAttention without
  rotary; NemotronHMLP up_proj / relu2 / down_proj; NemotronHMoE with
  NemotronHTopkRouter (fp32 logits), route_tokens_to_experts (sigmoid,
  e_score_correction_bias for the choice only, group-limited top-k, run
  with grad: its dead branches are not kept), NemotronHExperts (relu2, no
  gate) and a relu2 shared expert). The block casts its input to the norm
  weight's dtype and nothing else: no residual_in_fp32 at this commit.
  ACT2FN["relu2"] is ReLUSquaredActivation: relu, then torch.square.
- Qwen3.5 (dense text model): src/transformers/models/qwen3_5/
  modeling_qwen3_5.py at commit d8c1e2844cbfeae1e342a1723d7f4e69ff1adcc0
  (Qwen3_5DecoderLayer: Qwen3-Next's layer with Qwen3_5MLP, the dense SwiGLU,
  on every layer; Qwen3_5RMSNorm is Qwen3NextRMSNorm; Qwen3_5GatedDeltaNet
  projects with in_proj_qkv / _z / _b / _a: hf_hybrid's split_projections).
  Its interleaved multimodal rotary gives text tokens the 1-D table: the
  same cos / sin shapes.
- LFM2: src/transformers/models/lfm2/modeling_lfm2.py at commit
  0096ba4f66d4f5f7b1d4e162f8a75d0894b40ea8 (Lfm2DecoderLayer: operator_norm,
  Lfm2ShortConv or Lfm2Attention with per-head q/k Lfm2RMSNorm and full
  rotary, residual, ffn_norm, Lfm2MLP w2(silu(w1 x) * w3 x)).
- Granite 4.0-H: src/transformers/models/granitemoehybrid/
  modeling_granitemoehybrid.py at commit
  1c0ff25f4cc9d0e13e0bd848a43a964a8ae1ba8e (GraniteMoeHybridDecoderLayer:
  input_layernorm, GraniteMoeHybridMambaLayer or GraniteMoeHybridAttention
  (attention_multiplier as the scale, rotary only with
  position_embedding_type "rope"), residual + out * residual_multiplier,
  post_attention_layernorm, GraniteMoeHybridMoE (fp32 router logits, top-k
  of the logits, softmax over the k, tokens sorted by expert,
  GraniteMoeHybridParallelExperts: one F.linear per expert on its slice,
  concatenated) plus GraniteMoeHybridMLP (one input_linear chunked into gate
  and up), residual * residual_multiplier; the embedding times
  embedding_multiplier and the logits over logits_scaling are CausalLM's).
  The Mamba layer's torch_forward is Nemotron-H's with
  GraniteMoeHybridRMSNormGated, gate first then one RMSNorm over the whole
  intermediate width: the grouped Zamba2RMSNormGated with one group.

Every layer's kind and size comes from the importer's model object
("layer_kinds", "linear_attention", "mamba", "short_conv", "moe", ...); the
few numbers it does not carry are read from the config.json (`c["config"]`)
and named where read."""
import torch
import torch.nn as nn
import torch.nn.functional as F

import saved_tensor_ledger as ledger
from saved_tensor_ledger import autocast_fp32, op

import hf_hybrid as hy
from hf_moe import GatedMLP
from hf_ops import GemmaRMSNorm, LlamaRMSNorm, activation

def is_hybrid(c):
    return c.get("layer_kinds") is not None


def hybrid_layer(c, index):
    family = c["read_as"]
    if family in ("qwen3_next", "qwen3_5_text"):
        return Qwen3NextDecoderLayer(c, index)
    if family == "nemotron_h":
        return NemotronHBlock(c, index)
    if family == "lfm2":
        return Lfm2DecoderLayer(c, index)
    if family == "granitemoehybrid":
        return GraniteMoeHybridDecoderLayer(c, index)
    raise ValueError(f"no whole-layer copy of the hybrid family {family!r}")


def final_norm(c):
    """The model's last norm: Qwen3NextRMSNorm ((1 + weight) in fp32, the
    same ops as GemmaRMSNorm), NemotronHRMSNorm / Lfm2RMSNorm (Llama's)."""
    zero_centred = c["read_as"] in ("qwen3_next", "qwen3_5_text")
    return GemmaRMSNorm(c["hidden_size"]) if zero_centred else LlamaRMSNorm(c["hidden_size"])


def expert_weight(weight, index):
    """One expert's matrix of a 3-D expert parameter. Under autocast
    F.linear keeps a 16-bit cast of the slice, made from a parameter alone:
    a weight copy, so the ledger is told (as hf_moe.GptOssMoE does)."""
    w = weight[index]
    if torch.is_autocast_cpu_enabled():
        w = ledger.current().parameter_derived(w.to(torch.get_autocast_cpu_dtype()))
    return w


def relu2(x):
    """ReLUSquaredActivation: relu (keeps its output), torch.square (keeps
    its input, the same storage). torch.square is pow(x, 2), on CUDA
    autocast's fp32 list: under autocast it squares an fp32 copy."""
    with op("mlp relu"):
        r = F.relu(x)
    with op("mlp square"):
        return torch.square(autocast_fp32(r))


# ---------------------------------------------------------------------------
# Qwen3-Next


class Qwen3NextSparseMoeBlock(nn.Module):
    """Qwen3NextSparseMoeBlock: the shared expert first, then the softmax
    router (fp32 softmax, top-k, divided by the top-k sum when
    norm_topk_prob; the weights stay fp32: `.to(router_logits.dtype)`), the
    experts loop, the shared expert times sigmoid(shared_expert_gate(x))."""

    def __init__(self, c):
        super().__init__()
        h, moe = c["hidden_size"], c["moe"]
        self.h, self.E, self.k, f = h, moe["num_experts"], moe["experts_per_token"], moe["expert_ffn"]
        self.norm_topk_prob = moe["norm_topk_prob"]
        self.router_weight = nn.Parameter(torch.randn(self.E, h) * 0.1)
        self.gate_up_proj = nn.Parameter(torch.randn(self.E, 2 * f, h) * 0.05)
        self.down_proj = nn.Parameter(torch.randn(self.E, h, f) * 0.05)
        self.act = activation(c["hidden_act"])
        self.shared_expert = GatedMLP(h, moe["shared_expert_ffn"], c["hidden_act"])
        self.shared_expert_gate = nn.Linear(h, 1, bias=False)

    def forward(self, x):
        b, s, h = x.shape
        x = x.view(-1, h)
        with op("shared expert"):
            shared = self.shared_expert(x)
        with op("router"):
            logits = F.linear(x, self.router_weight)
            probs = F.softmax(logits, dtype=torch.float, dim=-1)
            top, chosen = torch.topk(probs, self.k, dim=-1)
            if self.norm_topk_prob:
                top /= top.sum(dim=-1, keepdim=True)
            top = top.to(probs.dtype)
        out = torch.zeros_like(x)
        with torch.no_grad():
            mask = F.one_hot(chosen, num_classes=self.E).permute(2, 1, 0)
            hit = torch.greater(mask.sum(dim=(-1, -2)), 0).nonzero()
        for e in hit:
            e = e[0]
            slot, token = torch.where(mask[e])
            with op("expert tokens"):
                cur = x[token]
            with op("expert gate_up_proj"):
                gate, up = F.linear(cur, expert_weight(self.gate_up_proj, e)).chunk(2, dim=-1)
            with op("expert act * up"):
                y = self.act(gate) * up
            with op("expert down_proj"):
                y = F.linear(y, expert_weight(self.down_proj, e))
            with op("expert output * routing weight"):
                y = y * top[token, slot, None]
                out.index_add_(0, token, y.to(out.dtype))
        with op("shared expert gate"):
            shared = torch.sigmoid(self.shared_expert_gate(x)) * shared
        return (out + shared).reshape(b, s, h)


class Qwen3NextDecoderLayer(nn.Module):
    """input_layernorm, token mixer (Gated DeltaNet or gated attention),
    residual, post_attention_layernorm, MoE or dense MLP, residual. The
    linear-attention layers get no causal mask (Qwen3NextModel passes them
    linear_attn_mask, None without padding); every layer gets the rotary
    tables (position_embeddings)."""

    def __init__(self, c, index):
        super().__init__()
        h, kind, cfg = c["hidden_size"], c["layer_kinds"][index], c["config"]
        flash = c["attention"] == "flash"
        self.input_layernorm = GemmaRMSNorm(h)
        self.post_attention_layernorm = GemmaRMSNorm(h)
        self.mixer_kind = kind["mixer"]
        eps = cfg.get("rms_norm_eps", 1e-6)
        if kind["mixer"] == "gated_deltanet":
            la = c["linear_attention"]
            self.mixer_truth = ("gated_deltanet", dict(
                hidden_size=h, linear_num_key_heads=la["key_heads"], linear_num_value_heads=la["value_heads"],
                linear_key_head_dim=la["key_head_dim"], linear_value_head_dim=la["value_head_dim"],
                linear_conv_kernel_dim=la["conv_kernel"], rms_norm_eps=eps,
                split_projections=c["read_as"] == "qwen3_5_text"))
            self.linear_attn = hy.Qwen3NextGatedDeltaNet(self.mixer_truth[1], flash)
        elif kind["mixer"] == "attention":
            if not c["attention_output_gate"]:
                raise ValueError("Qwen3-Next's attention without the output gate is not built here")
            self.mixer_truth = ("gated_attention", dict(
                hidden_size=h, num_attention_heads=c["num_heads"], num_key_value_heads=c["num_kv_heads"],
                head_dim=c["head_dim"], rms_norm_eps=eps))
            self.self_attn = hy.Qwen3NextAttention(self.mixer_truth[1], flash)
        else:
            raise ValueError(f"Qwen3-Next layer {index}: mixer {kind['mixer']!r}")
        self.takes_mask = kind["mixer"] == "attention"
        if kind["ffn"] == "moe":
            self.mlp = Qwen3NextSparseMoeBlock(c)
        elif kind["ffn"] == "dense":
            self.mlp = GatedMLP(h, c["ffn_hidden_size"], c["hidden_act"])
        else:
            raise ValueError(f"Qwen3-Next layer {index}: ffn {kind['ffn']!r}")

    def forward(self, x, cos, sin, mask):
        residual = x
        with op("input_layernorm"):
            x = self.input_layernorm(x)
        if self.mixer_kind == "gated_deltanet":
            x = self.linear_attn(x)
        else:
            x = self.self_attn(x, cos, sin, mask)
        x = residual + x
        residual = x
        with op("post_attention_layernorm"):
            x = self.post_attention_layernorm(x)
        x = self.mlp(x)
        return residual + x


# ---------------------------------------------------------------------------
# Nemotron-H


class NemotronHMLP(nn.Module):
    def __init__(self, h, f, bias):
        super().__init__()
        self.up_proj = nn.Linear(h, f, bias=bias)
        self.down_proj = nn.Linear(f, h, bias=bias)

    def forward(self, x):
        with op("up_proj"):
            y = self.up_proj(x)
        y = relu2(y)
        with op("down_proj"):
            return self.down_proj(y)


class NemotronHMoE(nn.Module):
    """NemotronHMoE at 008d9e95 (no latent projection: moe_latent_size
    null). The router's group sizes and scale are read from the config.json:
    n_group, topk_group, routed_scaling_factor (the model object has no key
    for them)."""

    def __init__(self, c):
        super().__init__()
        h, moe, cfg = c["hidden_size"], c["moe"], c["config"]
        self.h, self.E, self.k, f = h, moe["num_experts"], moe["experts_per_token"], moe["expert_ffn"]
        self.norm_topk_prob = moe["norm_topk_prob"]
        self.n_group, self.topk_group = cfg.get("n_group", 1), cfg.get("topk_group", 1)
        self.scale = cfg.get("routed_scaling_factor", 1.0)
        self.router_weight = nn.Parameter(torch.randn(self.E, h) * 0.1)
        self.register_buffer("e_score_correction_bias", torch.randn(self.E) * 0.01)
        self.up_proj = nn.Parameter(torch.randn(self.E, f, h) * 0.05)
        self.down_proj = nn.Parameter(torch.randn(self.E, h, f) * 0.05)
        self.shared_experts = NemotronHMLP(h, moe["shared_expert_ffn"], c.get("mlp_bias", False))

    def forward(self, x):
        residuals = x
        shape = x.shape
        with op("router"):
            flat = x.view(-1, self.h)
            logits = F.linear(flat.type(torch.float32),
                              ledger.current().parameter_derived(self.router_weight.type(torch.float32)))
            scores = logits.sigmoid()
            choice = scores + self.e_score_correction_bias
            group_scores = choice.view(-1, self.n_group, self.E // self.n_group).topk(2, dim=-1)[0].sum(dim=-1)
            group_idx = torch.topk(group_scores, k=self.topk_group, dim=-1, sorted=False)[1]
            group_mask = torch.zeros_like(group_scores)
            group_mask.scatter_(1, group_idx, 1)
            score_mask = group_mask.unsqueeze(-1).expand(-1, self.n_group, self.E // self.n_group).reshape(-1, self.E)
            for_choice = choice.masked_fill(~score_mask.bool(), float("-inf"))
            idx = torch.topk(for_choice, k=self.k, dim=-1, sorted=False)[1]
            weights = scores.gather(1, idx)
            if self.norm_topk_prob:
                weights /= autocast_fp32(weights).sum(dim=-1, keepdim=True) + 1e-20
            weights = weights * self.scale
        hs = x.view(-1, self.h)
        out = torch.zeros_like(hs, dtype=weights.dtype)
        with torch.no_grad():
            mask = F.one_hot(idx, num_classes=self.E).permute(2, 1, 0)
            hit = torch.greater(mask.sum(dim=(-1, -2)), 0).nonzero().squeeze(-1)
        for e in hit:
            e = e.item()
            slot, token = torch.where(mask[e])
            with op("expert tokens"):
                cur = hs[token]
            with op("expert up_proj"):
                y = F.linear(cur, expert_weight(self.up_proj, e))
            y = relu2(y)
            with op("expert down_proj"):
                y = F.linear(y, expert_weight(self.down_proj, e))
            with op("expert output * routing weight"):
                y = y * weights[token, slot, None]
                out.index_add_(0, token, y.to(out.dtype))
        out = out.to(hs.dtype).view(*shape)
        with op("shared expert"):
            return out + self.shared_experts(residuals)


class NemotronHBlock(nn.Module):
    """NemotronHBlock: norm (NemotronHRMSNorm, Llama's), one mixer, residual.
    Only attention layers get the causal mask (NemotronHModel's
    block_type_to_mask: mamba_mask is None without padding, moe and mlp
    None); no layer gets rotary tables (Nemotron-H has no rotary)."""

    def __init__(self, c, index):
        super().__init__()
        from hf_blocks import LlamaAttention  # hf_blocks imports this file
        h, kind, cfg = c["hidden_size"], c["layer_kinds"][index], c["config"]
        flash = c["attention"] == "flash"
        self.norm = LlamaRMSNorm(h, eps=cfg.get("layer_norm_epsilon", 1e-5))
        self.mixer_kind = kind["mixer"] if kind["mixer"] != "none" else kind["ffn"]
        if kind["mixer"] != "none" and kind["ffn"] != "none":
            raise ValueError(f"Nemotron-H layer {index} has both a mixer and an FFN: {kind}")
        if self.mixer_kind == "mamba2":
            mb = c["mamba"]
            self.mixer_truth = ("mamba2", dict(
                hidden_size=h, mamba_num_heads=mb["heads"], mamba_head_dim=mb["head_dim"],
                ssm_state_size=mb["state_size"], n_groups=mb["groups"], conv_kernel=mb["conv_kernel"],
                chunk_size=mb["chunk_size"], use_conv_bias=mb["conv_bias"], use_bias=mb["proj_bias"],
                layer_norm_epsilon=cfg.get("layer_norm_epsilon", 1e-5),
                time_step_min=cfg.get("time_step_min", 0.001)))
            self.mixer = hy.NemotronHMamba2Mixer(self.mixer_truth[1], flash)
        elif self.mixer_kind == "attention":
            if c["rope"]:
                raise ValueError("Nemotron-H attention has no rotary; the importer says rope")
            self.mixer = LlamaAttention(c, index)
            self.mixer.use_rope = False
        elif self.mixer_kind == "dense":
            self.mixer = NemotronHMLP(h, c["ffn_hidden_size"], c.get("mlp_bias", False))
        elif self.mixer_kind == "moe":
            self.mixer = NemotronHMoE(c)
        else:
            raise ValueError(f"Nemotron-H layer {index}: {kind}")
        self.takes_mask = self.mixer_kind == "attention"
        self.takes_rotary = False

    def forward(self, x, cos, sin, mask):
        residual = x
        with op("norm"):
            x = self.norm(x.to(dtype=self.norm.weight.dtype))
        if self.mixer_kind == "attention":
            x = self.mixer(x, None, None, mask)
        else:
            x = self.mixer(x)
        return residual + x


# ---------------------------------------------------------------------------
# LFM2


class Lfm2DecoderLayer(nn.Module):
    """operator_norm, Lfm2ShortConv or Lfm2Attention (per-head q/k
    Lfm2RMSNorm: Llama's; no dropout), residual, ffn_norm, Lfm2MLP
    (w1, w3, w2: the gated MLP's ops), residual. Every layer gets the
    causal mask and the rotary tables (Lfm2Model passes both to all)."""

    def __init__(self, c, index):
        super().__init__()
        from hf_blocks import LlamaAttention  # hf_blocks imports this file
        h, kind = c["hidden_size"], c["layer_kinds"][index]
        flash = c["attention"] == "flash"
        self.operator_norm = LlamaRMSNorm(h)
        self.ffn_norm = LlamaRMSNorm(h)
        self.mixer_kind = kind["mixer"]
        if kind["mixer"] == "short_conv":
            sc = c["short_conv"]
            self.mixer_truth = ("short_conv", dict(hidden_size=h, conv_L_cache=sc["kernel"], conv_bias=sc["bias"]))
            self.conv = hy.Lfm2ShortConv(self.mixer_truth[1], flash)
        elif kind["mixer"] == "attention":
            self.self_attn = LlamaAttention(c, index)
            self.self_attn.dropout = 0.0  # Lfm2Attention passes dropout=0.0
        else:
            raise ValueError(f"LFM2 layer {index}: mixer {kind['mixer']!r}")
        if kind["ffn"] != "dense":
            raise ValueError(f"LFM2 layer {index}: ffn {kind['ffn']!r}")
        self.feed_forward = GatedMLP(h, c["ffn_hidden_size"], c["hidden_act"])

    def forward(self, x, cos, sin, mask):
        residual = x
        with op("operator_norm"):
            y = self.operator_norm(x)
        y = self.conv(y) if self.mixer_kind == "short_conv" else self.self_attn(y, cos, sin, mask)
        x = y + residual
        with op("ffn_norm"):
            y = self.ffn_norm(x)
        return x + self.feed_forward(y)


# ---------------------------------------------------------------------------
# Granite 4.0-H


class GraniteMoeHybridMoE(nn.Module):
    """GraniteMoeHybridMoE with GraniteMoeHybridTopKGating and
    GraniteMoeHybridParallelExperts, op for op."""

    def __init__(self, c):
        super().__init__()
        h, moe = c["hidden_size"], c["moe"]
        self.h, self.E, self.k, f = h, moe["num_experts"], moe["experts_per_token"], moe["expert_ffn"]
        self.router = nn.Linear(h, self.E, bias=False)
        self.input_weight = nn.Parameter(torch.randn(self.E, 2 * f, h) * 0.05)
        self.output_weight = nn.Parameter(torch.randn(self.E, h, f) * 0.05)
        self.act = activation(c["hidden_act"])

    def experts(self, inputs, sizes, weight):
        """GraniteMoeHybridParallelExperts.forward: split by expert, one
        F.linear each (every expert, an empty slice too), concatenated."""
        parts = inputs.split(sizes, dim=0)
        return torch.cat([F.linear(parts[i], expert_weight(weight, i)) for i in range(self.E)], dim=0)

    def forward(self, x):
        b, s, h = x.shape
        x = x.reshape(-1, h)
        with op("router"):
            logits = self.router(x).float()
            top_logits, top_indices = logits.topk(self.k, dim=1)
            top_gates = torch.softmax(top_logits, dim=1).type_as(x)
            gates = torch.zeros([top_gates.size(0), self.E], dtype=top_gates.dtype).scatter(1, top_indices, 1)
            sizes = gates.long().sum(0).tolist()
            _, index_sorted = top_indices.flatten().sort(0)
            batch_index = index_sorted.div(self.k, rounding_mode="trunc")
            batch_gates = top_gates.flatten()[index_sorted]
        with op("expert tokens"):
            expert_inputs = x[batch_index]
        with op("expert input_linear"):
            hidden = self.experts(expert_inputs, sizes, self.input_weight)
        with op("expert act * up"):
            gate, up = hidden.chunk(2, dim=-1)
            hidden = self.act(gate) * up
        with op("expert output_linear"):
            out = self.experts(hidden, sizes, self.output_weight)
        with op("expert output * routing weight"):
            out = out * batch_gates[:, None]
            y = torch.zeros((b * s, h), dtype=out.dtype).index_add(0, batch_index, out)
        return y.view(b, s, h)


class GraniteMoeHybridDecoderLayer(nn.Module):
    """Mamba layers get no mask (GraniteMoeHybridModel's mamba_mask is None
    without padding), attention layers the causal mask; the rotary tables
    only with position_embedding_type "rope" (the importer's "rope")."""

    def __init__(self, c, index):
        super().__init__()
        from hf_blocks import LlamaAttention  # hf_blocks imports this file
        from hf_moe import Phi3MLP
        h, kind, cfg = c["hidden_size"], c["layer_kinds"][index], c["config"]
        flash = c["attention"] == "flash"
        self.input_layernorm = LlamaRMSNorm(h)
        self.post_attention_layernorm = LlamaRMSNorm(h)
        self.residual_multiplier = cfg.get("residual_multiplier", 1.0)
        self.mixer_kind = kind["mixer"]
        if kind["mixer"] == "mamba2":
            mb = c["mamba"]
            if mb["groups"] != 1:
                raise ValueError("GraniteMoeHybridRMSNormGated normalises the whole width: built for one group only")
            self.mixer_truth = ("mamba2", dict(
                hidden_size=h, mamba_num_heads=mb["heads"], mamba_head_dim=mb["head_dim"],
                ssm_state_size=mb["state_size"], n_groups=1, conv_kernel=mb["conv_kernel"],
                chunk_size=mb["chunk_size"], use_conv_bias=mb["conv_bias"], use_bias=mb["proj_bias"],
                layer_norm_epsilon=cfg.get("rms_norm_eps", 1e-6), time_step_min=0.0))
            self.mamba = hy.NemotronHMamba2Mixer(self.mixer_truth[1], flash)
        elif kind["mixer"] == "attention":
            self.self_attn = LlamaAttention(c, index)
            self.self_attn.use_rope = c["rope"]
        else:
            raise ValueError(f"Granite 4.0-H layer {index}: mixer {kind['mixer']!r}")
        if kind["ffn"] != "moe":
            raise ValueError(f"Granite 4.0-H layer {index}: ffn {kind['ffn']!r}")
        self.block_sparse_moe = GraniteMoeHybridMoE(c)
        self.shared_mlp = Phi3MLP(h, c["moe"]["shared_expert_ffn"], c["hidden_act"])  # input_linear chunked
        self.takes_mask = kind["mixer"] == "attention"
        self.takes_rotary = c["rope"]

    def forward(self, x, cos, sin, mask):
        residual = x
        with op("input_layernorm"):
            x = self.input_layernorm(x)
        x = self.mamba(x) if self.mixer_kind == "mamba2" else self.self_attn(x, cos, sin, mask)
        x = residual + x * self.residual_multiplier
        residual = x
        with op("post_attention_layernorm"):
            x = self.post_attention_layernorm(x)
        moe = self.block_sparse_moe(x)
        with op("shared_mlp"):
            x = moe + self.shared_mlp(x)
        return residual + x * self.residual_multiplier
