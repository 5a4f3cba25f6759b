#include "core/steptime/mixer_flops.h"

namespace trainmem {

double mixerCoreFlopsPerToken(const ModelConfig& m, MixerKind mixer) {
    switch (mixer) {
        case MixerKind::GatedDeltaNet: {
            // The chunked gated delta rule (Yang et al. 2025, "Gated Delta
            // Networks", §3.3; fla chunk_gated_delta_rule), chunks of C = 64,
            // per value head and token: K K^T, Q K^T and the WY products W =
            // A (K beta) and U = A V (2 C dk + 2 C dk + 2 C dk + 2 C dv), the
            // masked attn @ V_new (2 C dv), the inter-chunk Q S and W S
            // (2 dk dv each) and the state update K^T V_new (2 dk dv), and
            // the triangular solve of each chunk (C^3 / 3 multiply-adds per
            // chunk: 2 C^2 / 3 per token).
            if (!m.linear_attention) return 0;
            const LinearAttentionConfig& g = *m.linear_attention;
            const double C = 64, dk = static_cast<double>(g.key_head_dim), dv = static_cast<double>(g.value_head_dim);
            const double per_head = 2 * C * (3 * dk + 2 * dv) + 6 * dk * dv + 2 * C * C / 3;
            return static_cast<double>(g.value_heads) * per_head;
        }
        case MixerKind::Mamba2: {
            // The SSD chunked scan (Dao and Gu 2024, "Transformers are SSMs",
            // §6; mamba_ssm mamba_chunk_scan_combined), chunk L, per head and
            // token: C B^T inside the chunk (2 L N, per group, shared by the
            // group's heads), its masked product with X (2 L P), the chunk
            // states B^T X (2 N P) and their output C S (2 N P).
            if (!m.mamba) return 0;
            const MambaConfig& x = *m.mamba;
            const double L = static_cast<double>(x.chunk_size), N = static_cast<double>(x.state_size),
                         P = static_cast<double>(x.head_dim);
            return static_cast<double>(x.groups) * 2 * L * N + static_cast<double>(x.heads) * (2 * L * P + 4 * N * P);
        }
        case MixerKind::ShortConv:
            // A depthwise causal convolution: kernel multiply-adds per channel.
            return m.short_conv ? 2.0 * static_cast<double>(m.short_conv->kernel * m.hidden_size) : 0.0;
        case MixerKind::Attention:
        case MixerKind::None:
        case MixerKind::ParallelAttentionMamba2:  // refused before (validateHybridTraining)
        case MixerKind::Mamba1:
        case MixerKind::KimiDeltaAttention:
            return 0;
    }
    return 0;
}

}  // namespace trainmem
