#pragma once
// Layouts that fit: every way to spread one training run over N GPUs
// (data x tensor x pipeline x context, expert parallelism, ZeRO stage,
// sequence parallelism, pipeline schedule, micro-batch size, activation
// checkpointing), estimated one by one and ranked. The enumeration space,
// the validity rules and the ranking are in docs/layout-search.md.
// layoutSettings, rejectionOf and rejectionText are in layout_report.cpp.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/base/error.h"
#include "core/account/estimate.h"
#include "core/scenario/scenario.h"
#include "core/steptime/step_time.h"

namespace trainmem {

// The settings the solver varies; everything else comes from the base scenario.
struct Layout {
    int64_t data = 1;
    int64_t tensor = 1;
    int64_t pipeline = 1;
    int64_t context = 1;
    int64_t expert = 1;
    int64_t zero_stage = 0;
    bool sequence_parallel = false;
    PipelineSchedule schedule = PipelineSchedule::OneFOneB;
    int64_t virtual_stages = 1;
    int64_t micro_batch_size = 1;
    int64_t microbatches = 1;  // per optimizer step: accumulation steps, and pipeline micro-batches when PP > 1
    Checkpointing checkpointing = Checkpointing::None;

    int64_t gpus() const { return data * tensor * pipeline * context; }
    bool operator==(const Layout&) const = default;
};

struct LayoutSearchOptions {
    int64_t gpus = 0;                     // N = data x tensor x pipeline x context
    std::optional<int64_t> global_batch;  // sequences per optimizer step; nullopt keeps the base's accumulation
    int64_t top = 20;                     // fitting layouts kept, best first
    int64_t rejected = 5;                 // non-fitting layouts kept, closest to fitting first
    int64_t max_micro_batch = 64;         // micro-batch sizes tried: 1, 2, 4, ... up to this
    // The search stops after this many points of the space (about 10 s on
    // one core; docs/layout-search.md) and returns the best so far. A GPU
    // count with many divisors can make the space billions of points.
    int64_t max_layouts = kDefaultMaxLayouts;
    static constexpr int64_t kDefaultMaxLayouts = 500'000'000;
    // Called every 2^16 points with the counts so far; returning false stops
    // the search with the best so far (the CLI's Ctrl+C). May be empty.
    std::function<bool(int64_t enumerated, int64_t fitting)> progress;
    // The base scenario's preparation when the caller has it already
    // (ScenarioEstimate::prepared, made on the edit that started the search):
    // it depends on the model, the recipe and the GPU only, which no layout
    // changes. Empty: the search prepares the base itself.
    std::shared_ptr<const PreparedScenario> prepared;
};

struct RankedLayout {
    Layout layout;
    Estimate estimate;
    int64_t order = 0;  // position in enumeration order: the last tie-break, so the ranking is total
    // The modelled step time (core/steptime/, docs/step-time.md) of a fitting
    // layout; zero when the GPU has no rates or for a layout that does not fit.
    StepTime time;
};

struct LayoutSearchResult {
    int64_t enumerated = 0;  // points of the search space visited
    int64_t valid = 0;       // of those, layouts validate() accepts
    int64_t redundant = 0;   // of those, layouts a simpler one stands for (layoutRedundant); not estimated
    int64_t fitting = 0;     // of the valid - redundant estimated ones, layouts whose device total fits the GPU
    // Of the valid - redundant ones, layouts not accounted because a lower
    // bound on their device bytes proves they neither fit nor enter the
    // rejected list (layout_search.cpp); they change no other figure.
    int64_t skipped = 0;
    std::vector<RankedLayout> layouts;   // at most options.top, best first (rankedBefore)
    std::vector<RankedLayout> rejected;  // at most options.rejected, least over capacity first
    // Set when the search did not visit the whole space: "interrupted" (the
    // progress callback said stop) or "the limit of N layouts"; the lists
    // are then the best of the layouts visited.
    std::string stopped;
    // Said, not searched silently: a global batch smaller than the GPU count
    // leaves data parallelism at most the batch ("" otherwise).
    std::string note;
};

// Errors name the option ("gpus", "global_batch", "top", "rejected",
// "max_micro_batch") or the base scenario's field.
Expected<LayoutSearchResult> searchLayouts(const Scenario& base, const LayoutSearchOptions& options);

// A valid layout that behaves like a simpler one and so is not estimated
// or listed: ZeRO stages 1-3 with a single data x context rank (nothing to
// partition over: ZeRO-1/2 equal stage 0, ZeRO-3 only adds gather buffers),
// and GPipe or interleaved 1F1B with one micro-batch per step (every
// schedule then runs the same single forward and backward; 1F1B stands for them).
bool layoutRedundant(const Layout& layout);

// The ranking of fitting layouts: the most modelled tokens per second per
// GPU first (RankedLayout::time), then more headroom, then fewer pipeline
// stages, then less tensor parallelism, then enumeration order. Layouts
// without a step time (a GPU without rates) keep the memory-only order:
// least recomputation (none < selective < full), the larger micro-batch in
// tokens per GPU, then the same ties.
bool rankedBefore(const RankedLayout& a, const RankedLayout& b);

// Writes a layout into a scenario: the degrees, parallelism.gpus, ZeRO (with
// parallelism.shard_group reset to 0, full sharding), micro-batch size,
// accumulation steps = pipeline micro-batches (0 without a pipeline, as
// validate() requires), schedule and checkpointing. Allocation-free.
void applyLayout(Scenario& scenario, const Layout& layout);

// The "section.key" = value settings applyLayout writes, as applySetting
// takes them: applied to the base scenario they reproduce the layout.
std::vector<std::pair<std::string, std::string>> layoutSettings(const Scenario& scenario);

// Why a layout does not fit: the part over capacity and the largest
// component at its peak.
struct Rejection {
    int64_t over_bytes = 0;  // device total - capacity
    Phase phase = Phase::Forward;
    int64_t stage = 0;
    Component dominant = Component::Weights;
    int64_t dominant_bytes = 0;
};
Rejection rejectionOf(const Estimate& estimate);
// "over by 12.30 GiB at backward on stage 0; activations 41.00 GiB"
std::string rejectionText(const Rejection& rejection);

// The largest micro-batch size that fits with everything else of the
// scenario unchanged, or 0 when even 1 does not fit. Doubling, then
// bisection: assumes memory grows with the micro-batch (every term does).
Expected<int64_t> largestMicroBatch(const Scenario& scenario);

}  // namespace trainmem
