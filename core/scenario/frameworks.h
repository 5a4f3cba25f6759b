#pragma once
// The training stacks people run, one row each: which scenario keys a run of
// that stack sets out of the box (training keys, and how its FSDP wraps the
// model's ends), each value read from the stack's code at a
// named version (docs/frameworks.md has the citations). A key a row leaves
// unset keeps its value: nobody has read it, or the stack leaves it to the
// user. Setting training.framework applies the row first; explicit keys then
// override it (scenario files and --set alike).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/scenario/scenario.h"
#include "core/training/training_config.h"

namespace trainmem {

struct FrameworkSpec {
    Framework id = Framework::Custom;
    std::string_view read;  // what the row was read from: files and version
    std::optional<Precision> precision;
    std::optional<DType> grad_dtype;
    std::optional<OptimizerKind> optimizer;
    std::optional<OptimizerImpl> optimizer_impl;
    std::optional<bool> optimizer_in_backward;
    std::optional<Checkpointing> checkpointing;
    std::optional<std::vector<std::string>> checkpoint_save_ops;
    std::optional<LossImpl> loss;
    std::optional<int64_t> loss_chunks;
    std::optional<bool> optimizer_paged;
    // A parallelism key: how the stack's FSDP / ZeRO-3 wraps the model's ends.
    std::optional<FsdpEnds> fsdp_ends;
};

// Every framework, in the order of enumNames<Framework>().
const std::vector<FrameworkSpec>& frameworkCatalogue();
const FrameworkSpec& frameworkSpec(Framework framework);

// Sets the keys the framework's row sets; leaves the others as they are.
void applyFrameworkDefaults(Scenario& scenario, Framework framework);
// The same for its training keys only.
void applyFrameworkDefaults(TrainingConfig& training, Framework framework);

// One key the scenario's framework sets: its scenario key, the framework's
// value as the scenario format writes it, and whether the scenario now holds
// another value (an explicit key overrode it).
struct FrameworkValue {
    std::string key;
    std::string value;
    bool overridden = false;
};
std::vector<FrameworkValue> frameworkValues(const Scenario& scenario);

}  // namespace trainmem
