// LLaMA-Factory's training YAML as LLaMA-Factory v0.9.5-54-gff6d4d12e reads
// it (src/llamafactory/hparams/model_args.py, finetuning_args.py,
// data_args.py, parser.py; model/adapter.py), with the DeepSpeed JSON it
// names. Keys of transformers' TrainingArguments it passes through
// (per_device_train_batch_size, gradient_accumulation_steps, bf16, fp16,
// optim) take transformers' defaults when absent (kTrainingArgs below), each
// reported with that source.
#include <algorithm>

#include "core/runconfig/formats.h"
#include "core/runconfig/run_config.h"

namespace trainmem::runconfig {
namespace {

const std::string kHparams = std::string(kLlamaFactoryRelease) + " src/llamafactory/hparams/";
// LLaMA-Factory's pyproject.toml allows transformers >= 4.55.0, <= 5.8.0; the
// TrainingArguments read is this commit's (its per_device_train_batch_size 8,
// gradient_accumulation_steps 1, bf16 / fp16 False, optim "adamw_torch", or
// "adamw_torch_fused" when torch >= 2.8).
const std::string kTrainingArgs = "transformers 00349ae87 src/transformers/training_args.py TrainingArguments";

}  // namespace

Status importLlamaFactory(ConfigDocument& doc, ImportContext& ctx) {
    if (Status st = startFramework(ctx, "hf-trainer"); !st) return st;
    ImportRecorder& rec = ctx.rec;
    const std::string file = doc.file;
    auto flag = [&](const std::string& key) -> Expected<std::pair<bool, const ConfigValue*>> {
        const ConfigValue* v = doc.take(key);
        if (!v || v->value.is_null()) return std::pair<bool, const ConfigValue*>{false, nullptr};
        auto b = asBoolean(*v);
        if (!b) return b.error();
        return std::pair<bool, const ConfigValue*>{*b, v};
    };
    auto integer = [&](const std::string& key, const std::string& tm, int64_t transformers_default) -> Status {
        const ConfigValue* v = doc.take(key);
        if (!v) return rec.setDefault(key, tm, std::to_string(transformers_default), kTrainingArgs, "transformers' default");
        auto n = asInteger(*v);
        if (!n) return n.error();
        return rec.set(*v, tm, std::to_string(*n));
    };

    // Model.
    const ConfigValue* model = doc.take("model_name_or_path");
    if (model) {
        auto id = asText(*model);
        if (!id) return id.error();
        const std::string preset = presetForHubId(*id);
        if (!preset.empty()) ctx.modelFromPreset(preset, model, "Hub id " + *id);
        else ctx.modelUnknown(model->key, model->line, *id + " is no trainmem preset's checkpoint: give --preset or --model-config");
    }
    if (const ConfigValue* stage = doc.take("stage"); stage && stage->value.is_string()) {
        const std::string s = stage->value.get<std::string>();
        if (s != "sft" && s != "pt")
            rec.notRepresentable(*stage, "stage " + s + ": its reference or value model is not counted (trainmem counts one model's training)");
        else
            rec.readOnly(*stage, "one model trained");
    }

    // Batch and length (data_args.py cutoff_len 2048).
    if (Status st = integer("per_device_train_batch_size", "training.micro_batch_size", 8); !st) return st;
    if (Status st = integer("gradient_accumulation_steps", "training.gradient_accumulation_steps", 1); !st) return st;
    const ConfigValue* cutoff = doc.take("cutoff_len");
    if (cutoff) {
        auto n = asInteger(*cutoff);
        if (!n) return n.error();
        if (Status st = rec.set(*cutoff, "training.sequence_length", std::to_string(*n), "the longest a sample is cut to"); !st) return st;
    } else if (Status st = rec.setDefault("cutoff_len", "training.sequence_length", "2048", kHparams + "data_args.py"); !st) {
        return st;
    }

    // Fine-tuning (finetuning_args.py: finetuning_type lora, lora_rank 8, lora_dropout 0.0, lora_target "all").
    const ConfigValue* type = doc.take("finetuning_type");
    std::string finetuning = "lora";
    if (type) {
        auto t = asText(*type);
        if (!t) return t.error();
        finetuning = *t;
    }
    auto quant_v = doc.take("quantization_bit");
    int64_t bits = 0;
    if (quant_v && !quant_v->value.is_null()) {
        auto n = asInteger(*quant_v);
        if (!n) return n.error();
        bits = *n;
    }
    if (finetuning == "full" || finetuning == "lora") {
        std::string value = finetuning;
        if (finetuning == "lora" && bits == 4) value = "qlora";
        if (type) {
            if (Status st = rec.set(*type, "training.finetuning", value); !st) return st;
        } else if (Status st = rec.setDefault("finetuning_type", "training.finetuning", value, kHparams + "finetuning_args.py", "lora"); !st) {
            return st;
        }
    } else {
        rec.notRepresentable(*type, "finetuning_type " + finetuning + " is not counted (trainmem: full, lora, qlora)", "training.finetuning");
        rec.unknown(file, type->key, type->line, "training.finetuning", "set full or lora with --set");
    }
    if (bits == 4) {
        const ConfigValue* method = doc.take("quantization_method");
        if (method && method->value != "bnb" && method->value != "bitsandbytes")
            rec.notRepresentable(*method, "a 4-bit base other than bitsandbytes is not counted", "training.qlora_backend");
        if (Status st = rec.set(*quant_v, "training.qlora_backend", "bnb", "bitsandbytes 4-bit (quantization_method bnb)"); !st) return st;
    } else if (bits != 0) {
        rec.notRepresentable(*quant_v, std::to_string(bits) + "-bit base weights are not counted", "training.finetuning");
    }
    if (finetuning == "lora") {
        const ConfigValue* rank = doc.take("lora_rank");
        if (Status st = rank ? rec.set(*rank, "training.lora_rank", valueText(rank->value))
                             : rec.setDefault("lora_rank", "training.lora_rank", "8", kHparams + "finetuning_args.py");
            !st)
            return st;
        const ConfigValue* dropout = doc.take("lora_dropout");
        if (Status st = dropout ? rec.set(*dropout, "training.lora_dropout", valueText(dropout->value))
                                : rec.setDefault("lora_dropout", "training.lora_dropout", "0", kHparams + "finetuning_args.py");
            !st)
            return st;
        const ConfigValue* target = doc.take("lora_target");
        std::string targets = "all";
        if (target) {
            auto t = asText(*target);
            if (!t) return t.error();
            targets = *t;
        }
        std::string list = targets == "all" ? "all-linear" : targets;
        list.erase(std::remove(list.begin(), list.end(), ' '), list.end());
        if (Status st = target ? rec.set(*target, "training.lora_targets", list, targets == "all" ? "every linear layer" : "")
                               : rec.setDefault("lora_target", "training.lora_targets", list, kHparams + "finetuning_args.py", "all");
            !st)
            return st;
        if (auto dora = flag("use_dora"); !dora) return dora.error();
        else if (dora->first) rec.notRepresentable(*dora->second, "DoRA's magnitude vectors are not counted", "training.finetuning");
    }

    // Precision (parser.py: compute_dtype bf16 with bf16 or pure_bf16; model/adapter.py casts the trainable
    // parameters to fp32 unless pure_bf16).
    auto bf16 = flag("bf16");
    if (!bf16) return bf16.error();
    auto fp16 = flag("fp16");
    if (!fp16) return fp16.error();
    auto pure = flag("pure_bf16");
    if (!pure) return pure.error();
    std::string precision;
    const ConfigValue* from = nullptr;
    if (pure->first) precision = "pure-bf16", from = pure->second;
    else if (bf16->first) precision = "amp-bf16", from = bf16->second;
    else if (fp16->first) precision = "amp-fp16", from = fp16->second;
    if (from) {
        if (Status st = rec.set(*from, "training.precision", precision,
                                precision == "pure-bf16" ? "everything in bf16" : "16-bit compute, trainable parameters cast to fp32 (model/adapter.py)");
            !st)
            return st;
    } else {
        rec.unknown(file, "bf16, fp16, pure_bf16", 0, "training.precision",
                    "none set: no autocast (bf16 and fp16 default to False, " + kTrainingArgs +
                        "), while LLaMA-Factory loads the weights in bf16 where the GPU has it (model/patcher.py infer_optim_dtype) "
                        "and casts the trainable ones to fp32: no trainmem precision; set it");
    }

    // Optimizer (TrainingArguments.optim).
    const ConfigValue* optim = doc.take("optim");
    if (optim) {
        auto o = asText(*optim);
        if (!o) return o.error();
        const HfOptimizer hf = hfOptimizer(*o);
        if (hf.kind.empty()) {
            rec.notRepresentable(*optim, "optimizer " + *o + " is not in trainmem's catalogue", "training.optimizer");
            rec.unknown(file, "optim", optim->line, "training.optimizer", "set the nearest optimizer with --set");
        } else {
            if (Status st = rec.set(*optim, "training.optimizer", hf.kind); !st) return st;
            if (!hf.impl.empty())
                if (Status st = rec.set(*optim, "training.optimizer_impl", hf.impl); !st) return st;
            if (Status st = rec.set(*optim, "training.optimizer_paged", hf.paged ? "true" : "false"); !st) return st;
        }
    } else {
        // adamw_torch (foreach) or adamw_torch_fused by the installed torch:
        // LLaMA-Factory allows torch >= 2.4, so the implementation is unknown.
        if (Status st = rec.setDefault("optim", "training.optimizer", "adamw", kTrainingArgs, "adamw_torch, or adamw_torch_fused with torch >= 2.8"); !st)
            return st;
        if (Status st = rec.setDefault("optim", "training.optimizer_paged", "false", kTrainingArgs); !st) return st;
        rec.unknown(file, "optim", 0, "training.optimizer_impl",
                    "transformers' default is adamw_torch_fused with torch >= 2.8 and adamw_torch (foreach) before; LLaMA-Factory "
                    "allows torch >= 2.4: set fused or foreach");
    }

    // Checkpointing (model_args.py disable_gradient_checkpointing False: on by default).
    auto no_gc = flag("disable_gradient_checkpointing");
    if (!no_gc) return no_gc.error();
    if (Status st = no_gc->second ? rec.set(*no_gc->second, "training.activation_checkpointing", no_gc->first ? "none" : "full")
                                  : rec.setDefault("disable_gradient_checkpointing", "training.activation_checkpointing", "full",
                                                   kHparams + "model_args.py", "False: gradient checkpointing on");
        !st)
        return st;
    if (auto unsloth = flag("use_unsloth_gc"); !unsloth) return unsloth.error();
    else if (unsloth->first) rec.notRepresentable(*unsloth->second, "Unsloth's offloaded checkpoints are not counted", "training.activation_checkpointing");

    // Attention (model_args.py flash_attn auto: transformers decides).
    if (const ConfigValue* attn = doc.take("flash_attn"); attn && attn->value.is_string() && attn->value != "auto") {
        const std::string a = attn->value.get<std::string>();
        if (Status st = rec.set(*attn, "training.attention", a == "disabled" ? "eager" : "flash"); !st) return st;
    } else {
        rec.unknown(file, "flash_attn", attn ? attn->line : 0, "training.attention",
                    "auto: transformers picks the attention (not read here); set flash or eager");
    }
    if (auto liger = flag("enable_liger_kernel"); !liger) return liger.error();
    else if (liger->first) {
        if (Status st = rec.set(*liger->second, "training.kernels", "fused", "Liger's norm, SwiGLU and RoPE kernels"); !st) return st;
        if (Status st = rec.set(*liger->second, "training.loss", "fused_linear", "Liger's fused linear cross-entropy"); !st) return st;
    } else if (Status st = rec.setDefault("(loss)", "training.loss", "standard", "transformers ForCausalLMLoss (docs/memory-model.md §Logits and loss)");
               !st) {
        return st;
    }

    // World size and sharding.
    if (ctx.options.gpus) {
        if (Status st = rec.setDefault("--gpus", "parallelism.data", std::to_string(*ctx.options.gpus), "trainmem's --gpus"); !st) return st;
        if (Status st = rec.setDefault("--gpus", "parallelism.gpus", std::to_string(*ctx.options.gpus), "trainmem's --gpus"); !st) return st;
    } else {
        rec.unknown(file, "(world size)", 0, "parallelism.data", "the launcher's (llamafactory-cli train with FORCE_TORCHRUN, accelerate): give --gpus N");
    }
    if (const ConfigValue* ds = doc.take("deepspeed"); ds && !ds->value.is_null()) {
        if (Status st = importNamedDeepspeed(*ds, ctx, precision); !st) return st;
    } else if (Status st = rec.setDefault("(no deepspeed)", "parallelism.zero_stage", "0", kHparams + "parser.py",
                                          "DDP over the ranks, or an Accelerate FSDP config (not read): set parallelism.zero_stage");
               !st) {
        return st;
    }

    finishFramework(ctx, kLlamaFactoryRelease);
    rec.ignoreRest(doc, "no effect on memory in trainmem's model (" + std::string(kLlamaFactoryRelease) + ")");
    return ok();
}

}  // namespace trainmem::runconfig
