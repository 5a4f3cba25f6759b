#include "core/steptime/step_time_report.h"

#include <cmath>
#include <cstdio>

namespace trainmem {

namespace {

std::string fixed(double x, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, x);
    return buf;
}

std::string grouped(double x) {
    std::string digits = std::to_string(static_cast<long long>(std::llround(x)));
    std::string out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

std::string seconds(double s) { return s >= 1.0 ? fixed(s, 2) + " s" : fixed(s * 1e3, 1) + " ms"; }

}  // namespace

nlohmann::json throughputJson(const StepTime& t, const std::vector<StageTime>* stages) {
    nlohmann::json breakdown = nlohmann::json::object();
    for (TimeComponent c : allTimeComponents()) breakdown[std::string(timeComponentKey(c))] = t[c];
    nlohmann::json doc = {{"step_seconds", t.step_seconds},
                          {"tokens_per_second_per_gpu", t.tokens_per_second_per_gpu},
                          {"mfu", t.mfu},
                          {"mfu_convention", kMfuConvention},
                          {"model_flops_per_token", t.model_flops_per_token},
                          {"breakdown", std::move(breakdown)},
                          {"slowest_stage", t.slowest_stage},
                          {"slow_because", slowReason(t)}};
    if (stages) {
        nlohmann::json list = nlohmann::json::array();
        for (const StageTime& s : *stages)
            list.push_back({{"stage", s.stage},
                            {"num_layers", s.num_layers},
                            {"forward_seconds", s.forward},
                            {"backward_seconds", s.backward},
                            {"recompute_seconds", s.recompute},
                            {"exposed_communication_seconds", s.exposed_communication}});
        doc["stages_per_microbatch"] = std::move(list);
    }
    return doc;
}

void addThroughput(nlohmann::json& doc, const Scenario& scenario) {
    auto model = prepareStepTime(scenario);
    if (!model) {
        doc["throughput"] = nullptr;
        doc["throughput_error"] = {{"field", model.error().field}, {"message", model.error().message}};
        return;
    }
    const StepTime t = stepTime(*model, scenario);
    const std::vector<StageTime> stages = stageTimes(*model, scenario);
    doc["throughput"] = throughputJson(t, &stages);
}

std::string throughputLine(const Scenario& scenario) {
    auto model = prepareStepTime(scenario);
    if (!model) return "not modelled: " + model.error().text();
    const StepTime t = stepTime(*model, scenario);
    std::string out = seconds(t.step_seconds) + " per step, " + grouped(t.tokens_per_second_per_gpu) +
                      " tokens/s/GPU, MFU " + fixed(t.mfu * 100, 1) + "% (";
    bool first = true;
    for (TimeComponent c : allTimeComponents()) {
        const double share = t.step_seconds > 0 ? t[c] / t.step_seconds : 0;
        if (share < 0.005) continue;
        if (!first) out += ", ";
        first = false;
        std::string name(timeComponentName(c));
        if (name.size() > 1 && name[1] >= 'a' && name[1] <= 'z') name[0] = static_cast<char>(name[0] - 'A' + 'a');
        out += name + " " + fixed(share * 100, 0) + "%";
    }
    out += ")";
    return out;
}

}  // namespace trainmem
