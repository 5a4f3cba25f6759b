#include "core/activations/activation_shape.h"

#include <algorithm>
#include <initializer_list>

#include "core/model/block_linears.h"
#include "core/model/hf_families.h"

namespace trainmem {
namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : a; }

// PEFT matches a target against the module's own name; fused modules answer
// to the names of what they fuse, as in lora_parameters.cpp.
uint32_t loraRoles(const std::vector<std::string>& targets) {
    struct Names {
        LinearRole role;
        std::initializer_list<std::string_view> names;
    };
    static const Names table[] = {
        {LinearRole::Q, {"q_proj", "c_attn", "qkv_proj", "q_a_proj", "q_b_proj"}},
        {LinearRole::K, {"k_proj", "c_attn", "qkv_proj", "kv_a_proj_with_mqa", "kv_b_proj"}},
        {LinearRole::V, {"v_proj", "c_attn", "qkv_proj", "kv_a_proj_with_mqa", "kv_b_proj"}},
        {LinearRole::O, {"o_proj", "c_proj"}},
        {LinearRole::Gate, {"gate_proj", "w1", "gate_up_proj", "c_fc"}},
        {LinearRole::Up, {"up_proj", "w3", "gate_up_proj", "c_fc"}},
        {LinearRole::Down, {"down_proj", "w2", "c_proj"}},
        {LinearRole::MixerIn, {"in_proj_qkvz", "in_proj_ba", "in_proj_qkv", "in_proj_z", "in_proj_b", "in_proj_a", "in_proj"}},
        {LinearRole::MixerOut, {"out_proj"}},
    };
    uint32_t roles = 0;
    for (const std::string& t : targets) {
        for (const Names& n : table) {
            const bool hit = t == "all-linear" || std::find(n.names.begin(), n.names.end(), t) != n.names.end();
            if (hit) roles |= static_cast<uint32_t>(n.role);
        }
    }
    return roles;
}

}  // namespace

ActivationFn activationFn(std::string_view a) {
    if (a == "gelu_new" || a == "gelu_fast") return ActivationFn::GeluNew;
    if (a == "relu") return ActivationFn::Relu;
    if (a == "relu2") return ActivationFn::Relu2;
    return ActivationFn::Fused;  // silu, swish, gelu, gelu_pytorch_tanh, quick_gelu, ...
}

ActivationShape activationShape(const ModelConfig& m, const TrainingConfig& tr, const ParallelConfig& par,
                                LayerKind kind, bool rope_layer) {
    const bool moe_layer = kind.ffn == FfnKind::Moe;
    ActivationShape a;
    a.profile = tr.kernels;
    a.flash = tr.attention == AttentionImpl::Flash;
    const FamilySpec& family = familyOf(m.family);
    a.softmax_fp32 = family.softmax_fp32;
    a.fused_qkv = family.modules != ModuleNaming::Llama;
    a.fused_gate_up = family.modules == ModuleNaming::Phi3 || family.fused_mlp_gate_up;
    a.fused_expert_gate_up = family.experts_are_parameters;
    a.norm_weight_fp32 = family.norm_weight_fp32;
    a.attn_softcap = family.attention_softcap;
    a.attention_sinks = family.attention_sinks;
    a.rope = family.rope && !m.learned_positions;
    a.additive_mask = family.additive_mask;
    a.norm = m.norm;
    a.norms_per_block = std::max<int64_t>(m.norms_per_block, 2);
    a.qk_norm_l2 = family.qk_norm_span == QkNormSpan::L2;
    // Llama4TextAttention builds its L2 q/k norm on rotary layers only.
    a.qk_norm = m.qk_norm && (rope_layer || !a.qk_norm_l2);
    a.qk_norm_per_head = family.qk_norm_span != QkNormSpan::Projection;
    a.temperature_scales = !rope_layer && family.nope_temperature_tuning;
    a.post_norm = family.norm_placement == NormPlacement::Post;
    a.mlp = m.mlp;
    a.act = activationFn(m.hidden_act);

    a.tp = std::max<int64_t>(par.tensor, 1);
    a.cp = std::max<int64_t>(par.context, 1);
    a.sp = par.sequence_parallel ? a.tp : 1;
    a.b = std::max<int64_t>(tr.micro_batch_size, 0);
    a.s = ceilDiv(std::max<int64_t>(tr.sequence_length, 0), a.cp);
    a.s_kv = a.s * a.cp;
    a.tokens = a.b * a.s;
    a.h = m.hidden_size;
    a.heads = ceilDiv(m.num_heads, a.tp);
    a.kv_heads = std::max<int64_t>(1, ceilDiv(m.num_kv_heads > 0 ? m.num_kv_heads : m.num_heads, a.tp));
    a.head_dim = m.head_dim > 0 ? m.head_dim : (m.num_heads > 0 ? m.hidden_size / m.num_heads : 0);
    a.v_head_dim = a.head_dim;
    a.ffn = ceilDiv(m.ffn_hidden_size, a.tp);

    const PrecisionPlan plan = planPrecision(tr);
    a.act_bytes = bytesOf(plan.activations);
    a.fp32_compute = plan.activations == DType::Fp32;
    // torch.compile traces the same modules under the same autocast policy.
    a.amp = (a.profile == KernelProfile::Eager || a.profile == KernelProfile::Compile) &&
            (tr.precision == Precision::AmpBf16 || tr.precision == Precision::AmpFp16);
    a.stream_bytes = a.amp ? 4.0 : a.act_bytes;
    // Transformer Engine keeps the fp8 cast of every matmul input for the
    // weight gradient (te.Linear saves inputmat in fp8 when fp8 is enabled).
    a.linear_in_bytes = tr.precision == Precision::Fp8Mixed ? 1.0 : a.act_bytes;

    a.frozen_base = tr.finetuning != Finetuning::Full;
    if (a.frozen_base) {
        a.lora_rank = std::max<int64_t>(tr.lora_rank, 0);
        a.lora_dropout = tr.lora_dropout;
        a.lora_roles = a.lora_rank > 0 ? loraRoles(tr.lora_targets) : 0;
    }
    a.attention_dropout = m.attention_dropout;
    a.hidden_dropout = m.hidden_dropout;

    if (moe_layer && m.isMoe()) {
        const MoeConfig& e = *m.moe;
        a.moe = true;
        a.experts = e.num_experts;
        a.top_k = e.experts_per_token;
        a.expert_ffn = ceilDiv(e.expert_ffn, a.tp);
        a.shared_ffn = ceilDiv(sharedExpertWidth(m), a.tp);
        a.shared_gate = e.shared_expert_gate;
        a.norm_topk_prob = e.norm_topk_prob;
        a.sorted_dispatch = family.sorted_expert_dispatch;
        a.routing_groups = e.routing_groups;
        a.routing_groups_kept = e.routing_groups_kept;
        a.fp32_router = family.fp32_router;
        a.topk_softmax_router = family.router_topk_softmax;
        a.clamped_swiglu = family.clamped_swiglu;
        a.every_expert = family.every_expert_every_token &&
                         (a.profile == KernelProfile::Eager || a.profile == KernelProfile::Compile);
        a.capacity = e.capacity_factor > 0 ? e.capacity_factor : 1.0;
    }
    a.mixer = kind.mixer;
    a.ffn_half = kind.ffn != FfnKind::None;
    a.output_gate = m.attention_output_gate;
    a.mixer_fused = a.flash || a.profile == KernelProfile::Megatron || a.profile == KernelProfile::Fused;
    if (const auto& g = m.linear_attention) {
        a.gdn_key_heads = ceilDiv(g->key_heads, a.tp);
        a.gdn_value_heads = ceilDiv(g->value_heads, a.tp);
        a.gdn_key_dim = g->key_head_dim;
        a.gdn_value_dim = g->value_head_dim;
        a.gdn_conv = g->conv_kernel;
        a.gdn_split_projections = family.gdn_split_projections;
    }
    if (const auto& x = m.mamba) {
        a.mamba_heads = ceilDiv(x->heads, a.tp);
        a.mamba_head_dim = x->head_dim;
        a.mamba_state = x->state_size;
        a.mamba_groups = ceilDiv(x->groups, a.tp);
        a.mamba_conv = x->conv_kernel;
        a.mamba_chunk = x->chunk_size;
    }
    if (const auto& c = m.short_conv) {
        a.conv_kernel = c->kernel;
        a.conv_channels = ceilDiv(m.hidden_size, a.tp);
    }
    if (m.mla) {
        const MlaConfig& mla = *m.mla;
        a.mla = true;
        a.q_lora = mla.q_lora_rank;
        a.kv_lora = mla.kv_lora_rank;
        a.rope_dim = mla.qk_rope_head_dim;
        a.head_dim = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
        a.v_head_dim = mla.v_head_dim;
        a.kv_heads = a.heads;  // every head has its own key and value after kv_b_proj
    }
    return a;
}

}  // namespace trainmem
