// Accelerate's config YAML (what `accelerate config` writes and `accelerate
// launch --config_file` reads) as accelerate 16cb6eb8 (after v1.14.0) reads
// it: src/accelerate/commands/config/config_args.py (ClusterConfig),
// src/accelerate/utils/dataclasses.py (FullyShardedDataParallelPlugin,
// DeepSpeedPlugin), src/accelerate/utils/constants.py. It says how the run is
// spread and in which precision; the batch, sequence, optimizer and model are
// the training script's, so they are reported unknown.
#include "core/runconfig/formats.h"

namespace trainmem::runconfig {
namespace {

const std::string kAccelerate = std::string(kAccelerateRelease) + " ";

}  // namespace

Status importAccelerate(ConfigDocument& doc, ImportContext& ctx) {
    if (Status st = startFramework(ctx, "custom"); !st) return st;
    ImportRecorder& rec = ctx.rec;
    const std::string file = doc.file;
    auto text = [&](const std::string& key, const std::string& fallback) -> Expected<std::pair<std::string, const ConfigValue*>> {
        const ConfigValue* v = doc.take(key);
        if (!v || v->value.is_null()) return std::pair<std::string, const ConfigValue*>{fallback, v};
        return std::pair<std::string, const ConfigValue*>{valueText(v->value), v};
    };
    auto flag = [&](const std::string& key) -> Expected<std::pair<std::optional<bool>, const ConfigValue*>> {
        const ConfigValue* v = doc.take(key);
        if (!v || v->value.is_null()) return std::pair<std::optional<bool>, const ConfigValue*>{std::nullopt, v};
        auto b = asBoolean(*v);
        if (!b) return b.error();
        return std::pair<std::optional<bool>, const ConfigValue*>{*b, v};
    };

    auto type = text("distributed_type", "NO");
    if (!type) return type.error();
    const std::string kind = type->first;

    // World size: num_processes (config_args.py: -1 when not set), or --gpus.
    const ConfigValue* procs = doc.take("num_processes");
    int64_t world = 0;
    if (ctx.options.gpus) {
        world = *ctx.options.gpus;
        if (procs) rec.readOnly(*procs, "--gpus given on trainmem's command line is used, as accelerate launch --num_processes would be");
    } else if (procs && procs->value.is_number_integer() && procs->value.get<int64_t>() >= 1) {
        world = procs->value.get<int64_t>();
        rec.readOnly(*procs, "the world size", "parallelism.gpus");
    } else if (kind == "NO") {
        world = 1;
    }
    const ConfigValue* machines = doc.take("num_machines");
    int64_t nodes = machines && machines->value.is_number_integer() ? std::max<int64_t>(1, machines->value.get<int64_t>()) : 1;
    if (world > 0) {
        if (Status st = rec.setDefault("num_processes", "parallelism.data", std::to_string(world), kAccelerate + "config_args.py"); !st) return st;
        if (Status st = rec.setDefault("num_processes", "parallelism.gpus", std::to_string(world), kAccelerate + "config_args.py"); !st) return st;
    } else {
        rec.unknown(file, "num_processes", procs ? procs->line : 0, "parallelism.data", "-1 or absent: give --gpus N");
    }

    auto mp = text("mixed_precision", "no");
    if (!mp) return mp.error();
    std::string precision;
    if (mp->first == "bf16") precision = kind == "DEEPSPEED" ? "mixed-bf16" : "amp-bf16";
    else if (mp->first == "fp16") precision = kind == "DEEPSPEED" ? "mixed-fp16" : "amp-fp16";
    else if (mp->first == "no") precision = "fp32";
    if (precision.empty()) {
        rec.notRepresentable(*mp->second, "mixed_precision " + mp->first + " (TE / torchao fp8 through accelerate) is not counted", "training.precision");
        rec.unknown(file, "mixed_precision", mp->second->line, "training.precision", "set the nearest precision with --set");
    } else if (Status st = mp->second ? rec.set(*mp->second, "training.precision", precision,
                                                kind == "DEEPSPEED" ? "DeepSpeed's bf16/fp16: fp32 master weights" : "autocast, or FSDP's MixedPrecision over fp32 parameters")
                                      : rec.setDefault("mixed_precision", "training.precision", precision, kAccelerate + "config_args.py", "no");
               !st) {
        return st;
    }

    if (kind == "NO" || kind == "MULTI_GPU") {
        if (Status st = rec.setDefault("distributed_type", "parallelism.zero_stage", "0", kAccelerate + "config_args.py",
                                       kind == "NO" ? "one process" : "DDP");
            !st)
            return st;
        if (type->second) rec.readOnly(*type->second, kind == "NO" ? "one process" : "DDP over the processes");
    } else if (kind == "FSDP") {
        // dataclasses.py FullyShardedDataParallelPlugin: sharding_strategy FULL_SHARD; version 2: reshard_after_forward true.
        auto version = text("fsdp_config.fsdp_version", "1");
        if (!version) return version.error();
        int64_t zero = 3, group = 0;
        if (version->first == "2") {
            auto reshard = flag("fsdp_config.fsdp_reshard_after_forward");
            if (!reshard) return reshard.error();
            if (Status st = reshard->second ? rec.set(*reshard->second, "parallelism.reshard_after_forward", *reshard->first ? "true" : "false")
                                            : rec.setDefault("fsdp_config.fsdp_reshard_after_forward", "parallelism.reshard_after_forward", "true",
                                                             kAccelerate + "utils/dataclasses.py");
                !st)
                return st;
        } else {
            auto strategy = text("fsdp_config.fsdp_sharding_strategy", "FULL_SHARD");
            if (!strategy) return strategy.error();
            const std::string s = strategy->first;
            if (s == "FULL_SHARD" || s == "1") zero = 3;
            else if (s == "SHARD_GRAD_OP" || s == "2") zero = 2;
            else if (s == "NO_SHARD" || s == "3") zero = 0;
            else if (s == "HYBRID_SHARD" || s == "4") zero = 3, group = world > 0 ? world / nodes : 0;
            else if (s == "HYBRID_SHARD_ZERO2" || s == "5") zero = 2, group = world > 0 ? world / nodes : 0;
            else return valueError(*strategy->second, "expected one of FULL_SHARD, SHARD_GRAD_OP, NO_SHARD, HYBRID_SHARD, HYBRID_SHARD_ZERO2 "
                                                      "(utils/constants.py FSDP_SHARDING_STRATEGY)");
            if (group > 0 && nodes > 1)
                if (Status st = rec.set(*strategy->second, "parallelism.shard_group", std::to_string(group), "HYBRID: one shard group per machine"); !st)
                    return st;
        }
        if (Status st = rec.setDefault("fsdp_config.fsdp_sharding_strategy", "parallelism.zero_stage", std::to_string(zero),
                                       kAccelerate + "utils/dataclasses.py", "FSDP's sharding strategy (FULL_SHARD unless set)");
            !st)
            return st;
        if (Status st = rec.setDefault("(accelerate's FSDP wrapping)", "parallelism.fsdp_ends", "root", "docs/frameworks.md (accelerate wraps the "
                                                                                                     "decoder layers; the ends stay in the root unit)");
            !st)
            return st;
        auto offload = flag("fsdp_config.fsdp_offload_params");
        if (!offload) return offload.error();
        if (offload->first.value_or(false)) {
            if (Status st = rec.set(*offload->second, "parallelism.offload_parameters", "true"); !st) return st;
            if (Status st = rec.set(*offload->second, "parallelism.offload_optimizer", "true"); !st) return st;
        }
        auto ac = flag("fsdp_config.fsdp_activation_checkpointing");
        if (!ac) return ac.error();
        if (ac->first.value_or(false))
            if (Status st = rec.set(*ac->second, "training.activation_checkpointing", "full", "every wrapped layer"); !st) return st;
    } else if (kind == "DEEPSPEED") {
        const ConfigValue* config_file = doc.take("deepspeed_config.deepspeed_config_file");
        if (config_file && config_file->value.is_string()) {
            // Accelerate resolves it from the YAML's own folder.
            std::filesystem::path p = config_file->value.get<std::string>();
            if (p.is_relative()) p = std::filesystem::path(file).parent_path() / p;
            std::error_code ec;
            if (!std::filesystem::exists(p, ec))
                return valueError(*config_file, "the DeepSpeed config " + p.string() + " does not exist (resolved from the YAML's own folder)");
            auto ds = readJsonDocument(p);
            if (!ds) return ds.error();
            rec.readOnly(*config_file, "DeepSpeed config " + p.string() + ", read below");
            std::vector<std::string> resolved = {"parallelism.data"};
            if (mp->second) resolved.push_back("training.precision");
            if (Status st = importDeepspeed(*ds, ctx, resolved); !st) return st;
        } else {
            auto stage = text("deepspeed_config.zero_stage", "");
            if (!stage) return stage.error();
            if (!stage->second) return Error{file + ": deepspeed_config.zero_stage", "missing: a DeepSpeed config names its ZeRO stage or a deepspeed_config_file"};
            if (Status st = rec.set(*stage->second, "parallelism.zero_stage", stage->first); !st) return st;
            for (auto [key, tm] : {std::pair{"deepspeed_config.offload_optimizer_device", "parallelism.offload_optimizer"},
                                   std::pair{"deepspeed_config.offload_param_device", "parallelism.offload_parameters"}}) {
                auto device = text(key, "none");
                if (!device) return device.error();
                if (!device->second) continue;
                if (device->first == "nvme") rec.notRepresentable(*device->second, "NVMe offload is not counted; counted as cpu", tm);
                if (Status st = rec.set(*device->second, tm, device->first == "none" ? "false" : "true"); !st) return st;
            }
            if (const ConfigValue* ga = doc.take("deepspeed_config.gradient_accumulation_steps"); ga && ga->value.is_number_integer())
                if (Status st = rec.set(*ga, "training.gradient_accumulation_steps", valueText(ga->value)); !st) return st;
        }
    } else if (type->second) {
        rec.notRepresentable(*type->second, "distributed_type " + kind + " is not counted (trainmem: NO, MULTI_GPU, FSDP, DEEPSPEED)", "parallelism");
    }

    // What the training script decides.
    for (auto [key, tm] : {std::pair{"(training script)", "training.micro_batch_size"}, std::pair{"(training script)", "training.sequence_length"},
                           std::pair{"(training script)", "training.optimizer"}})
        if (!rec.wasSet(tm)) rec.unknown(file, key, 0, tm, "the training script's, not the Accelerate config's: set it with --set");
    finishFramework(ctx, kAccelerateRelease);
    rec.ignoreRest(doc, "no effect on memory in trainmem's model (" + std::string(kAccelerateRelease) + ")");
    return ok();
}

}  // namespace trainmem::runconfig

namespace trainmem::runconfig {

Expected<std::string> exportAccelerate(const Scenario& s) {
    const ParallelConfig& p = s.parallelism;
    const TrainingConfig& t = s.training;
    if (p.tensor > 1 || p.pipeline > 1 || p.context > 1 || p.expert > 1)
        return Error{"parallelism", "an Accelerate config written here carries data parallelism and FSDP only"};
    std::string mp;
    switch (t.precision) {
        case Precision::AmpBf16: mp = "bf16"; break;
        case Precision::AmpFp16: mp = "fp16"; break;
        case Precision::Fp32: mp = "'no'"; break;
        default: return Error{"training.precision", "Accelerate's DDP and FSDP train amp-bf16, amp-fp16 or fp32"};
    }
    if (p.zero_stage == 1) return Error{"parallelism.zero_stage", "Accelerate's FSDP shards 0, 2 or 3 (ZeRO-1 is DeepSpeed's: export --to deepspeed)"};
    if (p.zero_stage == 3 && p.fsdp_ends != FsdpEnds::Root)
        return Error{"parallelism.fsdp_ends", "accelerate's FSDP keeps the ends in the root unit (root)"};
    if (p.shard_group != 0) return Error{"parallelism.shard_group", "hybrid sharding is not written yet"};
    if (t.checkpointing != Checkpointing::None && t.checkpointing != Checkpointing::Full && p.zero_stage >= 2)
        return Error{"training.activation_checkpointing", "FSDP's activation checkpointing is every layer (full) or none"};
    std::string out = "# Accelerate config (" + std::string(kAccelerateRelease) + "), written by trainmem-cli export-run\n";
    out += "# from scenario \"" + s.name + "\"; the batch, sequence length and optimizer are the training script's.\n";
    out += "compute_environment: LOCAL_MACHINE\n";
    const int64_t world = p.totalGpus();
    out += "distributed_type: " + std::string(p.zero_stage >= 2 ? "FSDP" : world > 1 ? "MULTI_GPU" : "'NO'") + "\n";
    if (p.zero_stage >= 2) {
        out += "fsdp_config:\n";
        if (p.zero_stage == 3) {
            out += "  fsdp_version: 2\n  fsdp_reshard_after_forward: " + std::string(p.reshard_after_forward ? "true" : "false") + "\n";
        } else {
            out += "  fsdp_version: 1\n  fsdp_sharding_strategy: SHARD_GRAD_OP\n";
        }
        out += "  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n";
        out += "  fsdp_offload_params: " + std::string(p.offload_parameters ? "true" : "false") + "\n";
        out += "  fsdp_activation_checkpointing: " + std::string(t.checkpointing == Checkpointing::Full ? "true" : "false") + "\n";
    }
    out += "mixed_precision: " + mp + "\nmachine_rank: 0\nnum_machines: 1\nnum_processes: " + std::to_string(world) + "\n";
    return out;
}

}  // namespace trainmem::runconfig
