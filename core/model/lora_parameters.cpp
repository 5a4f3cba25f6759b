#include <algorithm>

#include "core/model/block_linears.h"
#include "core/model/parameters.h"

namespace trainmem {
namespace {

constexpr std::string_view kAllLinear = "all-linear";

// PEFT matches a target name against the module's own name (the last dotted
// component, peft/tuners/tuners_utils.py check_target_module_exists); fused
// and renamed modules also answer to the names of what they fuse (see
// BlockLinear::lora_targets), so that "q_proj" adapts GPT-2's c_attn.
bool selected(const BlockLinear& l, const std::vector<std::string>& targets) {
    if (l.lora_targets[0].empty()) return false;  // routers and gates are not adapted
    for (const std::string& t : targets) {
        if (t == kAllLinear) return true;
        for (std::string_view name : l.lora_targets)
            if (!name.empty() && name == t) return true;
    }
    return false;
}

// LoRA (Hu et al. 2021, §4.1): W0 + B·A with A of r x in and B of out x r,
// so r·(in + out) parameters per adapted Linear.
int64_t adapterParams(const BlockLinear& l, int64_t rank) { return rank * (l.in + l.out); }

}  // namespace

bool loraAdapts(const BlockLinear& linear, const std::vector<std::string>& targets) { return selected(linear, targets); }

const std::vector<std::string>& loraTargetNames() {
    static const std::vector<std::string> names = {
        "q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", std::string(kAllLinear),
        // GPT-2 Conv1D modules, Phi-3 fused modules, Mixtral experts, DeepSeek MLA.
        "c_attn", "c_proj", "c_fc", "qkv_proj", "gate_up_proj", "w1", "w2", "w3", "q_a_proj", "q_b_proj",
        "kv_a_proj_with_mqa", "kv_b_proj",
        // The hybrids' mixers: Gated DeltaNet, Mamba-2 and short convolutions,
        // Jamba's Mamba-1 (x_proj, dt_proj), Kimi Linear's KDA gates.
        "in_proj_qkvz", "in_proj_ba", "in_proj_qkv", "in_proj_z", "in_proj_b", "in_proj_a", "in_proj", "out_proj",
        "x_proj", "dt_proj", "f_a_proj", "f_b_proj", "b_proj", "g_a_proj", "g_b_proj"};
    return names;
}

std::vector<std::string> loraTargetNames(const ModelConfig& model) {
    std::vector<std::string> out;
    for (const std::string& name : loraTargetNames()) {
        bool used = name == kAllLinear;
        if (model.isHybrid()) {
            for (const LayerKind& kind : model.layer_kinds) {
                if (used) break;
                for (const BlockLinear& l : blockLinears(model, kind))
                    if (selected(l, {name})) used = true;
            }
        }
        for (bool moe_layer : {false, true}) {
            if (used || model.isHybrid() || (moe_layer && !model.isMoe())) break;
            for (const BlockLinear& l : blockLinears(model, moe_layer))
                if (selected(l, {name})) used = true;
        }
        if (used) out.push_back(name);
    }
    return out;
}

LoraParameters loraParameters(const ModelConfig& model, int64_t rank, const std::vector<std::string>& targets) {
    LoraParameters out;
    if (rank <= 0 || targets.empty()) return out;
    if (model.isHybrid()) {
        // One count per kind the model uses; the input widths are those of
        // the first layer's linears (the activation account's LoRA rows take
        // their widths from the block table itself).
        std::array<bool, kLayerKinds> done{};
        for (const LayerKind& kind : model.layer_kinds) {
            const size_t at = hybridKindIndex(kind);
            if (!done[at]) {
                done[at] = true;
                for (const BlockLinear& l : blockLinears(model, kind))
                    if (selected(l, targets)) out.hybrid_layer[at] += l.copies * adapterParams(l, rank);
            }
            out.total += out.hybrid_layer[at];
        }
        for (const BlockLinear& l : blockLinears(model, model.layer_kinds.front()))
            if (selected(l, targets)) out.matrix_input_width += l.in;
        return out;
    }
    for (const BlockLinear& l : blockLinears(model, false)) {
        if (!selected(l, targets)) continue;
        out.dense_layer += l.copies * adapterParams(l, rank);
        out.matrix_input_width += l.in;
    }
    int64_t moe_layers = 0;
    if (model.isMoe()) {
        for (const BlockLinear& l : blockLinears(model, true))
            if (selected(l, targets)) out.moe_layer += l.copies * adapterParams(l, rank);
        for (int64_t i = 0; i < model.num_layers; ++i)
            if (model.isMoeLayer(i)) ++moe_layers;
    }
    out.total = out.dense_layer * (model.num_layers - moe_layers) + out.moe_layer * moe_layers;
    return out;
}

int64_t loraExpertParameters(const ModelConfig& model, int64_t rank, const std::vector<std::string>& targets) {
    if (rank <= 0 || !model.isMoe()) return 0;
    int64_t n = 0;
    for (const BlockLinear& l : blockLinears(model, true))
        if (l.part == BlockPart::RoutedExperts && selected(l, targets)) n += adapterParams(l, rank);
    return n;
}

}  // namespace trainmem
