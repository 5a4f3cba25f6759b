#pragma once
// Accuracy against measured memory: reads the measurement files written by
// validation/measure_gpu.py (one JSON per case: the scenario as given and
// what PyTorch's allocator counters recorded), estimates each scenario and
// compares. Method and bounds: docs/accuracy.md.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/scenario/scenario.h"

namespace trainmem {

// One measured case, as validation/measure_gpu.py writes it:
// {"scenario": {...}, "measured": {"allocated_peak_bytes": N, ...}}.
struct Measurement {
    std::string name;               // file stem, e.g. "llama12-amp-bf16-adamw-b1-s1024"
    std::filesystem::path path;     // the file it came from (empty when read from JSON directly)
    Scenario scenario;              // the "scenario" object, loaded by scenarioFromJson
    int64_t allocated_peak_bytes = 0;  // torch.cuda.max_memory_allocated over the measured steps
    int64_t reserved_peak_bytes = 0;   // torch.cuda.max_memory_reserved over the measured steps
    int64_t device_bytes = 0;          // cudaMemGetInfo total - free at the largest phase end
    std::string peak_phase;         // "forward", "loss", "backward", "optimizer step" or "zero_grad"
    std::string gpu;                // torch.cuda.get_device_name()
    std::string driver;             // nvidia-smi driver_version
    std::string torch;              // torch.__version__
    std::string transformers;       // transformers.__version__
    std::string cuda;               // torch.version.cuda
    int64_t steps = 0;              // measured optimizer steps after warm-up
    std::string implementation;     // optional: e.g. "attention sdpa, experts eager, LoRA by peft 0.17.1"
};

// The phase names a measurement may give (estimate.h's phaseName() plus
// zero_grad, which the estimator folds into the next forward).
const std::vector<std::string>& measuredPhaseNames();

// `source` names the file in error messages. Errors name the key as its
// dotted path ("measured.reserved_peak_bytes", "scenario.training.optimizer").
Expected<Measurement> measurementFromJson(const nlohmann::json& doc, const std::string& name,
                                          const std::string& source);
Expected<Measurement> readMeasurementFile(const std::filesystem::path& path);
// Every *.json directly in `dir`, sorted by file name; the first bad file is
// the error. An existing folder without measurements gives an empty list.
Expected<std::vector<Measurement>> readMeasurementDirectory(const std::filesystem::path& dir);

// (estimated - measured) / measured: positive when trainmem over-estimates.
double relativeError(int64_t estimated, int64_t measured);

struct CaseAccuracy {
    std::string name;
    int64_t measured_allocated = 0;
    int64_t estimated_allocated = 0;
    double allocated_error = 0;     // relativeError(estimated, measured)
    int64_t measured_reserved = 0;
    int64_t estimated_reserved = 0;
    double reserved_error = 0;
    std::string measured_phase;
    std::string estimated_phase;    // phaseName() of the estimate's peak
    std::string measured_on;        // "NVIDIA H200, driver 580.159.03, torch 2.11.0, transformers 5.17.0, CUDA 13.0"
};

// Estimates the measurement's scenario and compares. Errors (an invalid
// scenario) name the file.
Expected<CaseAccuracy> compareWithEstimate(const Measurement& measurement);

// Statistics of |error| over the cases. A median of an even count is the
// mean of the two middle values.
struct ErrorStatistics {
    double median_abs = 0;
    double worst_abs = 0;
    std::string worst_case;  // the case with the largest |error| (first of ties)
};
ErrorStatistics errorStatistics(const std::vector<CaseAccuracy>& cases, bool reserved);

// The bounds: allocated within 5% on every case and 3% at the median;
// reserved within 10% on every case.
struct AccuracyBounds {
    double allocated_worst = 0.05;
    double allocated_median = 0.03;
    double reserved_worst = 0.10;
};

struct AccuracyReport {
    std::vector<CaseAccuracy> cases;
    ErrorStatistics allocated;
    ErrorStatistics reserved;
};
AccuracyReport accuracyReport(std::vector<CaseAccuracy> cases);

// One line per exceeded bound ("allocated: worst |error| 6.2% (case x) exceeds 5%");
// empty when every bound holds or there are no cases.
std::vector<std::string> boundViolations(const AccuracyReport& report, const AccuracyBounds& bounds);

// Plain-text table: case, measured, estimated and error for allocated and
// reserved, the two peak phases, then the median and worst rows.
std::string accuracyTable(const AccuracyReport& report);

// The same table in Markdown, for docs/accuracy.md, followed by the
// machines and library versions measured on (each distinct one once).
std::string accuracyMarkdown(const AccuracyReport& report);

}  // namespace trainmem
