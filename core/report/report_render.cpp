// An estimate as JSON, aligned text, Markdown and CSV. Every byte figure in
// JSON and CSV is an exact integer; text renderings round for reading.
#include <cstdio>

#include "core/scenario/batch.h"
#include "core/model/hf_config.h"
#include "core/model/hf_families.h"
#include "core/report/report.h"
#include "core/base/text_table.h"
#include "core/scenario/scenario_file.h"
#include "core/base/json_input.h"

namespace trainmem {

namespace {

using nlohmann::json;

std::string percent(int64_t part, int64_t whole) {
    if (whole <= 0) return "-";
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
    return buffer;
}

std::string gpuLabel(const Scenario& s) {
    if (s.hardware.gpu == "custom") return "custom GPU";
    return s.hardware.gpu;
}

std::string title(const Scenario& s, const Estimate& e) {
    // Names come from files: control characters are escaped, so a name
    // cannot move the cursor or clear the terminal.
    std::string text = printableText(s.name.empty() ? s.model.name : s.name);
    text += " — " + printableText(s.model.name) + " on " + std::to_string(e.total_gpus) + " × " + gpuLabel(s);
    return text;
}

std::string parallelText(const Scenario& s) {
    const ParallelConfig& p = s.parallelism;
    std::string text = "DP " + std::to_string(p.data) + " × TP " + std::to_string(p.tensor) + " × PP " +
                       std::to_string(p.pipeline) + " × CP " + std::to_string(p.context);
    if (p.expert > 1) text += ", EP " + std::to_string(p.expert);
    text += ", ZeRO-" + std::to_string(p.zero_stage);
    if (p.sequence_parallel) text += ", SP";
    return text;
}

std::string trainingText(const Scenario& s, const Estimate& e) {
    const TrainingConfig& t = s.training;
    return std::string(finetuningName(t.finetuning)) + ", " + std::string(precisionName(t.precision)) + ", " +
           std::string(optimizerName(t.optimizer)) + ", micro-batch " + std::to_string(t.micro_batch_size) + " × " +
           std::to_string(t.sequence_length) + " tokens, effective batch " + std::to_string(e.effective_batch) +
           ", checkpointing " + std::string(checkpointingName(t.checkpointing));
}

// The seed notes' batch helper: tokens per step and, from a base batch and
// learning rate, the linear and square-root scaling rules.
std::string batchText(const Scenario& s) {
    const BatchPlan b = planBatch(s);
    std::string text = std::to_string(b.effective_batch) + " sequences, " + formatCount(b.tokens_per_step) +
                       " tokens per step";
    if (b.lr_linear && b.lr_sqrt) {
        char rates[96];
        std::snprintf(rates, sizeof rates, "; learning rate %.4g (linear rule) or %.4g (square-root rule)",
                      *b.lr_linear, *b.lr_sqrt);
        text += rates;
    }
    if (b.warmup_steps > 0) text += ", " + std::to_string(b.warmup_steps) + " warm-up steps";
    return text;
}

std::string peakText(const Estimate& e) {
    // Stages and layers are numbered from 1 for people, as in the app; JSON's
    // "stage" and "first_layer" are the 0-based indices.
    std::string text = "stage " + std::to_string(e.peak.stage + 1) + " of " + std::to_string(e.num_stages) + " (layers " +
                       std::to_string(e.peak.first_layer + 1) + "–" +
                       std::to_string(e.peak.first_layer + e.peak.num_layers) + "), during " +
                       std::string(phaseName(e.peak.peak_phase));
    return text;
}

TextTable componentTable(const Scenario& s, const Estimate& e, Units units) {
    TextTable table;
    table.header = {"Component", "Memory", "Share", "How it scales"};
    table.align = {Align::Left, Align::Right, Align::Right, Align::Left};
    for (Component c : allComponents()) {
        const int64_t bytes = e.peak.at_peak[c];
        if (bytes == 0) continue;
        const ComponentExplanation x = explainComponent(c, s, e);
        table.rows.push_back({x.label, formatBytes(bytes, units), percent(bytes, e.peak.allocated_bytes), x.scaling});
    }
    table.rows.push_back({});
    const Overheads& o = s.hardware.overheads;
    table.rows.push_back({"Allocated (peak)", formatBytes(e.peak.allocated_bytes, units), "100.0%",
                          "live tensors: torch.cuda.max_memory_allocated"});
    table.rows.push_back({"Reserved", formatBytes(e.peak.reserved_bytes, units), "",
                          "+ " + percent(std::llround(o.fragmentation * 1000), 1000) +
                              " allocator fragmentation: torch.cuda.max_memory_reserved"});
    if (e.peak.managed_bytes > 0) {  // core/account/paged_states.h
        table.rows.push_back({"Paged optimizer states", formatBytes(e.peak.managed_bytes, units), "",
                              "bitsandbytes Paged*: CUDA managed memory, outside the allocator"});
        if (e.managed_host_bytes > 0)
            table.rows.push_back({"  of which paged out to host", formatBytes(e.managed_host_bytes, units), "",
                                  "no room beside the rest: the driver evicts them, pages them in to step"});
    }
    table.rows.push_back({"Device", formatBytes(e.peak.device_bytes, units), "",
                          e.peak.managed_bytes > 0 ? "+ paged states, CUDA context and NCCL buffers: nvidia-smi"
                                                   : "+ CUDA context and NCCL buffers: nvidia-smi"});
    table.rows.push_back({"Capacity", formatBytes(e.capacity_bytes, units), "", gpuLabel(s)});
    return table;
}

std::string fitText(const Estimate& e, Units units) {
    if (e.fits) return "fits, " + formatBytes(e.headroom_bytes, units) + " to spare";
    return "does NOT fit: " + formatBytes(-e.headroom_bytes, units) + " over";
}

}  // namespace

std::vector<std::string> reportWarnings(const Scenario& s, const Estimate& e) {
    std::vector<std::string> warnings = s.warnings;
    for (auto text : warningTexts(e.warnings)) warnings.emplace_back(text);
    if (const std::string_view caveat = familyOf(s.model.family).activation_caveat; !caveat.empty())
        warnings.emplace_back(caveat);
    return warnings;
}

json estimateToJson(const Scenario& s, const Estimate& e) {
    const ParameterCount& p = e.parameters;
    json doc;
    doc["parameters"] = {{"total", p.total},          {"trainable", p.trainable},   {"active", p.active},
                         {"embedding", p.embedding},  {"attention", p.attention},   {"mlp", p.mlp},
                         {"routed_experts", p.routed_experts}, {"shared_experts", p.shared_experts},
                         {"router", p.router},        {"norms", p.norms},           {"lm_head", p.lm_head},
                         {"lora", p.lora},            {"linear_mixers", p.linear_mixers},
                         {"mtp", p.mtp},              {"vision", p.vision},         {"checkpoint", p.checkpoint}};
    const ModelStates& ms = e.peak.model_states;
    doc["model_states"] = {{"weights", ms.weights},
                           {"gradients", ms.gradients},
                           {"optimizer_states", ms.optimizer_states},
                           {"master_weights", ms.master_weights}};
    doc["peak"] = {{"allocated_bytes", e.peak.allocated_bytes},
                   {"exact_allocated_bytes", e.peak.exact_allocated_bytes},
                   {"reserved_bytes", e.peak.reserved_bytes},
                   {"device_bytes", e.peak.device_bytes},
                   {"managed_bytes", e.peak.managed_bytes},
                   {"stage", e.peak.stage},
                   {"phase", std::string(phaseName(e.peak.peak_phase))},
                   {"first_layer", e.peak.first_layer},
                   {"num_layers", e.peak.num_layers},
                   {"in_flight_microbatches", e.peak.in_flight_microbatches}};
    json breakdown = json::object();
    for (Component c : allComponents()) breakdown[std::string(componentKey(c))] = e.peak.at_peak[c];
    doc["breakdown"] = std::move(breakdown);
    doc["host_bytes"] = e.host_bytes;
    doc["managed_host_bytes"] = e.managed_host_bytes;
    doc["fits"] = e.fits;
    doc["capacity_bytes"] = e.capacity_bytes;
    doc["headroom_bytes"] = e.headroom_bytes;
    doc["effective_batch"] = e.effective_batch;
    {
        const BatchPlan b = planBatch(s);
        json batch = {{"effective_batch", b.effective_batch},
                      {"tokens_per_step", b.tokens_per_step},
                      {"warmup_steps", b.warmup_steps}};
        batch["lr_linear"] = b.lr_linear ? json(*b.lr_linear) : json(nullptr);
        batch["lr_sqrt"] = b.lr_sqrt ? json(*b.lr_sqrt) : json(nullptr);
        doc["batch"] = std::move(batch);
    }
    doc["total_gpus"] = e.total_gpus;
    doc["num_stages"] = e.num_stages;
    doc["activations_without_recompute"] = e.activations_without_recompute;
    doc["recompute_fraction"] = e.recompute_fraction;
    doc["warnings"] = reportWarnings(s, e);
    doc["worked_example"] = workedExample(s, e);
    doc["scenario"] = scenarioToJson(s);
    doc["model"] = describeModel(s.model);
    return doc;
}

std::string estimateToTable(const Scenario& s, const Estimate& e, Units units) {
    std::string out = title(s, e) + "\n";
    out += "Parameters: " + formatCount(e.parameters.total) + " total, " + formatCount(e.parameters.trainable) +
           " trainable, " + formatCount(e.parameters.active) + " active per token\n";
    // What the checkpoint stores beyond the model class (parameters.checkpoint).
    if (e.parameters.mtp > 0 || e.parameters.vision > 0) {
        out += "Checkpoint: " + formatCount(e.parameters.checkpoint) + " stored (";
        if (e.parameters.mtp > 0) out += formatCount(e.parameters.mtp) + " in MTP layers, not trained here";
        if (e.parameters.mtp > 0 && e.parameters.vision > 0) out += "; ";
        if (e.parameters.vision > 0) out += formatCount(e.parameters.vision) + " in the vision tower, not loaded here";
        out += ")\n";
    }
    out += "Training:   " + trainingText(s, e) + "\n";
    out += "Layout:     " + parallelText(s) + "\n";
    out += "Batch:      " + batchText(s) + "\n";
    out += "Peak:       " + peakText(e) + "\n\n";
    out += renderPlain(componentTable(s, e, units));
    out += "\nResult:     " + fitText(e, units) + "\n";
    if (e.host_bytes > 0) out += "Host:       " + formatBytes(e.host_bytes, units) + " per GPU rank (offload)\n";
    out += "Example:    " + workedExample(s, e, units) + "\n";  // in the table's units
    for (const auto& w : reportWarnings(s, e)) out += "Warning:    " + w + "\n";
    return out;
}

std::string estimateToMarkdown(const Scenario& s, const Estimate& e, Units units) {
    std::string out = "### " + title(s, e) + "\n\n";
    out += "- Parameters: " + formatCount(e.parameters.total) + " total, " + formatCount(e.parameters.trainable) +
           " trainable, " + formatCount(e.parameters.active) + " active per token\n";
    out += "- Training: " + trainingText(s, e) + "\n";
    out += "- Layout: " + parallelText(s) + "\n";
    out += "- Batch: " + batchText(s) + "\n";
    out += "- Peak: " + peakText(e) + "\n";
    out += "- Result: **" + fitText(e, units) + "**\n\n";
    out += renderMarkdown(componentTable(s, e, units));
    out += "\n" + workedExample(s, e, units) + "\n";
    for (const auto& w : reportWarnings(s, e)) out += "\n> Warning: " + w + "\n";
    return out;
}

std::string estimateToCsv(const Scenario& s, const Estimate& e) {
    std::string out = "component,bytes,share,formula\n";
    for (Component c : allComponents()) {
        const int64_t bytes = e.peak.at_peak[c];
        char share[32];
        std::snprintf(share, sizeof share, "%.4f",
                      e.peak.allocated_bytes > 0 ? static_cast<double>(bytes) / static_cast<double>(e.peak.allocated_bytes)
                                                 : 0.0);
        out += std::string(componentKey(c)) + "," + std::to_string(bytes) + "," + share + "," +
               csvCell(explainComponent(c, s, e).formula) + "\n";
    }
    return out;
}

}  // namespace trainmem
