#pragma once
// The table of model fields: one row per ModelConfig field, as
// scenario_fields.h is for the scenario's keys. A row holds the field's
// config.json key in each family's spelling (read from the family's
// FamilySpec row), the other spellings the importer accepts, its type, its
// default per family, its allowed range, what it means, and its label and
// section in the app. The importer (hf_config.cpp) and the exporter
// (hf_config_export.cpp) take every key spelling from here, validate() every
// per-field range, describeModel() the plain fields, and the app's model
// panel (ui/model_panel.cpp) builds one widget per row. Adding a field is
// adding a row (and reading it where a family rule is genuinely code).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/model/hf_families.h"
#include "core/model/model_config.h"

namespace trainmem {

// Every field, in the order validate() checks them (the first problem is the
// one reported): the dense model's, then the experts', then latent attention's.
enum class ModelField {
    Name, Family,
    HiddenSize, NumLayers, NumHeads, NumKvHeads, HeadDim,
    HiddenAct, SlidingWindowLayers, NoRopeLayerInterval, PartialRotaryFactor,
    Intermediate, Vocab, MaxPositions, Mlp, Norm, NormsPerBlock, QkNorm,
    TiedEmbeddings, LearnedPositions, AttentionQkvBias, AttentionOutputBias, MlpBias,
    AttentionDropout, HiddenDropout, EmbeddingDropout,
    NumExperts, ExpertsPerToken, ExpertFfn, SharedExperts, SharedExpertFfn, SharedExpertGate, FirstDenseLayers,
    LayerFrequency, RouterScoreBias, NormTopkProb, RoutingGroups, RoutingGroupsKept, CapacityFactor,
    QLoraRank, KvLoraRank, QkNopeHeadDim, QkRopeHeadDim, VHeadDim,
    MtpLayers, IndexHeads, IndexHeadDim, IndexTopk,
    // The hybrids' mixers (issue 23): read and written by hf_hybrid.cpp and
    // the exporter's writeHybrid in the family's spelling; checked by
    // validateHybrid (model_validate.cpp).
    AttentionOutputGate, LinearKeyHeads, LinearValueHeads, LinearKeyHeadDim, LinearValueHeadDim, LinearConvKernel,
    MambaHeads, MambaHeadDim, MambaStateSize, MambaGroups, MambaConvKernel, MambaChunkSize, MambaConvBias,
    MambaProjBias, ShortConvKernel, ShortConvBias,
};
// How many fields there are (ModelField's last value + 1): sizes tables
// indexed by ModelField.
inline constexpr size_t kModelFieldCount = static_cast<size_t>(ModelField::ShortConvBias) + 1;

enum class ModelFieldType {
    Integer,  // int64_t
    Number,   // double
    Flag,     // bool
    Text,     // free string (the display name)
    Choice,   // one of `choices` (MLP and norm kind, the activation, the family)
};

// Where the app shows the field (and which optional block holds it).
enum class ModelSection {
    Identity,   // name and family
    Sizes,      // widths and counts of the dense model
    Structure,  // MLP, norm, activation, biases, embeddings
    Layers,     // which layers slide, skip the rotary
    Dropout,
    Experts,    // ModelConfig::moe: only when the model has experts
    Latent,     // ModelConfig::mla: only with multi-head latent attention
    Mixers,     // a hybrid's Gated DeltaNet, Mamba-2 and short-convolution sizes: only in a hybrid
};

// What validate() allows; each kind has one message (model_validate.cpp).
enum class FieldRange {
    Any,                // no check beyond the type (importer: |integer| <= kMaxModelSize)
    Positive,           // 1 .. kMaxModelSize
    LayerCount,         // 1 .. kMaxLayers
    NonNegative,        // 0 .. kMaxModelSize
    Probability,        // [0, 1)
    Fraction,           // (0, 1]
    NonNegativeNumber,  // finite and >= 0
    UpToLayers,         // 0 .. num_hidden_layers
    NoPeInterval,       // 0 (none) .. kMaxModelSize + 1
    Activation,         // a name of activationCatalogue()
};

struct FieldChoice {
    std::string_view name;   // as written in config.json ("gated")
    std::string_view label;  // as the app shows it ("Gated (SwiGLU)")
};

struct ModelFieldRow {
    ModelField field;
    std::string_view name;  // the ModelConfig member ("moe.expert_ffn"): "model." + name is its canonical path
    ModelFieldType type;
    ModelSection section;
    std::string_view label;    // the app's label
    std::string_view meaning;  // the app's tooltip: what it is, typical values
    FieldRange range = FieldRange::Any;
    // The key in config.json, in the family's spelling.
    std::string_view (*key)(const FamilySpec&) = nullptr;
    // Other keys the importer reads for it, in any family (GPT-2's
    // attribute_map names, the trainmem spellings of older files).
    std::vector<std::string_view> aliases;
    // The family's default when the key is absent; null where the default
    // is derived from other fields (head_dim = hidden / heads, GPT-2's
    // n_inner = 4 * n_embd, MoE widths = intermediate_size).
    nlohmann::json (*default_of)(const FamilySpec&) = nullptr;
    std::vector<FieldChoice> choices;  // Choice: the allowed values (empty: computed, see choicesOf)
    // The name describeModel() gives it ("" = described by code or not at all).
    std::string_view described_as;
    // Where the app's arrows stop (the typed value is checked by validate());
    // a Number steps by a twentieth of the span.
    double step_minimum = 0;
    double step_maximum = 0;
    // The value in a ModelConfig as JSON (null when its block is absent) and
    // the setter (which creates the block).
    nlohmann::json (*get)(const ModelConfig&) = nullptr;
    void (*set)(ModelConfig&, const nlohmann::json&) = nullptr;
};

// Every row, in ModelField order.
const std::vector<ModelFieldRow>& modelFields();
const ModelFieldRow& modelFieldRow(ModelField field);
// The allowed values of a Choice row (the activation catalogue, the family catalogue).
std::vector<FieldChoice> choicesOf(const ModelFieldRow& row);

// The bare key in the family's spelling, e.g. "num_attention_heads" or "n_head".
std::string_view configKey(std::string_view family, ModelField field);
// "model." + configKey(...), the Error::field of validation errors.
std::string modelField(std::string_view family, ModelField field);
// Every path an error may name the field by, for any family: its canonical
// path ("model.moe.expert_ffn"), every family's key and its aliases, with
// "model.text_config." for the families read from a multimodal config.
std::vector<std::string> fieldPaths(const ModelFieldRow& row);
// The paths this family's errors name it by, to be bound last so they win
// where two fields share a key across families (intermediate_size).
std::vector<std::string> familyFieldPaths(const ModelFieldRow& row, std::string_view family);

}  // namespace trainmem
