// trainmem-cli snapshot: a measured PyTorch memory snapshot, its peaks and
// the phase each falls in, optionally beside the estimate of a scenario.
// The file is read by the restricted unpickler: nothing in it is executed.
#include <charconv>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/output_format.h"
#include "cli/scenario_source.h"
#include "core/account/estimate.h"
#include "core/snapshot/memory_snapshot.h"
#include "core/report/report.h"
#include "core/base/text_table.h"

namespace trainmem::cli {

namespace {

constexpr size_t kDefaultCurvePoints = 200;

const char* const kHelp =
    "Usage: trainmem-cli snapshot FILE [--device N] [--format table|json] [--points N] [--units gib|gb]\n"
    "                             [--preset NAME | --model-config FILE | --scenario FILE] [--set KEY=VALUE]...\n"
    "\n"
    "Reads a PyTorch memory snapshot, the pickle written by\n"
    "  torch.cuda.memory._record_memory_history(max_entries=100000)\n"
    "  ...  # a few training steps\n"
    "  torch.cuda.memory._dump_snapshot(\"snapshot.pickle\")\n"
    "without running any code from it (opcodes that import or call are refused),\n"
    "rebuilds allocated and reserved memory over the recorded events of one GPU,\n"
    "and prints both peaks with the event, time and phase of the training step\n"
    "(forward, loss, backward, optimizer step; from the recorded stack frames).\n"
    "What was alive before the trace began (the trace is a ring buffer) is the\n"
    "baseline both curves start from. With a scenario, its estimate is set\n"
    "beside the measurement: error = (estimated - measured) / measured.\n"
    "\n"
    "Options:\n"
    "  --device N             the GPU to read (default: the first with events or segments)\n"
    "  --format table         peaks, baseline and warnings as aligned text (default)\n"
    "  --format json          the same in bytes, plus the curve\n"
    "  --points N             curve points in the JSON (default 200; 0 = every event);\n"
    "                         the ends and both peaks are always kept\n"
    "  --units gib|gb         units of the table (default gib = 1024^3 bytes)\n"
    "\n";

const char* const kHelpTail =
    "\n"
    "Examples:\n"
    "  trainmem-cli snapshot snapshot.pickle\n"
    "  trainmem-cli snapshot snapshot.pickle --scenario my-run.json\n"
    "  trainmem-cli snapshot snapshot.pickle --device 1 --format json --points 0 > curve.json\n";

Expected<int64_t> nonNegativeInteger(const ArgumentList& args, std::string_view flag, int64_t fallback) {
    const auto text = args.value(flag);
    if (!text) return fallback;
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
    if (ec != std::errc() || end != text->data() + text->size() || v < 0) {
        return Error{std::string(flag), "must be a non-negative integer, got '" + *text + "'"};
    }
    return v;
}

nlohmann::json optionalJson(const std::optional<int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

// (estimated - measured) / measured, as trainmem-cli validate reports it.
double relativeError(int64_t estimated, int64_t measured) {
    return measured == 0 ? 0.0 : (static_cast<double>(estimated) - static_cast<double>(measured)) / static_cast<double>(measured);
}

std::string percent(double fraction) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%+.1f%%", fraction * 100.0);
    return buffer;
}

std::string timeText(const std::optional<int64_t>& t) { return t ? std::to_string(*t) : "-"; }
std::string eventText(int64_t event) { return event < 0 ? "baseline" : std::to_string(event); }

struct Comparison {
    std::string scenario;
    Estimate estimate;
};

std::string table(const std::string& file, const MemorySnapshot& snapshot, const SnapshotTimeline& t, Units units,
                  const std::optional<Comparison>& comparison) {
    std::string devices;
    for (int64_t d : snapshotDevices(snapshot)) devices += (devices.empty() ? "" : ", ") + std::to_string(d);
    std::string out = "Snapshot  " + file + "\n";
    out += "Device    " + std::to_string(t.device) + " (devices in the file: " + devices + "), " +
           std::to_string(t.event_count) + " events, " + std::to_string(snapshot.stacks.size()) + " distinct call stacks\n";
    out += "Baseline  " + formatBytes(t.allocated_baseline_bytes, units) + " allocated, " +
           formatBytes(t.reserved_baseline_bytes, units) + " reserved before the first recorded event\n\n";

    TextTable peaks;
    peaks.header = {"peak", "memory", "bytes", "event", "time_us", "phase"};
    peaks.align = {Align::Left, Align::Right, Align::Right, Align::Right, Align::Right, Align::Left};
    peaks.rows.push_back({"allocated", formatBytes(t.allocated_peak_bytes, units), std::to_string(t.allocated_peak_bytes),
                          eventText(t.allocated_peak_event), timeText(t.allocated_peak_time_us), t.peak_phase});
    peaks.rows.push_back({"reserved", formatBytes(t.reserved_peak_bytes, units), std::to_string(t.reserved_peak_bytes),
                          eventText(t.reserved_peak_event), timeText(t.reserved_peak_time_us), t.reserved_peak_phase});
    out += renderPlain(peaks);

    if (comparison) {
        const StageEstimate& e = comparison->estimate.peak;
        TextTable cmp;
        cmp.header = {"", "measured", "estimated", "error"};
        cmp.align = {Align::Left, Align::Right, Align::Right, Align::Right};
        cmp.rows.push_back({"allocated", formatBytes(t.allocated_peak_bytes, units), formatBytes(e.allocated_bytes, units),
                            percent(relativeError(e.allocated_bytes, t.allocated_peak_bytes))});
        cmp.rows.push_back({"reserved", formatBytes(t.reserved_peak_bytes, units), formatBytes(e.reserved_bytes, units),
                            percent(relativeError(e.reserved_bytes, t.reserved_peak_bytes))});
        cmp.rows.push_back({"peak phase", t.peak_phase, std::string(phaseName(e.peak_phase)), ""});
        out += "\nEstimate of " + comparison->scenario + "\n" + renderPlain(cmp);
        if (const auto mismatch = snapshotMismatch(t.allocated_peak_bytes, e.allocated_bytes))
            out += "Warning:  " + *mismatch + "\n";
    }
    if (!t.warnings.empty()) {
        out += "\nWarnings:\n";
        for (const auto& w : t.warnings) out += "  " + w + "\n";
    }
    return out;
}

nlohmann::json json(const std::string& file, const MemorySnapshot& snapshot, const SnapshotTimeline& t,
                    const std::optional<Comparison>& comparison) {
    nlohmann::json curve = nlohmann::json::array();
    for (const auto& p : t.curve) {
        curve.push_back({{"event", p.event_index}, {"time_us", optionalJson(p.time_us)},
                         {"allocated_bytes", p.allocated_bytes}, {"reserved_bytes", p.reserved_bytes}});
    }
    nlohmann::json j = {
        {"file", file},
        {"device", t.device},
        {"devices", snapshotDevices(snapshot)},
        {"event_count", t.event_count},
        {"call_stacks", snapshot.stacks.size()},
        {"allocated", {{"baseline_bytes", t.allocated_baseline_bytes}, {"peak_bytes", t.allocated_peak_bytes},
                       {"peak_event", t.allocated_peak_event}, {"peak_time_us", optionalJson(t.allocated_peak_time_us)},
                       {"peak_phase", t.peak_phase}}},
        {"reserved", {{"baseline_bytes", t.reserved_baseline_bytes}, {"peak_bytes", t.reserved_peak_bytes},
                      {"peak_event", t.reserved_peak_event}, {"peak_time_us", optionalJson(t.reserved_peak_time_us)},
                      {"peak_phase", t.reserved_peak_phase}}},
        {"oom_events", t.oom_events},
        {"warnings", t.warnings},
        {"curve", curve},
    };
    if (comparison) {
        const StageEstimate& e = comparison->estimate.peak;
        j["estimate"] = {{"scenario", comparison->scenario},
                         {"allocated_bytes", e.allocated_bytes},
                         {"reserved_bytes", e.reserved_bytes},
                         {"peak_phase", phaseName(e.peak_phase)},
                         {"allocated_error", relativeError(e.allocated_bytes, t.allocated_peak_bytes)},
                         {"reserved_error", relativeError(e.reserved_bytes, t.reserved_peak_bytes)}};
        if (const auto mismatch = snapshotMismatch(t.allocated_peak_bytes, e.allocated_bytes))
            j["estimate"]["mismatch"] = *mismatch;
    }
    return j;
}

Status run(const std::vector<std::string>& raw, std::ostream& out) {
    // FILE is the one positional argument, first; flags follow the common parser.
    if (raw.empty() || raw.front().starts_with("--")) {
        return Error{"", "no snapshot file: trainmem-cli snapshot FILE (see trainmem-cli snapshot --help)"};
    }
    const std::string file = raw.front();
    std::vector<FlagSpec> flags = scenarioSourceFlags();
    for (const char* f : {"--device", "--format", "--points", "--units"}) flags.push_back({f});
    auto args = ArgumentList::parse({raw.begin() + 1, raw.end()}, flags);
    if (!args) return args.error();
    auto format = outputFormat(*args, {"table", "json"});
    if (!format) return format.error();
    auto units = outputUnits(*args);
    if (!units) return units.error();
    auto points = nonNegativeInteger(*args, "--points", kDefaultCurvePoints);
    if (!points) return points.error();
    if (*points > 0 && *points < 4) return Error{"--points", "must be 0 (every event) or at least 4"};

    std::optional<Comparison> comparison;
    if (args->has("--preset") || args->has("--model-config") || args->has("--scenario") || args->has("--set")) {
        auto scenario = scenarioFromArguments(*args);
        if (!scenario) return scenario.error();
        auto result = estimate(*scenario);
        if (!result) return result.error();
        const std::string name = scenario->name.empty() ? std::string("the scenario") : scenario->name;
        comparison = Comparison{name, std::move(*result)};
    }

    auto snapshot = loadMemorySnapshotFile(file);
    if (!snapshot) return snapshot.error();
    const auto devices = snapshotDevices(*snapshot);
    if (devices.empty()) return Error{file, "holds no trace and no segments for any device"};
    auto device = nonNegativeInteger(*args, "--device", devices.front());
    if (!device) return device.error();
    auto timeline = snapshotTimeline(*snapshot, TimelineOptions{*device, static_cast<size_t>(*points)});
    if (!timeline) {
        Error e = timeline.error();
        if (e.field == "device") e.field = "--device";
        return e;
    }

    if (*format == OutputFormat::Json) {
        // The file name comes from the command line and may not be UTF-8.
        out << json(file, *snapshot, *timeline, comparison).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
            << "\n";
    } else {
        out << table(file, *snapshot, *timeline, *units, comparison);
    }
    return ok();
}

}  // namespace

CliCommand snapshotCommand() {
    static const std::string help = std::string(kHelp) + kScenarioSourceHelp + kHelpTail;
    return {"snapshot", "peaks of a measured PyTorch memory snapshot, beside an estimate", help, run};
}

}  // namespace trainmem::cli
