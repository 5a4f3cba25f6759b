#pragma once
// The estimate of a scenario: validated, prepared, and every stage accounted
// (the accounts: step_account.h; the layouts: layout_account.h).
#include <memory>
#include <vector>

#include "core/account/estimate_result.h"
#include "core/base/error.h"
#include "core/scenario/scenario.h"

namespace trainmem {

// Validates, then estimates; an estimate too large to represent (more than
// 2^62 bytes somewhere) is an error saying so. Allocation-free after validation for a scenario
// whose model is already resolved (the solver's hot path).
Expected<Estimate> estimate(const Scenario& scenario);
// Skips validation: for callers that validated already (the layout solver).
// A too large estimate has too_large set and fits false.
Estimate estimateValidated(const Scenario& scenario);
// Every pipeline stage (for the per-stage chart); same numbers as estimate().
Expected<std::vector<StageEstimate>> estimateStages(const Scenario& scenario);

// estimate() and estimateStages() from one validation and one preparation:
// what the app needs on every edit. `prepared` is kept so that a layout
// search of the same model and recipe starts from it (searchLayouts).
struct PreparedScenario;
struct ScenarioEstimate {
    Estimate estimate;
    std::vector<StageEstimate> stages;
    std::shared_ptr<const PreparedScenario> prepared;
};
Expected<ScenarioEstimate> estimateWithStages(const Scenario& scenario);

}  // namespace trainmem
