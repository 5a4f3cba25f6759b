#pragma once
// Text renderings of an estimate (CLI output, the GUI's clipboard table) and
// the explanation of each component: what it is and how it scales.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/account/estimate.h"
#include "core/scenario/scenario.h"

namespace trainmem {

struct ComponentExplanation {
    std::string label;    // "Optimizer states"
    std::string scaling;  // "AdamW: 2x params, fp32"
    std::string formula;  // "8.03B x 12 B / 8 (ZeRO-3)"
};
// Human-readable sizes; GiB (1024^3) or GB (1000^3).
enum class Units { GiB, GB };

// Sizes in the formula in `units` (the app shows one unit everywhere).
ComponentExplanation explainComponent(Component c, const Scenario& scenario, const Estimate& estimate,
                                      Units units = Units::GiB);
// "8.03B params x (2+2+12) B = 128.5 GB for weights, gradients and optimizer" (seed figure's footer);
// without `units` in GB as the seed figure.
std::string workedExample(const Scenario& scenario, const Estimate& estimate);
std::string workedExample(const Scenario& scenario, const Estimate& estimate, Units units);
std::string formatBytes(int64_t bytes, Units units = Units::GiB);
// `value` with `decimals` digits, a tie rounded away from zero (136.125 ->
// "136.13", never cut): every number the CLI and the app print goes through it.
std::string formatNumber(double value, int decimals);
std::string formatCount(int64_t n);  // 8030261248 -> "8.03B"

// Every warning a report gives, in order: the scenario's (the importer's),
// the estimate's (warningTexts), and the family's activation caveat (a
// family whose account is not yet held to autograd). The CLI and the app
// show the same list.
std::vector<std::string> reportWarnings(const Scenario& scenario, const Estimate& estimate);
nlohmann::json estimateToJson(const Scenario& scenario, const Estimate& estimate);
std::string estimateToTable(const Scenario& scenario, const Estimate& estimate, Units units = Units::GiB);
std::string estimateToMarkdown(const Scenario& scenario, const Estimate& estimate, Units units = Units::GiB);
std::string estimateToCsv(const Scenario& scenario, const Estimate& estimate);

}  // namespace trainmem
