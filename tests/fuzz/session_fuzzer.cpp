// libFuzzer driver for what the app reads back at start (issue 28, N02: the
// session was the one JSON reader without the 32-level limit, and a deep
// value crashed every start): any bytes as the session file (session.json,
// or an older release's session/last settings value) through the bounded
// reader, then the checks MainWindow::applySession makes before using it,
// and every scenario in it (the session's own and each pin's) through
// scenarioFromJson and estimate(). Each input must end within kTimeBoundSeconds of CPU time.
// The Qt side (QSettings' INI parsing, the window) is not in this core-only
// build; tests/ui/session_recovery_test.cpp covers it. Corpus:
// tests/fuzz/session_corpus.
#include <ctime>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/account/estimate.h"
#include "core/base/json_input.h"
#include "core/scenario/scenario.h"
#include "core/scenario/scenario_file.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

// CPU time, so a loaded machine does not make a slow input of a fast one.
constexpr double kTimeBoundSeconds = 1.0;

double cpuSeconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

void useScenario(const nlohmann::json& value) {
    const auto scenario = trainmem::scenarioFromJson(value);
    if (!scenario.ok()) {
        FUZZ_CHECK(!scenario.error().text().empty());
        return;
    }
    const auto estimate = trainmem::estimate(*scenario);
    if (!estimate.ok()) return;
    FUZZ_CHECK(estimate->peak.allocated_bytes >= 0 && estimate->peak.allocated_bytes <= estimate->peak.reserved_bytes);
    FUZZ_CHECK(estimate->fits == (estimate->headroom_bytes >= 0));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const double started = cpuSeconds();
    const auto session = trainmem::parseJsonText(std::string_view(reinterpret_cast<const char*>(data), size), "session.json");
    if (!session.ok()) {
        FUZZ_CHECK(!session.error().message.empty());
        return 0;
    }
    if (!session->is_object()) return 0;
    const auto scenario = session->find("scenario");
    if (scenario != session->end() && scenario->is_object()) useScenario(*scenario);
    const auto pins = session->find("pins");
    if (pins != session->end() && pins->is_array()) {
        size_t seen = 0;
        for (const auto& pin : *pins) {
            if (++seen > 6) break;  // CompareTab::kMaxPins: the rest are refused unread
            if (pin.is_object() && pin.contains("scenario")) useScenario(pin["scenario"]);
        }
    }
    FUZZ_CHECK(cpuSeconds() - started < kTimeBoundSeconds);
    return 0;
}
