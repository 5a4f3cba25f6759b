// axolotl's YAML as axolotl v0.18.0-9-g067b021c8 reads it
// (src/axolotl/utils/schemas/config.py, training.py, peft.py, fsdp.py;
// src/axolotl/utils/config/__init__.py resolve_dtype), with the DeepSpeed
// JSON it names (`deepspeed:`, resolved from the working directory as
// axolotl's does, or given as a companion), whose "auto" values axolotl
// fills from its own keys through the Hugging Face Trainer.
#include "core/training/names.h"
#include "core/runconfig/formats.h"
#include "core/base/json_input.h"
#include "core/runconfig/run_config.h"

namespace trainmem::runconfig {
namespace {

const std::string kSchema = std::string(kAxolotlRelease) + " src/axolotl/utils/schemas/";

std::string loraTarget(const std::string& module) {
    static const char* const known[] = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};
    for (const char* k : known)
        if (module == k) return module;
    return {};
}

}  // namespace

HfOptimizer hfOptimizer(const std::string& name) {
    if (name == "adamw_torch_fused") return {"adamw", "fused", false};
    if (name == "adamw_torch") return {"adamw", "foreach", false};
    if (name == "adamw_bnb_8bit" || name == "adamw_8bit") return {"adamw-8bit", "", false};
    if (name == "paged_adamw_8bit") return {"adamw-8bit", "", true};
    if (name == "paged_adamw_32bit" || name == "paged_adamw") return {"adamw", "", true};
    if (name == "adafactor") return {"adafactor", "", false};
    if (name == "sgd") return {"sgd", "", false};
    if (name == "lion_32bit") return {"lion", "", false};
    if (name == "muon") return {"muon", "", false};
    return {};
}

Status importNamedDeepspeed(const ConfigValue& ds, ImportContext& ctx, const std::string& precision) {
    ImportRecorder& rec = ctx.rec;
    auto path = asText(ds);
    if (!path) return path.error();
    std::filesystem::path ds_path = *path;
    if (ds_path.is_relative()) ds_path = ctx.options.working_directory / ds_path;
    for (const auto& c : ctx.options.companions)
        if (c.filename() == std::filesystem::path(*path).filename()) ds_path = c;
    std::error_code ec;
    if (!std::filesystem::exists(ds_path, ec))
        return valueError(ds, "the DeepSpeed config " + ds_path.string() +
                                  " does not exist (resolved from the working directory, as the stack does; give it as a companion)");
    auto ds_doc = readJsonDocument(ds_path);
    if (!ds_doc) return ds_doc.error();
    rec.readOnly(ds, "DeepSpeed config " + ds_path.string() + ", read below");
    const std::vector<std::string> resolved = {"training.micro_batch_size", "training.gradient_accumulation_steps",
                                               "training.precision", "training.optimizer", "parallelism.data"};
    if (Status st = importDeepspeed(*ds_doc, ctx, resolved); !st) return st;
    // DeepSpeed's bf16 keeps fp32 master weights and states in its optimizer.
    const ConfigValue* ds_bf16 = ds_doc->find("bf16.enabled");
    if ((precision == "pure-bf16" || precision == "amp-bf16") && ds_bf16 && (ds_bf16->value == "auto" || ds_bf16->value == true))
        return rec.set(*ds_bf16, "training.precision", "mixed-bf16", "DeepSpeed's bf16: fp32 master weights and optimizer states");
    return ok();
}

Status importAxolotl(ConfigDocument& doc, ImportContext& ctx) {
    if (Status st = startFramework(ctx, "hf-trainer"); !st) return st;
    ImportRecorder& rec = ctx.rec;
    const std::string file = doc.file;
    auto integer = [&](const std::string& key, int64_t fallback) -> Expected<std::pair<int64_t, const ConfigValue*>> {
        const ConfigValue* v = doc.take(key);
        if (!v || v->value.is_null()) return std::pair<int64_t, const ConfigValue*>{fallback, v};
        auto n = asInteger(*v);
        if (!n) return n.error();
        if (*n < 1) return valueError(*v, "must be at least 1");
        return std::pair<int64_t, const ConfigValue*>{*n, v};
    };
    auto flag = [&](const std::string& key) -> Expected<std::pair<std::optional<bool>, const ConfigValue*>> {
        const ConfigValue* v = doc.take(key);
        if (!v || v->value.is_null()) return std::pair<std::optional<bool>, const ConfigValue*>{std::nullopt, v};
        auto b = asBoolean(*v);
        if (!b) return b.error();
        return std::pair<std::optional<bool>, const ConfigValue*>{*b, v};
    };
    auto put = [&](const ConfigValue* from, const std::string& key, const std::string& tm, const std::string& value,
                   const std::string& source, const std::string& note = {}) -> Status {
        if (from && !from->value.is_null()) return rec.set(*from, tm, value, note);
        return rec.setDefault(key, tm, value, kSchema + source, note);
    };

    // Model: base_model is a Hub id (or a local path, whose name we cannot know).
    if (const ConfigValue* base = doc.take("base_model")) {
        auto id = asText(*base);
        if (!id) return id.error();
        const std::string preset = presetForHubId(*id);
        if (!preset.empty()) ctx.modelFromPreset(preset, base, "Hub id " + *id);
        else ctx.modelUnknown(base->key, base->line, *id + " is no trainmem preset's checkpoint: give --preset or --model-config");
    }

    // Batch (training.py: micro_batch_size 1, gradient_accumulation_steps 1; config.py: sequence_len 512).
    auto micro = integer("micro_batch_size", 1);
    if (!micro) return micro.error();
    if (Status st = put(micro->second, "micro_batch_size", "training.micro_batch_size", std::to_string(micro->first), "training.py"); !st) return st;
    auto accum = integer("gradient_accumulation_steps", 1);
    if (!accum) return accum.error();
    if (Status st = put(accum->second, "gradient_accumulation_steps", "training.gradient_accumulation_steps", std::to_string(accum->first),
                        "training.py");
        !st)
        return st;
    auto seq = integer("sequence_len", 512);
    if (!seq) return seq.error();
    if (Status st = put(seq->second, "sequence_len", "training.sequence_length", std::to_string(seq->first), "config.py"); !st) return st;
    if (const ConfigValue* packing = doc.take("sample_packing"))
        rec.readOnly(*packing, "sample packing fills each row to sequence_len: the length counted");

    // World and parallel sizes (config.py dp_shard_size, dp_replicate_size, context_parallel_size, tensor_parallel_size).
    auto tp = integer("tensor_parallel_size", 1);
    if (!tp) return tp.error();
    auto cp = integer("context_parallel_size", 1);
    if (!cp) return cp.error();
    auto replicate = integer("dp_replicate_size", 1);
    if (!replicate) return replicate.error();
    const ConfigValue* shard_v = doc.take("dp_shard_size");
    std::optional<int64_t> dp;
    if (ctx.options.gpus) {
        const int64_t world = *ctx.options.gpus;
        if (world % (tp->first * cp->first) != 0)
            return Error{"--gpus", std::to_string(world) + " GPUs are not divisible by tensor_parallel_size x context_parallel_size = " +
                                       std::to_string(tp->first * cp->first)};
        dp = world / (tp->first * cp->first);
        if (Status st = rec.setDefault("--gpus", "parallelism.data", std::to_string(*dp), "trainmem's --gpus",
                                       "world / (tensor_parallel_size x context_parallel_size)");
            !st)
            return st;
        if (Status st = rec.setDefault("--gpus", "parallelism.gpus", std::to_string(world), "trainmem's --gpus"); !st) return st;
    } else {
        rec.unknown(file, "(world size)", 0, "parallelism.data", "the launcher's (accelerate launch / torchrun): give --gpus N");
    }
    if (Status st = put(tp->second, "tensor_parallel_size", "parallelism.tensor", std::to_string(tp->first), "config.py"); !st) return st;
    if (Status st = put(cp->second, "context_parallel_size", "parallelism.context", std::to_string(cp->first), "config.py"); !st) return st;

    // Precision (config/__init__.py resolve_dtype: bf16 "auto" is bf16 on a GPU that has it).
    auto bf16 = flag("bf16");
    const ConfigValue* bf16_v = doc.find("bf16");
    bool bf16_on = false;
    if (bf16_v && bf16_v->value == "auto") {
        bf16_on = true;
        rec.readOnly(*bf16_v, "\"auto\": bf16 when is_torch_bf16_gpu_available(), true on every GPU of trainmem's catalogue from Ampere on",
                     "training.precision");
    } else if (!bf16) {
        return bf16.error();
    } else if (bf16->first) {
        bf16_on = *bf16->first;
    } else {
        bf16_on = true;  // the schema's default is "auto"
    }
    auto fp16 = flag("fp16");
    if (!fp16) return fp16.error();
    auto bfloat16 = flag("bfloat16");
    if (!bfloat16) return bfloat16.error();
    if (fp16->first.value_or(false) && !(bf16->second && bf16->first.value_or(false))) bf16_on = false;
    const ConfigValue* precision_from = bf16_v ? bf16_v : fp16->second;
    std::string precision;
    if (bf16_on || bfloat16->first.value_or(false)) precision = "pure-bf16";
    else if (fp16->first.value_or(false)) precision = "";
    else precision = "fp32";
    if (precision.empty()) {
        rec.notRepresentable(*fp16->second, "fp16: the model loaded in fp16 with the Trainer's GradScaler; trainmem's fp16 recipes "
                                            "keep fp32 weights (amp-fp16) or fp32 masters (mixed-fp16)",
                             "training.precision");
        rec.unknown(file, "fp16", fp16->second->line, "training.precision", "set amp-fp16 or mixed-fp16");
    } else if (Status st = put(precision_from, "bf16", "training.precision", precision, "config.py (bf16: \"auto\")",
                               "torch_dtype " + std::string(precision == "fp32" ? "float32" : "bfloat16") +
                                   ": the weights, gradients and optimizer states in it (resolve_dtype)");
               !st) {
        return st;
    }
    doc.take("tf32");

    // Adapters (peft.py).
    const ConfigValue* adapter = doc.take("adapter");
    std::string finetuning = "full";
    if (adapter && !adapter->value.is_null()) {
        auto a = asText(*adapter);
        if (!a) return a.error();
        if (*a == "lora") finetuning = "lora";
        else if (*a == "qlora") finetuning = "qlora";
        else return valueError(*adapter, "trainmem reads lora and qlora (got \"" + *a + "\")");
    }
    if (Status st = put(adapter, "adapter", "training.finetuning", finetuning, "peft.py"); !st) return st;
    auto in4 = flag("load_in_4bit");
    if (!in4) return in4.error();
    auto in8 = flag("load_in_8bit");
    if (!in8) return in8.error();
    if (in8->first.value_or(false)) rec.notRepresentable(*in8->second, "an 8-bit (LLM.int8) base is not counted", "training.finetuning");
    if (finetuning == "qlora") {
        if (!in4->first.value_or(false))
            return Error{file + ": load_in_4bit", "adapter: qlora needs load_in_4bit: true (axolotl's validation)"};
        if (Status st = rec.set(*in4->second, "training.qlora_backend", "bnb", "bitsandbytes 4-bit (BitsAndBytesConfig)"); !st) return st;
    }
    if (finetuning != "full") {
        const ConfigValue* r = doc.take("lora_r");
        if (r && !r->value.is_null()) {
            auto n = asInteger(*r);
            if (!n) return n.error();
            if (Status st = rec.set(*r, "training.lora_rank", std::to_string(*n)); !st) return st;
        } else {
            rec.unknown(file, "lora_r", 0, "training.lora_rank", "not set: lora_r has no default in peft.py");
        }
        auto linear = flag("lora_target_linear");
        if (!linear) return linear.error();
        const ConfigValue* modules = doc.take("lora_target_modules");
        if (linear->first.value_or(false)) {
            if (Status st = rec.set(*linear->second, "training.lora_targets", "all-linear"); !st) return st;
        } else if (modules && modules->value.is_array()) {
            std::string targets;
            for (const auto& m : modules->value) {
                const std::string t = loraTarget(m.is_string() ? m.get<std::string>() : "");
                if (t.empty())
                    return valueError(*modules, "module " + describeJson(m) + " is not one trainmem counts (q_proj, k_proj, v_proj, "
                                                "o_proj, gate_proj, up_proj, down_proj)");
                targets += (targets.empty() ? "" : ",") + t;
            }
            if (Status st = rec.set(*modules, "training.lora_targets", targets); !st) return st;
        } else {
            rec.unknown(file, "lora_target_modules", modules ? modules->line : 0, "training.lora_targets",
                        "neither lora_target_modules (a list) nor lora_target_linear");
        }
        const ConfigValue* dropout = doc.take("lora_dropout");
        if (Status st = put(dropout, "lora_dropout", "training.lora_dropout", dropout ? valueText(dropout->value) : "0", "peft.py"); !st) return st;
        doc.take("lora_alpha");
    }

    // Optimizer (training.py: adamw_torch_fused; the names are transformers' OptimizerNames).
    const ConfigValue* opt_v = doc.take("optimizer");
    std::string opt = "adamw_torch_fused";
    if (opt_v && !opt_v->value.is_null()) {
        auto o = asText(*opt_v);
        if (!o) return o.error();
        opt = *o;
    }
    const HfOptimizer hf = hfOptimizer(opt);
    const std::string kind = hf.kind, impl = hf.impl;
    const bool paged = hf.paged;
    if (kind.empty()) {
        rec.notRepresentable(*opt_v, "optimizer " + opt + " is not in trainmem's catalogue", "training.optimizer");
        rec.unknown(file, "optimizer", opt_v->line, "training.optimizer", "set the nearest optimizer with --set");
    } else {
        if (Status st = put(opt_v, "optimizer", "training.optimizer", kind, "training.py"); !st) return st;
        if (!impl.empty())
            if (Status st = put(opt_v, "optimizer", "training.optimizer_impl", impl, "training.py"); !st) return st;
        if (Status st = put(opt_v, "optimizer", "training.optimizer_paged", paged ? "true" : "false", "training.py"); !st) return st;
    }

    // Checkpointing (config.py gradient_checkpointing: False).
    const ConfigValue* gc = doc.take("gradient_checkpointing");
    doc.takeUnder("gradient_checkpointing_kwargs");
    if (gc && gc->value.is_string()) {
        rec.notRepresentable(*gc, "\"" + gc->value.get<std::string>() + "\": axolotl's offloading of the checkpointed inputs is not counted; "
                                  "counted as full checkpointing", "training.activation_checkpointing");
        if (Status st = rec.set(*gc, "training.activation_checkpointing", "full"); !st) return st;
    } else {
        bool on = false;
        if (gc && !gc->value.is_null()) {
            auto b = asBoolean(*gc);
            if (!b) return b.error();
            on = *b;
        }
        if (Status st = put(gc, "gradient_checkpointing", "training.activation_checkpointing", on ? "full" : "none", "config.py"); !st) return st;
    }
    if (const ConfigValue* off = doc.take("activation_offloading"); off && !off->value.is_null() && off->value != false)
        rec.notRepresentable(*off, "axolotl's activation offloading is not counted", "training.activation_offloading");

    // Attention (config.py attn_implementation, or the legacy flash_attention / sdp_attention).
    const ConfigValue* attn = doc.take("attn_implementation");
    auto flash = flag("flash_attention");
    if (!flash) return flash.error();
    auto sdp = flag("sdp_attention");
    if (!sdp) return sdp.error();
    if (attn && attn->value.is_string()) {
        const std::string a = attn->value.get<std::string>();
        if (a == "eager") {
            if (Status st = rec.set(*attn, "training.attention", "eager"); !st) return st;
        } else if (Status st = rec.set(*attn, "training.attention", "flash", a + ": no s x s tensor kept"); !st) {
            return st;
        }
    } else if (flash->first.value_or(false)) {
        if (Status st = rec.set(*flash->second, "training.attention", "flash"); !st) return st;
    } else if (sdp->first.value_or(false)) {
        if (Status st = rec.set(*sdp->second, "training.attention", "flash", "SDPA's flash / memory-efficient kernels"); !st) return st;
    } else {
        rec.unknown(file, "attn_implementation", 0, "training.attention",
                    "not set: transformers picks the attention (its default is not read here); set flash or eager");
    }

    // Loss: plugins (Liger's fused linear cross-entropy; Cut Cross Entropy).
    bool liger = false, cce = false;
    if (const ConfigValue* plugins = doc.take("plugins"); plugins && plugins->value.is_array())
        for (const auto& p : plugins->value) {
            const std::string name = p.is_string() ? p.get<std::string>() : "";
            liger = liger || name.find("liger") != std::string::npos;
            cce = cce || name.find("cut_cross_entropy") != std::string::npos;
        }
    auto flce = flag("liger_fused_linear_cross_entropy");
    if (!flce) return flce.error();
    const ConfigValue* cce_v = doc.take("cut_cross_entropy");
    if (cce && !(cce_v && cce_v->value == false)) {
        const ConfigValue& from = cce_v ? *cce_v : *doc.find("plugins");
        rec.notRepresentable(from, "Cut Cross Entropy (its own kernel: the logits never exist, and its memory is not Liger's); "
                                   "counted as Liger's fused linear cross-entropy",
                             "training.loss");
        if (Status st = rec.set(from, "training.loss", "fused_linear", "not representable: see below"); !st) return st;
    } else if (liger && flce->first.value_or(false)) {
        if (Status st = rec.set(*flce->second, "training.loss", "fused_linear", "Liger's fused linear cross-entropy"); !st) return st;
    } else if (Status st = rec.setDefault("(loss)", "training.loss", "standard", "transformers ForCausalLMLoss (docs/memory-model.md §Logits and loss)");
               !st) {
        return st;
    }
    for (const char* key : {"liger_rms_norm", "liger_glu_activation", "liger_rope", "liger_layer_norm"})
        if (const ConfigValue* v = doc.take(key); v && v->value == true)
            rec.notRepresentable(*v, "one Liger kernel alone: trainmem's fused profile counts all of them together", "training.kernels");

    // Sharding: DeepSpeed, or FSDP (fsdp_config).
    const ConfigValue* ds = doc.take("deepspeed");
    const ConfigValue* fsdp_version = doc.take("fsdp_version");
    const ConfigValue* fsdp_list = doc.take("fsdp");
    const bool has_fsdp = (fsdp_list && !fsdp_list->value.is_null()) || doc.find("fsdp_config.fsdp_version") ||
                          doc.find("fsdp_config.reshard_after_forward") || doc.find("fsdp_config.offload_params") ||
                          doc.find("fsdp_config.auto_wrap_policy") || doc.find("fsdp_config.fsdp_sharding_strategy");
    if (ds && !ds->value.is_null()) {
        if (has_fsdp) return valueError(*ds, "deepspeed and fsdp cannot be used together (axolotl's validation)");
        if (Status st = importNamedDeepspeed(*ds, ctx, precision); !st) return st;
    } else if (has_fsdp) {
        const ConfigValue* from = fsdp_list ? fsdp_list : doc.find("fsdp_config.fsdp_version");
        if (!from) from = doc.find("fsdp_config.reshard_after_forward");
        if (!from) from = doc.find("fsdp_config.offload_params");
        if (!from) from = doc.find("fsdp_config.auto_wrap_policy");
        if (!from) from = doc.find("fsdp_config.fsdp_sharding_strategy");
        if (Status st = rec.set(*from, "parallelism.zero_stage", "3", "FSDP full shard (accelerate's FSDP plugin)"); !st) return st;
        if (Status st = rec.set(*from, "parallelism.fsdp_ends", "root", "accelerate wraps the decoder layers; the ends stay in the root unit"); !st)
            return st;
        auto reshard = flag("fsdp_config.reshard_after_forward");
        if (!reshard) return reshard.error();
        if (reshard->first)
            if (Status st = rec.set(*reshard->second, "parallelism.reshard_after_forward", *reshard->first ? "true" : "false"); !st) return st;
        auto offload = flag("fsdp_config.offload_params");
        if (!offload) return offload.error();
        if (offload->first.value_or(false)) {
            if (Status st = rec.set(*offload->second, "parallelism.offload_parameters", "true"); !st) return st;
            if (Status st = rec.set(*offload->second, "parallelism.offload_optimizer", "true"); !st) return st;
        }
        if (const ConfigValue* ac = doc.take("fsdp_config.activation_checkpointing"); ac && ac->value == true)
            if (Status st = rec.set(*ac, "training.activation_checkpointing", "full", "FSDP's activation checkpointing of every layer"); !st)
                return st;
        if (dp && replicate->first > 1) {
            if (*dp % replicate->first != 0)
                return valueError(*replicate->second, "must divide the data-parallel ranks (" + std::to_string(*dp) + ")");
            if (Status st = rec.set(*replicate->second, "parallelism.shard_group", std::to_string(*dp / replicate->first * cp->first),
                                    "HSDP: dp_shard ranks per group");
                !st)
                return st;
        }
        doc.takeUnder("fsdp_config");
        if (fsdp_version) rec.readOnly(*fsdp_version, "FSDP version");
    } else {
        if (Status st = rec.setDefault("(no deepspeed, no fsdp)", "parallelism.zero_stage", "0", kSchema + "config.py",
                                       "DDP over the data-parallel ranks (or one GPU)");
            !st)
            return st;
    }
    if (shard_v) rec.readOnly(*shard_v, "the FSDP shard size: the data-parallel ranks not replicated");

    finishFramework(ctx, kAxolotlRelease);
    rec.ignoreRest(doc, "no effect on memory in trainmem's model (" + std::string(kAxolotlRelease) + ")");
    return ok();
}

}  // namespace trainmem::runconfig
