#pragma once
// Exact parameter counts of a ModelConfig, by component and by layer kind,
// with the tensor shapes optimizers care about (matrices vs vectors).
// The LoRA counts (loraParameters, loraTargetNames) are in lora_parameters.cpp.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/model/model_config.h"

namespace trainmem {

// A group of tensors, summarised for memory accounting.
struct TensorGroup {
    int64_t params = 0;          // elements
    int64_t matrix_params = 0;   // elements in 2-D weight matrices (the rest are norms and biases)
    int64_t factored_elems = 0;  // sum of (rows + cols) over the matrices: Adafactor's factored second moment
    int64_t largest_tensor = 0;  // elements of the largest single tensor (per-tensor optimizer transients)
    TensorGroup& operator+=(const TensorGroup& o);
    bool operator==(const TensorGroup&) const = default;
};

// One transformer block. Routed experts hold all E experts of the layer.
struct LayerParameters {
    TensorGroup attention;       // q, k, v, o (or MLA projections), their biases, q/k norms
    TensorGroup dense_mlp;       // the MLP of a dense block
    TensorGroup routed_experts;  // all routed experts of a MoE block
    TensorGroup shared_experts;  // shared experts (+ Qwen2-MoE shared gate)
    TensorGroup router;          // gate Linear(h, E) (+ DeepSeek-V3 score bias)
    TensorGroup norms;           // the block's norms
    TensorGroup total() const;
    int64_t matmulParams() const; // parameters of matrices used in matmuls (attention, MLPs, experts, router)
};

struct ParameterLayout {
    TensorGroup embedding;       // token embedding (+ GPT-2 learned positions)
    TensorGroup final_norm;
    TensorGroup lm_head;         // empty when tied to the embedding
    LayerParameters dense_layer; // a block with a dense MLP
    LayerParameters moe_layer;   // a block with routed experts (all zero for dense models)
    int64_t num_layers = 0;
    int64_t num_moe_layers = 0;
    int64_t expert_params = 0;   // one routed expert
    // Hybrids (ModelConfig::layer_kinds): one block of each kind the model
    // has (hybridKindIndex) and how many layers have it; dense_layer and
    // moe_layer stay empty.
    bool hybrid = false;
    std::array<LayerParameters, kLayerKinds> hybrid_layer{};
    std::array<int64_t, kLayerKinds> hybrid_count{};
};

// The block of layer `layer`: a hybrid's block of its kind, else the dense
// or MoE block.
inline const LayerParameters& blockParameters(const ParameterLayout& lay, const ModelConfig& m, int64_t layer) {
    if (lay.hybrid) return lay.hybrid_layer[hybridKindIndex(m.layerKind(layer))];
    return m.isMoeLayer(layer) ? lay.moe_layer : lay.dense_layer;
}
// Calls f(block, count) for each kind of block the model has (count > 0).
template <class F>
void forEachBlockKind(const ParameterLayout& lay, F&& f) {
    if (lay.hybrid) {
        for (size_t i = 0; i < lay.hybrid_layer.size(); ++i)
            if (lay.hybrid_count[i] > 0) f(lay.hybrid_layer[i], lay.hybrid_count[i]);
        return;
    }
    if (lay.num_layers > lay.num_moe_layers) f(lay.dense_layer, lay.num_layers - lay.num_moe_layers);
    if (lay.num_moe_layers > 0) f(lay.moe_layer, lay.num_moe_layers);
}

// By component, whole model (not divided by any parallelism).
struct ParameterCount {
    int64_t embedding = 0;        // token (+ position) embeddings
    int64_t attention = 0;        // softmax attention (MLA included)
    int64_t linear_mixers = 0;    // a hybrid's Gated DeltaNet, Mamba and short-convolution mixers
    int64_t mlp = 0;              // dense MLPs
    int64_t routed_experts = 0;
    int64_t shared_experts = 0;
    int64_t router = 0;
    int64_t norms = 0;            // block norms + final norm
    int64_t lm_head = 0;          // 0 when tied
    int64_t lora = 0;             // LoRA adapters (trainable), 0 for full fine-tuning
    int64_t total = 0;            // everything above, adapters included
    int64_t trainable = 0;        // total for full fine-tuning; lora for LoRA/QLoRA
    int64_t active = 0;           // used per token: non-expert + top-k routed experts (+ adapters)
    // What the published checkpoint stores beyond the model class: its
    // multi-token-prediction layers and its vision / audio towers, and the
    // checkpoint's whole count (the Hub's total; adapters not included).
    int64_t mtp = 0;
    int64_t vision = 0;
    int64_t checkpoint = 0;
    bool operator==(const ParameterCount&) const = default;
};

ParameterLayout parameterLayout(const ModelConfig& model);

// LoRA adapter parameters per block for the given rank and target module
// names (q_proj k_proj v_proj o_proj gate_proj up_proj down_proj, "all-linear").
// On MoE blocks MLP targets apply to every expert, as PEFT does.
struct LoraParameters {
    int64_t dense_layer = 0;  // per dense block
    int64_t moe_layer = 0;    // per MoE block
    std::array<int64_t, kLayerKinds> hybrid_layer{};  // per block of each kind (hybrids)
    int64_t total = 0;
    int64_t matrix_input_width = 0;  // sum of adapter input widths per dense block (for activation accounting)
};
LoraParameters loraParameters(const ModelConfig& model, int64_t rank, const std::vector<std::string>& targets);
// Valid target names, for error messages and the GUI.
const std::vector<std::string>& loraTargetNames();
// Those that select at least one Linear of this model's blocks (dense or MoE),
// plus "all-linear", in the order above: what the GUI offers for this model.
std::vector<std::string> loraTargetNames(const ModelConfig& model);

// rank = 0 means full fine-tuning (no adapters).
ParameterCount countParameters(const ModelConfig& model, int64_t lora_rank = 0,
                               const std::vector<std::string>& lora_targets = {});
// The same from the model's parameterLayout(), computed before.
ParameterCount countParameters(const ModelConfig& model, const ParameterLayout& layout, int64_t lora_rank,
                               const std::vector<std::string>& lora_targets);

}  // namespace trainmem
