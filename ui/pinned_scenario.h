#pragma once
// A scenario pinned for comparison, with its estimate and its label: what the
// Compare tab holds, a scenario file's "pins" and a trainmem: link carry, and
// the comparison chart and table draw.
#include <QString>

#include "core/account/estimate.h"
#include "core/scenario/scenario.h"

namespace trainmem::ui {

struct PinnedScenario {
    QString label;  // "A", "B", ...
    Scenario scenario;
    Estimate estimate;
};

}  // namespace trainmem::ui
