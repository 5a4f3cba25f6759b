// The layout half of validate(), allocation-free. Each rule names the
// function of scenario_validate.cpp it mirrors; the sources of the rules
// (Megatron-LM's divisibility asserts, ring attention's 2 x context chunks,
// DeepSpeed's offload stages) are cited there.
#include "core/scenario/layout_rules.h"

#include "core/activations/activations.h"

namespace trainmem {

namespace {

// The bounds of scenario_validate.cpp.
constexpr int64_t kMaxBatch = int64_t{1} << 20;
constexpr int64_t kMaxTokensPerMicrobatch = int64_t{1} << 25;
constexpr int64_t kMaxDegree = int64_t{1} << 16;
constexpr int64_t kMaxGpus = int64_t{1} << 24;

bool within(int64_t value, int64_t min, int64_t max) { return value >= min && value <= max; }

// validateTraining: the batch fields.
bool batchAdmissible(const TrainingConfig& t) {
    return within(t.micro_batch_size, 1, kMaxBatch) &&
           t.micro_batch_size * t.sequence_length <= kMaxTokensPerMicrobatch &&
           within(t.gradient_accumulation_steps, 1, kMaxBatch) &&
           !checkpointsSomeLayers(t.checkpointing);  // the solver never writes these
}

// validateDegrees.
bool degreesAdmissible(const ParallelConfig& p) {
    for (int64_t degree : {p.data, p.tensor, p.pipeline, p.context, p.expert})
        if (!within(degree, 1, kMaxDegree)) return false;
    int64_t gpus = 1;
    for (int64_t degree : {p.data, p.tensor, p.pipeline, p.context}) {
        gpus *= degree;  // each factor <= 2^16 and the running product <= 2^24: no overflow
        if (gpus > kMaxGpus) return false;
    }
    if (p.gpus && *p.gpus != p.totalGpus()) return false;
    return within(p.zero_stage, 0, 3) && within(p.virtual_stages, 1, kMaxDegree) &&
           within(p.microbatches, 0, kMaxBatch) && within(p.shard_group, 0, kMaxGpus);
}

// validateTensor.
bool tensorAdmissible(const Scenario& s) {
    const ModelConfig& m = s.model;
    const int64_t t = s.parallelism.tensor;
    if (t == 1) return true;
    if (m.num_heads % t != 0) return false;
    if (!m.mla && m.num_kv_heads % t != 0) return false;
    if (m.hasDenseLayer() && m.ffn_hidden_size % t != 0) return false;
    if (m.isMoe() && (m.moe->expert_ffn % t != 0 || m.moe->shared_expert_ffn % t != 0)) return false;
    if (s.parallelism.sequence_parallel && (s.training.sequence_length / s.parallelism.context) % t != 0) return false;
    return true;
}

// validatePipeline.
bool pipelineAdmissible(const Scenario& s) {
    const ParallelConfig& p = s.parallelism;
    const int64_t layers = s.model.num_layers;
    if (p.pipeline > layers) return false;
    const bool interleaved = p.schedule == PipelineSchedule::Interleaved1F1B;
    if (p.virtual_stages > 1 && !interleaved) return false;
    if (interleaved && (p.pipeline < 2 || p.virtual_stages < 2 || layers % (p.pipeline * p.virtual_stages) != 0))
        return false;
    const int64_t accumulation = s.training.gradient_accumulation_steps;
    if (p.microbatches > 0 && accumulation > 1 && p.microbatches != accumulation) return false;
    if (p.pipeline == 1 && p.microbatches > 1) return false;
    return true;
}

// validateExpertAndContext.
bool expertAndContextAdmissible(const Scenario& s) {
    const ParallelConfig& p = s.parallelism;
    if (p.expert > 1) {
        if (!s.model.isMoe() || s.model.moe->num_experts % p.expert != 0) return false;
        if ((p.data * p.context) % p.expert != 0) return false;
    }
    return p.context == 1 || s.training.sequence_length % (2 * p.context) == 0;
}

// validateSharding.
bool shardingAdmissible(const ParallelConfig& p) {
    if (p.sequence_parallel && p.tensor == 1) return false;
    if (p.shard_group > 0 && (p.zero_stage == 0 || (p.data * p.context) % p.shard_group != 0)) return false;
    if (p.offload_optimizer && p.zero_stage < 1) return false;
    if (p.offload_parameters && p.zero_stage != 3) return false;
    return true;
}

}  // namespace

bool degreesAdmissible(const Scenario& s) {
    const ParallelConfig& p = s.parallelism;
    const ModelConfig& m = s.model;
    for (int64_t degree : {p.data, p.tensor, p.pipeline, p.context, p.expert})
        if (!within(degree, 1, kMaxDegree)) return false;
    int64_t gpus = 1;
    for (int64_t degree : {p.data, p.tensor, p.pipeline, p.context}) {
        gpus *= degree;
        if (gpus > kMaxGpus) return false;
    }
    const int64_t t = p.tensor;
    if (t > 1) {
        if (m.num_heads % t != 0) return false;
        if (!m.mla && m.num_kv_heads % t != 0) return false;
        if (m.hasDenseLayer() && m.ffn_hidden_size % t != 0) return false;
        if (m.isMoe() && (m.moe->expert_ffn % t != 0 || m.moe->shared_expert_ffn % t != 0)) return false;
    }
    if (p.pipeline > m.num_layers) return false;
    if (p.expert > 1) {
        if (!m.isMoe() || m.moe->num_experts % p.expert != 0) return false;
        if ((p.data * p.context) % p.expert != 0) return false;
    }
    return p.context == 1 || s.training.sequence_length % (2 * p.context) == 0;
}

bool belowDegreesAdmissible(const Scenario& s) {
    const ParallelConfig& p = s.parallelism;
    // degreesAdmissible(ParallelConfig) less the degrees' own ranges and product.
    if (p.gpus && *p.gpus != p.totalGpus()) return false;
    if (!within(p.zero_stage, 0, 3) || !within(p.virtual_stages, 1, kMaxDegree) ||
        !within(p.microbatches, 0, kMaxBatch) || !within(p.shard_group, 0, kMaxGpus))
        return false;
    // tensorAdmissible less the widths divisible by TP.
    if (p.tensor > 1 && p.sequence_parallel && (s.training.sequence_length / p.context) % p.tensor != 0) return false;
    // pipelineAdmissible and expertAndContextAdmissible check the degrees
    // again (PP <= layers, EP, CP): true here.
    return batchAdmissible(s.training) && pipelineAdmissible(s) && shardingAdmissible(p);
}

bool layoutAdmissible(const Scenario& s) {
    return batchAdmissible(s.training) && degreesAdmissible(s.parallelism) && tensorAdmissible(s) &&
           pipelineAdmissible(s) && expertAndContextAdmissible(s) && shardingAdmissible(s.parallelism);
}

}  // namespace trainmem
