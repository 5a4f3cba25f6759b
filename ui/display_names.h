#pragma once
// How the core's enums read in the window (the core's own names are the
// lower-case keys of files and the command line: "adamw", "mixed-bf16").
#include <utility>
#include <vector>

#include <QString>

#include "core/base/dtype.h"
#include "core/training/parallel_config.h"
#include "core/training/training_config.h"

namespace trainmem::ui {

QString optimizerLabel(OptimizerKind kind);     // "AdamW 8-bit"
QString precisionLabel(Precision precision);    // "Mixed bf16 + fp32 master"
QString dtypeLabel(DType dtype);                // "bf16"

template <class E>
using Choices = std::vector<std::pair<QString, E>>;
Choices<OptimizerKind> optimizerChoices();
Choices<Precision> precisionChoices();
Choices<OptimizerImpl> optimizerImplChoices();
Choices<Checkpointing> checkpointingChoices();
Choices<AttentionImpl> attentionChoices();
Choices<KernelProfile> kernelChoices();
Choices<LossImpl> lossChoices();
Choices<Finetuning> finetuningChoices();
Choices<Framework> frameworkChoices();
Choices<PipelineSchedule> scheduleChoices();

}  // namespace trainmem::ui
