#include "core/model/block_linears.h"

#include "core/model/hf_families.h"

namespace trainmem {
namespace {

// Families whose modeling code fuses projections into one Linear: GPT-2's
// Conv1D c_attn (modeling_gpt2.py, GPT2Attention) and Phi-3's qkv_proj and
// gate_up_proj (modeling_phi3.py, Phi3Attention / Phi3MLP). The parameter
// count is the same as unfused; the tensor shapes (and LoRA adapters) differ.
ModuleNaming naming(const ModelConfig& m) { return familyOf(m.family).modules; }
bool fusedQkv(const ModelConfig& m) { return naming(m) != ModuleNaming::Llama; }
bool fusedGateUp(const ModelConfig& m) { return naming(m) == ModuleNaming::Phi3; }
bool expertW123(const ModelConfig& m) { return familyOf(m.family).expert_w123; }

void addAttention(BlockLinears& out, const ModelConfig& m) {
    const int64_t h = m.hidden_size;
    if (m.mla) {
        // DeepSeek-V2/V3 multi-head latent attention (modeling_deepseek_v3.py,
        // DeepseekV3Attention): attention_bias applies to q_a, kv_a and o only.
        const MlaConfig& a = *m.mla;
        const int64_t qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
        if (a.q_lora_rank > 0) {
            out.add({"q_a_proj", BlockPart::Attention, h, a.q_lora_rank, 1, m.attention_qkv_bias,
                     {"q_a_proj", "q_proj"}});
            out.add({"q_b_proj", BlockPart::Attention, a.q_lora_rank, m.num_heads * qk, 1, false,
                     {"q_b_proj", "q_proj"}});
        } else {
            out.add({"q_proj", BlockPart::Attention, h, m.num_heads * qk, 1, false, {"q_proj"}});
        }
        out.add({"kv_a_proj_with_mqa", BlockPart::Attention, h, a.kv_lora_rank + a.qk_rope_head_dim, 1,
                 m.attention_qkv_bias, {"kv_a_proj_with_mqa", "k_proj", "v_proj"}});
        out.add({"kv_b_proj", BlockPart::Attention, a.kv_lora_rank,
                 m.num_heads * (a.qk_nope_head_dim + a.v_head_dim), 1, false, {"kv_b_proj", "k_proj", "v_proj"}});
        out.add({"o_proj", BlockPart::Attention, m.num_heads * a.v_head_dim, h, 1, m.attention_output_bias,
                 {"o_proj"}});
        if (m.indexer) {
            // DeepseekV32Indexer (modular_deepseek_v32.py at transformers
            // 01f8fa55): wq_b from the query latent, wk, weights_proj. It runs
            // under no_grad: never a LoRA target.
            const IndexerConfig& x = *m.indexer;
            const int64_t q_in = a.q_lora_rank > 0 ? a.q_lora_rank : h;
            out.add({"indexer.wq_b", BlockPart::Attention, q_in, x.heads * x.head_dim, 1, false, {}});
            out.add({"indexer.wk", BlockPart::Attention, h, x.head_dim, 1, false, {}});
            out.add({"indexer.weights_proj", BlockPart::Attention, h, x.heads, 1, false, {}});
        }
        return;
    }
    const int64_t q = m.num_heads * m.head_dim;
    const int64_t kv = m.num_kv_heads * m.head_dim;
    // Qwen3-Next's gated attention: q_proj makes the query and a sigmoid
    // output gate of the same width (Qwen3NextAttention, modeling_qwen3_next.py).
    const int64_t q_out = m.attention_output_gate ? 2 * q : q;
    if (fusedQkv(m)) {
        const bool gpt2 = naming(m) == ModuleNaming::Gpt2;
        const std::string_view qkv = gpt2 ? "c_attn" : "qkv_proj";
        out.add({qkv, BlockPart::Attention, h, q + 2 * kv, 1, m.attention_qkv_bias, {qkv, "q_proj", "k_proj", "v_proj"}});
        if (gpt2)
            out.add({"c_proj", BlockPart::Attention, q, h, 1, m.attention_output_bias, {"c_proj", "o_proj"}});
        else
            out.add({"o_proj", BlockPart::Attention, q, h, 1, m.attention_output_bias, {"o_proj"}});
        return;
    }
    out.add({"q_proj", BlockPart::Attention, h, q_out, 1, m.attention_qkv_bias, {"q_proj"}});
    out.add({"k_proj", BlockPart::Attention, h, kv, 1, m.attention_qkv_bias, {"k_proj"}});
    out.add({"v_proj", BlockPart::Attention, h, kv, 1, m.attention_qkv_bias, {"v_proj"}});
    out.add({"o_proj", BlockPart::Attention, q, h, 1, m.attention_output_bias, {"o_proj"}});
}

// One MLP of width w, `copies` times. Mixtral names its expert matrices
// w1 (gate), w3 (up), w2 (down) (modeling_mixtral.py, MixtralBlockSparseTop2MLP),
// which is what PEFT's module-name matching sees.
void addMlp(BlockLinears& out, const ModelConfig& m, BlockPart part, int64_t w, int64_t copies, bool bias) {
    const int64_t h = m.hidden_size;
    if (m.mlp == MlpKind::Gated) {
        if (fusedGateUp(m)) {
            out.add({"gate_up_proj", part, h, 2 * w, copies, bias, {"gate_up_proj", "gate_proj", "up_proj"}});
        } else if (part == BlockPart::RoutedExperts && expertW123(m)) {
            out.add({"w1", part, h, w, copies, bias, {"w1", "gate_proj"}});
            out.add({"w3", part, h, w, copies, bias, {"w3", "up_proj"}});
        } else {
            out.add({"gate_proj", part, h, w, copies, bias, {"gate_proj"}});
            out.add({"up_proj", part, h, w, copies, bias, {"up_proj"}});
        }
        if (part == BlockPart::RoutedExperts && expertW123(m))
            out.add({"w2", part, w, h, copies, bias, {"w2", "down_proj"}});
        else
            out.add({"down_proj", part, w, h, copies, bias, {"down_proj"}});
        return;
    }
    if (naming(m) == ModuleNaming::Gpt2) {
        out.add({"c_fc", part, h, w, copies, bias, {"c_fc", "up_proj", "gate_proj"}});
        out.add({"c_proj", part, w, h, copies, bias, {"c_proj", "down_proj"}});
        return;
    }
    out.add({"up_proj", part, h, w, copies, bias, {"up_proj"}});
    out.add({"down_proj", part, w, h, copies, bias, {"down_proj"}});
}

}  // namespace

int64_t sharedExpertWidth(const ModelConfig& m) {
    if (!m.isMoe()) return 0;
    if (m.moe->shared_expert_ffn > 0) return m.moe->shared_expert_ffn;
    return m.moe->shared_experts * m.moe->expert_ffn;
}

BlockLinears blockLinears(const ModelConfig& m, bool moe_layer) {
    return blockLinears(m, LayerKind{MixerKind::Attention, moe_layer && m.isMoe() ? FfnKind::Moe : FfnKind::Dense});
}

namespace {

// The Linear layers of a hybrid's token mixers (docs/memory-model.md,
// "Layer kinds", with the modeling files they were read from).
void addMixer(BlockLinears& out, const ModelConfig& m, MixerKind mixer) {
    const int64_t h = m.hidden_size;
    switch (mixer) {
        case MixerKind::Attention:
            addAttention(out, m);
            return;
        case MixerKind::GatedDeltaNet: {
            // Qwen3NextGatedDeltaNet: in_proj_qkvz makes q, k (key_heads x
            // key_head_dim each), v and the output gate z (value_heads x
            // value_head_dim each); in_proj_ba the per-value-head beta and
            // decay inputs; out_proj maps the values back.
            const LinearAttentionConfig& g = *m.linear_attention;
            const int64_t key = g.key_heads * g.key_head_dim;
            const int64_t value = g.value_heads * g.value_head_dim;
            if (familyOf(m.family).gdn_split_projections) {
                // Qwen3_5GatedDeltaNet: the same widths in four Linears.
                out.add({"in_proj_qkv", BlockPart::Attention, h, 2 * key + value, 1, false, {"in_proj_qkv"}});
                out.add({"in_proj_z", BlockPart::Attention, h, value, 1, false, {"in_proj_z"}});
                out.add({"in_proj_b", BlockPart::Attention, h, g.value_heads, 1, false, {"in_proj_b"}});
                out.add({"in_proj_a", BlockPart::Attention, h, g.value_heads, 1, false, {"in_proj_a"}});
            } else {
                out.add({"in_proj_qkvz", BlockPart::Attention, h, 2 * key + 2 * value, 1, false, {"in_proj_qkvz"}});
                out.add({"in_proj_ba", BlockPart::Attention, h, 2 * g.value_heads, 1, false, {"in_proj_ba"}});
            }
            out.add({"out_proj", BlockPart::Attention, value, h, 1, false, {"out_proj"}});
            return;
        }
        case MixerKind::Mamba2: {
            // Mamba2Mixer / NemotronHMamba2Mixer / FalconH1Mixer: in_proj
            // makes the gate z (d_inner), x, B, C (d_inner + 2 groups
            // d_state) and dt (heads); Falcon-H1's out_proj bias is
            // projectors_bias (modular_falcon_h1.py at transformers 00511f5d).
            const MambaConfig& s = *m.mamba;
            const int64_t conv = s.inner() + 2 * s.groups * s.state_size;
            out.add({"in_proj", BlockPart::Attention, h, s.inner() + conv + s.heads, 1, s.proj_bias, {"in_proj"}});
            out.add({"out_proj", BlockPart::Attention, s.inner(), h, 1, s.out_proj_bias, {"out_proj"}});
            return;
        }
        case MixerKind::ParallelAttentionMamba2:
            // FalconH1DecoderLayer: self_attn (Llama's q, k, v, o) and mamba
            // (FalconH1Mixer) on the same normed input.
            addAttention(out, m);
            addMixer(out, m, MixerKind::Mamba2);
            return;
        case MixerKind::Mamba1: {
            // JambaMambaMixer (modular_jamba.py at transformers 01596202):
            // in_proj makes x and the gate z (d_inner each); x_proj makes dt
            // (dt_rank), B and C (d_state each) without a bias; dt_proj maps
            // dt back to d_inner with its bias; out_proj.
            const SelectiveScanConfig& s = *m.mamba1;
            const int64_t inner = s.expand * h;
            out.add({"in_proj", BlockPart::Attention, h, 2 * inner, 1, s.proj_bias, {"in_proj"}});
            out.add({"x_proj", BlockPart::Attention, inner, s.dt_rank + 2 * s.state_size, 1, false, {"x_proj"}});
            out.add({"dt_proj", BlockPart::Attention, s.dt_rank, inner, 1, true, {"dt_proj"}});
            out.add({"out_proj", BlockPart::Attention, inner, h, 1, s.proj_bias, {"out_proj"}});
            return;
        }
        case MixerKind::KimiDeltaAttention: {
            // KimiDeltaAttention (modeling_kimi_linear.py at transformers
            // 016bd12c; the checkpoint's names): q, k, v projections to
            // heads x head_dim, the forget gate through a head_dim-wide
            // bottleneck (f_a_proj, f_b_proj), beta per head (b_proj), the
            // output gate through the same bottleneck (g_a_proj, g_b_proj),
            // o_proj. No biases.
            const DeltaAttentionConfig& k = *m.delta_attention;
            const int64_t width = k.heads * k.head_dim;
            out.add({"q_proj", BlockPart::Attention, h, width, 1, false, {"q_proj"}});
            out.add({"k_proj", BlockPart::Attention, h, width, 1, false, {"k_proj"}});
            out.add({"v_proj", BlockPart::Attention, h, width, 1, false, {"v_proj"}});
            out.add({"f_a_proj", BlockPart::Attention, h, k.head_dim, 1, false, {"f_a_proj"}});
            out.add({"f_b_proj", BlockPart::Attention, k.head_dim, width, 1, false, {"f_b_proj"}});
            out.add({"b_proj", BlockPart::Attention, h, k.heads, 1, false, {"b_proj"}});
            out.add({"g_a_proj", BlockPart::Attention, h, k.head_dim, 1, false, {"g_a_proj"}});
            out.add({"g_b_proj", BlockPart::Attention, k.head_dim, width, 1, false, {"g_b_proj"}});
            out.add({"o_proj", BlockPart::Attention, width, h, 1, false, {"o_proj"}});
            return;
        }
        case MixerKind::ShortConv:
            // Lfm2ShortConv: in_proj makes B, C and x (h each); out_proj.
            out.add({"in_proj", BlockPart::Attention, h, 3 * h, 1, m.short_conv->bias, {"in_proj"}});
            out.add({"out_proj", BlockPart::Attention, h, h, 1, m.short_conv->bias, {"out_proj"}});
            return;
        case MixerKind::None:
            return;
    }
}

}  // namespace

int64_t mixerExtraParameters(const ModelConfig& m, MixerKind mixer) {
    switch (mixer) {
        case MixerKind::GatedDeltaNet: {
            // conv1d over q, k, v (depthwise, no bias), dt_bias and A_log per
            // value head, the gated RMSNorm over one value head.
            const LinearAttentionConfig& g = *m.linear_attention;
            const int64_t conv = 2 * g.key_heads * g.key_head_dim + g.value_heads * g.value_head_dim;
            return conv * g.conv_kernel + 2 * g.value_heads + g.value_head_dim;
        }
        case MixerKind::Mamba2: {
            // conv1d over x, B, C (depthwise, with its bias when use_conv_bias),
            // dt_bias, A_log and D per head, the gated RMSNorm over d_inner.
            const MambaConfig& s = *m.mamba;
            const int64_t conv = s.inner() + 2 * s.groups * s.state_size;
            return conv * s.conv_kernel + (s.conv_bias ? conv : 0) + 3 * s.heads + (s.gated_norm ? s.inner() : 0);
        }
        case MixerKind::ParallelAttentionMamba2:
            // Falcon-H1's attention has no norms of its own: the Mamba-2 half's.
            return mixerExtraParameters(m, MixerKind::Mamba2);
        case MixerKind::Mamba1: {
            // conv1d over x (depthwise, its bias when mamba_conv_bias), A_log
            // (d_inner x d_state), D (d_inner), and the RMSNorms of dt, B, C.
            const SelectiveScanConfig& s = *m.mamba1;
            const int64_t inner = s.expand * m.hidden_size;
            return inner * s.conv_kernel + (s.conv_bias ? inner : 0) + inner * s.state_size + inner + s.dt_rank +
                   2 * s.state_size;
        }
        case MixerKind::KimiDeltaAttention: {
            // The short convolutions of q, k and v (depthwise, no bias),
            // A_log per head, dt_bias per channel, the gated RMSNorm (o_norm)
            // over one head.
            const DeltaAttentionConfig& k = *m.delta_attention;
            const int64_t width = k.heads * k.head_dim;
            return 3 * width * k.conv_kernel + k.heads + width + k.head_dim;
        }
        case MixerKind::ShortConv:
            // conv: depthwise Conv1d(h, h, conv_L_cache), its bias when conv_bias.
            return m.hidden_size * m.short_conv->kernel + (m.short_conv->bias ? m.hidden_size : 0);
        case MixerKind::Attention:
        case MixerKind::None:
            return 0;
    }
    return 0;
}

BlockLinears blockLinears(const ModelConfig& m, LayerKind kind) {
    BlockLinears out;
    addMixer(out, m, kind.mixer);
    if (kind.ffn == FfnKind::None) return out;
    if (kind.ffn == FfnKind::Dense || !m.isMoe()) {
        addMlp(out, m, BlockPart::DenseMlp, m.ffn_hidden_size, 1, m.mlp_bias);
        return out;
    }
    const MoeConfig& e = *m.moe;
    // Routed experts carry biases only in gpt-oss (GptOssExperts' gate_up_proj_bias
    // and down_proj_bias, modeling_gpt_oss.py).
    const FamilySpec& family = familyOf(m.family);
    addMlp(out, m, BlockPart::RoutedExperts, e.expert_ffn, e.num_experts, family.expert_bias);
    if (family.experts_are_parameters) {
        // Fused expert parameters, not Linear modules: never a LoRA target.
        for (size_t i = 0; i < out.size; ++i)
            if (out.items[i].part == BlockPart::RoutedExperts) out.items[i].lora_targets = {};
    }
    const int64_t shared = sharedExpertWidth(m);
    if (shared > 0) addMlp(out, m, BlockPart::SharedExperts, shared, 1, m.mlp_bias);
    // Qwen2-MoE: shared_expert_gate = Linear(h, 1, bias=False) (modeling_qwen2_moe.py).
    if (e.shared_expert_gate) out.add({"shared_expert_gate", BlockPart::SharedExperts, m.hidden_size, 1, 1, false, {}});
    // Router gate Linear(h, E), with a bias only in gpt-oss (GptOssTopKRouter). It is not
    // a LoRA target here, "all-linear" included: see docs/memory-model.md.
    out.add({"gate", BlockPart::Router, m.hidden_size, e.num_experts, 1, family.router_bias, {}});
    return out;
}

}  // namespace trainmem
