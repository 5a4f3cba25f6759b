// trainmem-cli validate: the estimator against memory measured on a real GPU
// (validation/measure_gpu.py). Its exit status says whether the issue's
// bounds hold, so CI can run it once measurements are committed.
#include <filesystem>

#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/command.h"
#include "cli/output_format.h"
#include "core/report/accuracy.h"

namespace trainmem::cli {

namespace {

namespace fs = std::filesystem;

constexpr const char* kDefaultFolder = "validation/measurements";

const char* const kHelp =
    "Usage: trainmem-cli validate [DIR] [--format table|json|markdown]\n"
    "\n"
    "Compares the estimator with memory measured on a GPU. DIR (default\n"
    "validation/measurements, relative to the current folder) holds one JSON file\n"
    "per case, written by validation/measure_gpu.py: the scenario and the peaks\n"
    "of torch.cuda.max_memory_allocated and max_memory_reserved. For every case\n"
    "it prints measured and estimated memory and the error\n"
    "(estimated - measured) / measured, then the median and worst |error|.\n"
    "\n"
    "Bounds (docs/accuracy.md): allocated within 5% on every case and within 3%\n"
    "at the median; reserved within 10% on every case.\n"
    "\n"
    "Output:\n"
    "  --format table   aligned text (default)\n"
    "  --format json    every case and the statistics, byte counts as integers\n"
    "  --format markdown  the table and the machines measured on, for docs/accuracy.md\n"
    "\n"
    "Exit status:\n"
    "  0  every bound holds\n"
    "  1  a bound is exceeded (the table says which)\n"
    "  2  bad input: missing folder, no measurements in it, a malformed file or an\n"
    "     invalid scenario (one line on stderr naming the file and the key)\n"
    "\n"
    "Examples:\n"
    "  python3 validation/measure_gpu.py --all     # on a machine with a GPU\n"
    "  trainmem-cli validate\n"
    "  trainmem-cli validate path/to/measurements --format json\n";

nlohmann::json statisticsJson(const ErrorStatistics& s) {
    return {{"median_abs_error", s.median_abs}, {"worst_abs_error", s.worst_abs}, {"worst_case", s.worst_case}};
}

nlohmann::json reportJson(const AccuracyReport& report, const AccuracyBounds& bounds,
                          const std::vector<std::string>& violations) {
    nlohmann::json cases = nlohmann::json::array();
    for (const auto& c : report.cases)
        cases.push_back({{"case", c.name},
                         {"allocated", {{"measured_bytes", c.measured_allocated},
                                        {"estimated_bytes", c.estimated_allocated},
                                        {"error", c.allocated_error}}},
                         {"reserved", {{"measured_bytes", c.measured_reserved},
                                       {"estimated_bytes", c.estimated_reserved},
                                       {"error", c.reserved_error}}},
                         {"peak_phase", {{"measured", c.measured_phase}, {"estimated", c.estimated_phase}}},
                         {"measured_on", c.measured_on}});
    return {{"cases", cases},
            {"allocated", statisticsJson(report.allocated)},
            {"reserved", statisticsJson(report.reserved)},
            {"bounds", {{"allocated_worst", bounds.allocated_worst},
                        {"allocated_median", bounds.allocated_median},
                        {"reserved_worst", bounds.reserved_worst}}},
            {"within_bounds", violations.empty()},
            {"violations", violations}};
}

// The exit status (kExitOk within bounds, kExitNo exceeded) or the error that makes it kExitUsage.
Expected<int> validateMeasurements(const std::vector<std::string>& raw, std::ostream& out) {
    // DIR is the one positional argument; flags follow the common parser.
    fs::path folder = kDefaultFolder;
    std::vector<std::string> flags = raw;
    if (!flags.empty() && !flags.front().starts_with("--")) {
        folder = flags.front();
        flags.erase(flags.begin());
    }
    auto args = ArgumentList::parse(flags, {{"--format"}});
    if (!args) return args.error();
    auto format = outputFormat(*args, {"table", "json", "markdown"});
    if (!format) return format.error();

    auto measurements = readMeasurementDirectory(folder);
    if (!measurements) return measurements.error();
    if (measurements->empty())
        return Error{"", folder.string() +
                             ": no measurements (*.json) yet; run validation/measure_gpu.py --all on a GPU"};
    std::vector<CaseAccuracy> cases;
    for (const auto& m : *measurements) {
        auto c = compareWithEstimate(m);
        if (!c) return c.error();
        cases.push_back(std::move(c.value()));
    }
    const AccuracyBounds bounds;
    const AccuracyReport report = accuracyReport(std::move(cases));
    const auto violations = boundViolations(report, bounds);

    if (*format == OutputFormat::Json) {
        out << reportJson(report, bounds, violations).dump(2) << "\n";
    } else if (*format == OutputFormat::Markdown) {
        out << accuracyMarkdown(report);
    } else {
        out << accuracyTable(report) << "\n";
        if (violations.empty()) {
            out << "Within bounds: allocated |error| <= 5% on every case and <= 3% at the median, "
                   "reserved |error| <= 10%.\n";
        } else {
            for (const auto& v : violations) out << "Bound exceeded: " << v << "\n";
        }
    }
    return violations.empty() ? kExitOk : kExitNo;
}

}  // namespace

CliCommand validateCommand() {
    CliCommand command{"validate", "compare the estimator with memory measured on a GPU", kHelp,
                       [](const std::vector<std::string>& args, std::ostream& out) -> Status {
                           auto status = validateMeasurements(args, out);
                           if (!status) return status.error();
                           return ok();
                       }};
    command.run_with_exit_status = validateMeasurements;
    return command;
}

}  // namespace trainmem::cli
