"""DeepSeek-V2's rotary and mixture of experts, op for op as
modeling_deepseek_v2.py writes them (transformers commit 03eac6f6, read
through the code index; configuration defaults from DeepseekV2Config):
apply_rotary_emb on the rope slices of q and k with the model's complex fp32
freqs_cis, and DeepseekV2MoE: DeepseekV2MoEGate (fp32 logits, softmax in
fp32, greedy or group-limited top-k, weights times routed_scaling_factor and
never renormalised: norm_topk_prob is stored but not read), the tokens
sorted by expert, one slice per expert, the outputs scattered back and
combined in fp32, then the shared experts. Used by hf_blocks.py, chosen by
the importer's model ("complex_rotary" with "mla"; the MoE "router")."""
import torch
import torch.nn as nn
import torch.nn.functional as F

import saved_tensor_ledger as ledger
from saved_tensor_ledger import op

from hf_moe import GatedMLP


def apply_rotary_emb_mla(xq, xk, freqs_cis):
    """apply_rotary_emb: fp32 copies viewed as complex pairs, multiplied by
    the table (broadcast over heads), cast back to the inputs' dtype."""
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = freqs_cis.unsqueeze(1)
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3).type_as(xq)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3).type_as(xk)
    return xq_out, xk_out


class DeepseekV2MoE(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, moe, config = c["hidden_size"], c["moe"], c["config"]
        self.h, self.E, self.top_k = h, moe["num_experts"], moe["experts_per_token"]
        # topk_method group_limited_greedy, as the importer read it (n_group, topk_group)
        self.group_limited = moe["routing_groups"] > 0
        self.n_group, self.topk_group = moe["routing_groups"], moe["routing_groups_kept"]
        self.scale = config.get("routed_scaling_factor", 1.0)
        self.weight = nn.Parameter(torch.randn(self.E, h) * 0.02)
        self.experts = nn.ModuleList([GatedMLP(h, moe["expert_ffn"], c["hidden_act"]) for _ in range(self.E)])
        self.shared_experts = GatedMLP(h, moe["shared_expert_ffn"], c["hidden_act"])

    def gate(self, x):
        """DeepseekV2MoEGate.forward."""
        n = x.shape[0]
        logits = F.linear(x.type(torch.float32), ledger.current().parameter_derived(self.weight.type(torch.float32)))
        scores = logits.softmax(dim=-1, dtype=torch.float32)
        if self.group_limited:
            group_scores = scores.view(n, self.n_group, -1).max(dim=-1).values
            group_idx = torch.topk(group_scores, k=self.topk_group, dim=-1, sorted=False)[1]
            group_mask = torch.zeros_like(group_scores)
            group_mask.scatter_(1, group_idx, 1)
            score_mask = group_mask.unsqueeze(-1).expand(n, self.n_group, self.E // self.n_group).reshape(n, -1)
            scores = scores.masked_fill(~score_mask.bool(), 0.0)
        weight, idx = torch.topk(scores, k=self.top_k, dim=-1, sorted=False)
        return idx, weight * self.scale

    def forward(self, x):
        residual = x
        shape = x.shape
        x = x.view(-1, self.h)
        with op("router"):
            idx, weight = self.gate(x)
        # DeepseekV2MoE.moe: count tokens per expert, sort the token slots by
        # expert, run each expert on its slice of the sorted tokens.
        with torch.no_grad():
            counts = idx.new_zeros((idx.shape[0], self.E))
            counts.scatter_(1, idx, 1)
            per_expert = counts.sum(dim=0)
            order = idx.view(-1).argsort()
        with op("expert tokens"):
            sorted_tokens = x[order // idx.shape[1]]
        outputs = []
        start = 0
        for e, count in enumerate(per_expert.tolist()):
            if count == 0:
                continue
            outputs.append(self.experts[e](sorted_tokens[start:start + count]))
            start += count
        with op("expert output * routing weight"):
            outs = torch.cat(outputs, dim=0)
            scattered = torch.empty_like(outs)
            scattered[order] = outs
            y = (scattered.view(*idx.shape, -1).type(weight.dtype).mul_(weight.unsqueeze(dim=-1))
                 .sum(dim=1).type(scattered.dtype))
        y = y.view(*shape)
        with op("shared expert"):
            return y + self.shared_experts(residual)
