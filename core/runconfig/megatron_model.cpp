// Megatron-LM's model flags as the model pretrain_gpt.py builds from them,
// at Megatron-LM core_v0.15.0rc7-2333-gd98e8a64dd:
//   megatron/training/arguments.py validate_args: ffn_hidden_size 4h, or
//     int((4h * 2/3) / 64) * 64 with --swiglu; kv_channels h / heads;
//     num_layers, hidden_size, num_attention_heads, max_position_embeddings
//     required; moe_ffn_hidden_size = ffn_hidden_size when unset;
//   megatron/training/argument_utils.py: --num-query-groups only with
//     --group-query-attention (else every head its own group);
//   megatron/core/transformer/transformer_config.py: LayerNorm, biases on
//     every linear, gelu, dropouts 0.1, norm epsilon 1e-5, top-2 routing;
//   megatron/core/tokenizers/utils/build_tokenizer.py vocab_size_with_padding:
//     the tokenizer's size rounded up to make_vocab_size_divisible_by (128) x tp.
// The model is written as the Hugging Face config.json of the family whose
// blocks are the same (llama, qwen2, mixtral, gpt2) and read by
// importHuggingFaceConfig, so its checks and defaults are the ones every
// model goes through. Flags that make no family of trainmem's leave the
// model unknown, naming them.
#include "core/model/hf_config.h"
#include "core/runconfig/formats.h"

namespace trainmem::runconfig {
namespace {

const std::string kArgs = std::string(kMegatronRelease) + " megatron/training/arguments.py";
const std::string kTransformerConfig = std::string(kMegatronRelease) + " megatron/core/transformer/transformer_config.py";

}  // namespace

Status importMegatronModel(const ConfigDocument& doc, ImportContext& ctx, int64_t tensor_parallel) {
    ImportRecorder& rec = ctx.rec;
    const std::string file = doc.file;
    std::vector<ReportEntry> read, defaults;
    auto given = [&](const char* flag) -> const ConfigValue* {
        const ConfigValue* v = doc.take(flag);
        return v && !v->value.is_null() ? v : nullptr;
    };
    auto integer = [&](const char* flag) -> Expected<std::optional<int64_t>> {
        const ConfigValue* v = given(flag);
        if (!v) return std::optional<int64_t>{};
        auto n = asInteger(*v);
        if (!n) return n.error();
        if (*n < 1) return valueError(*v, "must be at least 1");
        // Sizes are multiplied below (4h, the vocabulary's padding): bounded as every model size is.
        if (*n > kMaxModelSize) return valueError(*v, "must be at most " + std::to_string(kMaxModelSize) + " (got " + std::to_string(*n) + ")");
        return std::optional<int64_t>{*n};
    };
    auto number = [&](const char* flag, double fallback) -> Expected<double> {
        const ConfigValue* v = given(flag);
        if (!v) return fallback;
        return asNumber(*v);
    };
    // A store_true flag: given (script) or True/False (log).
    auto on = [&](const char* flag) -> Expected<bool> {
        const ConfigValue* v = given(flag);
        if (!v) return false;
        auto b = asBoolean(*v);
        if (!b) return valueError(*v, "is a switch (store_true): give it without a value");
        return *b;
    };
    auto text = [&](const char* flag, const std::string& fallback) -> std::string {
        const ConfigValue* v = given(flag);
        return v ? valueText(v->value) : fallback;
    };
    auto note = [&](const char* flag, const std::string& tm_key, const std::string& value, const std::string& source,
                    const std::string& why = {}) {
        if (const ConfigValue* v = doc.find(flag); v && !v->value.is_null())
            read.push_back(ReportEntry{v->file, v->key, v->line, valueText(v->value), tm_key, value, "", why});
        else
            defaults.push_back(ReportEntry{"", flag, 0, "", tm_key, value, source, why});
    };

    auto layers = integer("--num-layers");
    if (!layers) return layers.error();
    auto hidden = integer("--hidden-size");
    if (!hidden) return hidden.error();
    auto heads = integer("--num-attention-heads");
    if (!heads) return heads.error();
    auto max_pos = integer("--max-position-embeddings");
    if (!max_pos) return max_pos.error();
    std::string missing;
    for (const auto& [name, value] : {std::pair{"--num-layers", *layers}, {"--hidden-size", *hidden}, {"--num-attention-heads", *heads},
                                      {"--max-position-embeddings", *max_pos}})
        if (!value) missing += (missing.empty() ? "" : ", ") + std::string(name);
    if (!missing.empty()) {
        ctx.modelUnknown(missing, 0, "no " + missing + " (Megatron requires them: arguments.py _check_arg_is_not_none): give --preset or --model-config");
        return ok();
    }
    const int64_t h = **hidden, n_heads = **heads;

    // The block's kind.
    auto swiglu = on("--swiglu");
    if (!swiglu) return swiglu.error();
    for (const char* other : {"--squared-relu", "--quick-geglu", "--openai-gelu"}) {
        auto o = on(other);
        if (!o) return o.error();
        if (*o) {
            ctx.modelUnknown(other, doc.find(other)->line, std::string(other) + ": no model family of trainmem's has this activation");
            return ok();
        }
    }
    // An activation given by name (Megatron-Bridge's activation_func) other than SwiGLU or GeLU.
    if (const ConfigValue* act = given("--model-activation")) {
        ctx.modelUnknown(act->key, act->line, valueText(act->value) + ": no model family of trainmem's has this MLP");
        return ok();
    }
    const std::string norm = text("--normalization", "LayerNorm");
    std::string position = text("--position-embedding-type", "learned_absolute");
    auto legacy_rope = on("--use-rotary-position-embeddings");
    if (!legacy_rope) return legacy_rope.error();
    if (*legacy_rope) position = "rope";
    // The log prints add_bias_linear (the dest); a script gives --disable-bias-linear.
    bool bias = true;
    if (const ConfigValue* v = given("--add-bias-linear")) {
        auto b = asBoolean(*v);
        if (!b) return b.error();
        bias = *b;
    }
    auto no_bias = on("--disable-bias-linear");
    if (!no_bias) return no_bias.error();
    if (*no_bias) bias = false;
    auto qkv_bias = on("--add-qkv-bias");
    if (!qkv_bias) return qkv_bias.error();
    auto untie = on("--untie-embeddings-and-output-weights");
    if (!untie) return untie.error();
    auto gqa = on("--group-query-attention");
    if (!gqa) return gqa.error();
    auto groups_flag = integer("--num-query-groups");
    if (!groups_flag) return groups_flag.error();
    const int64_t groups = *gqa && *groups_flag ? **groups_flag : n_heads;
    auto ffn_flag = integer("--ffn-hidden-size");
    if (!ffn_flag) return ffn_flag.error();
    const int64_t ffn = *ffn_flag ? **ffn_flag : *swiglu ? int64_t((4.0 * double(h) * 2 / 3) / 64) * 64 : 4 * h;
    auto kv_flag = integer("--kv-channels");
    if (!kv_flag) return kv_flag.error();
    if (!*kv_flag && h % n_heads != 0)
        return valueError(*doc.find("--hidden-size"), "is not divisible by --num-attention-heads: kv_channels would not be whole "
                                                      "(arguments.py asserts it)");
    const int64_t kv_channels = *kv_flag ? **kv_flag : h / n_heads;
    auto eps = number("--norm-epsilon", 1e-5);
    if (!eps) return eps.error();
    auto attn_dropout = number("--attention-dropout", 0.1);
    if (!attn_dropout) return attn_dropout.error();
    auto hidden_dropout = number("--hidden-dropout", 0.1);
    if (!hidden_dropout) return hidden_dropout.error();
    auto experts = integer("--num-experts");
    if (!experts) return experts.error();
    auto topk = integer("--moe-router-topk");
    if (!topk) return topk.error();
    auto moe_ffn = integer("--moe-ffn-hidden-size");
    if (!moe_ffn) return moe_ffn.error();
    const ConfigValue* shared = given("--moe-shared-expert-intermediate-size");
    const ConfigValue* freq = given("--moe-layer-freq");

    // The family with the same blocks.
    std::string family, why_not;
    const bool rope = position == "rope";
    if (*experts) {
        if (*swiglu && norm == "RMSNorm" && rope && !bias && !*qkv_bias && !shared && (!freq || freq->value == 1)) family = "mixtral";
        else why_not = "MoE other than Mixtral's blocks (--swiglu, --normalization RMSNorm, --position-embedding-type rope, "
                       "--disable-bias-linear, every layer MoE, no shared expert)";
    } else if (*swiglu && norm == "RMSNorm" && rope && !bias) {
        family = *qkv_bias ? "qwen2" : "llama";
        if (family == "qwen2" && kv_channels != h / n_heads) family.clear(), why_not = "--add-qkv-bias with --kv-channels other than h / heads";
    } else if (!*swiglu && norm == "LayerNorm" && position == "learned_absolute" && bias && !*untie && groups == n_heads &&
               kv_channels == h / n_heads) {
        family = "gpt2";
    } else {
        why_not = "the blocks (" + std::string(*swiglu ? "SwiGLU" : "GeLU") + ", " + norm + ", " + position + " positions, " +
                  (bias ? "biases" : "no biases") + (*untie ? ", untied" : ", tied") +
                  ") are neither Llama's (--swiglu --normalization RMSNorm --position-embedding-type rope --disable-bias-linear) nor "
                  "GPT-2's (the defaults: GeLU, LayerNorm, learned positions, biases, tied)";
    }
    if (family.empty()) {
        const ConfigValue* at = doc.find("--num-layers");
        ctx.modelUnknown("--num-layers, --hidden-size, ...", at ? at->line : 0, why_not + ": give --preset or --model-config");
        return ok();
    }

    // The vocabulary: the log's padded_vocab_size; else NullTokenizer's --vocab-size, padded.
    auto divisible = integer("--make-vocab-size-divisible-by");
    if (!divisible) return divisible.error();
    const int64_t multiple = (*divisible ? **divisible : 128) * tensor_parallel;
    std::optional<int64_t> vocab;
    std::string vocab_why;
    const std::string tokenizer = text("--tokenizer-type", "");
    // A script whose path variable is empty leaves --tokenizer-model without a value (read as a switch).
    const ConfigValue* tokenizer_model_v = given("--tokenizer-model");
    const std::string tokenizer_model = tokenizer_model_v && tokenizer_model_v->value.is_string() ? tokenizer_model_v->value.get<std::string>() : "";
    auto padded_flag = integer("--padded-vocab-size");
    if (!padded_flag) return padded_flag.error();
    auto vocab_flag = integer("--vocab-size");
    if (!vocab_flag) return vocab_flag.error();
    if (*padded_flag) {
        vocab = **padded_flag;
        note("--padded-vocab-size", "model.vocab_size", std::to_string(*vocab), kArgs, "the embedding's rows, padded");
    } else if (*vocab_flag && tokenizer == "NullTokenizer") {
        vocab = (**vocab_flag + multiple - 1) / multiple * multiple;
        note("--vocab-size", "model.vocab_size", std::to_string(*vocab), kArgs,
             "NullTokenizer's vocab_size rounded up to a multiple of make_vocab_size_divisible_by x tp = " + std::to_string(multiple) +
                 " (build_tokenizer.py vocab_size_with_padding)");
    } else {
        vocab_why = "the tokenizer's size (" + (tokenizer.empty() ? std::string("no --tokenizer-type") : tokenizer) +
                    (tokenizer_model.empty() ? "" : " " + tokenizer_model) + ") rounded up to a multiple of " + std::to_string(multiple) +
                    " (make_vocab_size_divisible_by x tp, build_tokenizer.py): set model.vocab_size to it";
    }

    // The config.json of that family.
    nlohmann::json config;
    config["model_type"] = family;
    config["vocab_size"] = vocab.value_or(multiple);  // unknown: reported below, to be set
    if (family == "gpt2") {
        config["n_embd"] = h;
        config["n_layer"] = **layers;
        config["n_head"] = n_heads;
        config["n_inner"] = ffn;
        config["n_positions"] = **max_pos;
        config["layer_norm_epsilon"] = *eps;
        config["activation_function"] = "gelu";
        config["attn_pdrop"] = *attn_dropout;
        config["resid_pdrop"] = *hidden_dropout;
        config["embd_pdrop"] = *hidden_dropout;
        config["tie_word_embeddings"] = true;
    } else {
        config["hidden_size"] = h;
        config["num_hidden_layers"] = **layers;
        config["num_attention_heads"] = n_heads;
        config["num_key_value_heads"] = groups;
        config["head_dim"] = kv_channels;
        config["intermediate_size"] = *experts ? (*moe_ffn ? **moe_ffn : ffn) : ffn;
        config["max_position_embeddings"] = **max_pos;
        config["rms_norm_eps"] = *eps;
        config["hidden_act"] = "silu";
        config["tie_word_embeddings"] = !*untie;
        config["attention_dropout"] = *attn_dropout;
        config["hidden_dropout"] = *hidden_dropout;
        if (family == "llama") config["attention_bias"] = false, config["mlp_bias"] = false;
        if (*experts) {
            config["num_local_experts"] = **experts;
            config["num_experts_per_tok"] = *topk ? **topk : 2;
        }
    }
    auto imported = importHuggingFaceConfig(config);
    if (!imported)
        return Error{where(*doc.find("--num-layers")), "the model the flags describe is refused: " + imported.error().text()};
    if (family != "gpt2" && imported->model.head_dim != kv_channels)
        return Error{file + ": --kv-channels", "the " + family + " blocks trainmem has cannot take kv_channels " + std::to_string(kv_channels)};

    RunConfigImport& r = rec.result();
    r.scenario.model = imported->model;
    r.scenario.model.name = "Megatron-LM " + std::filesystem::path(file).stem().string();
    r.scenario.model_preset.clear();
    r.has_model = true;
    r.report.read.push_back(ReportEntry{file, "(the model flags)", 0, family, "model", "model_type " + family, "",
                                        "the blocks the flags describe are " + family + "'s (" + kArgs + ")"});
    note("--num-layers", "model.num_hidden_layers", std::to_string(**layers), kArgs);
    note("--hidden-size", "model.hidden_size", std::to_string(h), kArgs);
    note("--num-attention-heads", "model.num_attention_heads", std::to_string(n_heads), kArgs);
    note(*gqa ? "--num-query-groups" : "--group-query-attention", "model.num_key_value_heads", std::to_string(groups),
         std::string(kMegatronRelease) + " megatron/training/argument_utils.py", *gqa ? "" : "off: a group per head");
    note("--ffn-hidden-size", *experts ? "model.intermediate_size (dense)" : "model.intermediate_size", std::to_string(ffn), kArgs,
         *ffn_flag ? "" : *swiglu ? "int((4h x 2/3) / 64) x 64 with --swiglu" : "4h");
    note("--kv-channels", "model.head_dim", std::to_string(kv_channels), kArgs, *kv_flag ? "" : "h / heads");
    note("--swiglu", "model.hidden_act", *swiglu ? "silu, gated" : "gelu", kTransformerConfig);
    note("--normalization", "model.norm", norm, kTransformerConfig);
    note("--position-embedding-type", "model.position_embeddings", position, kArgs);
    note(doc.find("--add-bias-linear") ? "--add-bias-linear" : "--disable-bias-linear", "model.biases", bias ? "on" : "off", kTransformerConfig);
    if (*qkv_bias) note("--add-qkv-bias", "model.attention_bias", "q, k, v", kTransformerConfig);
    note("--untie-embeddings-and-output-weights", "model.tie_word_embeddings", *untie ? "false" : "true", kArgs);
    note("--max-position-embeddings", "model.max_position_embeddings", std::to_string(**max_pos), kArgs);
    note("--norm-epsilon", "model.rms_norm_eps", valueText(nlohmann::json(*eps)), kTransformerConfig);
    note("--attention-dropout", "model.attention_dropout", valueText(nlohmann::json(*attn_dropout)), kTransformerConfig);
    note("--hidden-dropout", family == "gpt2" ? "model.resid_pdrop, embd_pdrop" : "model.hidden_dropout",
         valueText(nlohmann::json(*hidden_dropout)), kTransformerConfig);
    if (*experts) {
        note("--num-experts", "model.num_local_experts", std::to_string(**experts), kArgs);
        note("--moe-router-topk", "model.num_experts_per_tok", std::to_string(*topk ? **topk : 2), kTransformerConfig);
        note("--moe-ffn-hidden-size", "model.intermediate_size (experts)", std::to_string(*moe_ffn ? **moe_ffn : ffn), kArgs,
             *moe_ffn ? "" : "the dense ffn_hidden_size");
    }
    for (auto& e : read) r.report.read.push_back(std::move(e));
    for (auto& e : defaults) r.report.defaults.push_back(std::move(e));
    if (!vocab) {
        const ConfigValue* at = doc.find("--tokenizer-type");
        rec.unknown(file, tokenizer_model_v ? "--tokenizer-model" : "--tokenizer-type", at ? at->line : 0, "model.vocab_size", vocab_why);
    }
    return ok();
}

}  // namespace trainmem::runconfig
