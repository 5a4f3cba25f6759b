#include "ui/display_names.h"

#include "core/training/names.h"
#include "core/training/optimizer_state.h"

namespace trainmem::ui {

QString optimizerLabel(OptimizerKind kind) { return QString::fromUtf8(optimizerSpec(kind).label); }

QString precisionLabel(Precision precision) {
    switch (precision) {
        case Precision::Fp32: return QStringLiteral("fp32");
        case Precision::AmpBf16: return QStringLiteral("AMP bf16 (fp32 weights)");
        case Precision::AmpFp16: return QStringLiteral("AMP fp16 (fp32 weights)");
        case Precision::MixedBf16: return QStringLiteral("Mixed bf16 + fp32 master");
        case Precision::MixedFp16: return QStringLiteral("Mixed fp16 + fp32 master");
        case Precision::PureBf16: return QStringLiteral("Pure bf16");
        case Precision::Fp8Mixed: return QStringLiteral("FP8 (Transformer Engine)");
    }
    return {};
}

QString dtypeLabel(DType dtype) {
    const std::string_view n = dtypeName(dtype);
    return QString::fromUtf8(n.data(), static_cast<qsizetype>(n.size()));
}

Choices<OptimizerKind> optimizerChoices() {
    Choices<OptimizerKind> out;
    for (OptimizerKind k : allOptimizers()) out.emplace_back(optimizerLabel(k), k);
    return out;
}

Choices<Precision> precisionChoices() {
    Choices<Precision> out;
    for (Precision p : allPrecisions()) out.emplace_back(precisionLabel(p), p);
    return out;
}

Choices<OptimizerImpl> optimizerImplChoices() {
    return {{QStringLiteral("foreach (PyTorch default)"), OptimizerImpl::ForEach},
            {QStringLiteral("fused"), OptimizerImpl::Fused},
            {QStringLiteral("for-loop"), OptimizerImpl::ForLoop}};
}

Choices<Checkpointing> checkpointingChoices() {
    return {{QStringLiteral("None"), Checkpointing::None},
            {QStringLiteral("Selective (attention core)"), Checkpointing::Selective},
            {QStringLiteral("Full (every block)"), Checkpointing::Full},
            {QStringLiteral("Every k-th block"), Checkpointing::EveryK},
            {QStringLiteral("Op-level selective (save list)"), Checkpointing::Op},
            {QStringLiteral("Megatron block (first k blocks)"), Checkpointing::MegatronBlock},
            {QStringLiteral("torchtitan layer (every k-th from 1)"), Checkpointing::TorchtitanLayer},
            {QStringLiteral("Megatron uniform (groups of k blocks)"), Checkpointing::MegatronUniform}};
}

Choices<Framework> frameworkChoices() {
    return {{QStringLiteral("Custom (set each key)"), Framework::Custom},
            {QStringLiteral("Hugging Face Trainer"), Framework::HfTrainer},
            {QStringLiteral("torchtitan"), Framework::Torchtitan},
            {QStringLiteral("torchtune"), Framework::Torchtune},
            {QStringLiteral("Megatron-LM"), Framework::MegatronLm},
            {QStringLiteral("DeepSpeed"), Framework::Deepspeed},
            {QStringLiteral("LitGPT"), Framework::Litgpt}};
}

Choices<AttentionImpl> attentionChoices() {
    return {{QStringLiteral("Flash / SDPA"), AttentionImpl::Flash}, {QStringLiteral("Eager (s x s scores)"), AttentionImpl::Eager}};
}

Choices<KernelProfile> kernelChoices() {
    return {{QStringLiteral("Eager PyTorch (HF)"), KernelProfile::Eager},
            {QStringLiteral("Fused kernels (Liger/TE)"), KernelProfile::Fused},
            {QStringLiteral("Megatron-LM"), KernelProfile::Megatron},
            {QStringLiteral("torch.compile (per block)"), KernelProfile::Compile}};
}

Choices<LossImpl> lossChoices() {
    return {{QStringLiteral("Standard cross-entropy"), LossImpl::Standard},
            {QStringLiteral("Chunked cross-entropy"), LossImpl::Chunked},
            {QStringLiteral("Chunked output + cross-entropy (torchtune)"), LossImpl::ChunkedOutput},
            {QStringLiteral("Fused linear cross-entropy (Liger)"), LossImpl::FusedLinear},
            {QStringLiteral("Megatron vocab-parallel cross-entropy"), LossImpl::VocabParallel}};
}

Choices<Finetuning> finetuningChoices() {
    return {{QStringLiteral("Full"), Finetuning::Full}, {QStringLiteral("LoRA"), Finetuning::Lora},
            {QStringLiteral("QLoRA (NF4 base)"), Finetuning::Qlora}};
}

Choices<PipelineSchedule> scheduleChoices() {
    return {{QStringLiteral("1F1B"), PipelineSchedule::OneFOneB},
            {QStringLiteral("Interleaved 1F1B"), PipelineSchedule::Interleaved1F1B},
            {QStringLiteral("GPipe"), PipelineSchedule::GPipe}};
}

}  // namespace trainmem::ui
