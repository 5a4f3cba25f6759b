// Numbers and explanations for people: sizes, counts, what each component is
// and how it scales (the call-outs of the seed figure
// training-memory-breakdown.svg), and its worked example footer.
#include "core/report/report.h"

#include <cmath>
#include <cstdio>

#include "core/account/fsdp_policy.h"
#include "core/training/optimizer_state.h"
#include "core/account/stage_parameters.h"
#include "core/training/names.h"

namespace trainmem {

namespace {

std::string fixed(double value, int decimals) { return formatNumber(value, decimals); }

// 8 -> "8", 2.03125 -> "2.03", 0.5 -> "0.5"
std::string shortNumber(double value) {
    if (value == std::floor(value) && std::fabs(value) < 1e15) return fixed(value, 0);
    std::string text = fixed(value, 2);
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
    return text;
}

std::string decimalGB(double bytes) { return fixed(bytes / 1e9, 1) + " GB"; }

std::string bytesEach(DType t) { return shortNumber(bytesOf(t)) + " B"; }

std::string dtypeText(DType t) { return std::string(dtypeName(t)) + " (" + bytesEach(t) + " each)"; }

bool fullFinetune(const Scenario& s) { return s.training.finetuning == Finetuning::Full; }

// Optimizer-state bytes per trainable parameter over the whole model, by
// the estimator's own per-group rule (Muon's AdamW fallback and Adafactor's
// factored moments depend on the tensor shapes).
double optimizerBytesPerParam(const Scenario& s, DType state_dtype) {
    const ParameterLayout layout = parameterLayout(s.model);
    double bytes = optimizerStateBytes(s.training.optimizer, state_dtype, layout.embedding, true) +
                   optimizerStateBytes(s.training.optimizer, state_dtype, layout.lm_head, true) +
                   optimizerStateBytes(s.training.optimizer, state_dtype, layout.final_norm, false);
    forEachBlockKind(layout, [&](const LayerParameters& block, int64_t n) {
        bytes += static_cast<double>(n) * optimizerStateBytes(s.training.optimizer, state_dtype, block.total(), false);
    });
    const int64_t params = countParameters(s.model).total;
    return params > 0 ? bytes / static_cast<double>(params) : 0.0;
}

// " ÷ 8 (ZeRO-3)" when the component is partitioned over data-parallel
// ranks. Routed experts shard over the expert-data-parallel ranks only,
// which with expert parallelism are fewer.
std::string zeroShare(const Scenario& s, int64_t from_stage) {
    if (s.parallelism.zero_stage < from_stage) return "";
    const int64_t dense = denseShardRanks(s.parallelism);
    const int64_t experts = expertShardRanks(s.parallelism);
    const std::string stage = "ZeRO-" + std::to_string(s.parallelism.zero_stage);
    if (!s.model.isMoe() || experts == dense)
        return dense > 1 ? " ÷ " + std::to_string(dense) + " (" + stage + ")" : "";
    return " ÷ " + std::to_string(dense) + " (" + stage + "; routed experts ÷ " + std::to_string(experts) + ")";
}

std::string modelSplit(const Scenario& s) {
    std::string text;
    if (s.parallelism.tensor > 1) text += " ÷ " + std::to_string(s.parallelism.tensor) + " (tensor)";
    if (s.parallelism.pipeline > 1) text += ", this stage's layers only";
    if (s.parallelism.expert > 1) text += ", experts ÷ " + std::to_string(s.parallelism.expert);
    return text;
}

// "1.00B × 2 B = 2.01 GB": elements held here, recovered from the bytes.
std::string perElementFormula(int64_t bytes, DType dtype, Units u) {
    const double elements = static_cast<double>(bytes) / bytesOf(dtype);
    return formatCount(std::llround(elements)) + " × " + bytesEach(dtype) + " = " + formatBytes(bytes, u);
}

ComponentExplanation explainWeights(const Scenario& s, const Estimate& e, const PrecisionPlan& plan, Units u) {
    const int64_t bytes = e.peak.at_peak[Component::Weights];
    if (s.training.finetuning == Finetuning::Qlora)
        return {"", "frozen base: NF4 matmul weights (0.5 B), 16-bit embeddings and norms; adapters " +
                        dtypeText(plan.weights),
                "= " + formatBytes(bytes, u)};
    if (s.training.finetuning == Finetuning::Lora)
        return {"", "frozen 16-bit base + adapters in " + dtypeText(plan.weights), "= " + formatBytes(bytes, u)};
    return {"", "1× params, " + dtypeText(plan.weights) + modelSplit(s) + zeroShare(s, 3),
            perElementFormula(bytes, plan.weights, u)};
}

ComponentExplanation explainOptimizerStates(const Scenario& s, const Estimate& e, const PrecisionPlan& plan,
                                            Units u) {
    const int64_t bytes = e.peak.at_peak[Component::OptimizerStates];
    const OptimizerKind kind = s.training.optimizer;
    const std::string name(optimizerName(kind));
    const OptimizerSpec& spec = optimizerSpec(kind);
    std::string scaling;
    if (!spec.report_phrase.empty()) {
        scaling = std::string(spec.report_phrase);
    } else if (spec.layout == StateLayout::Factored) {
        scaling = "factored second moment: rows + columns per matrix, " + dtypeText(plan.optimizer_states);
    } else {
        scaling = shortNumber(spec.buffers) + "× params (" + std::string(spec.buffer_names) + "), " +
                  dtypeText(plan.optimizer_states);
        if (spec.layout == StateLayout::MuonHidden) scaling += "; embeddings, head, norms use AdamW (2×)";
    }
    scaling = name + " states: " + scaling + (fullFinetune(s) ? "" : ", adapters only") + zeroShare(s, 1);
    if (s.parallelism.offload_optimizer) scaling += "; offloaded to the host";
    // Plain per-parameter buffers show their arithmetic; the shaped ones
    // (8-bit blocks, Adafactor's factors, Muon's split) only their total.
    const double buffers = spec.buffers;
    const bool plain = buffers > 0 && spec.layout == StateLayout::PerParameter;
    if (!plain || bytes == 0) return {"", scaling, "= " + formatBytes(bytes, u)};
    const double elements = static_cast<double>(bytes) / (buffers * bytesOf(plan.optimizer_states));
    return {"", scaling,
            formatCount(std::llround(elements)) + " × " + shortNumber(buffers) + " × " + bytesEach(plan.optimizer_states) +
                " = " + formatBytes(bytes, u)};
}

// "2.10B elements (b × s × V = 2 × 8192 × 128256)": the size every logits
// buffer is a multiple of.
std::string logitsFormula(const Scenario& s, int64_t bytes, Units u) {
    const TrainingConfig& t = s.training;
    const int64_t seq = t.sequence_length / s.parallelism.context;
    std::string text = "= " + formatBytes(bytes, u) + "; each buffer b × s × V = " + std::to_string(t.micro_batch_size) +
                       " × " + std::to_string(seq) + " × " + std::to_string(s.model.vocab_size);
    if (s.parallelism.tensor > 1) text += " ÷ " + std::to_string(s.parallelism.tensor);
    return text + " elements";
}

ComponentExplanation explainActivations(const Scenario& s, const Estimate& e, Units u) {
    const TrainingConfig& t = s.training;
    std::string scaling = "varies with batch × sequence; saved for backward; checkpointing " +
                          std::string(checkpointingName(t.checkpointing));
    if (s.parallelism.tensor > 1 && s.parallelism.sequence_parallel) scaling += "; ÷ tensor with sequence parallelism";
    if (s.parallelism.context > 1) scaling += "; sequence ÷ " + std::to_string(s.parallelism.context) + " (context)";
    // The interleaved schedule keeps chunks (1/v of the stage) of different
    // micro-batches: a count like "4.6 micro-batches" needs its words.
    const double in_flight = e.peak.in_flight_microbatches;
    const int64_t v = std::max<int64_t>(s.parallelism.virtual_stages, 1);
    std::string held = shortNumber(in_flight) + (in_flight == 1 ? " micro-batch" : " micro-batches") + " in flight";
    if (s.parallelism.schedule == PipelineSchedule::Interleaved1F1B && v > 1 && s.parallelism.pipeline > 1)
        held = std::to_string(std::llround(in_flight * static_cast<double>(v))) + " chunks (1/" + std::to_string(v) +
               " of the stage each, interleaved) in flight = " + shortNumber(in_flight) + " micro-batches' worth";
    const std::string formula = std::to_string(e.peak.num_layers) + " layers × " + held + " × (b=" +
                                std::to_string(t.micro_batch_size) + ", s=" + std::to_string(t.sequence_length) +
                                ") = " + formatBytes(e.peak.at_peak[Component::Activations], u);
    // What recomputation saves, when it saves something: the activations the
    // stage would keep for its in-flight micro-batches with none.
    const std::string note = t.checkpointing != Checkpointing::None &&
                                     e.activations_without_recompute > e.peak.at_peak[Component::Activations]
                                 ? " (" + formatBytes(e.activations_without_recompute, u) + " without recomputation)"
                                 : "";
    return {"", scaling, formula + note};
}

}  // namespace

ComponentExplanation explainComponent(Component c, const Scenario& s, const Estimate& e, Units u) {
    const PrecisionPlan plan = planPrecision(s.training);
    const int64_t bytes = e.peak.at_peak[c];
    ComponentExplanation x;
    switch (c) {
        case Component::Weights:
            x = explainWeights(s, e, plan, u);
            break;
        case Component::Gradients:
            if (s.training.optimizer_in_backward) {  // stepped and freed tensor by tensor
                x = {"", "one parameter tensor's gradient, " + dtypeText(plan.gradients) +
                             " (optimizer step in backward)",
                     "= " + formatBytes(bytes, u)};
                break;
            }
            x = {"", "1× trainable params, " + dtypeText(plan.gradients) + (fullFinetune(s) ? modelSplit(s) : "") +
                         zeroShare(s, 2),
                 fullFinetune(s) ? perElementFormula(bytes, plan.gradients, u) : "= " + formatBytes(bytes, u)};
            break;
        case Component::MasterWeights:
            x = plan.master ? ComponentExplanation{"", "fp32 copy of the trainable params for the update" + zeroShare(s, 1),
                                                   perElementFormula(bytes, *plan.master, u)}
                            : ComponentExplanation{"", std::string(precisionName(s.training.precision)) +
                                                           " keeps no master copy", "= " + formatBytes(bytes, u)};
            break;
        case Component::OptimizerStates:
            x = explainOptimizerStates(s, e, plan, u);
            break;
        case Component::WeightCopies:
            x = {"", plan.fp8_weight_cache       ? "fp8 copies (and transposes) of the matmul weights, kept from forward to backward"
                     : plan.autocast_weight_cache ? "autocast's 16-bit casts of the matmul weights, kept for backward"
                     : s.training.finetuning == Finetuning::Qlora ? "a dequantised 16-bit weight while its matmul runs"
                                                                  : "none in this recipe",
                 plan.autocast_weight_cache && !plan.fp8_weight_cache && bytes > 0
                     ? perElementFormula(bytes, plan.activations, u) + " (per micro-batch in flight)"
                     : "= " + formatBytes(bytes, u)};
            break;
        case Component::GatheredWeights: {
            // The blocks' units and, beside them, the model's ends as
            // parallelism.fsdp_ends holds them at this moment (or a whole
            // stage unsharded: reshard_after_forward = false, deferred sync):
            // the total is the account's, not units x one block.
            const int64_t prefetched = s.hardware.overheads.fsdp_prefetch_units;
            x = {"", "ZeRO-3/FSDP: the unit computing + " + std::to_string(prefetched) +
                         " prefetched, all-gathered in " + dtypeText(plan.activations) +
                         ", with the embedding and LM head where parallelism.fsdp_ends = " +
                         std::string(enumName(s.parallelism.fsdp_ends)) + " keeps them",
                 "= " + formatBytes(bytes, u)};
            break;
        }
        case Component::CommBuffers: {
            const ParallelConfig& p = s.parallelism;
            std::string what;
            if (p.data * p.context > 1 && p.zero_stage == 0 && !s.hardware.overheads.ddp_gradient_as_bucket_view)
                what = "DDP's gradient buckets: a second copy of the gradients (gradient_as_bucket_view off)";
            else if (p.zero_stage >= 3)
                what = "one block's unsharded gradient before reduce-scatter + one reduce bucket (+ the LM head's "
                       "unsharded gradient where parallelism.fsdp_ends keeps it)";
            else if (p.data * p.context > 1)
                what = "one gradient reduce bucket in flight";
            if (p.expert > 1) what += std::string(what.empty() ? "" : "; ") + "all-to-all dispatch and combine buffers";
            x = {"", what.empty() ? "none: no gradient reduction on one GPU" : what, "= " + formatBytes(bytes, u)};
            break;
        }
        case Component::Activations:
            x = explainActivations(s, e, u);
            break;
        case Component::LogitsLoss:
            // Only the last pipeline stage has the head and the loss; the
            // first keeps what its embedding saves for backward under this
            // name (the model's ends: core/activations/activation_ends.cpp),
            // small buffers, no b × s × V.
            if (e.num_stages > 1 && e.peak.stage != e.num_stages - 1) {
                x = {"", "no logits on this stage (the head and loss are on stage " + std::to_string(e.num_stages) +
                             "): what the embedding keeps for backward",
                     "= " + formatBytes(bytes, u) + ": token ids (8 B × b × s), rotary tables, masks, per micro-batch in flight"};
                break;
            }
            x = {"", "logits b × s × V (V = " + std::to_string(s.model.vocab_size) + "), cross-entropy's fp32 copy and "
                     "their gradients (loss " + std::string(lossName(s.training.loss)) + ")",
                 logitsFormula(s, bytes, u)};
            break;
        case Component::OptimizerTransient:
            x = {"", "temporaries of optimizer.step() (" + std::string(optimizerImplName(s.training.optimizer_impl)) +
                         " implementation)",
                 "= " + formatBytes(bytes, u)};
            break;
        case Component::Workspace:
            x = {"", "cuBLAS workspace per handle and stream",
                 "1 handle × " + fixed(static_cast<double>(bytes) / static_cast<double>(kMiB), 2) + " MiB"};
            break;
    }
    x.label = std::string(componentName(c));
    return x;
}

std::string workedExample(const Scenario& s, const Estimate& e) { return workedExample(s, e, Units::GB); }

std::string workedExample(const Scenario& s, const Estimate& e, Units u) {
    // One decimal: the seed figure's "128.5 GB".
    const auto size = [u](double bytes) {
        return u == Units::GB ? decimalGB(bytes) : fixed(bytes / static_cast<double>(kGiB), 1) + " GiB";
    };
    const PrecisionPlan plan = planPrecision(s.training);
    const double w = bytesOf(plan.weights);
    const double g = bytesOf(plan.gradients);
    const double o = (plan.master ? bytesOf(*plan.master) : 0.0) + optimizerBytesPerParam(s, plan.optimizer_states);
    const int64_t trainable = e.parameters.trainable;
    const double total = static_cast<double>(trainable) * (w + g + o);
    const ModelStates& ms = e.peak.model_states;
    const int64_t here = ms.weights + ms.gradients + ms.optimizer_states + ms.master_weights;

    std::string text = formatCount(trainable) + (fullFinetune(s) ? " params" : " adapter params") + " × (" +
                       shortNumber(w) + "+" + shortNumber(g) + "+" + shortNumber(o) + ") B = " + size(total) +
                       " for weights, gradients and optimizer states";
    if (!fullFinetune(s)) text += ", on top of the frozen " + formatCount(e.parameters.total - trainable) + " base";
    if (e.total_gpus > 1 || !fullFinetune(s)) text += "; this GPU holds " + size(static_cast<double>(here)) + " of model states";
    return text;
}

}  // namespace trainmem
