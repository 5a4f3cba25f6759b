// Names of the configuration enums. The spellings are the ones of the
// scenario format (docs/scenario-format.md); changing one breaks saved
// scenario files, so add names, never rename.
#include "core/training/names.h"

#include <array>
#include <vector>

#include "core/training/optimizer_state.h"

namespace trainmem {

namespace {

constexpr std::array<EnumName<DType>, 6> kDTypes{{
    {DType::Fp32, "fp32"},
    {DType::Bf16, "bf16"},
    {DType::Fp16, "fp16"},
    {DType::Fp8, "fp8"},
    {DType::Int8, "int8"},
    {DType::Nf4, "nf4"},
}};

constexpr std::array<EnumName<Precision>, 7> kPrecisions{{
    {Precision::Fp32, "fp32"},
    {Precision::AmpBf16, "amp-bf16"},
    {Precision::AmpFp16, "amp-fp16"},
    {Precision::MixedBf16, "mixed-bf16"},
    {Precision::MixedFp16, "mixed-fp16"},
    {Precision::PureBf16, "pure-bf16"},
    {Precision::Fp8Mixed, "fp8-mixed"},
}};

// Optimizer names come from the optimizer catalogue (core/training/optimizer_state.cpp).
const std::vector<EnumName<OptimizerKind>>& optimizerNames() {
    static const std::vector<EnumName<OptimizerKind>> names = [] {
        std::vector<EnumName<OptimizerKind>> n;
        for (const OptimizerSpec& o : optimizerCatalogue()) n.push_back({o.kind, o.key});
        return n;
    }();
    return names;
}

constexpr std::array<EnumName<OptimizerImpl>, 3> kOptimizerImpls{{
    {OptimizerImpl::ForEach, "foreach"},
    {OptimizerImpl::Fused, "fused"},
    {OptimizerImpl::ForLoop, "for-loop"},
}};

constexpr std::array<EnumName<Checkpointing>, 8> kCheckpointing{{
    {Checkpointing::None, "none"},
    {Checkpointing::Selective, "selective"},
    {Checkpointing::Full, "full"},
    {Checkpointing::EveryK, "every-k"},
    {Checkpointing::Op, "op"},
    {Checkpointing::MegatronBlock, "megatron-block"},
    {Checkpointing::TorchtitanLayer, "torchtitan-layer"},
    {Checkpointing::MegatronUniform, "megatron-uniform"},
}};

constexpr std::array<EnumName<ActivationOffloading>, 3> kOffloading{{
    {ActivationOffloading::None, "none"},
    {ActivationOffloading::Torchtune, "torchtune"},
    {ActivationOffloading::TorchtuneNoStreams, "torchtune-no-streams"},
}};

constexpr std::array<EnumName<AttentionImpl>, 2> kAttention{{
    {AttentionImpl::Flash, "flash"},
    {AttentionImpl::Eager, "eager"},
}};

constexpr std::array<EnumName<KernelProfile>, 4> kKernels{{
    {KernelProfile::Eager, "eager"},
    {KernelProfile::Fused, "fused"},
    {KernelProfile::Megatron, "megatron"},
    {KernelProfile::Compile, "compile"},
}};

constexpr std::array<EnumName<LossImpl>, 5> kLosses{{
    {LossImpl::Standard, "standard"},
    {LossImpl::Chunked, "chunked"},
    {LossImpl::ChunkedOutput, "chunked_output"},
    {LossImpl::FusedLinear, "fused_linear"},
    {LossImpl::VocabParallel, "vocab_parallel"},
}};

constexpr std::array<EnumName<Framework>, 7> kFrameworks{{
    {Framework::Custom, "custom"},
    {Framework::HfTrainer, "hf-trainer"},
    {Framework::Torchtitan, "torchtitan"},
    {Framework::Torchtune, "torchtune"},
    {Framework::MegatronLm, "megatron-lm"},
    {Framework::Deepspeed, "deepspeed"},
    {Framework::Litgpt, "litgpt"},
}};

constexpr std::array<EnumName<Finetuning>, 3> kFinetuning{{
    {Finetuning::Full, "full"},
    {Finetuning::Lora, "lora"},
    {Finetuning::Qlora, "qlora"},
}};

constexpr std::array<EnumName<PipelineSchedule>, 3> kSchedules{{
    {PipelineSchedule::OneFOneB, "1f1b"},
    {PipelineSchedule::Interleaved1F1B, "interleaved-1f1b"},
    {PipelineSchedule::GPipe, "gpipe"},
}};

constexpr std::array<EnumName<FsdpGradientSync>, 2> kSyncNames{{
    {FsdpGradientSync::EveryMicrobatch, "every-microbatch"},
    {FsdpGradientSync::LastMicrobatch, "last-microbatch"},
}};

constexpr std::array<EnumName<FsdpEnds>, 3> kEndsNames{{
    {FsdpEnds::Root, "root"},
    {FsdpEnds::OwnUnits, "own-units"},
    {FsdpEnds::OwnUnitsHeadKept, "own-units-head-kept"},
}};

constexpr std::array<EnumName<QloraBackend>, 3> kBackendNames{{
    {QloraBackend::Bnb, "bnb"},
    {QloraBackend::BnbLegacy, "bnb-legacy"},
    {QloraBackend::TorchaoNf4, "torchao-nf4"},
}};

template <class E>
std::vector<E> valuesOf(std::span<const EnumName<E>> table) {
    std::vector<E> values;
    for (const auto& entry : table) values.push_back(entry.value);
    return values;
}

}  // namespace

template <>
std::span<const EnumName<DType>> enumNames<DType>() { return kDTypes; }
template <>
std::span<const EnumName<Precision>> enumNames<Precision>() { return kPrecisions; }
template <>
std::span<const EnumName<FsdpGradientSync>> enumNames<FsdpGradientSync>() { return kSyncNames; }
template <>
std::span<const EnumName<FsdpEnds>> enumNames<FsdpEnds>() { return kEndsNames; }
template <>
std::span<const EnumName<QloraBackend>> enumNames<QloraBackend>() { return kBackendNames; }
template <>
std::span<const EnumName<OptimizerKind>> enumNames<OptimizerKind>() { return optimizerNames(); }
template <>
std::span<const EnumName<OptimizerImpl>> enumNames<OptimizerImpl>() { return kOptimizerImpls; }
template <>
std::span<const EnumName<Checkpointing>> enumNames<Checkpointing>() { return kCheckpointing; }
template <>
std::span<const EnumName<AttentionImpl>> enumNames<AttentionImpl>() { return kAttention; }
template <>
std::span<const EnumName<KernelProfile>> enumNames<KernelProfile>() { return kKernels; }
template <>
std::span<const EnumName<LossImpl>> enumNames<LossImpl>() { return kLosses; }
template <>
std::span<const EnumName<Finetuning>> enumNames<Finetuning>() { return kFinetuning; }
template <>
std::span<const EnumName<ActivationOffloading>> enumNames<ActivationOffloading>() { return kOffloading; }
template <>
std::span<const EnumName<Framework>> enumNames<Framework>() { return kFrameworks; }
template <>
std::span<const EnumName<PipelineSchedule>> enumNames<PipelineSchedule>() { return kSchedules; }

std::string_view dtypeName(DType t) { return enumName(t); }
std::optional<DType> parseDType(std::string_view name) { return parseEnum<DType>(name); }

std::string_view precisionName(Precision v) { return enumName(v); }
std::string_view optimizerName(OptimizerKind v) { return enumName(v); }
std::string_view optimizerImplName(OptimizerImpl v) { return enumName(v); }
std::string_view checkpointingName(Checkpointing v) { return enumName(v); }
std::string_view attentionName(AttentionImpl v) { return enumName(v); }
std::string_view kernelProfileName(KernelProfile v) { return enumName(v); }
std::string_view lossName(LossImpl v) { return enumName(v); }
std::string_view finetuningName(Finetuning v) { return enumName(v); }
std::string_view activationOffloadingName(ActivationOffloading v) { return enumName(v); }
std::optional<Precision> parsePrecision(std::string_view s) { return parseEnum<Precision>(s); }
std::optional<OptimizerKind> parseOptimizer(std::string_view s) { return parseEnum<OptimizerKind>(s); }
std::optional<OptimizerImpl> parseOptimizerImpl(std::string_view s) { return parseEnum<OptimizerImpl>(s); }
std::optional<Checkpointing> parseCheckpointing(std::string_view s) { return parseEnum<Checkpointing>(s); }
std::optional<AttentionImpl> parseAttention(std::string_view s) { return parseEnum<AttentionImpl>(s); }
std::optional<KernelProfile> parseKernelProfile(std::string_view s) { return parseEnum<KernelProfile>(s); }
std::optional<LossImpl> parseLoss(std::string_view s) { return parseEnum<LossImpl>(s); }
std::optional<Finetuning> parseFinetuning(std::string_view s) { return parseEnum<Finetuning>(s); }

const std::vector<OptimizerKind>& allOptimizers() {
    static const std::vector<OptimizerKind> all = valuesOf<OptimizerKind>(optimizerNames());
    return all;
}

const std::vector<Precision>& allPrecisions() {
    static const std::vector<Precision> all = valuesOf<Precision>(kPrecisions);
    return all;
}

std::string_view scheduleName(PipelineSchedule v) { return enumName(v); }
std::optional<PipelineSchedule> parseSchedule(std::string_view s) { return parseEnum<PipelineSchedule>(s); }

}  // namespace trainmem
