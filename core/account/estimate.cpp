// The estimate of one scenario: validate, prepare once, account every stage
// (layout_account.cpp).
#include "core/account/estimate.h"

#include "core/account/layout_account.h"
#include "core/account/scenario_validate.h"
#include "core/account/step_account.h"

namespace trainmem {

Estimate estimateValidated(const Scenario& s) { return estimatePrepared(s, prepareScenario(s)); }

static Error tooLargeError() {
    return Error{"", "the estimate is too large to represent: some byte count passes 2^62 bytes (4 EiB) per GPU; "
                     "check the sizes (sequence length, batch, hidden size, overheads)"};
}

Expected<Estimate> estimate(const Scenario& s) {
    if (Status st = validate(s); !st) return st.error();
    Estimate est = estimateValidated(s);
    if (est.too_large) return tooLargeError();
    return est;
}

Expected<std::vector<StageEstimate>> estimateStages(const Scenario& s) {
    if (Status st = validate(s); !st) return st.error();
    std::vector<StageEstimate> out = stageEstimates(s, prepareScenario(s));
    for (const StageEstimate& stage : out)
        if (stage.too_large) return tooLargeError();
    return out;
}

Expected<ScenarioEstimate> estimateWithStages(const Scenario& s) {
    if (Status st = validate(s); !st) return st.error();
    auto prepared = std::make_shared<const PreparedScenario>(prepareScenario(s));
    ScenarioEstimate out{estimatePrepared(s, *prepared), stageEstimates(s, *prepared), prepared};
    if (out.estimate.too_large) return tooLargeError();
    for (const StageEstimate& stage : out.stages)
        if (stage.too_large) return tooLargeError();
    return out;
}

}  // namespace trainmem
