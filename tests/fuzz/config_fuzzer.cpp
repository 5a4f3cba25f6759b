// libFuzzer driver for the config.json importer's list keys (issue 28, N01:
// 2^24 layers and a 20,000-entry moe_layers list hung the importer for 10
// minutes). The bytes choose a family (the catalogue's, an unknown one, or a
// multimodal one whose text_config is read), a layer count up to and past
// the limit, and the per-layer lists (moe_layers, layer_types,
// mlp_only_layers, no_rope_layers, decoder_sparse_step, ...) as runs and
// stray entries, so lists of tens of thousands of entries cost a few bytes.
// Every import must end, by name or with a model whose estimate keeps the
// invariants, within kTimeBoundSeconds of CPU time: a slower one aborts, and so does libFuzzer's
// -timeout. Corpus: tests/fuzz/config_corpus.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <ctime>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "core/account/estimate.h"
#include "core/model/hf_config.h"
#include "core/model/hf_families.h"
#include "core/scenario/scenario.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using nlohmann::json;

// CPU time, so a loaded machine does not make a slow input of a fast one.
constexpr double kTimeBoundSeconds = 1.0;

double cpuSeconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

// A list of layer indices: runs (start, step, count) and stray values.
json layerList(FuzzedDataProvider& in, int64_t layers) {
    json list = json::array();
    const int pieces = in.ConsumeIntegralInRange(0, 6);
    for (int p = 0; p < pieces; ++p) {
        if (in.ConsumeBool()) {
            const int64_t start = in.ConsumeIntegralInRange<int64_t>(-2, layers + 2);
            const int64_t step = in.ConsumeIntegralInRange<int64_t>(1, 64);
            const int64_t count = in.ConsumeIntegralInRange<int64_t>(0, 40000);
            for (int64_t i = 0; i < count; ++i) list.push_back(start + i * step);
        } else {
            list.push_back(in.ConsumeIntegral<int64_t>());
        }
    }
    return list;
}

// One flag or type per layer for the first `count` layers, every k-th different.
json perLayer(FuzzedDataProvider& in, int64_t count, const json& usual, const json& other) {
    json list = json::array();
    const int64_t k = in.ConsumeIntegralInRange<int64_t>(1, 8);
    for (int64_t i = 0; i < count; ++i) list.push_back((i + 1) % k == 0 ? other : usual);
    return list;
}

json fuzzedConfig(FuzzedDataProvider& in) {
    const auto& families = trainmem::familyCatalogue();
    const size_t pick = in.ConsumeIntegralInRange<size_t>(0, families.size() + 1);
    std::string type = pick < families.size() ? std::string(families[pick]->model_type)
                       : pick == families.size() ? "llama4"
                                                 : "custom_decoder";
    const int64_t layers = in.ConsumeBool() ? in.ConsumeIntegralInRange<int64_t>(1, 64)
                                            : in.ConsumeIntegralInRange<int64_t>(1, (int64_t{1} << 24) + 2);
    json c = {{"model_type", type}, {"num_hidden_layers", layers}};
    if (in.ConsumeBool()) c["moe_layers"] = layerList(in, layers);
    if (in.ConsumeBool()) c["mlp_only_layers"] = layerList(in, layers);
    if (in.ConsumeBool()) c["decoder_sparse_step"] = in.ConsumeIntegralInRange<int64_t>(-1, (int64_t{1} << 24) + 1);
    if (in.ConsumeBool()) c["interleave_moe_layer_step"] = in.ConsumeIntegralInRange<int64_t>(-1, 64);
    if (in.ConsumeBool()) c["first_k_dense_replace"] = in.ConsumeIntegralInRange<int64_t>(-1, layers + 1);
    if (in.ConsumeBool()) c["moe_layer_freq"] = in.ConsumeIntegralInRange<int64_t>(-1, 64);
    // One entry per layer, up to a quarter of what a config.json within the
    // reader's 16 MiB can hold (a million "full_attention" entries is 17 MB).
    const int64_t listed = in.ConsumeBool() ? std::min<int64_t>(layers, int64_t{1} << 18)
                                            : in.ConsumeIntegralInRange<int64_t>(0, 40000);
    if (in.ConsumeBool()) c["layer_types"] = perLayer(in, listed, "full_attention", "sliding_attention");
    if (in.ConsumeBool()) c["no_rope_layers"] = perLayer(in, listed, 1, 0);
    if (in.ConsumeBool()) c["no_rope_layer_interval"] = in.ConsumeIntegralInRange<int64_t>(-1, 64);
    if (in.ConsumeBool()) c["sliding_window_pattern"] = in.ConsumeIntegralInRange<int64_t>(-1, 64);
    if (in.ConsumeBool()) c["num_experts"] = c["num_local_experts"] = c["n_routed_experts"] = in.ConsumeIntegralInRange<int64_t>(0, 512);
    if (in.ConsumeBool()) c["num_experts_per_tok"] = in.ConsumeIntegralInRange<int64_t>(0, 16);
    if (type == "llama4" || in.ConsumeBool()) {
        // The same keys one level down, as a multimodal checkpoint has them.
        json text = c;
        text["model_type"] = "llama4_text";
        c = {{"model_type", "llama4"}, {"text_config", text}};
    }
    return c;
}

void checkEstimate(const trainmem::Scenario& scenario) {
    const auto estimate = trainmem::estimate(scenario);
    if (!estimate.ok()) {
        FUZZ_CHECK(!estimate.error().text().empty());
        return;
    }
    FUZZ_CHECK(estimate->peak.allocated_bytes >= 0 && estimate->peak.allocated_bytes <= estimate->peak.reserved_bytes);
    FUZZ_CHECK(estimate->fits == (estimate->headroom_bytes >= 0));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider in(data, size);
    const json config = fuzzedConfig(in);
    const double started = cpuSeconds();
    const auto imported = trainmem::importHuggingFaceConfig(config);
    FUZZ_CHECK(cpuSeconds() - started < kTimeBoundSeconds);
    if (!imported.ok()) {
        FUZZ_CHECK(!imported.error().field.empty() && !imported.error().message.empty());
        return 0;
    }
    const trainmem::ModelConfig& m = imported->model;
    if (m.moe) FUZZ_CHECK(m.moe->first_dense_layers >= 0 && m.moe->first_dense_layers <= m.num_layers);
    // Estimating a 2^24-layer model is the estimator's own cost, bounded
    // elsewhere (tests/core/range_corners_test.cpp); keep to small ones here.
    if (m.num_layers <= 256) checkEstimate(trainmem::scenarioForModel(m));
    return 0;
}
