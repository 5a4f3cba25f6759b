#pragma once
// The Linear layers of one transformer block, as the Hugging Face modeling
// code builds them (names, shapes, fusion, biases). Parameter counts, the
// optimizer-facing tensor shapes and LoRA adapters are all derived from this
// one list, so they cannot disagree. Internal to the core.
// loraAdapts and loraExpertParameters are in lora_parameters.cpp.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/model_config.h"

namespace trainmem {

enum class BlockPart { Attention, DenseMlp, RoutedExperts, SharedExperts, Router };

// One nn.Linear (or GPT-2 Conv1D), `copies` times (the E routed experts).
struct BlockLinear {
    std::string_view module;  // HF module name, e.g. "q_proj", "c_attn", "kv_b_proj"
    BlockPart part = BlockPart::Attention;
    int64_t in = 0;           // in_features
    int64_t out = 0;          // out_features
    int64_t copies = 1;
    bool bias = false;
    // LoRA target names that select this layer (empty: never adapted, e.g. routers).
    std::array<std::string_view, 4> lora_targets{};
};

// Fixed capacity: the hot path of the estimator must not allocate.
struct BlockLinears {
    std::array<BlockLinear, 16> items{};
    size_t size = 0;
    void add(const BlockLinear& l) {
        if (size < items.size()) items[size++] = l;
    }
    const BlockLinear* begin() const { return items.data(); }
    const BlockLinear* end() const { return items.data() + size; }
};

// Linear layers of a dense block (moe_layer = false) or of a MoE block.
BlockLinears blockLinears(const ModelConfig& model, bool moe_layer);
// Linear layers of a layer of any kind (a hybrid's linear-attention, Mamba
// or short-convolution mixer; an FFN-less or mixer-less layer). The
// mixer's other parameters (convolutions, decays, gated norms) are
// mixerExtraParameters'.
BlockLinears blockLinears(const ModelConfig& model, LayerKind kind);
// Parameters of a token mixer that are not Linear layers: the depthwise
// convolution, A_log, dt_bias, D and the gated norm (elements, all vectors
// or small per-channel kernels).
int64_t mixerExtraParameters(const ModelConfig& model, MixerKind mixer);

// Width of the single shared-expert MLP of a MoE block (0 when none):
// Qwen2-MoE's shared_expert_intermediate_size, or DeepSeek's
// n_shared_experts x moe_intermediate_size (one MLP of that width).
int64_t sharedExpertWidth(const ModelConfig& model);

// Whether PEFT puts an adapter on this Linear for these target names
// (core/model/lora_parameters.cpp).
bool loraAdapts(const BlockLinear& linear, const std::vector<std::string>& targets);
// LoRA parameters on ONE routed expert of a MoE block (for active counts).
int64_t loraExpertParameters(const ModelConfig& model, int64_t rank, const std::vector<std::string>& targets);

}  // namespace trainmem
