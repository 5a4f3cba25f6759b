#pragma once
// The memory account of one pipeline stage over one training step: what is
// alive at each moment that can be the peak, and the per-block quantities
// the step timeline ramps between them. estimate() and stepTimeline() both
// read this, so the timeline's maximum is the estimate's peak by construction.
#include <cstdint>
#include <vector>

// Defined in step_account.cpp, except: the preparation (prepareScenario,
// layoutActivations, stepInputs, stageFacts, stagePeakFloor) in
// step_account_prepare.cpp, and blockUnit in step_moments.cpp.
#include "core/account/account_types.h"
#include "core/scenario/scenario.h"

namespace trainmem {

PreparedScenario prepareScenario(const Scenario& scenario);

LayoutActivations layoutActivations(const Scenario& scenario);
// One block of `kind` as `policy` leaves it (not every-k and its kin).
LayoutActivations::BlockUnit blockUnit(Checkpointing policy, const LayerActivations& kind);

StepInputs stepInputs(const Scenario& scenario);

StageFacts stageFacts(const Scenario& scenario, const PreparedScenario& prepared, int64_t stage);

// The embedding, final-norm, logits and loss buffers alive with
// `micro_alive` micro-batches of activations in flight and `heads_saved`
// other micro-batches' heads kept, at a moment of the current micro-batch.
int64_t endsBytes(const StepAccount& account, double micro_alive, double heads_saved, EndsMoment moment);

StepAccount accountStep(const Scenario& scenario, const StepInputs& inputs, int64_t stage);
// The same account from facts computed before: `facts.stage.in_flight` and
// `head_in_flight` must be those of the scenario's schedule and micro-batches.
StepAccount accountStep(const Scenario& scenario, const PreparedScenario& prepared, const LayoutActivations& activations,
                        int64_t microbatches, const StageFacts& facts);
// The same, written over `account` (the caller keeps the storage).
void accountStep(const Scenario& scenario, const PreparedScenario& prepared, const LayoutActivations& activations,
                 int64_t microbatches, const StageFacts& facts, StepAccount& account);

// A lower bound on the stage's peak: its resident set, the gradients when
// they exist at the forward peak and the activations in flight there (the
// forward moment without its weight copies, gathered units, all-to-all and
// the model's ends, all >= 0). accountStep() with the same arguments has a
// peak of at least this; the search uses it to skip accounts (layout_search.cpp).
int64_t stagePeakFloor(const Scenario& scenario, const PreparedScenario& prepared, const LayoutActivations& activations,
                       int64_t microbatches, const StageFacts& facts);
// Weight copies alive with `microbatches_alive` micro-batches of saved
// activations in flight (fractions for partial passes and chunks).
int64_t weightCopiesAlive(int64_t autocast_per_microbatch, int64_t lasting, double microbatches_alive);

StagePeak stagePeak(const StepAccount& account);

}  // namespace trainmem
