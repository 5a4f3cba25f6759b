#pragma once
// The token mixers of 2026's hybrid models (issue 23): what autograd keeps
// for backward in a Gated DeltaNet (Qwen3-Next, Qwen3.5), a Mamba-2 mixer
// (Nemotron-H, Granite 4.0-H) and LFM2's short convolution, with the fused
// training kernels (ActivationShape::mixer_fused) and in transformers' torch
// fallbacks. Every row, its bytes and its source: docs/hybrid-activations.md,
// held to autograd byte for byte by validation/hybrid_truth.py. Each function
// adds the layer's pre-norm, the mixer and its projections' inputs through the
// block table (activation_block.h), whose emit / norm / streamInput /
// adapters rules (AMP casts, LoRA) apply to them as to attention's.
// Internal to the core.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/activations/activation_shape.h"

namespace trainmem::mixers {

inline constexpr uint32_t kMixerIn = static_cast<uint32_t>(LinearRole::MixerIn);
inline constexpr uint32_t kMixerOut = static_cast<uint32_t>(LinearRole::MixerOut);

// Bytes of a row of CUDA autocast's fp32 list (sum, pow, rsqrt, exp,
// softplus, cumsum) given a 16-bit input: 4 under autocast and in fp32, the
// compute dtype in pure 16-bit training. And of a matmul operand inside the
// fp32 chunk algebra of the torch fallbacks: autocast keeps its 16-bit cast.
inline double fp32ListBytes(const ActivationShape& a) { return a.amp ? 4.0 : a.act_bytes; }
inline double algebraMatmulBytes(const ActivationShape& a) { return a.amp ? a.act_bytes : 4.0; }

// The output projection's input, and its adapters.
template <class Table>
void outProjection(Table& t, const ActivationShape& a, int64_t elements, int64_t rows) {
    if (a.keepsInput(LinearRole::MixerOut)) t.emit("out_proj", "input", elements, a.linear_in_bytes);
    t.adapters("out_proj", kMixerOut, 0, elements, rows);
}

// Qwen3NextGatedDeltaNet (transformers modeling_qwen3_next.py at 01cdc608):
// in_proj_qkvz and in_proj_ba, the depthwise causal conv with SiLU over
// q, k, v, beta and the decay g, the chunked gated delta rule (C = 64), the
// gated RMSNorm, out_proj.
template <class Table>
void gatedDeltaNet(Table& t, const ActivationShape& a) {
    const int64_t T = a.tokens;
    const int64_t HK = a.gdn_key_heads, dk = a.gdn_key_dim, HV = a.gdn_value_heads, dv = a.gdn_value_dim;
    const int64_t Kd = HK * dk, Vd = HV * dv, CD = 2 * Kd + Vd, P = 2 * Kd + 2 * Vd;
    const double act = a.act_bytes;
    t.norm("input_layernorm", a.hiddenTokens(), T / a.sp);
    // Qwen3.5 splits the input projections in four Linears: under autocast
    // each keeps its own cast of the input.
    const bool split = a.gdn_split_projections;
    t.streamInput(split ? "in_proj_qkv / _z / _b / _a" : "in_proj_qkvz / in_proj_ba", "input (norm output)", kMixerIn,
                  split ? 4 : 2, a.hiddenTokens(), T);
    t.emit("beta sigmoid", "output", T * HV, act);
    t.emit("g softplus", "a + dt_bias (fp32)", T * HV, 4);
    t.emit("g", "softplus output (fp32)", T * HV, 4);
    if (a.mixer_fused) {
        // causal-conv1d v1.6.1 CausalConv1dFn saves its input (a view);
        // fla v0.5.2 ChunkGatedDeltaRuleFunction saves the l2-normalised q
        // and k with their fp32 rstd, v, the chunk-local cumsum of g and the
        // WY inverse A (64 per row); it recomputes the chunk states in
        // backward. FusedRMSNormGated saves x, the gate and fp32 rstd.
        t.emit("causal_conv1d_fn", "input (q, k, v concatenated)", T * CD, act);
        t.emit("chunk_gated_delta_rule", "q and k, l2-normalised", 2 * T * HV * dk, act);
        t.emit("chunk_gated_delta_rule", "their rstd (fp32)", 2 * T * HV, 4);
        t.emit("chunk_gated_delta_rule", "v (contiguous copy)", T * Vd, act);
        t.emit("chunk_gated_delta_rule", "g chunk-local cumsum (fp32)", T * HV, 4);
        t.emit("chunk_gated_delta_rule", "A (WY inverse, 64 per row)", T * HV * 64, act);
        t.emit("FusedRMSNormGated", "x and gate", 2 * T * Vd, act);
        t.emit("FusedRMSNormGated", "rstd (fp32)", T * HV, 4);
        outProjection(t, a, T * Vd, T);
        return;
    }
    // The torch fallback: torch_chunk_gated_delta_rule's fp32 chunk algebra.
    // Its per-chunk products can pass int64 at absurd sizes: counted in
    // double (Table::emitLarge saturates).
    const int64_t r = HK > 0 ? HV / HK : 1;
    const double b = static_cast<double>(a.b), s = static_cast<double>(a.s), K = static_cast<double>(a.gdn_conv);
    const double C = 64, N = std::ceil(s / C), Sp = N * C, B = b * static_cast<double>(HV);
    const double dk_ = static_cast<double>(dk), dv_ = static_cast<double>(dv);
    const double Td = static_cast<double>(T), HVd = static_cast<double>(HV), CDd = static_cast<double>(CD);
    auto emit = [&t](std::string_view op, std::string_view tensor, double elements, double bytes) {
        t.emitLarge(op, tensor, elements, bytes);
    };
    const double f32 = fp32ListBytes(a), mm = algebraMatmulBytes(a);
    const bool amp = a.amp;
    emit("conv1d", "input (q, k, v concatenated)", Td * CDd, act);
    emit("conv1d silu", "conv output (s + kernel - 1 wide)", b * CDd * (s + K - 1), act);
    if (r == 1) {
        emit("query l2norm", "input (the SiLU output: q, k, v are its views)", Td * CDd, act);
    } else {
        emit("query l2norm", "repeated query", Td * HVd * dk_, act);
        emit("key l2norm", "repeated key", Td * HVd * dk_, act);
    }
    emit("query / key l2norm", "inv_norm", 2 * Td * HVd, f32);
    emit("v_beta", "padded value and beta (fp32)", B * Sp * dv_ + B * Sp, 4);
    emit("k_beta", "padded key (fp32)", B * Sp * dk_, 4);
    emit("decay_mask", "exp output (fp32)", B * N * C * C, 4);
    emit("intra-chunk attn", amp ? "casts of k_beta and key" : "k_beta", B * Sp * dk_ * (amp ? 2 : 1), amp ? act : 4);
    emit("intra-chunk attn", "k_beta @ key", B * N * C * C, mm);
    emit("intra-chunk attn", "tril'd decay mask (fp32)", B * N * C * C, 4);
    emit("intra-chunk attn", "triu mask (bool)", C * C, 1);
    emit("triangular solve", "row and block clones (fp32)", B * N * (C - 1) * C * (C + 1) / 3, 4);
    emit("value = attn @ v_beta", "attn and v_beta", B * N * C * C + B * Sp * dv_, mm);
    emit("k_cumdecay", "exp(g) (fp32)", B * Sp, 4);
    if (amp) emit("k_cumdecay", "k_beta (fp32)", B * Sp * dk_, 4);
    emit("k_cumdecay", "attn @ (k_beta exp g) operands", B * Sp * dk_, mm);
    if (amp) emit("k_cumdecay", "second cast of attn", B * N * C * C, act);
    emit("chunk loop", amp ? "casts of q_i and k_i" : "scaled query (fp32)", B * Sp * dk_ * (amp ? 2 : 1), amp ? act : 4);
    emit("chunk loop", "q_i @ k_i per chunk", N * B * C * C, mm);
    emit("chunk loop", "strict-triu mask (bool)", C * C, 1);
    emit("chunk loop", "k_cumdecay @ state: zero state", B * dk_ * dv_, mm);
    if (N > 1) emit("chunk loop", "k_cumdecay @ state: k_cumdecay and states", B * Sp * dk_ + (N - 1) * B * dk_ * dv_, mm);
    emit("chunk loop", "exp(g_i) per chunk (fp32)", N * B * C, 4);
    if (amp) emit("chunk loop", "scaled query (fp32)", B * Sp * dk_, 4);
    if (amp)
        emit("chunk loop", "(q_i exp g_i) @ state: casts", (N - 1) * (B * C * dk_ + B * dk_ * dv_), act);
    else
        emit("chunk loop", "(q_i exp g_i) @ state: the product", (N - 1) * B * C * dk_, 4);
    emit("chunk loop", "attn_i @ v_new: operands", N * (B * C * C + B * C * dv_), mm);
    // The last chunk's state update feeds only the final state, which
    // training drops: its nodes die with it.
    emit("chunk loop", "state update: exp(g_last) (fp32)", (N - 1) * B, 4);
    if (amp) emit("chunk loop", "state update: fp32 states", std::max(N - 2, 0.0) * B * dk_ * dv_, 4);
    emit("chunk loop", "k_i exp(g_last - g) (fp32)", (N - 1) * B * C, 4);
    emit("chunk loop", "(k_i decay)^T @ v_new", (N - 1) * B * C * dk_, mm);
    // Qwen3NextRMSNormGated on the fp32 core output, gated by silu(z).
    emit("gated norm", "fp32 input", Td * static_cast<double>(Vd), 4);
    emit("gated norm", "rstd (fp32)", Td * HVd, 4);
    emit("gated norm", "normalised, input dtype", Td * static_cast<double>(Vd), act);
    // In fp32 with r = 1, Qwen3-Next's z is a view of in_proj_qkvz's output,
    // which the SiLU keeps whole; Qwen3.5's z is in_proj_z's own output.
    emit("gated norm", "fp32 gate (silu input)", a.fp32_compute && r == 1 && !split ? Td * static_cast<double>(P) : Td * static_cast<double>(Vd), 4);
    emit("gated norm", "silu(gate) (fp32)", Td * static_cast<double>(Vd), 4);
    emit("gated norm", "weighted h", Td * static_cast<double>(Vd), amp || a.fp32_compute ? 4 : act);
    outProjection(t, a, T * Vd, T);
}

// NemotronHMamba2Mixer (transformers modeling_nemotron_h.py at 008d9e95).
// Fused: in training cuda_kernels_forward calls mamba_split_conv1d_scan_combined
// (mamba_ssm), one Function for the conv, the scan, the gated norm and
// out_proj that saves in_proj's output, the scan output and fp32 rstd per
// group. Eager: torch_forward's chunked SSD (chunk_size L), fp32 throughout.
template <class Table>
void mamba2(Table& t, const ActivationShape& a) {
    const int64_t T = a.tokens, b = a.b, s = a.s;
    const int64_t nh = a.mamba_heads, hd = a.mamba_head_dim, N = a.mamba_state, G = a.mamba_groups;
    const int64_t I = nh * hd, CD = I + 2 * G * N, P = 2 * I + 2 * G * N + nh;
    const double act = a.act_bytes;
    t.norm("norm", a.hiddenTokens(), T / a.sp);
    t.streamInput("in_proj", "input (norm output)", kMixerIn, 1, a.hiddenTokens(), T);
    if (a.mixer_fused) {
        t.emit("mamba_split_conv1d_scan_combined", "in_proj output (z, x, B, C, dt)", T * P, act);
        t.emit("mamba_split_conv1d_scan_combined", "scan output", T * I, act);
        t.emit("mamba_split_conv1d_scan_combined", "rstd per group (fp32)", T * G, 4);
        return;
    }
    // torch_forward's fp32 chunk products can pass int64 at absurd sizes:
    // counted in double (Table::emitLarge saturates).
    const double bd = static_cast<double>(b), sd = static_cast<double>(s), Td = static_cast<double>(T);
    const double nhd = static_cast<double>(nh), hdd = static_cast<double>(hd), Nd = static_cast<double>(N);
    const double Gd = static_cast<double>(G), Id = static_cast<double>(I), CDd = static_cast<double>(CD);
    const double K = static_cast<double>(a.mamba_conv), L = static_cast<double>(std::max<int64_t>(a.mamba_chunk, 1));
    const double Nc = std::ceil(sd / L), Sp = Nc * L;
    const double f32 = fp32ListBytes(a);
    auto emit = [&t](std::string_view op, std::string_view tensor, double elements, double bytes) {
        t.emitLarge(op, tensor, elements, bytes);
    };
    emit("conv1d", "input (x, B, C: a view of in_proj's output)", Td * static_cast<double>(P), act);
    emit("conv1d silu", "conv output (s + kernel - 1 wide)", bd * CDd * (sd + K - 1), act);
    emit("dt softplus", "dt + dt_bias", Td * nhd, f32);
    emit("dt clamp", "softplus output", Td * nhd, f32);
    emit("x * dt", "x (fp32)", a.fp32_compute ? Td * CDd : Td * Id, 4);
    emit("x * dt", "dt", Td * nhd, f32);
    emit("D_residual", "padded x (fp32)", bd * Sp * Id, 4);
    emit("L = exp(segsum)", "segsum masks (bool)", 2 * L * L, 1);
    emit("L = exp(segsum)", "exp output (fp32)", bd * nhd * Nc * L * L, 4);
    emit("G", "C and B chunks (fp32, heads repeated)", 2 * bd * Sp * nhd * Nd, 4);
    emit("M", "G * L (fp32)", bd * Nc * L * L * nhd, 4);
    emit("Y_diag", "M and x * dt chunks (fp32)", bd * Nc * L * L * nhd + bd * Sp * Id, 4);
    emit("decay_states", "exp output (fp32)", bd * nhd * Sp, 4);
    emit("chunk states", "B * decay (fp32)", bd * Sp * nhd * Nd, 4);
    emit("decay_chunk", "segsum masks (bool)", 2 * (Nc + 1) * (Nc + 1), 1);
    emit("decay_chunk", "exp output (fp32)", bd * nhd * (Nc + 1) * (Nc + 1), 4);
    emit("state passing", "decay_chunk and states (fp32)", bd * (Nc + 1) * nhd * hdd * Nd, 4);
    emit("state_decay_out", "exp output (fp32)", bd * nhd * Sp, 4);
    emit("C * states", "passed states (fp32)", bd * nhd * (Nc + 1) * hdd * Nd, 4);
    emit("Y_off", "sum(C * states) (fp32)", bd * Sp * Id, 4);
    // Zamba2RMSNormGated: x * silu(gate.float()), then RMSNorm per group.
    if (!a.fp32_compute) emit("gated norm", "fp32 gate (silu input)", Td * Id, 4);
    emit("gated norm", "padded y and silu(gate) (fp32)", bd * Sp * Id + Td * Id, 4);
    emit("gated norm", "gated product (fp32)", Td * Id, 4);
    emit("gated norm", "rstd per group (fp32)", Td * Gd, 4);
    emit("gated norm", "normalised (fp32)", Td * Id, 4);
    outProjection(t, a, T * I, T);
}

// Lfm2ShortConv (transformers modeling_lfm2.py at 0096ba4f): in_proj to
// B, C, x; B * x through a depthwise causal conv of conv_L_cache taps;
// C * conv; out_proj. Fused: causal_conv1d_fn keeps its input.
template <class Table>
void shortConv(Table& t, const ActivationShape& a) {
    const int64_t T = a.tokens, hc = a.conv_channels;
    const double act = a.act_bytes;
    t.norm("operator_norm", a.hiddenTokens(), T / a.sp);
    t.streamInput("in_proj", "input (norm output)", kMixerIn, 1, a.hiddenTokens(), T);
    t.emit("B * x", "in_proj output (B, C, x are its views)", 3 * T * hc, act);
    t.emit(a.mixer_fused ? "causal_conv1d_fn" : "conv1d", "input B * x", T * hc, act);
    const int64_t conv_out = a.mixer_fused ? T * hc : a.b * hc * (a.s + a.conv_kernel - 1);
    t.emit("C * conv", a.mixer_fused ? "conv output" : "conv output (s + L - 1 wide)", conv_out, act);
    outProjection(t, a, T * hc, T);
}

}  // namespace trainmem::mixers
