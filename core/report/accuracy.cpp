// Measurement files -> comparison with the estimator. The reader is strict
// (unknown keys, wrong types and impossible values are errors naming the key
// and the file) because a silently misread measurement would make the bound
// test pass or fail for the wrong reason.
#include "core/report/accuracy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <limits>
#include <system_error>

#include "core/account/estimate.h"
#include "core/base/text_table.h"
#include "core/scenario/scenario_file.h"
#include "core/account/scenario_validate.h"
#include "core/base/json_input.h"

namespace trainmem {

namespace {

using nlohmann::json;

const std::vector<std::string> kTopLevelKeys = {"scenario", "measured"};
const std::vector<std::string> kMeasuredKeys = {"allocated_peak_bytes", "reserved_peak_bytes", "device_bytes",
                                                "peak_phase", "gpu", "driver", "torch", "transformers", "cuda",
                                                "steps", "implementation"};

std::string joined(const std::vector<std::string>& names) {
    std::string text;
    for (const auto& n : names) text += (text.empty() ? "" : ", ") + n;
    return text;
}

std::string shortValue(const json& value) {
    std::string text = value.dump();
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    return text;
}

// Errors carry the dotted key as the field and the file at the end of the
// message, so "trainmem-cli validate" prints both on one line.
class MeasurementReader {
public:
    explicit MeasurementReader(std::string source) : source_(std::move(source)) {}

    Error error(const std::string& key, const std::string& message) const {
        return Error{key, message + (source_.empty() ? "" : " (in " + source_ + ")")};
    }

    Status onlyKeys(const json& object, const std::string& prefix, const std::vector<std::string>& allowed) const {
        for (const auto& [key, value] : object.items())
            if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
                return error(prefix + key, "unknown key; allowed keys: " + joined(allowed));
        return ok();
    }

    Expected<const json*> member(const json& object, const std::string& prefix, const std::string& key,
                                 const std::string& what) const {
        auto it = object.find(key);
        if (it == object.end()) return error(prefix + key, "required: " + what);
        return &*it;
    }

    Expected<int64_t> bytes(const json& measured, const std::string& key, const std::string& what) const {
        auto value = member(measured, "measured.", key, what);
        if (!value) return value.error();
        const json& v = **value;
        if (!v.is_number_integer())
            return error("measured." + key, "expected an integer byte count (got " + shortValue(v) + ")");
        if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
            return error("measured." + key, "is too large (got " + shortValue(v) + ")");
        const auto n = v.get<int64_t>();
        if (n <= 0) return error("measured." + key, "must be a positive byte count (got " + std::to_string(n) + ")");
        return n;
    }

    Expected<std::string> text(const json& measured, const std::string& key, const std::string& what,
                               bool may_be_empty) const {
        auto value = member(measured, "measured.", key, what);
        if (!value) return value.error();
        const json& v = **value;
        if (!v.is_string()) return error("measured." + key, "expected a string (got " + shortValue(v) + ")");
        auto s = v.get<std::string>();
        if (s.empty() && !may_be_empty) return error("measured." + key, "must not be empty: " + what);
        return s;
    }

private:
    std::string source_;
};

double median(std::vector<double> values) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

std::string percent(double fraction) {
    if (!std::isfinite(fraction)) return "n/a";
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%+.2f%%", fraction * 100.0);
    return buffer;
}

std::string unsignedPercent(double fraction) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.2f%%", fraction * 100.0);
    return buffer;
}

// MiB with one decimal: GiB with two decimals would hide errors of a few
// percent on the small models measured.
std::string mib(int64_t bytes) {
    char buffer[48];
    std::snprintf(buffer, sizeof buffer, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
    return buffer;
}

}  // namespace

const std::vector<std::string>& measuredPhaseNames() {
    static const std::vector<std::string> names = {std::string(phaseName(Phase::Forward)),
                                                   std::string(phaseName(Phase::Loss)),
                                                   std::string(phaseName(Phase::Backward)),
                                                   std::string(phaseName(Phase::OptimizerStep)), "zero_grad"};
    return names;
}

Expected<Measurement> measurementFromJson(const json& doc, const std::string& name, const std::string& source) {
    const MeasurementReader r(source);
    if (!doc.is_object()) return r.error("", "a measurement must be a JSON object with \"scenario\" and \"measured\"");
    if (auto keys = r.onlyKeys(doc, "", kTopLevelKeys); !keys) return keys.error();

    Measurement m;
    m.name = name;
    auto scenario_json = r.member(doc, "", "scenario", "the trainmem scenario that was measured");
    if (!scenario_json) return scenario_json.error();
    auto scenario = scenarioFromJson(**scenario_json);
    Status valid = scenario ? validate(*scenario) : Status(scenario.error());
    if (!valid) {
        const Error& e = valid.error();
        return r.error(e.field.empty() ? "scenario" : "scenario." + e.field, e.message);
    }
    m.scenario = std::move(scenario.value());

    auto measured_json = r.member(doc, "", "measured", "the counters recorded by validation/measure_gpu.py");
    if (!measured_json) return measured_json.error();
    const json& measured = **measured_json;
    if (!measured.is_object())
        return r.error("measured", "expected an object of counters (got " + shortValue(measured) + ")");
    if (auto keys = r.onlyKeys(measured, "measured.", kMeasuredKeys); !keys) return keys.error();

    auto allocated = r.bytes(measured, "allocated_peak_bytes", "torch.cuda.max_memory_allocated() in bytes");
    if (!allocated) return allocated.error();
    auto reserved = r.bytes(measured, "reserved_peak_bytes", "torch.cuda.max_memory_reserved() in bytes");
    if (!reserved) return reserved.error();
    auto device = r.bytes(measured, "device_bytes", "device memory in use (total - free) in bytes");
    if (!device) return device.error();
    // The caching allocator's segments hold every live block.
    if (*reserved < *allocated)
        return r.error("measured.reserved_peak_bytes",
                       "must be at least allocated_peak_bytes (" + std::to_string(*allocated) + "), got " +
                           std::to_string(*reserved));
    m.allocated_peak_bytes = *allocated;
    m.reserved_peak_bytes = *reserved;
    m.device_bytes = *device;

    auto phase = r.text(measured, "peak_phase", "the phase of the allocated peak", false);
    if (!phase) return phase.error();
    const auto& phases = measuredPhaseNames();
    if (std::find(phases.begin(), phases.end(), *phase) == phases.end())
        return r.error("measured.peak_phase", "unknown phase \"" + *phase + "\"; allowed: " + joined(phases));
    m.peak_phase = *phase;

    struct TextKey {
        const char* key;
        std::string* out;
        const char* what;
        bool may_be_empty;
    };
    const TextKey texts[] = {{"gpu", &m.gpu, "the device name", false},
                             {"driver", &m.driver, "the NVIDIA driver version", true},
                             {"torch", &m.torch, "torch.__version__", false},
                             {"transformers", &m.transformers, "transformers.__version__", true},
                             {"cuda", &m.cuda, "torch.version.cuda", true}};
    for (const auto& t : texts) {
        auto value = r.text(measured, t.key, t.what, t.may_be_empty);
        if (!value) return value.error();
        *t.out = std::move(value.value());
    }

    auto steps = r.member(measured, "measured.", "steps", "the number of measured steps");
    if (!steps) return steps.error();
    if (!(*steps)->is_number_integer() || (*steps)->get<int64_t>() < 1)
        return r.error("measured.steps", "expected a positive integer (got " + shortValue(**steps) + ")");
    m.steps = (*steps)->get<int64_t>();

    // Optional: older files (and other harnesses) need not say which kernels ran.
    if (measured.contains("implementation")) {
        auto implementation = r.text(measured, "implementation", "the kernels that ran, in words", false);
        if (!implementation) return implementation.error();
        m.implementation = std::move(implementation.value());
    }
    return m;
}

Expected<Measurement> readMeasurementFile(const std::filesystem::path& path) {
    auto doc = readJsonFile(path);
    if (!doc) return doc.error();
    try {
        auto m = measurementFromJson(*doc, path.stem().string(), path.string());
        if (m) m->path = path;
        return m;
    } catch (const std::exception& e) {
        return Error{"", path.string() + ": cannot read measurement: " + e.what()};
    }
}

Expected<std::vector<Measurement>> readMeasurementDirectory(const std::filesystem::path& dir) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
        return Error{"", dir.string() + ": no such folder of measurements"};
    std::vector<std::filesystem::path> files;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".json" && it->is_regular_file(ec)) files.push_back(it->path());
    if (ec) return Error{"", dir.string() + ": cannot list the folder: " + ec.message()};
    std::sort(files.begin(), files.end());

    std::vector<Measurement> measurements;
    for (const auto& file : files) {
        auto m = readMeasurementFile(file);
        if (!m) return m.error();
        measurements.push_back(std::move(m.value()));
    }
    return measurements;
}

double relativeError(int64_t estimated, int64_t measured) {
    if (measured == 0) return estimated == 0 ? 0.0 : std::numeric_limits<double>::infinity();
    return (static_cast<double>(estimated) - static_cast<double>(measured)) / static_cast<double>(measured);
}

Expected<CaseAccuracy> compareWithEstimate(const Measurement& m) {
    auto est = estimate(m.scenario);
    if (!est) {
        const Error& e = est.error();
        const std::string where = m.path.empty() ? m.name : m.path.string();
        return Error{e.field.empty() ? "scenario" : "scenario." + e.field, e.message + " (in " + where + ")"};
    }
    CaseAccuracy c;
    c.name = m.name;
    c.measured_allocated = m.allocated_peak_bytes;
    c.estimated_allocated = est->peak.allocated_bytes;
    c.allocated_error = relativeError(c.estimated_allocated, c.measured_allocated);
    c.measured_reserved = m.reserved_peak_bytes;
    c.estimated_reserved = est->peak.reserved_bytes;
    c.reserved_error = relativeError(c.estimated_reserved, c.measured_reserved);
    c.measured_phase = m.peak_phase;
    c.estimated_phase = std::string(phaseName(est->peak.peak_phase));
    c.measured_on = m.gpu;
    for (const auto& [label, value] : {std::pair{"driver ", &m.driver}, std::pair{"torch ", &m.torch},
                                       std::pair{"transformers ", &m.transformers}, std::pair{"CUDA ", &m.cuda}})
        if (!value->empty()) c.measured_on += ", " + std::string(label) + *value;
    return c;
}

ErrorStatistics errorStatistics(const std::vector<CaseAccuracy>& cases, bool reserved) {
    ErrorStatistics s;
    std::vector<double> errors;
    for (const auto& c : cases) {
        const double e = std::fabs(reserved ? c.reserved_error : c.allocated_error);
        errors.push_back(e);
        if (s.worst_case.empty() || e > s.worst_abs) {
            s.worst_abs = e;
            s.worst_case = c.name;
        }
    }
    s.median_abs = median(std::move(errors));
    return s;
}

AccuracyReport accuracyReport(std::vector<CaseAccuracy> cases) {
    AccuracyReport r;
    r.cases = std::move(cases);
    r.allocated = errorStatistics(r.cases, false);
    r.reserved = errorStatistics(r.cases, true);
    return r;
}

std::vector<std::string> boundViolations(const AccuracyReport& r, const AccuracyBounds& b) {
    std::vector<std::string> out;
    if (r.cases.empty()) return out;
    // NaN or infinity never passes a bound.
    auto exceeds = [](double value, double bound) { return !(value <= bound); };
    if (exceeds(r.allocated.worst_abs, b.allocated_worst))
        out.push_back("allocated: worst |error| " + unsignedPercent(r.allocated.worst_abs) + " (" +
                      r.allocated.worst_case + ") exceeds " + unsignedPercent(b.allocated_worst));
    if (exceeds(r.allocated.median_abs, b.allocated_median))
        out.push_back("allocated: median |error| " + unsignedPercent(r.allocated.median_abs) + " exceeds " +
                      unsignedPercent(b.allocated_median));
    if (exceeds(r.reserved.worst_abs, b.reserved_worst))
        out.push_back("reserved: worst |error| " + unsignedPercent(r.reserved.worst_abs) + " (" +
                      r.reserved.worst_case + ") exceeds " + unsignedPercent(b.reserved_worst));
    return out;
}

namespace {

TextTable accuracyTextTable(const AccuracyReport& r, bool markdown) {
    TextTable t;
    t.header = {"Case",          "Allocated measured", "estimated", "error", "Reserved measured", "estimated",
                "error",         "Peak measured",      "estimated"};
    t.align = {Align::Left, Align::Right, Align::Right, Align::Right, Align::Right, Align::Right, Align::Right,
               Align::Left, Align::Left};
    for (const auto& c : r.cases)
        t.rows.push_back({c.name, mib(c.measured_allocated), mib(c.estimated_allocated), percent(c.allocated_error),
                          mib(c.measured_reserved), mib(c.estimated_reserved), percent(c.reserved_error),
                          c.measured_phase, c.estimated_phase});
    if (!r.cases.empty()) {
        if (!markdown) t.rows.push_back({});  // Markdown has no blank rows inside a table
        t.rows.push_back({"median |error|", "", "", unsignedPercent(r.allocated.median_abs), "", "",
                          unsignedPercent(r.reserved.median_abs), "", ""});
        t.rows.push_back({"worst |error|", "", "", unsignedPercent(r.allocated.worst_abs), "", "",
                          unsignedPercent(r.reserved.worst_abs), "", ""});
    }
    return t;
}

}  // namespace

std::string accuracyTable(const AccuracyReport& r) { return renderPlain(accuracyTextTable(r, false)); }

std::string accuracyMarkdown(const AccuracyReport& r) {
    std::string out = renderMarkdown(accuracyTextTable(r, true));
    std::vector<std::string> machines;
    for (const auto& c : r.cases)
        if (std::find(machines.begin(), machines.end(), c.measured_on) == machines.end())
            machines.push_back(c.measured_on);
    if (!machines.empty()) {
        out += "\nMeasured on:\n";
        for (const auto& m : machines) out += "- " + m + "\n";
    }
    return out;
}

}  // namespace trainmem
