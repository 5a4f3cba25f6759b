#pragma once
// The step time as the reports show it: the JSON "throughput" object of
// `estimate` and `fit`, and the text lines of the table and Markdown reports.
#include <string>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/scenario/scenario.h"
#include "core/steptime/step_time.h"

namespace trainmem {

// The FLOP convention of "mfu", as the reports state it.
inline constexpr const char* kMfuConvention =
    "model FLOPs per token = 6 x (active parameters - token embedding) + 12 x layers x heads x head_dim x sequence "
    "(torchtitan's get_num_flop_per_token, PaLM Appendix B; recomputation not counted), x tokens/s/GPU, / the GPU's "
    "dense bf16 peak";

// {"step_seconds", "tokens_per_second_per_gpu", "mfu", "mfu_convention",
//  "model_flops_per_token", "breakdown": {component: seconds}, "slowest_stage",
//  "slow_because"}; with `stages`, every pipeline stage's micro-batch too.
nlohmann::json throughputJson(const StepTime& time, const std::vector<StageTime>* stages = nullptr);
// For `estimate`: the object, or null with "throughput_error" set in `doc`.
void addThroughput(nlohmann::json& doc, const Scenario& scenario);
// "Step:       4.21 s, 5,120 tokens/s/GPU, MFU 41.3% (compute 78%, bubble 12%, ...)"
// or "Step:       not modelled: <why>".
std::string throughputLine(const Scenario& scenario);

}  // namespace trainmem
