#pragma once
// The forward FLOPs of the hybrids' token-mixer cores per token (issue 23):
// what the chunked kernels compute beside the mixer's Linear layers, whole
// model width (divide by TP). Attention's core is step_time.cpp's (causal
// QK^T and PV); these are linear in the sequence. Terms and sources:
// docs/step-time.md, "Hybrid layers".
#include <cstdint>

#include "core/model/model_config.h"

namespace trainmem {

double mixerCoreFlopsPerToken(const ModelConfig& model, MixerKind mixer);

}  // namespace trainmem
