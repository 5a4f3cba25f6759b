#pragma once
// Prepare once per scenario, account per layout: the stages that can be the
// heaviest planned once per set of degrees, scheduled per schedule and
// micro-batch count, and accounted per layout (layout_account.cpp). The
// estimate and the layout search both go through here.
#include <cstdint>
#include <vector>

#include "core/account/account_types.h"
#include "core/account/estimate_result.h"
#include "core/scenario/scenario.h"

namespace trainmem {

// The stages that can be the heaviest (layout_account.cpp), with their facts, for
// one set of degrees, ZeRO stage and offload: built once per such set and
// reused for every schedule, micro-batch count and size and checkpointing
// policy of the same kind (every-k or not). Reusing `plan` keeps its storage.
struct StagePlan {
    std::vector<StageFacts> stages;
    bool every_k = false;  // built for every-k checkpointing (its own candidate rule)
    // The stages' ScheduledStage for one schedule, chunk count and number of
    // micro-batches per step (scheduleStagePlan); accountLayout uses them
    // when they are the scenario's and makes its own otherwise.
    std::vector<ScheduledStage> scheduled;
    // scheduleKeepsMomentsAsTerms (core/account/step_moments.h) for that schedule.
    bool moments_as_terms = false;
    int64_t communicators = 0;  // NCCL communicators a rank of these degrees belongs to
    Estimate estimate_start;    // what every layout's estimate of these degrees starts from
    PipelineSchedule schedule = PipelineSchedule::OneFOneB;
    int64_t virtual_stages = 0;
    int64_t microbatches = 0;  // 0: not scheduled
    bool scheduledFor(const ParallelConfig& par, int64_t m) const {
        return microbatches == m && schedule == par.schedule && virtual_stages == par.virtual_stages;
    }
};
// Plans the stages for the scenario's degrees and ZeRO stage, and schedules
// them for its schedule and micro-batches.
void planStages(const Scenario& scenario, const PreparedScenario& prepared, StagePlan& plan);
// Schedules a plan for the scenario's schedule and micro-batches per step
// when it is not already (the search calls it per layout: a comparison
// unless they changed). Allocation-free once the plan has been scheduled.
void scheduleStagePlan(const Scenario& scenario, const PreparedScenario& prepared, StagePlan& plan);

// Prepare once per scenario, account per layout: estimateValidated() of a
// scenario whose model and recipe are those `prepared` was made from, and
// whose degrees and ZeRO stage are those `stages` was planned for.
// Allocation-free.
Estimate accountLayout(const Scenario& scenario, const PreparedScenario& prepared, const LayoutActivations& activations,
                       const StagePlan& stages);
// What the search reads of accountLayout()'s estimate to count a layout
// and to see whether it enters a list: the heaviest stage's device bytes
// (Estimate::peak.device_bytes) and Estimate::too_large, the same numbers,
// without building the rest when the plan is scheduled for the layout.
struct LayoutPeak {
    int64_t device_bytes = 0;
    bool too_large = false;
};
LayoutPeak accountLayoutPeak(const Scenario& scenario, const PreparedScenario& prepared,
                             const LayoutActivations& activations, const StagePlan& stages);
// accountLayout(), planning the stages on the way (no storage).
Estimate estimatePrepared(const Scenario& scenario, const PreparedScenario& prepared);

// The same bound on accountLayout()'s device bytes (the largest of the
// plan's stages' floors, rounded and topped up as the peak is): a layout
// whose floor is past the capacity cannot fit. 0 when `stages` is empty or
// planned for the other candidate rule.
int64_t deviceBytesFloor(const Scenario& scenario, const PreparedScenario& prepared,
                         const LayoutActivations& activations, const StagePlan& stages);
// deviceBytesFloor(...) >= bytes, stopping at the first stage whose floor
// shows it (the first stage, which keeps the most micro-batches in flight,
// usually does).
bool deviceBytesAtLeast(const Scenario& scenario, const PreparedScenario& prepared,
                        const LayoutActivations& activations, const StagePlan& stages, int64_t bytes);

// Every stage's estimate (the per-stage chart), from one preparation; a
// stage too large to represent has too_large set.
std::vector<StageEstimate> stageEstimates(const Scenario& scenario, const PreparedScenario& prepared);

}  // namespace trainmem
