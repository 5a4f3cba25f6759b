#pragma once
// Whole-scenario checks: every field and every combination (degrees dividing
// heads, KV heads, layers and experts, GPU count, ...). They sit with the
// account because some combinations are the account's own rules (the FSDP
// and QLoRA policies, paged states). Errors name the field.
#include "core/base/error.h"
#include "core/scenario/scenario.h"

namespace trainmem {

Status validate(const Scenario& scenario);

}  // namespace trainmem
