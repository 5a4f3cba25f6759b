#pragma once
// The hybrids' layers from a config.json (issue 23): which layers are
// attention, Gated DeltaNet, Mamba-2 or short convolution and which carry
// an MLP or experts, each mixer's sizes, the stored MTP layers, and the
// vision tower of a multimodal checkpoint. Spellings and defaults are the
// families' transformers configuration classes (docs/memory-model.md,
// "Layer kinds"). Internal to the core: hf_config.cpp calls it.
#include <string>
#include <vector>

#include "core/model/config_reader.h"
#include "core/model/hf_families.h"
#include "core/model/model_config.h"

namespace trainmem {

// Reads the family's layer pattern and mixer sizes into `m` (whose sizes
// and MoE block are read already); problems go to `r`.
void readHybridLayers(ConfigReader& r, const FamilySpec& family, ModelConfig& m, std::vector<std::string>& warnings);
// DeepSeek Sparse Attention's indexer sizes, for the families that have one.
void readIndexer(ConfigReader& r, const FamilySpec& family, ModelConfig& m);
// The MTP layers the checkpoint stores (num_nextn_predict_layers,
// mtp_num_hidden_layers), or the family's (FamilySpec::mtp_layers).
void readMtpLayers(ConfigReader& r, const FamilySpec& family, ModelConfig& m);
// Parameters of a Qwen3-VL / Qwen3.5 vision tower from its vision_config
// (Qwen3_5VisionModel: Conv3d patch embedding, learned positions, `depth`
// blocks, the patch merger); errors name model.vision_config.<key>.
Expected<int64_t> qwenVisionParameters(const json& vision_config);

}  // namespace trainmem
