#pragma once
// The training stacks people run: which scenario keys a run of that stack
// sets out of the box (training keys, and how its FSDP wraps and reshards the
// model), each value read from the stack's code at a named release
// (docs/frameworks.md has the citations). A stack may have several releases,
// oldest first; `training.framework = NAME` is its newest, `NAME@RELEASE` or
// `NAME@YYYY-MM-DD` (the newest release read on or before that day) an older
// one. A key a row leaves unset keeps its value: nobody has read it, or the
// stack leaves it to the user. Setting training.framework applies the row
// first; explicit keys then override it (scenario files and --set alike).
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.h"
#include "core/training/parallel_config.h"
#include "core/scenario/scenario.h"
#include "core/training/training_config.h"

namespace trainmem {

struct FrameworkSpec {
    Framework id = Framework::Custom;
    std::string_view release;  // "v0.1.0" or a commit; empty for custom
    std::string_view date;     // the release's commit date, YYYY-MM-DD; empty when not read
    std::string_view read;     // what the row was read from: files and version
    std::optional<Precision> precision;
    std::optional<DType> grad_dtype;
    std::optional<OptimizerKind> optimizer;
    std::optional<OptimizerImpl> optimizer_impl;
    std::optional<bool> optimizer_in_backward;
    std::optional<Checkpointing> checkpointing;
    std::optional<int64_t> checkpoint_every;
    std::optional<std::vector<std::string>> checkpoint_save_ops;
    std::optional<LossImpl> loss;
    std::optional<int64_t> loss_chunks;
    std::optional<bool> optimizer_paged;
    std::optional<int64_t> lora_rank;
    std::optional<std::vector<std::string>> lora_targets;
    std::optional<int64_t> ddp_bucket_mib;  // hardware.ddp_bucket_mib
    // Parallelism keys: how the stack's FSDP / ZeRO-3 wraps the model's ends,
    // and reshards and reduces its units.
    std::optional<FsdpEnds> fsdp_ends;
    std::optional<bool> reshard_after_forward;
    std::optional<FsdpGradientSync> fsdp_gradient_sync;
    // The defaults that depend on the parallel layout (torchtitan's FSDP
    // under pipeline parallelism, LitGPT's FSDP strategy on more than one
    // GPU): refines a copy of the row for the layout; null when none do.
    void (*by_layout)(const ParallelConfig& layout, FrameworkSpec& row) = nullptr;
};

// The newest release of every framework, in the order of enumNames<Framework>().
const std::vector<FrameworkSpec>& frameworkCatalogue();
// Every release read of one framework, oldest first.
std::vector<const FrameworkSpec*> frameworkReleases(Framework framework);
// The row of a release; an empty release is the newest.
const FrameworkSpec& frameworkSpec(Framework framework, std::string_view release = {});
// The release a user names: a release's name, or a date (YYYY-MM-DD or
// YYYY-MM) that picks the newest release read on or before it. The error
// names training.framework and the releases there are.
Expected<const FrameworkSpec*> findFrameworkRelease(Framework framework, std::string_view release_or_date);
// The scenario's framework row (its release), refined for its layout.
FrameworkSpec frameworkSpecFor(const Scenario& scenario);

// Sets the keys the framework's row (refined for the scenario's current
// layout) sets, and records the framework and release; leaves the others.
void applyFrameworkDefaults(Scenario& scenario, Framework framework, std::string_view release = {});
// The training keys of the newest release only, whatever the layout.
void applyFrameworkDefaults(TrainingConfig& training, Framework framework);
// Once the whole scenario is read: sets again the keys the row sets by
// layout (the layout keys may have come after training.framework), except
// those `given` says were set explicitly ("training.activation_checkpointing").
void applyFrameworkLayoutDefaults(Scenario& scenario, const std::function<bool(std::string_view key)>& given);

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
