// libFuzzer driver: any bytes through the JSON reader with its limits, then
// as a scenario file and as a Hugging Face config.json, then estimate() and
// estimateStages(), checking what every estimate must keep:
//   - the breakdown sums to the peak's allocated bytes;
//   - allocated <= reserved <= device, nothing negative;
//   - fits exactly when the headroom is not negative, and never when the
//     estimate is too large to represent;
//   - no stage above the peak.
// A crash, a sanitizer report or an abort() here is a bug. Corpus:
// tests/fuzz/scenario_corpus (every reproducer of issue 15 included);
// build and run as in tests/fuzz/CMakeLists.txt and docs/robustness.md.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/account/estimate.h"
#include "core/model/hf_config.h"
#include "core/base/json_input.h"
#include "core/scenario/scenario.h"
#include "core/scenario/scenario_file.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

void checkEstimate(const trainmem::Scenario& scenario) {
    const auto estimate = trainmem::estimate(scenario);
    const auto stages = trainmem::estimateStages(scenario);
    FUZZ_CHECK(estimate.ok() == stages.ok());
    if (!estimate.ok()) {
        FUZZ_CHECK(!estimate.error().text().empty());
        return;
    }
    const trainmem::StageEstimate& peak = estimate->peak;
    int64_t sum = 0;
    for (const int64_t bytes : peak.at_peak.bytes) {
        FUZZ_CHECK(bytes >= 0);
        sum += bytes;
    }
    FUZZ_CHECK(sum == peak.allocated_bytes);
    FUZZ_CHECK(0 <= peak.allocated_bytes && peak.allocated_bytes <= peak.reserved_bytes);
    FUZZ_CHECK(peak.reserved_bytes <= peak.device_bytes);
    FUZZ_CHECK(!estimate->too_large && !peak.too_large);
    FUZZ_CHECK(estimate->host_bytes >= 0);
    FUZZ_CHECK(estimate->headroom_bytes == estimate->capacity_bytes - peak.device_bytes);
    FUZZ_CHECK(estimate->fits == (estimate->headroom_bytes >= 0));
    for (const trainmem::StageEstimate& stage : *stages) {
        FUZZ_CHECK(stage.allocated_bytes >= 0 && stage.allocated_bytes <= peak.allocated_bytes);
        FUZZ_CHECK(stage.reserved_bytes <= stage.device_bytes);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto json = trainmem::parseJsonText(text, "fuzz");
    if (!json.ok()) {
        FUZZ_CHECK(!json.error().message.empty());  // every error must say what is wrong
        return 0;
    }
    // As a scenario file...
    if (auto scenario = trainmem::scenarioFromJson(*json); scenario.ok()) {
        checkEstimate(*scenario);
    } else {
        FUZZ_CHECK(!scenario.error().text().empty());
    }
    // ...and as a config.json.
    if (auto imported = trainmem::importHuggingFaceConfig(*json); imported.ok()) {
        checkEstimate(trainmem::scenarioForModel(imported->model));
    } else {
        FUZZ_CHECK(!imported.error().text().empty());
    }
    return 0;
}
