// torchtune's recipe YAML as torchtune v0.6.1 reads it: OmegaConf with
// ${...} interpolation, _component_ names instantiated by
// torchtune/config/_instantiate.py, the recipe's cfg.get defaults
// (recipes/full_finetune_distributed.py, lora_finetune_distributed.py and
// their single-device forms), key=value overrides from `tune run`.
#include <map>

#include "core/training/names.h"
#include "core/runconfig/formats.h"

namespace trainmem::runconfig {
namespace {

const std::string kRecipe = std::string(kTorchtuneRelease) + " recipes/full_finetune_distributed.py, lora_finetune_distributed.py";
const std::string kBuilders = std::string(kTorchtuneRelease) + " torchtune/models/*/_model_builders.py";

// torchtune's model builders whose checkpoint is a trainmem preset exactly
// (the Instruct and base checkpoints have the same shapes).
const std::map<std::string, std::string>& builderPresets() {
    static const std::map<std::string, std::string> presets = {
        {"llama3_1_8b", "llama-3.1-8b"},     {"llama3_1_70b", "llama-3.1-70b"}, {"llama3_1_405b", "llama-3.1-405b"},
        {"llama3_2_1b", "llama-3.2-1b"},     {"llama3_2_3b", "llama-3.2-3b"},   {"llama2_7b", "llama-2-7b"},
        {"llama2_13b", "llama-2-13b"},       {"llama2_70b", "llama-2-70b"},     {"mistral_7b", "mistral-7b-v0.1"},
        {"gemma_7b", "gemma-7b"},            {"gemma2_9b", "gemma-2-9b"},       {"phi3_mini", "phi-3-mini-4k"},
        {"phi4_14b", "phi-4"},               {"qwen2_5_0_5b", "qwen2.5-0.5b"},  {"qwen2_5_7b_base", "qwen2.5-7b"},
        {"qwen2_5_72b_instruct", "qwen2.5-72b"}, {"qwen3_0_6b_base", "qwen3-0.6b"}, {"qwen3_0_6b_instruct", "qwen3-0.6b"},
    };
    return presets;
}

// OmegaConf's ${a.b} interpolation of every string value, to a fixed point.
Status interpolate(ConfigDocument& doc) {
    for (auto& v : doc.values) {
        if (!v.value.is_string()) continue;
        std::string text = v.value.get<std::string>();
        for (int round = 0; text.find("${") != std::string::npos; ++round) {
            if (round > 16) return valueError(v, "interpolation ${...} nested more than 16 deep (a cycle?)");
            const size_t open = text.find("${");
            const size_t close = text.find('}', open);
            if (close == std::string::npos) return valueError(v, "unclosed ${ in \"" + text + "\"");
            const std::string ref = text.substr(open + 2, close - open - 2);
            const ConfigValue* target = doc.find(ref);
            if (!target) return valueError(v, "${" + ref + "} names no key of the file (OmegaConf InterpolationKeyError)");
            // A whole-value reference keeps the target's type; inside text it is text.
            if (open == 0 && close + 1 == text.size() && !target->value.is_string()) {
                v.value = target->value;
                break;
            }
            text = text.substr(0, open) + valueText(target->value) + text.substr(close + 1);
            v.value = text;
        }
    }
    return ok();
}

std::string lastName(const std::string& component) {
    const size_t dot = component.rfind('.');
    return dot == std::string::npos ? component : component.substr(dot + 1);
}

}  // namespace

Status importTorchtune(ConfigDocument& doc, ImportContext& ctx) {
    for (const std::string& o : ctx.options.overrides) {
        const size_t eq = o.find('=');
        if (eq == std::string::npos || eq == 0) return Error{o, "a torchtune override is key=value (tune run ... batch_size=4)"};
        doc.set(ConfigValue{o.substr(0, eq), yaml11Scalar(o.substr(eq + 1)), 0, "command line"});
    }
    if (Status st = interpolate(doc); !st) return st;
    if (Status st = startFramework(ctx, "torchtune"); !st) return st;
    ImportRecorder& rec = ctx.rec;
    const std::string file = doc.file;
    auto required = [&](const std::string& key) -> Expected<const ConfigValue*> {
        const ConfigValue* v = doc.take(key);
        if (!v) return Error{file + ": " + key, "missing: the recipe reads cfg." + key + " without a default (" + kRecipe + ")"};
        return v;
    };
    auto optionalBool = [&](const std::string& key, bool fallback) -> Expected<std::pair<bool, const ConfigValue*>> {
        const ConfigValue* v = doc.take(key);
        if (!v) return std::pair<bool, const ConfigValue*>{fallback, nullptr};
        auto b = asBoolean(*v);
        if (!b) return b.error();
        return std::pair<bool, const ConfigValue*>{*b, v};
    };
    auto put = [&](const ConfigValue* from, const std::string& key, const std::string& tm, const std::string& value,
                   const std::string& source = {}, const std::string& note = {}) -> Status {
        if (from) return rec.set(*from, tm, value, note);
        return rec.setDefault(key, tm, value, source.empty() ? kRecipe : source, note);
    };

    // World size: `tune run --nproc_per_node N` (not in the file).
    const bool single_device = ctx.file.filename().string().find("single_device") != std::string::npos;
    int64_t world = 1;
    if (ctx.options.gpus) {
        world = *ctx.options.gpus;
    } else if (!single_device) {
        rec.unknown(file, "(tune run --nproc_per_node)", 0, "parallelism.data", "the world size is tune run's: give --gpus N");
    }
    const bool distributed = world > 1;

    // The model builder (torchtune/config/_instantiate.py: _component_).
    auto model = required("model._component_");
    if (!model) return model.error();
    auto builder = asText(**model);
    if (!builder) return builder.error();
    std::string name = lastName(*builder);
    std::string finetuning = "full";
    if (name.starts_with("qlora_")) finetuning = "qlora", name = name.substr(6);
    else if (name.starts_with("lora_")) finetuning = "lora", name = name.substr(5);
    if (const auto it = builderPresets().find(name); it != builderPresets().end())
        ctx.modelFromPreset(it->second, *model, "torchtune builder " + *builder);
    else
        ctx.modelUnknown((*model)->key, (*model)->line, "builder " + *builder + " is no trainmem preset: give --preset or --model-config");
    if (Status st = rec.set(**model, "training.finetuning", finetuning, finetuning == "full" ? "" : "the builder's " + finetuning + "_ prefix"); !st)
        return st;
    if (finetuning != "full") {
        const ConfigValue* modules = doc.take("model.lora_attn_modules");
        if (!modules) return Error{file + ": model.lora_attn_modules", "missing: the LoRA builder's first argument has no default (" + kBuilders + ")"};
        if (!modules->value.is_array()) return valueError(*modules, "expected a list of q_proj, k_proj, v_proj, output_proj");
        std::string targets;
        for (const auto& m : modules->value) {
            const std::string n = m.is_string() ? m.get<std::string>() : "";
            std::string tm;
            if (n == "q_proj" || n == "k_proj" || n == "v_proj") tm = n;
            else if (n == "output_proj") tm = "o_proj";
            else return valueError(*modules, "unknown module \"" + n + "\" (LORA_ATTN_MODULES: q_proj, k_proj, v_proj, output_proj)");
            targets += (targets.empty() ? "" : ",") + tm;
        }
        auto mlp = optionalBool("model.apply_lora_to_mlp", false);
        if (!mlp) return mlp.error();
        if (mlp->first) targets += ",gate_proj,up_proj,down_proj";
        if (Status st = rec.set(*modules, "training.lora_targets", targets,
                                mlp->first ? "with apply_lora_to_mlp: w1, w2, w3" : "apply_lora_to_mlp False (builder default)");
            !st)
            return st;
        auto output = optionalBool("model.apply_lora_to_output", false);
        if (!output) return output.error();
        if (output->first) rec.notRepresentable(*output->second, "a LoRA adapter on the output projection is not counted", "training.lora_targets");
        auto dora = optionalBool("model.use_dora", false);
        if (!dora) return dora.error();
        if (dora->first) rec.notRepresentable(*dora->second, "DoRA's magnitude vectors and its extra saved tensors are not counted", "training.finetuning");
        const ConfigValue* rank = doc.take("model.lora_rank");
        if (rank) {
            auto r = asInteger(*rank);
            if (!r) return r.error();
            if (Status st = rec.set(*rank, "training.lora_rank", std::to_string(*r)); !st) return st;
        } else if (Status st = rec.setDefault("model.lora_rank", "training.lora_rank", "8", kBuilders); !st) {
            return st;
        }
        const ConfigValue* dropout = doc.take("model.lora_dropout");
        if (dropout) {
            auto d = asNumber(*dropout);
            if (!d) return d.error();
            if (Status st = rec.set(*dropout, "training.lora_dropout", valueText(dropout->value)); !st) return st;
        } else if (Status st = rec.setDefault("model.lora_dropout", "training.lora_dropout", "0", kBuilders); !st) {
            return st;
        }
        doc.take("model.lora_alpha");
        if (finetuning == "qlora")
            if (Status st = rec.set(**model, "training.qlora_backend", "torchao-nf4", "torchtune's NF4Linear (torchao)"); !st) return st;
    }

    // Batch and sequence.
    auto batch = required("batch_size");
    if (!batch) return batch.error();
    if (auto b = asInteger(**batch); !b) return b.error();
    if (Status st = rec.set(**batch, "training.micro_batch_size", valueText((*batch)->value)); !st) return st;
    auto accumulation = required("gradient_accumulation_steps");
    if (!accumulation) return accumulation.error();
    auto steps = asInteger(**accumulation);
    if (!steps) return steps.error();
    if (Status st = rec.set(**accumulation, "training.gradient_accumulation_steps", std::to_string(*steps)); !st) return st;
    const ConfigValue* max_len = doc.take("tokenizer.max_seq_len");
    if (max_len && max_len->value.is_number_integer()) {
        if (Status st = rec.set(*max_len, "training.sequence_length", valueText(max_len->value)); !st) return st;
    } else {
        rec.unknown(file, "tokenizer.max_seq_len", max_len ? max_len->line : 0, "training.sequence_length",
                    "null: batches are padded to their longest sample (padded_collate_sft), which the dataset decides; set it");
    }

    // Precision (torchtune/training/precision.py; the recipes refuse fp16).
    auto dtype_v = required("dtype");
    if (!dtype_v) return dtype_v.error();
    auto dtype = asText(**dtype_v);
    if (!dtype) return dtype.error();
    if (*dtype == "bf16") {
        if (Status st = rec.set(**dtype_v, "training.precision", "pure-bf16", "the model in bf16, no fp32 copy"); !st) return st;
    } else if (*dtype == "fp32") {
        if (Status st = rec.set(**dtype_v, "training.precision", "fp32"); !st) return st;
    } else if (*dtype == "fp16") {
        return valueError(**dtype_v, "full fp16 training is not supported with this recipe. Please use bf16 or fp32 instead. (" + kRecipe + ")");
    } else {
        return valueError(**dtype_v, "Dtype " + *dtype + " must be one of fp16, bf16, fp32 for finetuning (torchtune/training/precision.py)");
    }

    // Optimizer.
    auto opt_v = required("optimizer._component_");
    if (!opt_v) return opt_v.error();
    auto opt = asText(**opt_v);
    if (!opt) return opt.error();
    const std::string opt_name = lastName(*opt);
    bool paged = false;
    std::string kind;
    if (opt_name == "AdamW") kind = "adamw";
    else if (opt_name == "Adam") kind = "adam";
    else if (opt_name == "SGD") kind = "sgd";
    else if (opt_name == "PagedAdamW8bit") kind = "adamw-8bit", paged = true;
    else if (opt_name == "AdamW8bit" && opt->starts_with("bitsandbytes")) kind = "adamw-8bit";
    else if (opt_name == "PagedAdamW") kind = "adamw", paged = true;
    if (kind.empty()) {
        rec.notRepresentable(**opt_v, "optimizer " + *opt + " is not in trainmem's catalogue", "training.optimizer");
        rec.unknown(file, (*opt_v)->key, (*opt_v)->line, "training.optimizer", "set the nearest optimizer with --set");
    } else {
        if (kind == "sgd") {
            const ConfigValue* momentum = doc.take("optimizer.momentum");
            if (momentum && momentum->value.is_number() && momentum->value.get<double>() != 0) kind = "sgd-momentum";
        }
        if (Status st = rec.set(**opt_v, "training.optimizer", kind); !st) return st;
        if (Status st = rec.set(**opt_v, "training.optimizer_paged", paged ? "true" : "false"); !st) return st;
        if (opt->starts_with("torch.optim")) {
            auto fused = optionalBool("optimizer.fused", false);
            if (!fused) return fused.error();
            if (Status st = put(fused->second, "optimizer.fused", "training.optimizer_impl", fused->first ? "fused" : "foreach",
                                "PyTorch 2.x torch/optim/optimizer.py _default_to_fused_or_foreach: foreach on CUDA",
                                fused->first ? "" : "torch.optim's default on CUDA");
                !st)
                return st;
        }
    }
    auto in_bwd = optionalBool("optimizer_in_bwd", false);
    if (!in_bwd) return in_bwd.error();
    if (Status st = put(in_bwd->second, "optimizer_in_bwd", "training.optimizer_in_backward", in_bwd->first ? "true" : "false"); !st) return st;
    if (in_bwd->first) {
        const ConfigValue* clip = doc.find("clip_grad_norm");
        if (clip && !clip->value.is_null())
            return valueError(*clip, "Gradient clipping is not supported with optimizer in bwd. (" + kRecipe + ")");
        if (*steps > 1)
            return valueError(**accumulation, "Gradient accumulation is not supported with optimizer in bwd. (" + kRecipe + ")");
    }

    // Activation checkpointing and offloading.
    auto ac = optionalBool("enable_activation_checkpointing", false);
    if (!ac) return ac.error();
    if (Status st = put(ac->second, "enable_activation_checkpointing", "training.activation_checkpointing", ac->first ? "full" : "none",
                        {}, ac->first ? "every TransformerSelfAttentionLayer" : "");
        !st)
        return st;
    auto offload = optionalBool("enable_activation_offloading", false);
    if (!offload) return offload.error();
    auto streams = optionalBool("activation_offloading_use_streams", true);
    if (!streams) return streams.error();
    if (offload->first && !ac->first)
        return valueError(*offload->second,
                          "enable_activation_offloading should only be True when enable_activation_checkpointing is True (" + kRecipe + ")");
    if (Status st = put(offload->second, "enable_activation_offloading", "training.activation_offloading",
                        offload->first ? (streams->first ? "torchtune" : "torchtune-no-streams") : "none");
        !st)
        return st;

    // Loss (torchtune/modules/loss).
    auto loss_v = required("loss._component_");
    if (!loss_v) return loss_v.error();
    auto loss = asText(**loss_v);
    if (!loss) return loss.error();
    const std::string loss_name = lastName(*loss);
    if (loss_name == "CEWithChunkedOutputLoss") {
        if (Status st = rec.set(**loss_v, "training.loss", "chunked_output"); !st) return st;
        const ConfigValue* chunks = doc.take("loss.num_output_chunks");
        if (Status st = put(chunks, "loss.num_output_chunks", "training.loss_chunks", chunks ? valueText(chunks->value) : "8",
                            std::string(kTorchtuneRelease) + " torchtune/modules/loss/ce_chunked_output_loss.py");
            !st)
            return st;
    } else if (loss_name == "CrossEntropyLoss") {
        if (Status st = rec.set(**loss_v, "training.loss", "standard"); !st) return st;
    } else {
        rec.notRepresentable(**loss_v, "loss " + *loss + " is not one of trainmem's", "training.loss");
        rec.unknown(file, (*loss_v)->key, (*loss_v)->line, "training.loss", "set the nearest loss with --set");
    }

    // compile: a bool, or per component (model, loss, optimizer_step) in full_finetune_distributed.py.
    if (const ConfigValue* model_compile = doc.take("compile.model")) {
        auto b = asBoolean(*model_compile);
        if (!b) return b.error();
        if (Status st = rec.set(*model_compile, "training.kernels", *b ? "compile" : "eager"); !st) return st;
    } else {
        auto compile = optionalBool("compile", false);
        if (!compile) return compile.error();
        if (Status st = put(compile->second, "compile", "training.kernels", compile->first ? "compile" : "eager"); !st) return st;
    }
    doc.takeUnder("compile");

    // Parallelism: the distributed recipes shard with FSDP2 (training.shard_model).
    auto tp_v = doc.take("tensor_parallel_dim");
    int64_t tp = 1;
    if (tp_v) {
        auto n = asInteger(*tp_v);
        if (!n) return n.error();
        tp = *n;
        if (tp < 1) return valueError(*tp_v, "must be at least 1");
        if (world % tp != 0)
            return valueError(*tp_v, "world_size " + std::to_string(world) + " must be divisible by tensor_parallel_dim " +
                                         std::to_string(tp) + " (" + kRecipe + ")");
        if (tp > 1 && doc.find("optimizer.fused") && doc.find("optimizer.fused")->value == true)
            return valueError(*tp_v, "Tensor parallelism is currently incompatible with fused optimizer. (" + kRecipe + ")");
    }
    doc.take("tensor_parallel_plan._component_");
    if (Status st = put(tp_v, "tensor_parallel_dim", "parallelism.tensor", std::to_string(tp)); !st) return st;
    if (ctx.options.gpus || single_device) {
        const std::string why = ctx.options.gpus ? "--gpus / tensor_parallel_dim" : "a *_single_device recipe config: one GPU";
        if (Status st = rec.setDefault("(world size)", "parallelism.data", std::to_string(world / tp), ctx.options.gpus ? "trainmem's --gpus" : "the file's name", why); !st)
            return st;
        if (Status st = rec.setDefault("(world size)", "parallelism.gpus", std::to_string(world), ctx.options.gpus ? "trainmem's --gpus" : "the file's name"); !st)
            return st;
    }
    const bool fsdp = distributed && world / tp > 1;
    if (Status st = rec.setDefault("(recipe)", "parallelism.zero_stage", fsdp ? "3" : "0", kRecipe,
                                   fsdp ? "the distributed recipes shard every layer with fully_shard" : "one data-parallel rank");
        !st)
        return st;
    const ConfigValue* sharded = doc.take("custom_sharded_layers");
    if (fsdp) {
        bool own = false;
        if (sharded && sharded->value.is_array())
            for (const auto& n : sharded->value) own = own || n == "output" || n == "tok_embeddings";
        if (Status st = put(sharded, "custom_sharded_layers", "parallelism.fsdp_ends", own ? "own-units" : "root"); !st) return st;
        auto reshard = optionalBool("fsdp_reshard_after_forward", true);
        if (!reshard) return reshard.error();
        if (Status st = put(reshard->second, "fsdp_reshard_after_forward", "parallelism.reshard_after_forward",
                            reshard->first ? "true" : "false");
            !st)
            return st;
        auto cpu = optionalBool("fsdp_cpu_offload", false);
        if (!cpu) return cpu.error();
        if (Status st = put(cpu->second, "fsdp_cpu_offload", "parallelism.offload_parameters", cpu->first ? "true" : "false"); !st) return st;
        if (Status st = put(cpu->second, "fsdp_cpu_offload", "parallelism.offload_optimizer", cpu->first ? "true" : "false"); !st) return st;
    } else {
        if (Status st = rec.setDefault("(recipe)", "parallelism.fsdp_ends", "root", kRecipe, "no FSDP: no units"); !st) return st;
    }

    finishFramework(ctx, kTorchtuneRelease);
    rec.ignoreRest(doc, "no effect on memory in trainmem's model (" + std::string(kTorchtuneRelease) + ")");
    return ok();
}

Expected<std::string> exportTorchtune(const Scenario& s) {
    const TrainingConfig& t = s.training;
    const ParallelConfig& p = s.parallelism;
    std::string builder;
    for (const auto& [b, preset] : builderPresets())
        if (preset == s.model_preset && (builder.empty() || b.size() < builder.size())) builder = b;
    if (builder.empty()) return Error{"model", "the model is no torchtune builder trainmem knows (" + s.model_preset + ")"};
    if (p.pipeline > 1 || p.context > 1 || p.expert > 1) return Error{"parallelism", "torchtune's recipes do data and tensor parallelism only"};
    if (p.data > 1 && p.zero_stage != 3) return Error{"parallelism.zero_stage", "torchtune's distributed recipes shard with FSDP: 3"};
    if (t.precision != Precision::PureBf16 && t.precision != Precision::Fp32)
        return Error{"training.precision", "torchtune trains pure-bf16 (dtype: bf16) or fp32"};
    if (t.checkpointing != Checkpointing::None && t.checkpointing != Checkpointing::Full)
        return Error{"training.activation_checkpointing", "torchtune checkpoints none or full"};
    std::string loss;
    if (t.loss == LossImpl::ChunkedOutput) loss = "torchtune.modules.loss.CEWithChunkedOutputLoss";
    else if (t.loss == LossImpl::Standard) loss = "torch.nn.CrossEntropyLoss";
    else return Error{"training.loss", "torchtune's losses here: chunked_output or standard"};
    std::string optimizer;
    switch (t.optimizer) {
        case OptimizerKind::AdamW: optimizer = t.optimizer_paged ? "bitsandbytes.optim.PagedAdamW" : "torch.optim.AdamW"; break;
        case OptimizerKind::Adam: optimizer = "torch.optim.Adam"; break;
        case OptimizerKind::AdamW8bit: optimizer = t.optimizer_paged ? "bitsandbytes.optim.PagedAdamW8bit" : "bitsandbytes.optim.AdamW8bit"; break;
        default: return Error{"training.optimizer", "export writes AdamW, Adam or bitsandbytes' 8-bit AdamW"};
    }
    if (t.finetuning == Finetuning::Qlora && t.qlora_backend != QloraBackend::TorchaoNf4)
        return Error{"training.qlora_backend", "torchtune's QLoRA is torchao-nf4"};
    std::string out = "# torchtune recipe config (" + std::string(kTorchtuneRelease) + "), written by trainmem-cli export-run\n";
    out += "# run: tune run " + std::string(p.totalGpus() > 1 ? "--nproc_per_node " + std::to_string(p.totalGpus()) + " " : "") +
           (t.finetuning == Finetuning::Full ? "full_finetune" : "lora_finetune") + (p.totalGpus() > 1 ? "_distributed" : "_single_device") +
           " --config THIS_FILE\n";
    // The builder's module: torchtune.models.<family>.<builder>; the family is
    // where the builder lives, e.g. llama3_1 for llama3_1_8b.
    static const std::map<std::string, std::string> family = {
        {"llama3_1", "llama3_1"}, {"llama3_2", "llama3_2"}, {"llama2", "llama2"}, {"mistral", "mistral"}, {"gemma2", "gemma2"},
        {"gemma", "gemma"}, {"phi3", "phi3"}, {"phi4", "phi4"}, {"qwen2_5", "qwen2_5"}, {"qwen3", "qwen3"}};
    std::string module;
    for (const auto& [prefix, m] : family)
        if (builder.starts_with(prefix + "_") && prefix.size() > module.size()) module = m;
    const std::string prefix = t.finetuning == Finetuning::Lora ? "lora_" : t.finetuning == Finetuning::Qlora ? "qlora_" : "";
    out += "model:\n  _component_: torchtune.models." + module + "." + prefix + builder + "\n";
    if (t.finetuning != Finetuning::Full) {
        std::string attn;
        bool mlp = false;
        for (const auto& target : t.lora_targets) {
            if (target == "q_proj" || target == "k_proj" || target == "v_proj") attn += (attn.empty() ? "" : ", ") + std::string("'") + target + "'";
            else if (target == "o_proj") attn += (attn.empty() ? "" : ", ") + std::string("'output_proj'");
            else mlp = true;
        }
        const bool all_mlp = std::count(t.lora_targets.begin(), t.lora_targets.end(), "gate_proj") &&
                             std::count(t.lora_targets.begin(), t.lora_targets.end(), "up_proj") &&
                             std::count(t.lora_targets.begin(), t.lora_targets.end(), "down_proj");
        if (mlp && !all_mlp) return Error{"training.lora_targets", "torchtune adapts all of the MLP (apply_lora_to_mlp) or none of it"};
        out += "  lora_attn_modules: [" + attn + "]\n  apply_lora_to_mlp: " + (mlp ? "True" : "False") + "\n";
        out += "  lora_rank: " + std::to_string(t.lora_rank) + "\n  lora_dropout: " + valueText(nlohmann::json(t.lora_dropout)) + "\n";
    }
    out += "tokenizer:\n  max_seq_len: " + std::to_string(t.sequence_length) + "\n";
    out += "batch_size: " + std::to_string(t.micro_batch_size) + "\n";
    out += "gradient_accumulation_steps: " + std::to_string(t.gradient_accumulation_steps) + "\n";
    out += "dtype: " + std::string(t.precision == Precision::PureBf16 ? "bf16" : "fp32") + "\n";
    out += "optimizer:\n  _component_: " + optimizer + "\n  lr: 2e-5\n";
    if (optimizer.starts_with("torch.optim")) out += "  fused: " + std::string(t.optimizer_impl == OptimizerImpl::Fused ? "True" : "False") + "\n";
    out += "optimizer_in_bwd: " + std::string(t.optimizer_in_backward ? "True" : "False") + "\n";
    out += "loss:\n  _component_: " + loss + "\n";
    if (t.loss == LossImpl::ChunkedOutput) out += "  num_output_chunks: " + std::to_string(t.loss_chunks) + "\n";
    out += "enable_activation_checkpointing: " + std::string(t.checkpointing == Checkpointing::Full ? "True" : "False") + "\n";
    out += "enable_activation_offloading: " + std::string(t.activation_offloading != ActivationOffloading::None ? "True" : "False") + "\n";
    if (t.activation_offloading == ActivationOffloading::TorchtuneNoStreams) out += "activation_offloading_use_streams: False\n";
    out += "compile: " + std::string(t.kernels == KernelProfile::Compile ? "True" : "False") + "\n";
    if (p.tensor > 1) out += "tensor_parallel_dim: " + std::to_string(p.tensor) + "\n";
    if (p.zero_stage == 3) {
        out += "custom_sharded_layers: " + std::string(p.fsdp_ends == FsdpEnds::OwnUnits ? "['tok_embeddings', 'output']" : "null") + "\n";
        out += "fsdp_reshard_after_forward: " + std::string(p.reshard_after_forward ? "True" : "False") + "\n";
        out += "fsdp_cpu_offload: " + std::string(p.offload_parameters ? "True" : "False") + "\n";
    }
    return out;
}

}  // namespace trainmem::runconfig
