// Megatron-Bridge's run_config.yaml as Megatron-Bridge v0.6.0 writes it: the
// ConfigContainer (src/megatron/bridge/training/config.py) after setup, dumped
// by ConfigContainer.to_yaml (yaml.safe_dump, keys sorted, a `_target_` per
// section; functions and dtypes as {_target_, _call_: false}, enums as
// {_target_, _call_: true, _args_: [value]}: Megatron-LM
// megatron/training/config/yaml_utils.py). Its sections are the dataclasses
// Megatron-LM's flags are generated from (model: the GPTModelProvider, a
// TransformerConfig; ddp; optimizer; train), so each key is given to the
// Megatron-LM reader (megatron.cpp, megatron_model.cpp) as the flag it is, and
// the report names the YAML key. The world size is the launcher's (--gpus).
#include <map>

#include "core/base/json_input.h"
#include "core/runconfig/formats.h"

namespace trainmem::runconfig {
namespace {

// YAML key -> Megatron-LM flag, for values taken as they are.
const std::vector<std::pair<const char*, const char*>>& directKeys() {
    static const std::vector<std::pair<const char*, const char*>> keys = {
        {"model.tensor_model_parallel_size", "--tensor-model-parallel-size"},
        {"model.pipeline_model_parallel_size", "--pipeline-model-parallel-size"},
        {"model.context_parallel_size", "--context-parallel-size"},
        {"model.expert_model_parallel_size", "--expert-model-parallel-size"},
        {"model.expert_tensor_parallel_size", "--expert-tensor-parallel-size"},
        {"model.virtual_pipeline_model_parallel_size", "--virtual-pipeline-model-parallel-size"},
        {"model.sequence_parallel", "--sequence-parallel"},
        {"model.num_layers", "--num-layers"},
        {"model.hidden_size", "--hidden-size"},
        {"model.ffn_hidden_size", "--ffn-hidden-size"},
        {"model.num_attention_heads", "--num-attention-heads"},
        {"model.kv_channels", "--kv-channels"},
        {"model.normalization", "--normalization"},
        {"model.position_embedding_type", "--position-embedding-type"},
        {"model.add_bias_linear", "--add-bias-linear"},
        {"model.add_qkv_bias", "--add-qkv-bias"},
        {"model.layernorm_epsilon", "--norm-epsilon"},
        {"model.attention_dropout", "--attention-dropout"},
        {"model.hidden_dropout", "--hidden-dropout"},
        {"model.num_moe_experts", "--num-experts"},
        {"model.moe_router_topk", "--moe-router-topk"},
        {"model.moe_ffn_hidden_size", "--moe-ffn-hidden-size"},
        {"model.moe_shared_expert_intermediate_size", "--moe-shared-expert-intermediate-size"},
        {"model.moe_layer_freq", "--moe-layer-freq"},
        {"model.make_vocab_size_divisible_by", "--make-vocab-size-divisible-by"},
        {"model.bf16", "--bf16"},
        {"model.fp16", "--fp16"},
        {"model.fp8", "--fp8-format"},
        {"model.recompute_granularity", "--recompute-granularity"},
        {"model.recompute_method", "--recompute-method"},
        {"model.recompute_num_layers", "--recompute-num-layers"},
        {"model.transformer_impl", "--transformer-impl"},
        {"model.cross_entropy_loss_fusion", "--cross-entropy-loss-fusion"},
        {"train.micro_batch_size", "--micro-batch-size"},
        {"train.global_batch_size", "--global-batch-size"},
        {"optimizer.optimizer", "--optimizer"},
        {"optimizer.optimizer_cpu_offload", "--optimizer-cpu-offload"},
        {"ddp.use_distributed_optimizer", "--use-distributed-optimizer"},
        {"ddp.use_megatron_fsdp", "--use-megatron-fsdp"},
        {"ddp.fp8_param_gather", "--fp8-param-gather"},
        {"tokenizer.tokenizer_type", "--tokenizer-type"},
        {"tokenizer.tokenizer_model", "--tokenizer-model"},
    };
    return keys;
}

ConfigValue as(const ConfigValue& from, const std::string& flag, nlohmann::json value) {
    return ConfigValue{flag, std::move(value), from.line, from.file};
}

}  // namespace

Status importMegatronBridge(ConfigDocument& doc, ImportContext& ctx) {
    ConfigDocument flags;
    flags.file = doc.file;
    // flag -> the YAML key it came from and that key's value as written.
    std::map<std::string, std::pair<std::string, std::string>> yaml_key;
    auto add = [&](const ConfigValue& from, const std::string& flag, nlohmann::json value) {
        flags.values.push_back(as(from, flag, std::move(value)));
        yaml_key.emplace(flag, std::pair{from.key, valueText(from.value)});
    };
    auto present = [&](const char* key) -> const ConfigValue* {
        const ConfigValue* v = doc.take(key);
        return v && !v->value.is_null() ? v : nullptr;
    };
    for (const auto& [key, flag] : directKeys()) {
        const ConfigValue* v = present(key);
        // Switches keep their true or false, as the rank-0 log prints them.
        if (v) add(*v, flag, v->value);
    }

    // The MLP: gated_linear_unit with activation_func silu is --swiglu; gelu ungated is the default.
    const ConfigValue* gated = present("model.gated_linear_unit");
    const ConfigValue* act = present("model.activation_func._target_");
    doc.take("model.activation_func._call_");
    const std::string act_name = act && act->value.is_string() ? act->value.get<std::string>() : "torch.nn.functional.gelu";
    const bool is_gated = gated && gated->value == true;
    if (is_gated && act_name == "torch.nn.functional.silu") {
        add(*gated, "--swiglu", true);
    } else if (is_gated || act_name != "torch.nn.functional.gelu") {
        const ConfigValue& at = act ? *act : *gated;
        add(at, "--model-activation", (is_gated ? "gated " : "") + act_name);
    }
    // Tied embeddings (GPTModelProvider default true): false is --untie-embeddings-and-output-weights.
    if (const ConfigValue* share = present("model.share_embeddings_and_output_weights"); share && share->value == false)
        add(*share, "--untie-embeddings-and-output-weights", true);
    // num_query_groups: None is every head its own group (TransformerConfig.__post_init__).
    if (const ConfigValue* groups = present("model.num_query_groups")) {
        add(*groups, "--group-query-attention", true);
        add(*groups, "--num-query-groups", groups->value);
    }
    // The embedding's rows: vocab_size, padded when should_pad_vocab (gpt_provider.py provide(): calculate_padded_vocab_size).
    if (const ConfigValue* vocab = present("model.vocab_size")) {
        const ConfigValue* pad = present("model.should_pad_vocab");
        auto v = asInteger(*vocab);
        if (!v) return v.error();
        int64_t rows = *v;
        if (pad && pad->value == true) {
            int64_t divisible = 128, tp = 1;
            if (const ConfigValue* d = doc.find("model.make_vocab_size_divisible_by"); d && d->value.is_number_integer()) divisible = d->value.get<int64_t>();
            if (const ConfigValue* t = doc.find("model.tensor_model_parallel_size"); t && t->value.is_number_integer()) tp = t->value.get<int64_t>();
            if (divisible < 1 || tp < 1 || divisible > (int64_t(1) << 20) || tp > (int64_t(1) << 20))
                return valueError(*vocab, "make_vocab_size_divisible_by and tensor_model_parallel_size must be positive");
            const int64_t multiple = divisible * tp;
            rows = (rows + multiple - 1) / multiple * multiple;
        }
        add(*vocab, "--padded-vocab-size", rows);
    }
    // GPTModel's max_sequence_length is the provider's seq_length (gpt_provider.py provide()).
    if (const ConfigValue* seq = present("model.seq_length")) {
        add(*seq, "--seq-length", seq->value);
        add(*seq, "--max-position-embeddings", seq->value);
    }
    // bf16 keeps fp32 main gradients unless ddp.grad_reduce_in_fp32 is false.
    if (const ConfigValue* reduce = present("ddp.grad_reduce_in_fp32")) {
        const ConfigValue* bf16 = doc.find("model.bf16");
        add(*reduce, "--grad-reduce-in-bf16", reduce->value == false && bf16 && bf16->value == true);
    }
    if (const ConfigValue* strategy = present("ddp.data_parallel_sharding_strategy")) {
        const ConfigValue* fsdp = doc.find("model.use_megatron_fsdp");
        const ConfigValue* ddp_fsdp = doc.find("ddp.use_megatron_fsdp");
        if ((fsdp && fsdp->value == true) || (ddp_fsdp && ddp_fsdp->value == true)) add(*strategy, "--data-parallel-sharding-strategy", strategy->value);
    }
    if (const ConfigValue* dist = present("optimizer.use_distributed_optimizer"); dist && dist->value == true)
        add(*dist, "--use-distributed-optimizer", true);
    // AttnBackend as an enum: {_target_: ...AttnBackend, _call_: true, _args_: [n]}; None is auto.
    if (const ConfigValue* backend = present("model.attention_backend._args_")) {
        doc.takeUnder("model.attention_backend");
        static const char* const names[] = {"", "flash", "fused", "unfused", "local", "auto"};
        const auto& args = backend->value;
        if (!args.is_array() || args.size() != 1 || !args[0].is_number_integer() || args[0].get<int64_t>() < 1 || args[0].get<int64_t>() > 5)
            return valueError(*backend, "expected AttnBackend's value, [1] to [5] (flash, fused, unfused, local, auto)");
        add(*backend, "--attention-backend", names[args[0].get<int64_t>()]);
    }
    // A PEFT run: the ddp/optimizer keys above still hold; the adapters are read after.
    const ConfigValue* peft = present("peft._target_");

    if (Status st = importMegatronFlags(flags, ctx); !st) {
        // Name the YAML key, not the flag it was given as.
        Error e = st.error();
        for (const auto& [flag, from] : yaml_key) {
            const size_t at = e.field.find(": " + flag);
            if (at != std::string::npos && at + 2 + flag.size() == e.field.size()) e.field = e.field.substr(0, at + 2) + from.first;
        }
        return e;
    }
    ImportRecorder& rec = ctx.rec;
    RunConfigReport& report = rec.result().report;
    for (auto* list : {&report.read, &report.defaults, &report.unknown, &report.not_representable, &report.ignored})
        for (ReportEntry& e : *list)
            if (const auto it = yaml_key.find(e.key); it != yaml_key.end()) {
                e.note = (e.note.empty() ? "" : e.note + "; ") + "Megatron-LM's " + e.key;
                e.key = it->second.first;
                if (!e.file.empty()) e.value = it->second.second;
                if (e.source.find("megatron/training/arguments.py") != std::string::npos && e.file.empty())
                    e.source += " (the default of the same field)";
            }

    if (peft) {
        const std::string target = valueText(peft->value);
        if (target.find(".LoRA") == std::string::npos || target.find("DoRA") != std::string::npos) {
            rec.notRepresentable(*peft, target + ": trainmem counts LoRA adapters only", "training.finetuning");
            rec.unknown(doc.file, peft->key, peft->line, "training.finetuning", "set full or lora with --set");
        } else {
            if (Status st = rec.set(*peft, "training.finetuning", "lora", "megatron.bridge.peft.lora.LoRA"); !st) return st;
            const ConfigValue* dim = present("peft.dim");
            if (Status st = dim ? rec.set(*dim, "training.lora_rank", valueText(dim->value))
                                : rec.setDefault("peft.dim", "training.lora_rank", "32", std::string(kMegatronBridgeRelease) + " src/megatron/bridge/peft/lora.py");
                !st)
                return st;
            const ConfigValue* dropout = present("peft.dropout");
            if (Status st = dropout ? rec.set(*dropout, "training.lora_dropout", valueText(dropout->value))
                                    : rec.setDefault("peft.dropout", "training.lora_dropout", "0", std::string(kMegatronBridgeRelease) + " src/megatron/bridge/peft/lora.py");
                !st)
                return st;
            const ConfigValue* modules = present("peft.target_modules");
            std::string targets;
            if (modules) {
                if (!modules->value.is_array()) return valueError(*modules, "expected a list of module names");
                for (const auto& m : modules->value) {
                    const std::string name = m.is_string() ? m.get<std::string>() : "";
                    std::string t;
                    if (name == "linear_qkv") t = "q_proj,k_proj,v_proj";
                    else if (name == "linear_proj") t = "o_proj";
                    else if (name == "linear_fc1") t = "gate_proj,up_proj";
                    else if (name == "linear_fc2") t = "down_proj";
                    else return valueError(*modules, "module " + describeJson(m) + " is not one trainmem counts (linear_qkv, linear_proj, linear_fc1, linear_fc2)");
                    targets += (targets.empty() ? "" : ",") + t;
                }
            } else {
                targets = "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj";
            }
            if (Status st = modules ? rec.set(*modules, "training.lora_targets", targets, "linear_qkv: q, k, v; linear_fc1: gate and up (fused)")
                                    : rec.setDefault("peft.target_modules", "training.lora_targets", targets,
                                                     std::string(kMegatronBridgeRelease) + " src/megatron/bridge/peft/lora.py");
                !st)
                return st;
            doc.takeUnder("peft");
        }
    }
    for (const char* section : {"mixed_precision", "model._target_"})
        if (const ConfigValue* v = present(section)) rec.readOnly(*v, "read through the keys it set (model.bf16, params_dtype, ...)");
    rec.ignoreRest(doc, "no effect on memory in trainmem's model (" + std::string(kMegatronBridgeRelease) + ")");
    return ok();
}

}  // namespace trainmem::runconfig
