// trainmem-cli fit: the layouts of N GPUs that fit, ranked (core/search/layout_search.h),
// with the closest ones that do not and why.
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <chrono>
#include <csignal>
#include <functional>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/run_config_source.h"
#include "cli/scenario_source.h"
#include "core/base/json_input.h"
#include "core/scenario/batch.h"
#include "core/training/hardware.h"
#include "core/search/layout_search.h"
#include "core/report/report.h"
#include "core/scenario/scenario_fields.h"
#include "core/steptime/step_time_report.h"
#include "core/base/text_table.h"

namespace trainmem::cli {

namespace {

using nlohmann::ordered_json;

const char* const kHelp =
    "Usage: trainmem-cli fit --gpus N (--preset NAME | --model-config FILE | --scenario FILE)\n"
    "                        [--gpu NAME] [--global-batch B] [--top K] [--rejected R]\n"
    "                        [--keep-accumulation] [--max-micro-batch M] [--set KEY=VALUE]...\n"
    "                        [--format table|json]\n"
    "\n"
    "Finds every layout of N GPUs that fits: data x tensor x pipeline x context\n"
    "parallelism (x expert for MoE models), ZeRO stage 0-3, sequence parallelism,\n"
    "pipeline schedule, micro-batch size and activation checkpointing. Everything\n"
    "else (precision, optimizer, sequence length, kernels, offload) comes from the\n"
    "scenario. Ranked by: least recomputation (none, selective, full), then the\n"
    "largest micro-batch in tokens per GPU (micro x sequence / context), then the\n"
    "most headroom, then fewer pipeline stages, then less tensor parallelism\n"
    "(docs/layout-search.md).\n"
    "\n"
    "Search:\n"
    "  --gpus N               GPUs to spread the run over (required)\n"
    "  --gpu NAME             GPU model from the catalogue (default: the scenario's)\n"
    "  --global-batch B       sequences per optimizer step; each layout then runs\n"
    "                         B / (micro-batch x data) micro-batches. Default: the\n"
    "                         scenario's own global batch (micro-batch x data x\n"
    "                         accumulation), as the app's Find a Layout\n"
    "  --keep-accumulation    keep the scenario's accumulation steps instead: each\n"
    "                         layout then trains its own global batch\n"
    "  --top K                fitting layouts to list (default 20)\n"
    "  --rejected R           closest non-fitting layouts to list (default 5)\n"
    "  --max-micro-batch M    largest micro-batch size tried; sizes are 1, 2, 4, ... (default 64)\n"
    "\n";

const char* const kHelpTail =
    "\n"
    "Output:\n"
    "  --format table         ranked table, the closest misses, and the --set flags\n"
    "                         that reproduce the best layout (default)\n"
    "  --format json          every figure in bytes; each layout's \"settings\" are the\n"
    "                         --set KEY=VALUE pairs that reproduce it with estimate\n"
    "\n"
    "The search visits at most 500 million layouts (about 10 s); past that, or on\n"
    "Ctrl+C, it stops with the best so far and says so. Progress goes to stderr\n"
    "when it is a terminal.\n"
    "\n"
    "Examples:\n"
    "  trainmem-cli fit --preset llama-2-7b --gpus 8 --gpu A100-80GB\n"
    "  trainmem-cli fit --preset llama-3.1-405b --gpus 1024 --global-batch 2048 \\\n"
    "                   --set training.sequence_length=8192 --format json\n";

// Options of the search, by core option name and flag.
constexpr std::pair<std::string_view, std::string_view> kOptionFlags[] = {
    {"gpus", "--gpus"},
    {"global_batch", "--global-batch"},
    {"top", "--top"},
    {"rejected", "--rejected"},
    {"max_micro_batch", "--max-micro-batch"},
};

Error withFlag(Error e) {
    for (const auto& [option, flag] : kOptionFlags)
        if (e.field == option) e.field = flag;
    return e;
}

Expected<std::optional<int64_t>> integerFlag(const ArgumentList& args, std::string_view flag) {
    const auto text = args.value(flag);
    if (!text) return std::optional<int64_t>{};
    int64_t value = 0;
    const char* end = text->data() + text->size();
    auto [stop, ec] = std::from_chars(text->data(), end, value);
    if (ec != std::errc() || stop != end || text->empty())
        return Error{std::string(flag), "expected a positive integer (got \"" + *text + "\")"};
    if (value < 1) return Error{std::string(flag), "must be a positive integer (got " + *text + ")"};
    return std::optional<int64_t>{value};
}

Status readOptions(const ArgumentList& args, LayoutSearchOptions& o) {
    if (!args.has("--gpus")) return Error{"--gpus", "required: the number of GPUs to spread the run over"};
    struct Target {
        std::string_view flag;
        int64_t* field;
    };
    for (const Target& t : {Target{"--gpus", &o.gpus}, Target{"--top", &o.top},
                            Target{"--max-micro-batch", &o.max_micro_batch}}) {
        auto v = integerFlag(args, t.flag);
        if (!v) return v.error();
        if (*v) *t.field = **v;
    }
    auto batch = integerFlag(args, "--global-batch");
    if (!batch) return batch.error();
    o.global_batch = *batch;
    // --rejected 0 is allowed: list no misses.
    if (auto text = args.value("--rejected")) {
        if (*text == "0") {
            o.rejected = 0;
        } else {
            auto v = integerFlag(args, "--rejected");
            if (!v) return v.error();
            o.rejected = **v;
        }
    }
    return ok();
}

Status applyGpu(const ArgumentList& args, Scenario& s) {
    const auto name = args.value("--gpu");
    if (!name) return ok();
    if (*name != "custom" && !findGpu(*name)) {
        std::vector<std::string_view> names;
        for (const auto& gpu : gpuCatalogue()) names.push_back(gpu.name);
        std::string hint;
        if (auto near = closestName(*name, names); !near.empty()) hint = "; did you mean " + std::string(near) + "?";
        return Error{"--gpu", "unknown GPU \"" + *name + "\"" + hint + "; known: " + joinNames(names) +
                                  ", or custom with --set hardware.memory_gib=N"};
    }
    s.hardware.gpu = *name;
    return ok();
}

// The --set pairs that reproduce a layout from the same scenario source.
std::vector<std::pair<std::string, std::string>> settingsOf(const Scenario& base, const Layout& layout, bool gpu_flag) {
    Scenario s = base;
    applyLayout(s, layout);
    auto settings = layoutSettings(s);
    if (gpu_flag) settings.emplace_back("hardware.gpu", s.hardware.gpu);
    return settings;
}

std::string scheduleText(const Layout& l) {
    if (l.pipeline == 1) return "-";
    std::string text(scheduleName(l.schedule));
    if (l.schedule == PipelineSchedule::Interleaved1F1B) text += " v" + std::to_string(l.virtual_stages);
    return text;
}

std::string percent(double fraction) {
    char text[16];
    std::snprintf(text, sizeof text, "%.0f%%", fraction * 100.0);
    return text;
}

std::string layoutText(const Layout& l) {
    std::string text = "DP " + std::to_string(l.data) + " x TP " + std::to_string(l.tensor) + " x PP " +
                       std::to_string(l.pipeline) + " x CP " + std::to_string(l.context);
    if (l.expert > 1) text += ", EP " + std::to_string(l.expert);
    text += ", ZeRO-" + std::to_string(l.zero_stage);
    if (l.sequence_parallel) text += ", SP";
    if (l.pipeline > 1) text += ", " + scheduleText(l);
    text += ", micro-batch " + std::to_string(l.micro_batch_size) + " x " + std::to_string(l.microbatches) + ", " +
            (l.checkpointing == Checkpointing::None ? std::string("no") : std::string(checkpointingName(l.checkpointing))) +
            " recomputation";
    return text;
}

ordered_json peakJson(const Estimate& e) {
    ordered_json breakdown = ordered_json::object();
    for (Component c : allComponents()) breakdown[std::string(componentKey(c))] = e.peak.at_peak[c];
    return {{"device_bytes", e.peak.device_bytes},
            {"reserved_bytes", e.peak.reserved_bytes},
            {"allocated_bytes", e.peak.allocated_bytes},
            {"stage", e.peak.stage},
            {"phase", std::string(phaseName(e.peak.peak_phase))},
            {"breakdown", std::move(breakdown)}};
}

ordered_json layoutJson(const Scenario& base, const RankedLayout& k, bool gpu_flag) {
    ordered_json settings = ordered_json::object();
    for (const auto& [key, value] : settingsOf(base, k.layout, gpu_flag)) settings[key] = value;
    const Estimate& e = k.estimate;
    return {{"settings", std::move(settings)},
            {"layout", layoutText(k.layout)},
            {"peak", peakJson(e)},
            {"fits", e.fits},
            {"capacity_bytes", e.capacity_bytes},
            {"headroom_bytes", e.headroom_bytes},
            {"recompute_fraction", e.recompute_fraction},
            {"effective_batch", e.effective_batch},
            // The same object as estimate's (null for a layout that does not fit
            // or a GPU without rates): docs/step-time.md.
            {"throughput", e.fits && k.time.step_seconds > 0 ? ordered_json(throughputJson(k.time)) : ordered_json(nullptr)}};
}

// The largest micro-batch of the best layout, everything else of it fixed.
Expected<std::optional<int64_t>> largestOfBest(const Scenario& base, const LayoutSearchResult& r) {
    if (r.layouts.empty()) return std::optional<int64_t>{};
    Scenario s = base;
    applyLayout(s, r.layouts.front().layout);
    auto largest = largestMicroBatch(s);
    if (!largest) return largest.error();
    return std::optional<int64_t>{*largest};
}

void writeJson(std::ostream& out, const Scenario& base, const LayoutSearchOptions& o, const LayoutSearchResult& r,
               std::optional<int64_t> largest, bool gpu_flag) {
    ordered_json doc;
    doc["model"] = base.model.name;
    doc["gpu"] = base.hardware.gpu;
    doc["gpus"] = o.gpus;
    doc["global_batch"] = o.global_batch ? ordered_json(*o.global_batch) : ordered_json(nullptr);
    doc["enumerated"] = r.enumerated;
    doc["valid"] = r.valid;
    doc["redundant"] = r.redundant;
    doc["fitting"] = r.fitting;
    doc["stopped"] = r.stopped.empty() ? ordered_json(nullptr) : ordered_json(r.stopped);
    doc["note"] = r.note.empty() ? ordered_json(nullptr) : ordered_json(r.note);
    ordered_json layouts = ordered_json::array();
    for (size_t i = 0; i < r.layouts.size(); ++i) {
        ordered_json entry = {{"rank", i + 1}};
        entry.update(layoutJson(base, r.layouts[i], gpu_flag));
        layouts.push_back(std::move(entry));
    }
    doc["layouts"] = std::move(layouts);
    ordered_json rejected = ordered_json::array();
    for (const RankedLayout& k : r.rejected) {
        ordered_json entry = layoutJson(base, k, gpu_flag);
        const Rejection why = rejectionOf(k.estimate);
        entry["over_bytes"] = why.over_bytes;
        entry["dominant_component"] = std::string(componentKey(why.dominant));
        entry["reason"] = rejectionText(why);
        rejected.push_back(std::move(entry));
    }
    doc["rejected"] = std::move(rejected);
    doc["largest_micro_batch"] = largest ? ordered_json(*largest) : ordered_json(nullptr);
    out << doc.dump(2) << "\n";
}

// The scenario flags of this command line, to prefix the settings with.
std::string sourceFlags(const ArgumentList& args) {
    std::string text;
    for (const char* flag : {"--preset", "--model-config", "--scenario", "--run-config"})
        if (auto value = args.value(flag)) text += std::string(flag) + " " + *value;
    for (const auto& setting : args.values("--set")) text += " --set " + setting;
    return text;
}

std::string stepText(const StepTime& t) {
    if (t.step_seconds <= 0) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, t.step_seconds >= 1 ? "%.2f s" : "%.0f ms", t.step_seconds >= 1 ? t.step_seconds : t.step_seconds * 1e3);
    return buf;
}

std::string tokensText(const StepTime& t) {
    if (t.step_seconds <= 0) return "-";
    return std::to_string(static_cast<long long>(std::llround(t.tokens_per_second_per_gpu)));
}

void writeTable(std::ostream& out, const Scenario& base, const LayoutSearchOptions& o, const LayoutSearchResult& r,
                std::optional<int64_t> largest, bool gpu_flag, const std::string& source) {
    out << printableText(base.model.name) << " on " << o.gpus << " x " << base.hardware.gpu << ", sequence "
        << base.training.sequence_length << " tokens";
    if (o.global_batch) out << ", global batch " << *o.global_batch;
    out << "\n" << r.enumerated << " layouts enumerated, " << r.valid << " valid (" << r.redundant
        << " the same as a simpler one), " << r.fitting << " fit.\n";
    if (!r.stopped.empty())
        out << "Stopped early (" << r.stopped << "): the best of the layouts visited so far, not of all.\n";
    if (!r.note.empty()) out << "Note: " << r.note << ".\n";
    const bool timed = !r.layouts.empty() && r.layouts.front().time.step_seconds > 0;
    if (timed)
        out << "Ranked by modelled tokens per second per GPU (docs/step-time.md), then most headroom, then fewest\n"
               "pipeline stages, then least tensor parallelism.\n\n";
    else
        out << "Ranked by least recomputation, then most tokens per GPU per micro-batch, then most headroom, then\n"
               "fewest pipeline stages, then least tensor parallelism (no step time: "
            << base.hardware.gpu << " has no published rates).\n\n";
    if (!r.layouts.empty()) {
        TextTable t;
        t.header = {"#", "DP", "TP", "PP", "CP", "EP", "ZeRO", "SP", "Schedule", "Micro", "Micro-batches",
                    "Recompute", "Peak", "Headroom", "At", "Step", "Tokens/s/GPU", "MFU", "Slow because"};
        t.align = {Align::Right, Align::Right, Align::Right, Align::Right, Align::Right, Align::Right, Align::Right,
                   Align::Left,  Align::Left,  Align::Right, Align::Right, Align::Left,  Align::Right, Align::Right,
                   Align::Left,  Align::Right, Align::Right, Align::Right, Align::Left};
        for (size_t i = 0; i < r.layouts.size(); ++i) {
            const Layout& l = r.layouts[i].layout;
            const Estimate& e = r.layouts[i].estimate;
            std::string recompute(checkpointingName(l.checkpointing));
            if (l.checkpointing != Checkpointing::None) recompute += " (+" + percent(e.recompute_fraction) + ")";
            t.rows.push_back({std::to_string(i + 1), std::to_string(l.data), std::to_string(l.tensor),
                              std::to_string(l.pipeline), std::to_string(l.context), std::to_string(l.expert),
                              std::to_string(l.zero_stage), l.sequence_parallel ? "on" : "off", scheduleText(l),
                              std::to_string(l.micro_batch_size), std::to_string(l.microbatches), recompute,
                              formatBytes(e.peak.device_bytes), formatBytes(e.headroom_bytes),
                              std::string(phaseName(e.peak.peak_phase)) + ", stage " + std::to_string(e.peak.stage + 1),
                              stepText(r.layouts[i].time), tokensText(r.layouts[i].time),
                              r.layouts[i].time.step_seconds > 0 ? percent(r.layouts[i].time.mfu) : "-",
                              slowReason(r.layouts[i].time)});
        }
        out << renderPlain(t);
        if (largest) out << "\nLayout 1 fits micro-batches up to " << *largest << " (everything else unchanged).\n";
        out << "Layout 1 in detail: trainmem-cli estimate " << source;
        for (const auto& [key, value] : settingsOf(base, r.layouts.front().layout, gpu_flag))
            out << " --set " << key << "=" << value;
        out << "\n";
    } else {
        out << "No layout fits.\n";
    }
    if (!r.rejected.empty()) {
        out << "\nClosest layouts that do not fit:\n";
        for (const RankedLayout& k : r.rejected)
            out << "  " << layoutText(k.layout) << ": " << rejectionText(rejectionOf(k.estimate)) << "\n";
    }
}

// Ctrl+C during a search stops it with the best so far; a second Ctrl+C
// (the handler is reset after the first) ends the program as usual.
volatile std::sig_atomic_t interrupted = 0;
void onInterrupt(int) {
    interrupted = 1;
    std::signal(SIGINT, SIG_DFL);
}

// Progress on stderr, only when it is a terminal (never in a pipe or a log),
// at most four times a second; and the Ctrl+C handler for the search's span.
class ProgressOnTerminal {
public:
    ProgressOnTerminal() : tty_(::isatty(STDERR_FILENO) == 1) {
        interrupted = 0;
        previous_ = std::signal(SIGINT, onInterrupt);
    }
    ~ProgressOnTerminal() { std::signal(SIGINT, previous_ == SIG_ERR ? SIG_DFL : previous_); }
    ProgressOnTerminal(const ProgressOnTerminal&) = delete;
    ProgressOnTerminal& operator=(const ProgressOnTerminal&) = delete;

    std::function<bool(int64_t, int64_t)> callback() const {
        return [this](int64_t enumerated, int64_t fitting) {
            const auto now = std::chrono::steady_clock::now();
            if (tty_ && now - last_ > std::chrono::milliseconds(250)) {
                last_ = now;
                shown_ = true;
                std::cerr << "\rfit: " << enumerated << " layouts, " << fitting << " fit (Ctrl+C: stop with the best so far)"
                          << std::flush;
            }
            return interrupted == 0;
        };
    }
    void finish() const {
        if (shown_) std::cerr << "\r\x1b[K" << std::flush;  // clear the progress line
    }

private:
    bool tty_;
    mutable bool shown_ = false;
    mutable std::chrono::steady_clock::time_point last_{};
    void (*previous_)(int) = SIG_DFL;
};

Status run(const std::vector<std::string>& raw, std::ostream& out) {
    std::vector<FlagSpec> flags = scenarioSourceFlags();
    // --run-config's world size is fit's own --gpus.
    for (const auto& f : runConfigFlags(false)) flags.push_back(f);
    for (const auto& [option, flag] : kOptionFlags) flags.push_back({flag});
    flags.push_back({"--gpu"});
    flags.push_back({"--keep-accumulation", false});
    flags.push_back({"--format"});
    auto args = ArgumentList::parse(raw, flags);
    if (!args) return args.error();
    LayoutSearchOptions options;
    if (Status st = readOptions(*args, options); !st) return st;
    auto format = choice(*args, "--format", {"table", "json"}, "table");
    if (!format) return format.error();
    auto scenario = scenarioFromArguments(*args);
    if (!scenario) return scenario.error();
    if (Status st = applyGpu(*args, *scenario); !st) return st;
    // The same question as the app's Find a Layout by default: every layout
    // trains the scenario's global batch. Keeping the accumulation steps
    // instead gave each layout another batch (issue 27: a #1 of 256 where
    // the scenario and the app train 128).
    if (args->has("--keep-accumulation")) {
        if (options.global_batch) return Error{"--keep-accumulation", "cannot be given with --global-batch"};
    } else if (!options.global_batch) {
        options.global_batch = planBatch(*scenario).effective_batch;
    }

    const ProgressOnTerminal progress;
    options.progress = progress.callback();
    auto result = searchLayouts(*scenario, options);
    progress.finish();
    if (!result) return withFlag(result.error());
    auto largest = largestOfBest(*scenario, *result);
    if (!largest) return largest.error();
    const bool gpu_flag = args->has("--gpu");
    if (*format == "json") writeJson(out, *scenario, options, *result, *largest, gpu_flag);
    else writeTable(out, *scenario, options, *result, *largest, gpu_flag, sourceFlags(*args));
    return ok();
}

}  // namespace

CliCommand fitCommand() {
    static const std::string help = std::string(kHelp) + kScenarioSourceHelp + kRunConfigHelp + kHelpTail;
    CliCommand command;
    command.name = "fit";
    command.summary = "the layouts of N GPUs that fit, ranked";
    command.help = help;
    command.run = run;
    return command;
}

}  // namespace trainmem::cli
