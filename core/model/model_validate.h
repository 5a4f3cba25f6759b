#pragma once
// A model's sizes and relations, checked before anything is counted.
#include "core/base/error.h"
#include "core/model/model_config.h"

namespace trainmem {

// Checks sizes and relations (positive sizes, KV heads divide heads, ...).
// Field names in errors are the HF config keys prefixed "model." (the
// family's spelling: core/model/model_fields.h).
Status validate(const ModelConfig& model);

}  // namespace trainmem
