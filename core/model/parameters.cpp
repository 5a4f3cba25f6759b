#include "core/model/parameters.h"

#include <algorithm>

#include "core/model/block_linears.h"
#include "core/model/hf_families.h"

namespace trainmem {

TensorGroup& TensorGroup::operator+=(const TensorGroup& o) {
    params += o.params;
    matrix_params += o.matrix_params;
    factored_elems += o.factored_elems;
    largest_tensor = std::max(largest_tensor, o.largest_tensor);
    return *this;
}

TensorGroup LayerParameters::total() const {
    TensorGroup t = attention;
    t += dense_mlp;
    t += routed_experts;
    t += shared_experts;
    t += router;
    t += norms;
    return t;
}

int64_t LayerParameters::matmulParams() const {
    return attention.matrix_params + dense_mlp.matrix_params + routed_experts.matrix_params +
           shared_experts.matrix_params + router.matrix_params;
}

namespace {

// A 2-D weight of rows x cols, `copies` times. Adafactor factors each matrix's
// second moment into a row and a column vector (Shazeer & Stern 2018, §3),
// hence rows + cols per matrix.
void addMatrix(TensorGroup& g, int64_t rows, int64_t cols, int64_t copies = 1) {
    g.params += copies * rows * cols;
    g.matrix_params += copies * rows * cols;
    g.factored_elems += copies * (rows + cols);
    g.largest_tensor = std::max(g.largest_tensor, rows * cols);
}

void addVector(TensorGroup& g, int64_t n, int64_t copies = 1) {
    g.params += copies * n;
    g.largest_tensor = std::max(g.largest_tensor, n);
}

// RMSNorm keeps a weight of n; LayerNorm a weight and a bias of n each.
void addNorm(TensorGroup& g, const ModelConfig& m, int64_t n, int64_t count = 1) {
    addVector(g, n, count * (m.norm == NormKind::LayerNorm ? 2 : 1));
}

TensorGroup& partOf(LayerParameters& lp, BlockPart p) {
    switch (p) {
        case BlockPart::Attention: return lp.attention;
        case BlockPart::DenseMlp: return lp.dense_mlp;
        case BlockPart::RoutedExperts: return lp.routed_experts;
        case BlockPart::SharedExperts: return lp.shared_experts;
        case BlockPart::Router: return lp.router;
    }
    return lp.attention;
}

LayerParameters layerParameters(const ModelConfig& m, LayerKind kind) {
    LayerParameters lp;
    for (const BlockLinear& l : blockLinears(m, kind)) {
        TensorGroup& g = partOf(lp, l.part);
        addMatrix(g, l.out, l.in, l.copies);
        if (l.bias) addVector(g, l.out, l.copies);
    }
    if (mixerHasAttention(kind.mixer)) {
        if (m.mla) {
            // DeepSeek's q_a_layernorm and kv_a_layernorm (RMSNorm over the latent).
            if (m.mla->q_lora_rank > 0) addNorm(lp.attention, m, m.mla->q_lora_rank);
            addNorm(lp.attention, m, m.mla->kv_lora_rank);
            // The indexer's k_norm is a LayerNorm (weight and bias) over index_head_dim.
            if (m.indexer) addVector(lp.attention, m.indexer->head_dim, 2);
        } else if (m.qk_norm && familyOf(m.family).qk_norm_span != QkNormSpan::L2) {  // Llama 4's L2 norm: no weight
            if (familyOf(m.family).qk_norm_span == QkNormSpan::PerHead) {
                // Qwen3RMSNorm(head_dim) on every head of q and k: head_dim weights each.
                addNorm(lp.attention, m, m.head_dim, 2);
            } else {
                // OLMo 2: Olmo2RMSNorm(H * head_dim) and (KV * head_dim) over the projections.
                addNorm(lp.attention, m, m.num_heads * m.head_dim);
                addNorm(lp.attention, m, m.num_kv_heads * m.head_dim);
            }
        }
        // gpt-oss: GptOssAttention.sinks, one learned logit per query head.
        if (familyOf(m.family).attention_sinks) addVector(lp.attention, m.num_heads);
    }
    // A hybrid mixer's convolution, decays and gated norm (block_linears.h).
    const int64_t extra = mixerExtraParameters(m, kind.mixer);
    if (extra > 0) addVector(lp.attention, extra);
    if (kind.ffn == FfnKind::Moe && m.isMoe() && m.moe->router_score_bias)
        addVector(lp.router, m.moe->num_experts);  // DeepSeek-V3 e_score_correction_bias
    // A hybrid's layer norms the input of each half it has (Nemotron-H's
    // single-mixer layers keep one norm); a transformer block has them all.
    int64_t norms = m.norms_per_block;
    if (m.isHybrid())
        norms = m.norms_per_block / 2 * ((kind.mixer != MixerKind::None ? 1 : 0) + (kind.ffn != FfnKind::None ? 1 : 0));
    addNorm(lp.norms, m, m.hidden_size, norms);
    return lp;
}

int64_t countMoeLayers(const ModelConfig& m) {
    if (!m.isMoe()) return 0;
    if (m.isHybrid())
        return std::count_if(m.layer_kinds.begin(), m.layer_kinds.end(), [](LayerKind k) { return k.ffn == FfnKind::Moe; });
    int64_t n = 0;
    for (int64_t i = 0; i < m.num_layers; ++i)
        if (m.isMoeLayer(i)) ++n;
    return n;
}

// The multi-token-prediction layers a checkpoint stores (DeepSeek-V3's
// layout, which GLM-4.5 and Qwen3-Next follow): per depth one decoder layer
// with the model's attention and its MoE (or dense) MLP, the projection of
// [normed embedding; normed hidden] (eh_proj / fc, 2h x h), the two norms
// before it and the norm after the layer, and, where the family's
// checkpoint stores them, the layer's own copies of the embedding and head.
int64_t mtpParameters(const ModelConfig& m, const ParameterLayout& lay) {
    if (m.mtp_layers <= 0) return 0;
    const LayerKind kind{MixerKind::Attention, m.isMoe() ? FfnKind::Moe : FfnKind::Dense};
    int64_t per = layerParameters(m, kind).total().params;
    if (m.isHybrid()) {
        // A hybrid's MTP layer has the norms of a two-half layer.
        ModelConfig plain = m;
        plain.layer_kinds.clear();
        per = layerParameters(plain, kind).total().params;
    }
    per += 2 * m.hidden_size * m.hidden_size + 3 * m.hidden_size * (m.norm == NormKind::LayerNorm ? 2 : 1);
    if (familyOf(m.family).mtp_stores_ends) per += lay.embedding.params + m.vocab_size * m.hidden_size;
    return m.mtp_layers * per;
}

// Nemotron-NAS: the dense MLPs layer by layer, each its own width (the
// per-kind blocks of the layout take the widest).
int64_t perLayerMlpParameters(const ModelConfig& m) {
    ModelConfig one = m;
    one.layer_ffn_widths.clear();
    int64_t sum = 0;
    for (int64_t i = 0; i < m.num_layers; ++i) {
        if (m.layerKind(i).ffn != FfnKind::Dense) continue;
        one.ffn_hidden_size = m.layer_ffn_widths[static_cast<size_t>(i)];
        sum += layerParameters(one, {MixerKind::None, FfnKind::Dense}).dense_mlp.params;
    }
    return sum;
}

}  // namespace

ParameterLayout parameterLayout(const ModelConfig& m) {
    ParameterLayout lay;
    lay.num_layers = m.num_layers;
    lay.num_moe_layers = countMoeLayers(m);
    addMatrix(lay.embedding, m.vocab_size, m.hidden_size);
    if (m.learned_positions) addMatrix(lay.embedding, m.max_position_embeddings, m.hidden_size);
    addNorm(lay.final_norm, m, m.hidden_size);
    if (!m.tied_embeddings) addMatrix(lay.lm_head, m.vocab_size, m.hidden_size);
    // A block kind that does not occur stays all zero, so that consumers can
    // take maxima over both kinds without checking the layer counts.
    if (m.isHybrid()) {
        lay.hybrid = true;
        for (int64_t i = 0; i < m.num_layers; ++i) {
            const LayerKind k = m.layerKind(i);
            const size_t at = hybridKindIndex(k);
            if (lay.hybrid_count[at]++ == 0) lay.hybrid_layer[at] = layerParameters(m, k);
        }
        for (size_t at = 0; at < lay.hybrid_layer.size(); ++at)
            if (lay.hybrid_count[at] > 0 && lay.hybrid_layer[at].routed_experts.params > 0 && m.isMoe())
                lay.expert_params = lay.hybrid_layer[at].routed_experts.params / m.moe->num_experts;
        return lay;
    }
    if (lay.num_layers > lay.num_moe_layers) lay.dense_layer = layerParameters(m, LayerKind{});
    if (lay.num_moe_layers > 0) {
        lay.moe_layer = layerParameters(m, LayerKind{MixerKind::Attention, FfnKind::Moe});
        lay.expert_params = lay.moe_layer.routed_experts.params / m.moe->num_experts;
    }
    return lay;
}

ParameterCount countParameters(const ModelConfig& m, int64_t lora_rank, const std::vector<std::string>& lora_targets) {
    return countParameters(m, parameterLayout(m), lora_rank, lora_targets);
}

ParameterCount countParameters(const ModelConfig& m, const ParameterLayout& lay, int64_t lora_rank,
                               const std::vector<std::string>& lora_targets) {
    const int64_t moe = lay.num_moe_layers;
    const int64_t dense = lay.num_layers - moe;
    ParameterCount c;
    c.embedding = lay.embedding.params;
    c.lm_head = lay.lm_head.params;
    if (m.isHybrid()) {
        for (size_t at = 0; at < lay.hybrid_layer.size(); ++at) {
            const int64_t n = lay.hybrid_count[at];
            if (n == 0) continue;
            const LayerParameters& l = lay.hybrid_layer[at];
            // Falcon-H1's layers hold both: the Mamba-2 half counts as a linear mixer.
            const MixerKind mixer = hybridKindAt(at).mixer;
            int64_t linear = mixer == MixerKind::Attention ? 0 : l.attention.params;
            if (mixer == MixerKind::ParallelAttentionMamba2)
                linear = layerParameters(m, {MixerKind::Mamba2, FfnKind::None}).attention.params;
            c.attention += n * (l.attention.params - linear);
            c.linear_mixers += n * linear;
            c.mlp += n * l.dense_mlp.params;
            c.routed_experts += n * l.routed_experts.params;
            c.shared_experts += n * l.shared_experts.params;
            c.router += n * l.router.params;
            c.norms += n * l.norms.params;
        }
        c.norms += lay.final_norm.params;
        if (!m.layer_ffn_widths.empty()) c.mlp = perLayerMlpParameters(m);
    } else {
        c.attention = dense * lay.dense_layer.attention.params + moe * lay.moe_layer.attention.params;
        c.mlp = dense * lay.dense_layer.dense_mlp.params;
        c.routed_experts = moe * lay.moe_layer.routed_experts.params;
        c.shared_experts = moe * lay.moe_layer.shared_experts.params;
        c.router = moe * lay.moe_layer.router.params;
        c.norms = dense * lay.dense_layer.norms.params + moe * lay.moe_layer.norms.params + lay.final_norm.params;
    }
    LoraParameters lora;
    if (lora_rank > 0) lora = loraParameters(m, lora_rank, lora_targets);
    c.lora = lora.total;
    c.total = c.embedding + c.attention + c.linear_mixers + c.mlp + c.routed_experts + c.shared_experts + c.router +
              c.norms + c.lm_head + c.lora;
    c.mtp = mtpParameters(m, lay);
    c.vision = m.vision_parameters;
    c.checkpoint = c.total - c.lora + c.mtp + c.vision;
    c.trainable = lora_rank > 0 ? c.lora : c.total;
    c.active = c.total;
    if (moe > 0) {
        // Each token runs top_k of the E routed experts (and their adapters).
        const int64_t idle = m.moe->num_experts - m.moe->experts_per_token;
        const int64_t expert_adapter = lora_rank > 0 ? loraExpertParameters(m, lora_rank, lora_targets) : 0;
        c.active -= moe * idle * (lay.expert_params + expert_adapter);
    }
    return c;
}

}  // namespace trainmem
