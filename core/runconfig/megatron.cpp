// Megatron-LM's flags as Megatron-LM core_v0.15.0rc7-2333-gd98e8a64dd reads
// them (megatron/training/arguments.py: defaults and validate_args;
// megatron/core/parallel_state.py, num_microbatches_calculator.py), from a
// launch script or the rank-0 arguments log (megatron_script.cpp).
#include "core/training/names.h"
#include "core/runconfig/formats.h"

namespace trainmem::runconfig {
namespace {

const std::string kArgs = std::string(kMegatronRelease) + " megatron/training/arguments.py";

}  // namespace

Status importMegatronFlags(ConfigDocument& doc, ImportContext& ctx) {
    if (Status st = startFramework(ctx, "megatron-lm"); !st) return st;
    ImportRecorder& rec = ctx.rec;
    const std::string file = doc.file;
    // A flag's value: store_true flags are true when given (script) or
    // True/False (log); "None" in the log is not given.
    auto given = [&](const std::string& flag) -> const ConfigValue* {
        const ConfigValue* v = doc.take(flag);
        return v && !v->value.is_null() ? v : nullptr;
    };
    auto on = [&](const std::string& flag) -> Expected<std::pair<bool, const ConfigValue*>> {
        const ConfigValue* v = given(flag);
        if (!v) return std::pair<bool, const ConfigValue*>{false, nullptr};
        auto b = asBoolean(*v);
        if (!b) return valueError(*v, "is a switch (store_true): give it without a value");
        return std::pair<bool, const ConfigValue*>{*b, v};
    };
    auto integer = [&](const std::string& flag, std::optional<int64_t> fallback) -> Expected<std::pair<std::optional<int64_t>, const ConfigValue*>> {
        const ConfigValue* v = given(flag);
        if (!v) return std::pair<std::optional<int64_t>, const ConfigValue*>{fallback, nullptr};
        auto n = asInteger(*v);
        if (!n) return n.error();
        if (*n < 1) return valueError(*v, "must be at least 1");
        return std::pair<std::optional<int64_t>, const ConfigValue*>{*n, v};
    };
    auto text = [&](const std::string& flag) -> Expected<std::pair<std::string, const ConfigValue*>> {
        const ConfigValue* v = given(flag);
        if (!v) return std::pair<std::string, const ConfigValue*>{"", nullptr};
        return std::pair<std::string, const ConfigValue*>{valueText(v->value), v};
    };
    auto put = [&](const ConfigValue* from, const std::string& flag, const std::string& tm, const std::string& value,
                   const std::string& note = {}) -> Status {
        if (from) return rec.set(*from, tm, value, note);
        return rec.setDefault(flag, tm, value, kArgs, note);
    };

    // Degrees.
    auto tp = integer("--tensor-model-parallel-size", 1);
    if (!tp) return tp.error();
    auto pp = integer("--pipeline-model-parallel-size", 1);
    if (!pp) return pp.error();
    auto cp = integer("--context-parallel-size", 1);
    if (!cp) return cp.error();
    auto ep = integer("--expert-model-parallel-size", 1);
    if (!ep) return ep.error();
    auto etp = integer("--expert-tensor-parallel-size", std::nullopt);
    if (!etp) return etp.error();
    const int64_t t = *tp->first, p = *pp->first, c = *cp->first, e = *ep->first;

    // World size: --gpus, else torchrun's --nproc_per_node x --nnodes, else the log's world_size.
    std::optional<int64_t> world = ctx.options.gpus;
    std::string world_note = "trainmem's --gpus";
    auto nproc = integer("torchrun --nproc_per_node", std::nullopt);
    if (!nproc) return nproc.error();
    auto nnodes = integer("torchrun --nnodes", 1);
    if (!nnodes) return nnodes.error();
    auto logged = integer("--world-size", std::nullopt);
    if (!logged) return logged.error();
    doc.take("--data-parallel-size");
    if (!world && nproc->first) {
        world = *nproc->first * *nnodes->first;
        rec.readOnly(*nproc->second, "torchrun: " + std::to_string(*nproc->first) + " per node x " + std::to_string(*nnodes->first) +
                                         " nodes = world size " + std::to_string(*world), "parallelism.gpus");
        world_note = "torchrun --nproc_per_node x --nnodes";
    } else if (!world && logged->first) {
        world = *logged->first;
        rec.readOnly(*logged->second, "the world size rank 0 ran with", "parallelism.gpus");
        world_note = "the log's world_size";
    }
    int64_t dp = 1;
    if (world) {
        const int64_t model = t * p * c;
        if (*world % model != 0)
            return Error{file + ": --tensor-model-parallel-size",
                         "world size (" + std::to_string(*world) + ") is not divisible by total_model_size (tp " + std::to_string(t) +
                             " x pp " + std::to_string(p) + " x cp " + std::to_string(c) + " = " + std::to_string(model) + ") (" + kArgs + ")"};
        const int64_t expert_grid = etp->first.value_or(t) * e * p;
        if (*world % expert_grid != 0)
            return Error{file + ": --expert-model-parallel-size",
                         "world_size (" + std::to_string(*world) + ") is not divisible by expert_tensor_model_pipeline_parallel size (" +
                             std::to_string(expert_grid) + ") (" + std::string(kMegatronRelease) + " megatron/core/parallel_state.py)"};
        dp = *world / model;
        if (Status st = rec.setDefault("(world size)", "parallelism.data", std::to_string(dp), world_note, "world / (tp x pp x cp)"); !st) return st;
        if (Status st = rec.setDefault("(world size)", "parallelism.gpus", std::to_string(*world), world_note); !st) return st;
    } else {
        rec.unknown(file, "(world size)", 0, "parallelism.data", "torchrun's world size is not in the file: give --gpus N");
    }
    if (Status st = put(tp->second, "--tensor-model-parallel-size", "parallelism.tensor", std::to_string(t)); !st) return st;
    if (Status st = put(pp->second, "--pipeline-model-parallel-size", "parallelism.pipeline", std::to_string(p)); !st) return st;
    if (Status st = put(cp->second, "--context-parallel-size", "parallelism.context", std::to_string(c)); !st) return st;
    if (Status st = put(ep->second, "--expert-model-parallel-size", "parallelism.expert", std::to_string(e)); !st) return st;
    if (etp->first && *etp->first != t)
        rec.notRepresentable(*etp->second, "an expert tensor-parallel degree other than the dense one is not modelled", "parallelism.tensor");

    // Sequence parallelism: switched off at TP 1 (arguments.py).
    auto sp = on("--sequence-parallel");
    if (!sp) return sp.error();
    if (sp->first && t == 1) {
        rec.readOnly(*sp->second, "\"Disabling sequence parallelism because tensor model parallelism is disabled\" (" + kArgs + ")",
                     "parallelism.sequence_parallel");
        if (Status st = rec.setDefault("--sequence-parallel", "parallelism.sequence_parallel", "false", kArgs, "Megatron switches it off at TP 1"); !st)
            return st;
    } else if (Status st = put(sp->second, "--sequence-parallel", "parallelism.sequence_parallel", sp->first ? "true" : "false"); !st) {
        return st;
    }

    // Pipeline schedule: interleaved when virtual stages are asked for.
    auto vpp = integer("--virtual-pipeline-model-parallel-size", std::nullopt);
    if (!vpp) return vpp.error();
    auto per_vstage = integer("--num-layers-per-virtual-pipeline-stage", std::nullopt);
    if (!per_vstage) return per_vstage.error();
    auto layers = integer("--num-layers", std::nullopt);
    if (!layers) return layers.error();
    std::optional<int64_t> virtual_stages = vpp->first;
    const ConfigValue* vfrom = vpp->second;
    if (!virtual_stages && per_vstage->first && layers->first) {
        virtual_stages = *layers->first / p / *per_vstage->first;
        vfrom = per_vstage->second;
    }
    if (virtual_stages && *virtual_stages > 1) {
        if (Status st = rec.set(*vfrom, "parallelism.pipeline_schedule", "interleaved-1f1b"); !st) return st;
        if (Status st = rec.set(*vfrom, "parallelism.virtual_stages", std::to_string(*virtual_stages)); !st) return st;
    } else if (Status st = rec.setDefault("--virtual-pipeline-model-parallel-size", "parallelism.pipeline_schedule", "1f1b", kArgs,
                                          "1F1B without virtual stages (megatron/core/pipeline_parallel/schedules.py)");
               !st) {
        return st;
    }

    // Batch (num_microbatches_calculator.py).
    auto micro = integer("--micro-batch-size", std::nullopt);
    if (!micro) return micro.error();
    if (!micro->first) return Error{file + ": --micro-batch-size", "missing: Megatron needs it (arguments.py: micro_batch_size is required)"};
    if (Status st = rec.set(*micro->second, "training.micro_batch_size", std::to_string(*micro->first)); !st) return st;
    auto global = integer("--global-batch-size", std::nullopt);
    if (!global) return global.error();
    if (global->first && world) {
        const int64_t per_step = *micro->first * dp;
        if (*global->first % per_step != 0)
            return valueError(*global->second, "global batch size (" + std::to_string(*global->first) + ") is not divisible by micro batch size (" +
                                                   std::to_string(*micro->first) + ") times data parallel size (" + std::to_string(dp) + ") (" +
                                                   kMegatronRelease + " megatron/core/num_microbatches_calculator.py)");
        if (Status st = rec.set(*global->second, "training.gradient_accumulation_steps", std::to_string(*global->first / per_step),
                                "global / (micro x dp)");
            !st)
            return st;
    } else if (global->first) {
        rec.unknown(file, "--global-batch-size", global->second->line, "training.gradient_accumulation_steps",
                    "global / (micro x dp) needs the world size: give --gpus N");
    } else if (Status st = rec.setDefault("--global-batch-size", "training.gradient_accumulation_steps", "1", kArgs,
                                          "None: micro_batch_size x data_parallel_size, one micro-batch per step");
               !st) {
        return st;
    }
    auto seq = integer("--seq-length", std::nullopt);
    if (!seq) return seq.error();
    if (seq->first) {
        if (Status st = rec.set(*seq->second, "training.sequence_length", std::to_string(*seq->first)); !st) return st;
    } else {
        rec.unknown(file, "--seq-length", 0, "training.sequence_length", "not given");
    }

    // Precision (arguments.py: params_dtype; bf16 needs fp32 gradient accumulation unless --grad-reduce-in-bf16).
    auto bf16 = on("--bf16");
    if (!bf16) return bf16.error();
    auto fp16 = on("--fp16");
    if (!fp16) return fp16.error();
    if (bf16->first && fp16->first) return valueError(*fp16->second, "--fp16 and --bf16 together (arguments.py: assert not args.bf16)");
    auto fp8 = text("--fp8-format");
    if (!fp8) return fp8.error();
    if (fp8->second) {
        if (Status st = rec.set(*fp8->second, "training.precision", "fp8-mixed", "Transformer Engine fp8 (" + fp8->first + ") over bf16"); !st)
            return st;
        if (const ConfigValue* gather = given("--fp8-param-gather"))
            rec.notRepresentable(*gather, "fp8 parameter storage (--fp8-param-gather) is not modelled: the weights are counted in bf16",
                                 "training.precision");
    } else if (bf16->first) {
        if (Status st = rec.set(*bf16->second, "training.precision", "mixed-bf16", "bf16 model, fp32 main parameters in the optimizer"); !st)
            return st;
    } else if (fp16->first) {
        if (Status st = rec.set(*fp16->second, "training.precision", "mixed-fp16"); !st) return st;
    } else if (Status st = rec.setDefault("--bf16, --fp16", "training.precision", "fp32", kArgs, "args.params_dtype = torch.float"); !st) {
        return st;
    }
    auto reduce_bf16 = on("--grad-reduce-in-bf16");
    if (!reduce_bf16) return reduce_bf16.error();
    doc.take("--params-dtype");
    doc.take("--main-grads-dtype");
    doc.take("--accumulate-allreduce-grads-in-fp32");
    if (Status st = put(reduce_bf16->second, "--grad-reduce-in-bf16", "training.grad_dtype", reduce_bf16->first ? "bf16" : "fp32",
                        reduce_bf16->first ? "" : "--main-grads-dtype fp32");
        !st)
        return st;

    // ZeRO: the distributed optimizer shards the fp32 main parameters and states (ZeRO-1); Megatron FSDP / torch FSDP2 shard more.
    auto dist = on("--use-distributed-optimizer");
    if (!dist) return dist.error();
    int64_t zero = dist->first ? 1 : 0;
    const ConfigValue* zero_from = dist->second;
    auto fsdp2 = on("--use-torch-fsdp2");
    if (!fsdp2) return fsdp2.error();
    auto mfsdp = on("--use-megatron-fsdp");
    if (!mfsdp) return mfsdp.error();
    if (fsdp2->first || mfsdp->first) {
        zero = 3;
        zero_from = fsdp2->first ? fsdp2->second : mfsdp->second;
        auto strategy = text("--data-parallel-sharding-strategy");
        if (!strategy) return strategy.error();
        if (strategy->second) {
            if (strategy->first == "optim") zero = 1;
            else if (strategy->first == "optim_grads") zero = 2;
            else if (strategy->first == "no_shard") zero = 0;
            zero_from = strategy->second;
        }
    }
    if (Status st = put(zero_from, "--use-distributed-optimizer", "parallelism.zero_stage", std::to_string(zero)); !st) return st;
    auto cpu_opt = on("--optimizer-cpu-offload");
    if (!cpu_opt) return cpu_opt.error();
    if (cpu_opt->first) {
        if (zero < 1) return valueError(*cpu_opt->second, "needs --use-distributed-optimizer (Megatron's HybridDeviceOptimizer)");
        if (Status st = rec.set(*cpu_opt->second, "parallelism.offload_optimizer", "true"); !st) return st;
    }

    // Optimizer (arguments.py --optimizer adam; SGD with --sgd-momentum 0.9).
    auto opt = text("--optimizer");
    if (!opt) return opt.error();
    if (opt->second) {
        if (opt->first == "adam") {
            if (Status st = rec.set(*opt->second, "training.optimizer", "adam"); !st) return st;
        } else if (opt->first == "sgd") {
            if (Status st = rec.set(*opt->second, "training.optimizer", "sgd-momentum", "--sgd-momentum 0.9 by default"); !st) return st;
        } else {
            rec.notRepresentable(*opt->second, "optimizer " + opt->first + " is not in trainmem's catalogue", "training.optimizer");
            rec.unknown(file, "--optimizer", opt->second->line, "training.optimizer", "set the nearest optimizer with --set");
        }
    }

    // Recomputation (arguments.py; megatron/core/transformer/transformer_config.py).
    auto granularity = text("--recompute-granularity");
    if (!granularity) return granularity.error();
    auto method = text("--recompute-method");
    if (!method) return method.error();
    auto recompute_layers = integer("--recompute-num-layers", std::nullopt);
    if (!recompute_layers) return recompute_layers.error();
    if (auto old = on("--recompute-activations"); old && old->first) {
        if (Status st = rec.set(*old->second, "training.activation_checkpointing", "selective", "= --recompute-granularity selective"); !st) return st;
    } else if (!granularity->second) {
        if (Status st = rec.setDefault("--recompute-granularity", "training.activation_checkpointing", "none", kArgs, "recompute_granularity None"); !st)
            return st;
    } else if (granularity->first == "selective") {
        if (method->second) return valueError(*method->second, "recompute method is not yet supported for selective recomputing granularity (" + kArgs + ")");
        if (Status st = rec.set(*granularity->second, "training.activation_checkpointing", "selective"); !st) return st;
    } else if (granularity->first == "full") {
        if (!method->second || !recompute_layers->first)
            return valueError(*granularity->second, "full recomputation needs --recompute-method (uniform or block) and --recompute-num-layers "
                                                    "(megatron/core/transformer/transformer_config.py)");
        const int64_t n = *recompute_layers->first;
        std::string schedule;
        if (method->first == "uniform") schedule = n == 1 ? "full" : "megatron-uniform";
        else if (method->first == "block") schedule = "megatron-block";
        else return valueError(*method->second, "expected uniform or block (got \"" + method->first + "\")");
        if (Status st = rec.set(*method->second, "training.activation_checkpointing", schedule); !st) return st;
        if (schedule != "full")
            if (Status st = rec.set(*recompute_layers->second, "training.checkpoint_every", std::to_string(n)); !st) return st;
    } else {
        return valueError(*granularity->second, "expected full or selective (got \"" + granularity->first + "\")");
    }

    // Kernels and attention: Transformer Engine's fused attention by default (--attention-backend auto).
    auto impl = text("--transformer-impl");
    if (!impl) return impl.error();
    if (impl->first == "local")
        rec.notRepresentable(*impl->second, "Megatron's local (non-TE) layers: counted with the megatron profile", "training.kernels");
    if (Status st = put(impl->second, "--transformer-impl", "training.kernels", "megatron",
                        "Megatron-LM's layers as Korthikanti et al. 2022 count them (docs/memory-model.md)");
        !st)
        return st;
    auto backend = text("--attention-backend");
    if (!backend) return backend.error();
    if (backend->first == "unfused" || backend->first == "local") {
        if (Status st = rec.set(*backend->second, "training.attention", "eager", "keeps the s x s scores"); !st) return st;
    } else if (Status st = put(backend->second, "--attention-backend", "training.attention", "flash",
                               backend->second ? "" : "AttnBackend.auto: Transformer Engine's flash or fused attention");
               !st) {
        return st;
    }
    if (const ConfigValue* fusion = given("--cross-entropy-loss-fusion"))
        rec.readOnly(*fusion, "the fused vocab-parallel cross-entropy keeps the same bytes (docs/frameworks.md [m4])", "training.loss");

    // The model's shape: from --preset / --model-config; the flags are checked against it.
    const RunConfigImport& r = rec.result();
    if (r.has_model) {
        const ModelConfig& m = r.scenario.model;
        auto check = [&](const char* flag, int64_t value) -> Status {
            const ConfigValue* v = doc.take(flag);
            if (!v || !v->value.is_number_integer()) return ok();
            if (v->value.get<int64_t>() != value)
                return valueError(*v, std::string("is ") + valueText(v->value) + " but the model given has " + std::to_string(value) +
                                          ": the flags describe another model");
            rec.readOnly(*v, "matches the model given", "model");
            return ok();
        };
        if (layers->second && *layers->first != m.num_layers)
            return valueError(*layers->second, "is " + std::to_string(*layers->first) + " but the model given has " + std::to_string(m.num_layers) +
                                                   " layers: the flags describe another model");
        if (layers->second) rec.readOnly(*layers->second, "matches the model given", "model");
        if (Status st = check("--hidden-size", m.hidden_size); !st) return st;
        if (Status st = check("--num-attention-heads", m.num_heads); !st) return st;
    } else if (Status st = importMegatronModel(doc, ctx, t); !st) {
        return st;
    }

    finishFramework(ctx, kMegatronRelease);
    rec.ignoreRest(doc, "no effect on memory in trainmem's model, or a model flag (" + std::string(kMegatronRelease) + ")");
    return ok();
}

Expected<std::string> exportMegatron(const Scenario& s) {
    const TrainingConfig& t = s.training;
    const ParallelConfig& p = s.parallelism;
    std::vector<std::string> flags;
    auto add = [&](const std::string& f) { flags.push_back(f); };
    add("--tensor-model-parallel-size " + std::to_string(p.tensor));
    add("--pipeline-model-parallel-size " + std::to_string(p.pipeline));
    add("--context-parallel-size " + std::to_string(p.context));
    add("--expert-model-parallel-size " + std::to_string(p.expert));
    if (p.sequence_parallel) add("--sequence-parallel");
    if (p.schedule == PipelineSchedule::Interleaved1F1B) add("--virtual-pipeline-model-parallel-size " + std::to_string(p.virtual_stages));
    else if (p.schedule == PipelineSchedule::GPipe) return Error{"parallelism.pipeline_schedule", "Megatron runs 1f1b or interleaved-1f1b"};
    add("--micro-batch-size " + std::to_string(t.micro_batch_size));
    add("--global-batch-size " + std::to_string(t.micro_batch_size * t.gradient_accumulation_steps * p.data));
    add("--seq-length " + std::to_string(t.sequence_length));
    switch (t.precision) {
        case Precision::MixedBf16: add("--bf16"); break;
        case Precision::MixedFp16: add("--fp16"); break;
        case Precision::Fp8Mixed: add("--bf16"), add("--fp8-format hybrid"); break;
        case Precision::Fp32: break;
        default: return Error{"training.precision", "Megatron trains fp32, mixed-bf16, mixed-fp16 or fp8-mixed"};
    }
    const DType grad = t.grad_dtype.value_or(DType::Fp32);
    if (grad == DType::Bf16) {
        if (t.precision == Precision::Fp32) return Error{"training.grad_dtype", "--grad-reduce-in-bf16 needs --bf16"};
        add("--grad-reduce-in-bf16");
    } else if (grad != DType::Fp32) {
        return Error{"training.grad_dtype", "Megatron keeps fp32 main gradients, or bf16 ones with --grad-reduce-in-bf16"};
    }
    if (p.zero_stage == 1) add("--use-distributed-optimizer");
    else if (p.zero_stage == 2 || p.zero_stage == 3)
        add("--use-megatron-fsdp"), add(std::string("--data-parallel-sharding-strategy ") + (p.zero_stage == 2 ? "optim_grads" : "optim_grads_params"));
    if (p.offload_optimizer) add("--optimizer-cpu-offload");
    if (t.optimizer == OptimizerKind::SgdMomentum) add("--optimizer sgd");
    else if (t.optimizer != OptimizerKind::Adam) return Error{"training.optimizer", "Megatron runs adam (Adam with --weight-decay: AdamW) or sgd-momentum"};
    switch (t.checkpointing) {
        case Checkpointing::None: break;
        case Checkpointing::Selective: add("--recompute-granularity selective"); break;
        case Checkpointing::Full: add("--recompute-granularity full"), add("--recompute-method uniform"), add("--recompute-num-layers 1"); break;
        case Checkpointing::MegatronUniform:
            add("--recompute-granularity full"), add("--recompute-method uniform"), add("--recompute-num-layers " + std::to_string(t.checkpoint_every));
            break;
        case Checkpointing::MegatronBlock:
            add("--recompute-granularity full"), add("--recompute-method block"), add("--recompute-num-layers " + std::to_string(t.checkpoint_every));
            break;
        default: return Error{"training.activation_checkpointing", "Megatron recomputes none, selective, full, megatron-uniform or megatron-block"};
    }
    if (t.attention == AttentionImpl::Eager) add("--attention-backend unfused");
    if (t.finetuning != Finetuning::Full) return Error{"training.finetuning", "Megatron-LM's pretrain_gpt.py trains every weight"};
    const int64_t gpus = p.totalGpus();
    std::string out = "#!/bin/bash\n# Megatron-LM launch (" + std::string(kMegatronRelease) + "), written by trainmem-cli export-run\n";
    out += "# from scenario \"" + s.name + "\"; the model flags (--num-layers, --hidden-size, ...) are the model's: add them.\n";
    out += "GPUS_PER_NODE=" + std::to_string(std::min<int64_t>(gpus, 8)) + "\nNUM_NODES=" + std::to_string((gpus + 7) / 8) + "\n";
    out += "torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \\\n";
    for (size_t i = 0; i < flags.size(); ++i) out += "    " + flags[i] + (i + 1 < flags.size() ? " \\\n" : "\n");
    if (gpus % 8 != 0 && gpus > 8) return Error{"parallelism", "export writes nodes of 8 GPUs: " + std::to_string(gpus) + " GPUs is not a multiple of 8"};
    return out;
}

}  // namespace trainmem::runconfig
