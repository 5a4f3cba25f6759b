// Fits the step time's calibration constants on the rows of published.json
// marked "fitted" and prints every row (docs/accuracy-throughput.md):
//   g++ -std=c++20 -O1 -I. validation/throughput/fit_constants.cpp build/core/libtrainmem_core.a -o /tmp/fit
//   /tmp/fit validation/throughput/published.json [--no-fit]
// Each fitted constant is set by bisection so that its row's modelled
// tokens/s/GPU equals the measured one, the three in turn until they settle
// (matmul_16bit on the bf16 row, matmul_fp8 on the Float8 row, attention on
// the long-sequence row: each row leans mostly on its own constant).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/scenario/presets.h"
#include "core/scenario/scenario.h"
#include "core/steptime/step_time.h"

using namespace trainmem;

namespace {

struct Row {
    std::string source, name, fit;
    Scenario scenario;
    double measured = 0;
};

double modelled(const Row& r, const StepTimeConstants& k) {
    auto m = prepareStepTime(r.scenario, k);
    if (!m.ok()) return -1;
    return stepTime(*m, r.scenario).tokens_per_second_per_gpu;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) return 2;
    std::ifstream f(argv[1]);
    const auto doc = nlohmann::json::parse(f);
    const bool fit = !(argc > 2 && std::string(argv[2]) == "--no-fit");
    std::vector<Row> rows;
    for (const auto& r : doc["rows"]) {
        auto s = loadPreset(r["preset"].get<std::string>());
        if (!s.ok()) return 1;
        if (auto st = applySettings(*s, r["set"].get<std::vector<std::string>>()); !st.ok()) {
            std::fprintf(stderr, "%s: %s\n", r["row"].get<std::string>().c_str(), st.error().text().c_str());
            return 1;
        }
        rows.push_back({r["source"], r["row"], r.value("fit", ""), *s, r["measured_tokens_per_second_per_gpu"]});
    }
    StepTimeConstants k = stepTimeConstants();
    if (fit) {
        for (int round = 0; round < 20; ++round) {
            for (const Row& r : rows) {
                if (r.fit.empty()) continue;
                double* c = r.fit == "matmul_16bit" ? &k.matmul_16bit
                            : r.fit == "matmul_fp8" ? &k.matmul_fp8 : &k.attention;
                double lo = 0.05, hi = 1.0;
                for (int i = 0; i < 60; ++i) {
                    *c = (lo + hi) / 2;
                    (modelled(r, k) < r.measured ? lo : hi) = *c;
                }
            }
        }
        std::printf("fitted: matmul_16bit %.4f, matmul_fp8 %.4f, attention %.4f\n", k.matmul_16bit, k.matmul_fp8,
                    k.attention);
    }
    std::vector<double> all, held_out;
    for (const Row& r : rows) {
        const double m = modelled(r, k);
        const double err = (m - r.measured) / r.measured;
        all.push_back(std::fabs(err));
        if (r.fit.empty()) held_out.push_back(std::fabs(err));
        std::printf("| %s | %s | %.0f | %.0f | %+.1f%% |%s\n", r.source.c_str(), r.name.c_str(), r.measured, m,
                    err * 100, r.fit.empty() ? "" : (" fitted: " + r.fit).c_str());
    }
    auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        const size_t n = v.size();
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    };
    std::printf("all %zu rows: median %.1f%%, worst %.1f%%\n", all.size(), median(all) * 100,
                *std::max_element(all.begin(), all.end()) * 100);
    std::printf("held-out %zu rows: median %.1f%%, worst %.1f%%\n", held_out.size(), median(held_out) * 100,
                *std::max_element(held_out.begin(), held_out.end()) * 100);
}
