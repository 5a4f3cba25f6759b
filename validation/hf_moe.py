"""The MLPs of the Hugging Face eager modeling files, op for op: the gated
MLP, and the mixture-of-experts blocks (modeling_mixtral / qwen3_moe,
modeling_qwen2_moe, modeling_deepseek_v3 / glm4_moe, modeling_gpt_oss), each
chosen by the router the importer's model names. Used by hf_blocks.py."""
import torch
import torch.nn as nn
import torch.nn.functional as F

import saved_tensor_ledger as ledger
from saved_tensor_ledger import autocast_fp32, op

from hf_ops import activation


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


class Phi3MLP(nn.Module):
    """modeling_phi3 Phi3MLP (transformers commit 43c2b481): one fused
    gate_up_proj, chunked into gate and up (views of its output)."""

    def __init__(self, h, f, act):
        super().__init__()
        self.gate_up_proj = nn.Linear(h, 2 * f, bias=False)
        self.down_proj = nn.Linear(f, h, bias=False)
        self.act = activation(act)

    def forward(self, x):
        with op("gate_up_proj"):
            gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        with op("mlp act_fn"):
            a = self.act(gate)
        with op("mlp act * up"):
            p = up * a
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


class Qwen2MoeSparseMoeBlock(nn.Module):
    """modeling_qwen2_moe Qwen2MoeSparseMoeBlock (transformers commit
    00a3f938): Mixtral's fp32 softmax, top-k and loop over the experts hit,
    the top-k weights divided by their sum only when norm_topk_prob (the
    importer's reading of the key: Qwen2MoeConfig's default is False), then
    a shared expert scaled by sigmoid(shared_expert_gate(x)) and added."""

    def __init__(self, c):
        super().__init__()
        h, moe = c["hidden_size"], c["moe"]
        self.E, self.top_k = moe["num_experts"], moe["experts_per_token"]
        self.norm_topk_prob = moe["norm_topk_prob"]
        self.gate = nn.Linear(h, self.E, bias=False)
        self.experts = nn.ModuleList([GatedMLP(h, moe["expert_ffn"], c["hidden_act"]) for _ in range(self.E)])
        self.shared_expert = GatedMLP(h, moe["shared_expert_ffn"], c["hidden_act"])
        self.shared_expert_gate = nn.Linear(h, 1, bias=False) if moe["shared_expert_gate"] else None

    def forward(self, x):
        b, s, h = x.shape
        x = x.view(-1, h)
        with op("router"):
            logits = self.gate(x)
            weights = F.softmax(logits, dim=1, dtype=torch.float)
            weights, chosen = torch.topk(weights, self.top_k, dim=-1)
            if self.norm_topk_prob:
                weights /= weights.sum(dim=-1, keepdim=True)
            weights = weights.to(x.dtype)
        out = torch.zeros((b * s, h), dtype=x.dtype)
        mask = F.one_hot(chosen, num_classes=self.E).permute(2, 1, 0)
        hit = (mask.sum(dim=(-1, -2)) > 0).nonzero(as_tuple=True)[0].tolist()
        for e in hit:
            slot, token = torch.where(mask[e])
            with op("expert tokens"):
                tokens = x[None, token].reshape(-1, h)
            y = self.experts[e](tokens)
            with op("expert output * routing weight"):
                y = y * weights[token, slot, None]
                out.index_add_(0, token, y.to(x.dtype))
        shared = self.shared_expert(x)
        if self.shared_expert_gate is not None:
            with op("shared expert gate"):
                shared = torch.sigmoid(self.shared_expert_gate(x)) * shared  # F.sigmoid in the file: the same op
        with op("shared expert"):
            out = out + shared
        return out.reshape(b, s, h)


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
        self.norm_topk_prob = moe["norm_topk_prob"]
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
            if self.norm_topk_prob:  # sum: fp32 under CUDA autocast
                weights /= autocast_fp32(weights).sum(dim=-1, keepdim=True) + 1e-20
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
