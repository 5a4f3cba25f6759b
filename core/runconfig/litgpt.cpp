// LitGPT's YAML (`litgpt finetune_lora | finetune_full | pretrain --config
// FILE`) as LitGPT v0.5.13 reads it: jsonargparse fills the keys of each
// command's setup() (litgpt/finetune/lora.py, litgpt/finetune/full.py,
// litgpt/pretrain.py), a nested `train:` from the TrainArgs instance that
// setup() has as its default (litgpt/args.py for the fields that instance
// leaves). The file does not say which command runs it: the LoRA keys (or
// `quantize`) are finetune_lora's, `model_name` pretrain's, else
// finetune_full's; the report says which was assumed.
#include <cmath>
#include <map>

#include "core/base/json_input.h"
#include "core/runconfig/formats.h"
#include "core/runconfig/run_config.h"
#include "core/scenario/model_presets.h"
#include "core/scenario/presets.h"

namespace trainmem::runconfig {
namespace {

enum class Command { Lora, Full, Pretrain };

std::string sourceOf(Command c) {
    const std::string base = std::string(kLitgptRelease) + " ";
    switch (c) {
        case Command::Lora: return base + "litgpt/finetune/lora.py setup()";
        case Command::Full: return base + "litgpt/finetune/full.py setup()";
        case Command::Pretrain: return base + "litgpt/pretrain.py setup()";
    }
    return base;
}

const char* commandName(Command c) {
    return c == Command::Lora ? "finetune_lora" : c == Command::Full ? "finetune_full" : "pretrain";
}

// Hub repositories litgpt/config.py (v0.5.13) names by their old id: the Hub
// renamed them (the old id redirects to the new one), and the presets carry
// the new one.
const std::map<std::string, std::string>& renamedOnTheHub() {
    static const std::map<std::string, std::string> renamed = {
        {"meta-llama/meta-llama-3.1-8b", "meta-llama/Llama-3.1-8B"},
        {"meta-llama/meta-llama-3.1-70b", "meta-llama/Llama-3.1-70B"},
        {"meta-llama/meta-llama-3.1-405b", "meta-llama/Llama-3.1-405B"},
    };
    return renamed;
}

// litgpt/config.py names (pretrain's model_name) and the Hub id of their
// hf_config, for the models trainmem has presets of.
const std::map<std::string, std::string>& litgptNames() {
    static const std::map<std::string, std::string> names = {
        {"Llama-3.1-8B", "meta-llama/Meta-Llama-3.1-8B"},   {"Llama-3.1-70B", "meta-llama/Meta-Llama-3.1-70B"},
        {"Llama-3.1-405B", "meta-llama/Meta-Llama-3.1-405B"}, {"Llama-3.2-1B", "meta-llama/Llama-3.2-1B"},
        {"Llama-3.2-3B", "meta-llama/Llama-3.2-3B"},         {"Llama-2-7b-hf", "meta-llama/Llama-2-7b-hf"},
        {"Mistral-7B-v0.1", "mistralai/Mistral-7B-v0.1"},     {"Gemma-2-9b", "google/gemma-2-9b"},
        {"phi-4", "microsoft/phi-4"},
    };
    return names;
}

std::string lowered(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string presetForLitgptHubId(const std::string& id) {
    const auto it = renamedOnTheHub().find(lowered(id));
    return presetForHubId(it != renamedOnTheHub().end() ? it->second : id);
}

// checkpoint_dir: LitGPT downloads a Hub repository ORG/NAME to
// checkpoints/ORG/NAME (utils.py auto_download_checkpoint); the last two
// parts of the path are its Hub id.
std::string hubIdOfCheckpointDir(const std::string& dir) {
    std::filesystem::path p(dir);
    std::vector<std::string> parts;
    for (const auto& part : p)
        if (!part.empty() && part != "/" && part != ".") parts.push_back(part.string());
    while (!parts.empty() && parts.back().empty()) parts.pop_back();
    if (parts.size() < 2) return {};
    return parts[parts.size() - 2] + "/" + parts.back();
}

int64_t ceilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }
// x * y for the sizes a file may hold: a product past int64 saturates (and
// applySetting then refuses the result by name).
int64_t product(int64_t x, int64_t y) { return x > 0 && y > INT64_MAX / x ? INT64_MAX : x * y; }

}  // namespace

Status importLitgpt(ConfigDocument& doc, ImportContext& ctx) {
    // The command line's --key value (jsonargparse: it wins over the file), given as --override key=value.
    for (const std::string& o : ctx.options.overrides) {
        const std::string flag = o.starts_with("--") ? o.substr(2) : o;
        const size_t eq = flag.find('=');
        if (eq == std::string::npos || eq == 0)
            return Error{o, "a LitGPT override is key=value (litgpt finetune_lora --train.micro_batch_size 2: train.micro_batch_size=2)"};
        doc.set(ConfigValue{flag.substr(0, eq), yaml11Scalar(flag.substr(eq + 1)), 0, "command line"});
    }
    if (Status st = startFramework(ctx, "litgpt"); !st) return st;
    ImportRecorder& rec = ctx.rec;
    const std::string file = doc.file;

    // Which command: the keys only one of them has.
    Command cmd = Command::Full;
    const ConfigValue* because = nullptr;
    for (const char* key : {"lora_r", "lora_alpha", "lora_dropout", "lora_query", "lora_key", "lora_value", "lora_projection",
                            "lora_mlp", "lora_head", "quantize"})
        if (const ConfigValue* v = doc.find(key); v && !because) cmd = Command::Lora, because = v;
    const ConfigValue* model_name = doc.find("model_name");
    const ConfigValue* checkpoint = doc.find("checkpoint_dir");
    if (!because && model_name && !checkpoint) cmd = Command::Pretrain, because = model_name;
    if (cmd == Command::Pretrain && checkpoint)
        return valueError(*checkpoint, "pretrain's setup() has no checkpoint_dir (it has initial_checkpoint_dir)");
    if (cmd != Command::Pretrain && !checkpoint)
        return Error{file, "no checkpoint_dir: litgpt finetune_lora and finetune_full require it (litgpt/finetune/*.py setup())"};
    const std::string src = sourceOf(cmd);
    rec.result().report.read.push_back(ReportEntry{
        file, because ? because->key : "checkpoint_dir", because ? because->line : checkpoint->line, "", "",
        "", "", std::string("read as `litgpt ") + commandName(cmd) + " --config " + std::filesystem::path(file).filename().string() +
                    "`: the file does not name its command; " +
                    (cmd == Command::Lora ? "this key is only finetune_lora's" : cmd == Command::Pretrain ? "model_name is pretrain's" : "checkpoint_dir without LoRA keys")});

    auto optional = [&](const std::string& key) -> const ConfigValue* {
        const ConfigValue* v = doc.take(key);
        return v && !v->value.is_null() ? v : nullptr;
    };
    auto integer = [&](const std::string& key, std::optional<int64_t> fallback) -> Expected<std::pair<std::optional<int64_t>, const ConfigValue*>> {
        const ConfigValue* v = optional(key);
        if (!v) return std::pair<std::optional<int64_t>, const ConfigValue*>{fallback, nullptr};
        auto n = asInteger(*v);
        if (!n) return n.error();
        return std::pair<std::optional<int64_t>, const ConfigValue*>{*n, v};
    };
    auto flag = [&](const std::string& key, bool fallback) -> Expected<std::pair<bool, const ConfigValue*>> {
        const ConfigValue* v = optional(key);
        if (!v) return std::pair<bool, const ConfigValue*>{fallback, nullptr};
        auto b = asBoolean(*v);
        if (!b) return b.error();
        return std::pair<bool, const ConfigValue*>{*b, v};
    };
    auto put = [&](const ConfigValue* from, const std::string& key, const std::string& tm, const std::string& value,
                   const std::string& source, const std::string& note = {}) -> Status {
        if (from) return rec.set(*from, tm, value, note);
        return rec.setDefault(key, tm, value, source, note);
    };

    // The model: checkpoint_dir's Hub id, or pretrain's model_name.
    if (cmd == Command::Pretrain) {
        doc.take("model_name");
        // model_config (a litgpt.Config written out) wins over model_name (pretrain.py setup()).
        const ConfigValue* mc = optional("model_config");
        const auto under = doc.takeUnder("model_config");
        if (mc || !under.empty()) {
            ctx.modelUnknown("model_config", mc ? mc->line : under.front()->line,
                             "a litgpt.Config written out in the file: give --preset or --model-config");
        } else {
            auto name = asText(*model_name);
            if (!name) return name.error();
            std::string id = *name;
            if (const auto it = litgptNames().find(*name); it != litgptNames().end()) id = it->second;
            const std::string preset = id.find('/') != std::string::npos ? presetForLitgptHubId(id) : "";
            if (!preset.empty()) ctx.modelFromPreset(preset, model_name, "LitGPT config " + *name + " (Hub id " + id + ", litgpt/config.py)");
            else ctx.modelUnknown(model_name->key, model_name->line, *name + " is no trainmem preset's checkpoint: give --preset or --model-config");
        }
    } else {
        doc.take("checkpoint_dir");
        auto dir = asText(*checkpoint);
        if (!dir) return dir.error();
        const std::string id = hubIdOfCheckpointDir(*dir);
        const std::string preset = id.empty() ? "" : presetForLitgptHubId(id);
        if (!preset.empty()) ctx.modelFromPreset(preset, checkpoint, "Hub id " + id + " (LitGPT downloads it to checkpoints/" + id + ")");
        else ctx.modelUnknown(checkpoint->key, checkpoint->line, *dir + " is no trainmem preset's checkpoint: give --preset or --model-config");
    }

    // The world: devices x num_nodes (utils.py parse_devices: "auto" or -1 is every visible GPU).
    const ConfigValue* devices_v = optional("devices");
    std::optional<int64_t> devices;
    if (!devices_v) devices = cmd == Command::Pretrain ? std::nullopt : std::optional<int64_t>(1);
    else if (devices_v->value == "auto" || devices_v->value == -1) devices = std::nullopt;
    else if (auto n = asInteger(*devices_v); n && *n > 0 && *n <= 65536) devices = *n;
    else
        return valueError(*devices_v, "Devices must be 'auto' or a positive integer (litgpt/utils.py parse_devices), at most 65536 here (got " +
                                          describeJson(devices_v->value) + ")");
    auto nodes = integer("num_nodes", 1);
    if (!nodes) return nodes.error();
    if (*nodes->first < 1 || *nodes->first > 65536)
        return valueError(*nodes->second, "must be between 1 and 65536 (got " + std::to_string(*nodes->first) + ")");
    const int64_t num_nodes = *nodes->first;
    std::optional<int64_t> world;
    if (devices) {
        world = *devices * num_nodes;
        if (ctx.options.gpus && *ctx.options.gpus != *world)
            return Error{"--gpus", std::to_string(*ctx.options.gpus) + " differs from the file's devices x num_nodes = " + std::to_string(*world)};
        const std::string note = "devices x num_nodes";
        if (devices_v) rec.readOnly(*devices_v, "devices per node", "parallelism.data");
        if (Status st = put(devices_v ? devices_v : nodes->second, "devices", "parallelism.data", std::to_string(*world), src, note); !st) return st;
        if (Status st = put(devices_v ? devices_v : nodes->second, "devices", "parallelism.gpus", std::to_string(*world), src, note); !st) return st;
    } else if (ctx.options.gpus) {
        world = *ctx.options.gpus;
        if (*world % num_nodes != 0)
            return Error{"--gpus", std::to_string(*world) + " GPUs are not num_nodes (" + std::to_string(num_nodes) + ") equal nodes"};
        devices = *world / num_nodes;
        if (Status st = rec.setDefault("--gpus", "parallelism.data", std::to_string(*world), "trainmem's --gpus",
                                       "devices \"auto\": every GPU the node has (litgpt/utils.py parse_devices)");
            !st)
            return st;
        if (Status st = rec.setDefault("--gpus", "parallelism.gpus", std::to_string(*world), "trainmem's --gpus"); !st) return st;
    } else {
        rec.unknown(file, "devices", devices_v ? devices_v->line : 0, "parallelism.data",
                    "\"auto\": every GPU the node has (litgpt/utils.py parse_devices): give --gpus N");
    }
    if (nodes->second) rec.readOnly(*nodes->second, "nodes", "parallelism.data");

    // Batch: train.* from setup()'s TrainArgs instance (lora.py and full.py:
    // global 16, micro 1; pretrain.py: global 512, micro 4).
    const int64_t default_global = cmd == Command::Pretrain ? 512 : 16;
    const int64_t default_micro = cmd == Command::Pretrain ? 4 : 1;
    auto global = integer("train.global_batch_size", default_global);
    if (!global) return global.error();
    auto micro = integer("train.micro_batch_size", default_micro);
    if (!micro) return micro.error();
    if (Status st = put(micro->second, "train.micro_batch_size", "training.micro_batch_size", std::to_string(*micro->first), src); !st)
        return st;
    if (world) {
        // args.py batch_size() = global // (devices * num_nodes), and
        // gradient_accumulation_iters() = that // micro; both asserted > 0.
        const ConfigValue* gfrom = global->second ? global->second : micro->second;
        const int64_t per_rank = *global->first / *world;
        if (per_rank <= 0 || per_rank / *micro->first <= 0) {
            const std::string why = "train.global_batch_size (" + std::to_string(*global->first) + ") // (devices x num_nodes = " +
                                    std::to_string(*world) + ") // train.micro_batch_size (" + std::to_string(*micro->first) +
                                    ") is 0: LitGPT's `assert gradient_accumulation_iters > 0` (litgpt/args.py)";
            return gfrom ? valueError(*gfrom, why) : Error{file + ": train.global_batch_size", why};
        }
        const int64_t accum = per_rank / *micro->first;
        std::string note = "global // (devices x num_nodes) // micro (litgpt/args.py gradient_accumulation_iters)";
        if (accum * *micro->first * *world != *global->first)
            note += "; integer division: the step takes " + std::to_string(accum * *micro->first * *world) + " samples, not " +
                    std::to_string(*global->first);
        if (Status st = put(global->second, "train.global_batch_size", "training.gradient_accumulation_steps", std::to_string(accum), src, note); !st)
            return st;
    } else {
        rec.unknown(file, "train.global_batch_size", global->second ? global->second->line : 0, "training.gradient_accumulation_steps",
                    "global // (devices x num_nodes) // micro: the world size is unknown");
    }

    // Sequence length: finetuning cuts to min(longest sample, max_seq_length); pretraining to it, else the model's block_size.
    const ConfigValue* seq_v = optional("train.max_seq_length");
    std::optional<int64_t> seq;
    if (seq_v) {
        auto n = asInteger(*seq_v);
        if (!n) return n.error();
        seq = *n;
        if (Status st = rec.set(*seq_v, "training.sequence_length", std::to_string(*n),
                                cmd == Command::Pretrain ? "model.max_seq_length" : "the longest a sample is cut to (finetune fit(): min(longest, max_seq_length))");
            !st)
            return st;
    } else {
        rec.unknown(file, "train.max_seq_length", 0, "training.sequence_length",
                    cmd == Command::Pretrain ? "null: the model's block_size (litgpt/pretrain.py): set it"
                                             : "null: the longest sample of the data set (finetune fit() get_longest_seq_length): set it");
    }
    // The finetune scripts refuse these (validate_args), and need epochs or max_steps.
    if (cmd != Command::Pretrain) {
        for (const char* key : {"train.max_tokens", "train.max_norm", "train.tie_embeddings", "train.lr_warmup_fraction"})
            if (const ConfigValue* v = optional(key))
                return valueError(*v, std::string("litgpt/finetune/") + (cmd == Command::Lora ? "lora" : "full") +
                                          ".py doesn't support the '" + std::string(key).substr(6) + "' argument (validate_args)");
        const ConfigValue* epochs = doc.find("train.epochs");
        const ConfigValue* steps = doc.find("train.max_steps");
        if (epochs && epochs->value.is_null() && !(steps && !steps->value.is_null()))
            return valueError(*epochs, "LitGPT's finetuning requires the 'epochs' argument (validate_args)");
    } else if (const ConfigValue* tie = optional("train.tie_embeddings"); tie && tie->value == true) {
        if (rec.result().has_model) {
            if (Status st = rec.set(*tie, "model.tie_word_embeddings", "true", "model.transformer.wte.weight = model.lm_head.weight"); !st) return st;
        } else {
            rec.notRepresentable(*tie, "tied embeddings of a model trainmem does not know", "model");
        }
    }

    // Precision (setup(): precision or get_default_supported_precision(training=True), "bf16-mixed" on a GPU with bf16).
    const ConfigValue* precision_v = optional("precision");
    std::string lightning = "bf16-mixed";
    if (precision_v) {
        auto p = asText(*precision_v);
        if (!p) return p.error();
        lightning = *p;
        // Lightning's legacy names (fabric/connector.py _convert_precision_to_unified_args).
        if (lightning == "bf16") lightning = "bf16-mixed";
        else if (lightning == "16") lightning = "16-mixed";
        else if (lightning == "32") lightning = "32-true";
    }
    const ConfigValue* quantize_v = cmd == Command::Lora ? optional("quantize") : nullptr;
    std::string quantize;
    if (quantize_v) {
        auto q = asText(*quantize_v);
        if (!q) return q.error();
        quantize = *q;
        if (quantize != "bnb.nf4" && quantize != "bnb.nf4-dq" && quantize != "bnb.fp4" && quantize != "bnb.fp4-dq" &&
            quantize != "bnb.int8-training")
            return valueError(*quantize_v, "allowed: bnb.nf4, bnb.nf4-dq, bnb.fp4, bnb.fp4-dq, bnb.int8-training (finetune/lora.py setup()); got \"" +
                                               printableText(quantize) + "\"");
        if (lightning.find("mixed") != std::string::npos)
            return valueError(precision_v ? *precision_v : *quantize_v,
                              "Quantization and mixed precision is not supported (litgpt/finetune/lora.py)" +
                                  std::string(precision_v ? "" : "; precision is unset, so bf16-mixed: set bf16-true"));
        if (lightning != "bf16-true" && lightning != "16-true" && lightning != "32-true")
            return valueError(precision_v ? *precision_v : *quantize_v, "with quantize, precision must be bf16-true, 16-true or 32-true (lora.py's dtype map)");
        if (world && *world > 1)
            return valueError(*quantize_v, "Quantization is currently not supported for multi-GPU training. Please set devices=1 and "
                                           "num_nodes=1 when using the --quantize flag. (litgpt/finetune/lora.py)");
    }
    static const std::map<std::string, std::string> precisions = {
        {"bf16-true", "pure-bf16"}, {"bf16-mixed", "amp-bf16"}, {"32-true", "fp32"}, {"16-mixed", "amp-fp16"}};
    if (const auto it = precisions.find(lightning); it != precisions.end()) {
        if (Status st = put(precision_v, "precision", "training.precision", it->second, src + ", litgpt/utils.py get_default_supported_precision",
                            precision_v ? (lightning == "bf16-true" ? "the weights, gradients and optimizer states in bf16" : "")
                                        : "bf16-mixed on a GPU with bf16 (16-mixed on one without)");
            !st)
            return st;
    } else {
        rec.notRepresentable(*precision_v, "Lightning precision " + lightning + " is not one trainmem counts (bf16-true, bf16-mixed, 32-true, 16-mixed)",
                             "training.precision");
        rec.unknown(file, "precision", precision_v->line, "training.precision", "set the nearest precision with --set");
    }

    // Fine-tuning and LoRA (lora.py setup(): r 8, dropout 0.05, query and value only).
    std::string finetuning = cmd == Command::Lora ? "lora" : "full";
    if (!quantize.empty()) {
        if (quantize == "bnb.int8-training") {
            rec.notRepresentable(*quantize_v, "an 8-bit (LLM.int8) base is not counted", "training.finetuning");
        } else {
            finetuning = "qlora";
            if (quantize == "bnb.nf4" || quantize == "bnb.fp4")
                rec.notRepresentable(*quantize_v, "4-bit without double quantisation keeps an fp32 absmax per 64 weights (0.5625 B a weight); "
                                                  "trainmem's bnb counts the double-quantised 0.516", "training.qlora_backend");
            rec.notRepresentable(*quantize_v, "Lightning's BitsandbytesPrecision quantises every nn.Linear, the LM head too when it has no "
                                              "adapter; trainmem keeps the head 16-bit", "training.finetuning");
        }
    }
    if (Status st = put(because && cmd == Command::Lora ? because : nullptr, "(the command)", "training.finetuning", finetuning,
                        src, "litgpt " + std::string(commandName(cmd)) + (finetuning == "qlora" ? " with quantize " + quantize : ""));
        !st)
        return st;
    if (finetuning == "qlora")
        if (Status st = rec.set(*quantize_v, "training.qlora_backend", "bnb", "bitsandbytes 4-bit (Lightning BitsandbytesPrecision)"); !st) return st;
    if (cmd == Command::Lora) {
        auto r = integer("lora_r", 8);
        if (!r) return r.error();
        if (Status st = put(r->second, "lora_r", "training.lora_rank", std::to_string(*r->first), src); !st) return st;
        const ConfigValue* dropout = optional("lora_dropout");
        if (Status st = put(dropout, "lora_dropout", "training.lora_dropout", dropout ? valueText(dropout->value) : "0.05", src); !st) return st;
        if (const ConfigValue* alpha = optional("lora_alpha")) rec.readOnly(*alpha, "scales the update: no effect on memory");
        std::string targets;
        std::vector<const ConfigValue*> from;
        struct Target {
            const char* key;
            bool fallback;
            const char* modules;
        };
        for (const Target& t : {Target{"lora_query", true, "q_proj"}, Target{"lora_key", false, "k_proj"}, Target{"lora_value", true, "v_proj"},
                                Target{"lora_projection", false, "o_proj"}, Target{"lora_mlp", false, "gate_proj,up_proj,down_proj"}}) {
            auto on = flag(t.key, t.fallback);
            if (!on) return on.error();
            if (on->second) from.push_back(on->second);
            if (on->first) targets += (targets.empty() ? "" : ",") + std::string(t.modules);
        }
        auto head = flag("lora_head", false);
        if (!head) return head.error();
        if (head->first) rec.notRepresentable(*head->second, "an adapter on the LM head is not counted", "training.lora_targets");
        if (targets.empty())
            return Error{file + ": lora_query, lora_key, lora_value, lora_projection, lora_mlp",
                         "all false: LoRA would adapt no block layer (trainmem counts adapters on q, k, v, o and the MLP)"};
        if (from.empty()) {
            if (Status st = rec.setDefault("lora_query, lora_value", "training.lora_targets", targets, src, "query and value"); !st) return st;
        } else if (Status st = rec.set(*from.front(), "training.lora_targets", targets,
                                       "lora_query/key/value/projection/mlp (the MLP's fc_1, fc_2, proj are gate, up, down; LitGPT's fused qkv "
                                       "has one adapter with a block per projection: the same parameters)");
                   !st) {
            return st;
        }
    }

    // Optimizer: a name or {class_path, init_args} (utils.py instantiate_torch_optimizer; with quantize
    // instantiate_bnb_optimizer: bitsandbytes PagedAdamW, AdamW only).
    const ConfigValue* opt_name = optional("optimizer");
    const ConfigValue* opt_class = optional("optimizer.class_path");
    doc.takeUnder("optimizer.init_args");
    const ConfigValue* opt_from = opt_class ? opt_class : opt_name;
    std::string opt = "AdamW";
    if (opt_from) {
        auto o = asText(*opt_from);
        if (!o) return o.error();
        opt = *o;
    }
    if (finetuning == "qlora") {
        if (opt.find("AdamW") == std::string::npos)
            return valueError(*opt_from, "The chosen quantization format only supports the AdamW optimizer. (litgpt/utils.py instantiate_bnb_optimizer)");
        if (Status st = put(opt_from, "optimizer", "training.optimizer", "adamw", src, "bitsandbytes PagedAdamW (instantiate_bnb_optimizer)"); !st)
            return st;
        if (Status st = put(opt_from, "optimizer", "training.optimizer_paged", "true", src, "bitsandbytes PagedAdamW"); !st) return st;
        if (Status st = put(opt_from, "optimizer", "training.optimizer_state_dtype", "fp32", src, "PagedAdamW keeps 32-bit states"); !st)
            return st;
    } else {
        std::string name = opt.substr(opt.rfind('.') == std::string::npos ? 0 : opt.rfind('.') + 1);
        const bool torch_optim = opt.find('.') == std::string::npos || opt.starts_with("torch.optim.");
        std::string kind;
        bool paged = false;
        if (torch_optim && name == "AdamW") kind = "adamw";
        else if (torch_optim && name == "Adam") kind = "adam";
        else if (torch_optim && name == "SGD") {
            const ConfigValue* m = optional("optimizer.init_args.momentum");
            kind = m && m->value.is_number() && m->value.get<double>() != 0 ? "sgd-momentum" : "sgd";
        } else if (opt == "bitsandbytes.optim.AdamW8bit") kind = "adamw-8bit";
        else if (opt == "bitsandbytes.optim.PagedAdamW8bit") kind = "adamw-8bit", paged = true;
        else if (opt == "bitsandbytes.optim.PagedAdamW") kind = "adamw", paged = true;
        if (kind.empty()) {
            rec.notRepresentable(*opt_from, "optimizer " + opt + " is not in trainmem's catalogue", "training.optimizer");
            rec.unknown(file, opt_from->key, opt_from->line, "training.optimizer", "set the nearest optimizer with --set");
        } else {
            if (Status st = put(opt_from, "optimizer", "training.optimizer", kind, src, "\"AdamW\": torch.optim.AdamW"); !st) return st;
            if (Status st = put(opt_from, "optimizer", "training.optimizer_paged", paged ? "true" : "false", src); !st) return st;
            if (opt == "bitsandbytes.optim.PagedAdamW")
                if (Status st = rec.set(*opt_from, "training.optimizer_state_dtype", "fp32", "PagedAdamW keeps 32-bit states"); !st) return st;
            if (torch_optim) {
                // pretrain.py passes fused=True on CUDA; the finetune scripts pass nothing (PyTorch's foreach on CUDA).
                std::string impl = cmd == Command::Pretrain && name != "SGD" ? "fused" : "foreach";
                const ConfigValue* fused = optional("optimizer.init_args.fused");
                const ConfigValue* foreach = optional("optimizer.init_args.foreach");
                if (cmd != Command::Pretrain && fused && fused->value == true) impl = "fused";
                else if (cmd != Command::Pretrain && foreach && foreach->value == false) impl = "for-loop";
                if (Status st = put(cmd != Command::Pretrain && fused ? fused : nullptr, "optimizer", "training.optimizer_impl", impl,
                                    cmd == Command::Pretrain ? src + ": extra_kwargs fused = (device is cuda)" : src + ", utils.py instantiate_torch_optimizer",
                                    cmd == Command::Pretrain ? "fused=True on CUDA" : "no fused/foreach given: PyTorch's foreach on CUDA");
                    !st)
                    return st;
            }
        }
    }

    // Strategy: one device "auto"; more: finetune_full FSDPStrategy(auto_wrap {Block},
    // activation checkpointing {Block}); finetune_lora ModelParallelStrategy whose
    // parallelize_fn checkpoint-wraps and fully_shard()s every Block (FSDP2);
    // pretrain FSDPStrategy(auto_wrap {Block}, HYBRID_SHARD), no checkpointing.
    if (world && *world > 1) {
        const std::string why = cmd == Command::Full   ? "FSDPStrategy(auto_wrap_policy={Block}, activation_checkpointing_policy={Block})"
                                : cmd == Command::Lora ? "ModelParallelStrategy, parallelize_fn: checkpoint_wrapper and fully_shard on every Block"
                                                       : "FSDPStrategy(auto_wrap_policy={Block}, sharding_strategy=\"HYBRID_SHARD\")";
        if (Status st = rec.setDefault("(devices x num_nodes > 1)", "parallelism.zero_stage", "3", src, why); !st) return st;
        if (Status st = rec.setDefault("(devices x num_nodes > 1)", "training.activation_checkpointing",
                                       cmd == Command::Pretrain ? "none" : "full", src, why);
            !st)
            return st;
        if (cmd == Command::Pretrain && num_nodes > 1)
            if (Status st = rec.setDefault("(devices x num_nodes > 1)", "parallelism.shard_group", std::to_string(*devices), src,
                                           "HYBRID_SHARD: sharded within a node, replicated across nodes");
                !st)
                return st;
    } else if (world) {
        if (Status st = rec.setDefault("(devices x num_nodes = 1)", "parallelism.zero_stage", "0", src, "strategy \"auto\": one device"); !st) return st;
        if (Status st = rec.setDefault("(devices x num_nodes = 1)", "training.activation_checkpointing", "none", src, "strategy \"auto\": no checkpointing");
            !st)
            return st;
    } else {
        rec.unknown(file, "devices", 0, "parallelism.zero_stage", "FSDP on more than one device, none on one: the world size is unknown");
    }
    if (cmd == Command::Pretrain)
        if (Status st = rec.setDefault("(pretrain)", "training.kernels", "compile", src, "model = torch.compile(model)"); !st) return st;
    if (Status st = rec.setDefault("(attention)", "training.attention", "flash", std::string(kLitgptRelease) + " litgpt/model.py",
                                   "F.scaled_dot_product_attention(is_causal=True) without a mask: the flash kernel");
        !st)
        return st;

    // Loss: chunked_cross_entropy over 128 rows (utils.py); finetune_lora runs
    // the head in chunks of 128 positions (lm_head_chunk_size=128).
    if (seq) {
        const int64_t b = *micro->first;
        int64_t chunks = 0;
        std::string how;
        if (cmd == Command::Lora) {
            chunks = ceilDiv(*seq, 128);
            how = "model(input_ids, lm_head_chunk_size=128): ceil(s / 128) chunks of the head's output; counted as the chunked loss over them";
        } else if (cmd == Command::Full) {
            chunks = ceilDiv(product(b, *seq - 1), 128);
            how = "chunked_cross_entropy(logits[..., :-1, :], targets[..., 1:]), 128 rows a chunk: ceil(b (s - 1) / 128)";
        } else {
            chunks = ceilDiv(product(b, *seq), 128);
            how = "chunked_cross_entropy(logits, targets), 128 rows a chunk: ceil(b s / 128)";
        }
        if (Status st = rec.setDefault("(loss)", "training.loss", "chunked", src, "litgpt/utils.py chunked_cross_entropy"); !st) return st;
        if (Status st = rec.setDefault("(loss)", "training.loss_chunks", std::to_string(chunks), src, how); !st) return st;
    }

    finishFramework(ctx, kLitgptRelease);
    rec.ignoreRest(doc, "no effect on memory in trainmem's model (" + std::string(kLitgptRelease) + ")");
    return ok();
}

Expected<std::string> exportLitgpt(const Scenario& s) {
    const TrainingConfig& t = s.training;
    const ParallelConfig& p = s.parallelism;
    std::string hub;
    if (!s.model_preset.empty())
        for (const auto& info : listPresets())
            if (info.kind == PresetKind::Model && info.name == s.model_preset)
                if (auto config = readJsonFile(info.path); config && config->is_object() && config->contains("_name_or_path") &&
                                                           (*config)["_name_or_path"].is_string())
                    hub = (*config)["_name_or_path"].get<std::string>();
    if (hub.empty()) return Error{"model", "the model is no preset with a Hub id (LitGPT's checkpoint_dir is checkpoints/ORG/NAME)"};
    for (const auto& [old_id, new_id] : renamedOnTheHub())
        if (lowered(new_id) == lowered(hub)) {
            for (const auto& [name, id] : litgptNames())
                if (lowered(id) == old_id) hub = id;
        }
    if (p.tensor > 1 || p.pipeline > 1 || p.context > 1 || p.expert > 1)
        return Error{"parallelism", "LitGPT's finetune scripts are data parallel only"};
    const int64_t world = p.data;
    if (world > 1 && p.zero_stage != 3) return Error{"parallelism.zero_stage", "LitGPT shards with FSDP on more than one device: 3"};
    if (world == 1 && p.zero_stage != 0) return Error{"parallelism.zero_stage", "LitGPT runs one device without a strategy: 0"};
    if (p.offload_parameters || p.offload_optimizer) return Error{"parallelism.offload_parameters", "LitGPT's finetune scripts do not offload"};
    if (p.shard_group != 0) return Error{"parallelism.shard_group", "LitGPT's finetune scripts shard over every rank"};
    if (t.checkpointing != (world > 1 ? Checkpointing::Full : Checkpointing::None))
        return Error{"training.activation_checkpointing",
                     std::string("LitGPT's finetune scripts checkpoint every block on more than one device and none on one: ") + (world > 1 ? "full" : "none")};
    std::string precision;
    switch (t.precision) {
        case Precision::PureBf16: precision = "bf16-true"; break;
        case Precision::AmpBf16: precision = "bf16-mixed"; break;
        case Precision::Fp32: precision = "32-true"; break;
        case Precision::AmpFp16: precision = "16-mixed"; break;
        default: return Error{"training.precision", "LitGPT trains pure-bf16, amp-bf16, amp-fp16 or fp32"};
    }
    if (t.finetuning == Finetuning::Qlora) {
        if (t.qlora_backend != QloraBackend::Bnb) return Error{"training.qlora_backend", "LitGPT's QLoRA is bitsandbytes: bnb"};
        if (world > 1) return Error{"parallelism.data", "LitGPT quantizes on one device only"};
        if (t.precision != Precision::PureBf16 && t.precision != Precision::Fp32)
            return Error{"training.precision", "LitGPT's quantized models train in bf16-true or 32-true (pure-bf16, fp32)"};
        if (t.optimizer != OptimizerKind::AdamW || !t.optimizer_paged)
            return Error{"training.optimizer", "LitGPT's QLoRA steps bitsandbytes' PagedAdamW (adamw, optimizer_paged)"};
    }
    std::string optimizer;
    if (t.finetuning != Finetuning::Qlora) {
        switch (t.optimizer) {
            case OptimizerKind::AdamW: optimizer = t.optimizer_paged ? "bitsandbytes.optim.PagedAdamW" : "torch.optim.AdamW"; break;
            case OptimizerKind::Adam: optimizer = "torch.optim.Adam"; break;
            case OptimizerKind::AdamW8bit: optimizer = t.optimizer_paged ? "bitsandbytes.optim.PagedAdamW8bit" : "bitsandbytes.optim.AdamW8bit"; break;
            default: return Error{"training.optimizer", "export writes AdamW, Adam or bitsandbytes' 8-bit AdamW"};
        }
        if (t.optimizer_paged && t.optimizer == OptimizerKind::Adam) return Error{"training.optimizer_paged", "torch.optim.Adam is not paged"};
        if (optimizer.starts_with("torch.optim") && t.optimizer_impl == OptimizerImpl::ForLoop)
            return Error{"training.optimizer_impl", "export writes foreach or fused"};
    }
    if (t.kernels != KernelProfile::Eager) return Error{"training.kernels", "LitGPT's finetune scripts run eager: eager"};
    if (t.attention != AttentionImpl::Flash) return Error{"training.attention", "LitGPT's attention is PyTorch's SDPA: flash"};
    if (t.activation_offloading != ActivationOffloading::None || t.optimizer_in_backward)
        return Error{"training.activation_offloading", "LitGPT's finetune scripts neither offload activations nor step in backward"};
    const int64_t expected_chunks = t.finetuning == Finetuning::Full ? ceilDiv(product(t.micro_batch_size, t.sequence_length - 1), 128)
                                                                      : ceilDiv(t.sequence_length, 128);
    if (t.loss != LossImpl::Chunked || t.loss_chunks != expected_chunks)
        return Error{"training.loss_chunks", "LitGPT's loss is chunked over 128 rows: loss = chunked, loss_chunks = " + std::to_string(expected_chunks)};
    std::string targets_yaml;
    if (t.finetuning != Finetuning::Full) {
        auto has = [&](const char* m) {
            for (const auto& x : t.lora_targets)
                if (x == m || x == "all-linear") return true;
            return false;
        };
        const bool mlp = has("gate_proj") && has("up_proj") && has("down_proj");
        if (!mlp && (has("gate_proj") || has("up_proj") || has("down_proj")))
            return Error{"training.lora_targets", "LitGPT adapts all of the MLP (lora_mlp) or none of it"};
        auto b = [](bool v) { return std::string(v ? "true" : "false"); };
        targets_yaml = "lora_r: " + std::to_string(t.lora_rank) + "\nlora_alpha: 16\nlora_dropout: " + valueText(nlohmann::json(t.lora_dropout)) +
                       "\nlora_query: " + b(has("q_proj")) + "\nlora_key: " + b(has("k_proj")) + "\nlora_value: " + b(has("v_proj")) +
                       "\nlora_projection: " + b(has("o_proj")) + "\nlora_mlp: " + b(mlp) + "\nlora_head: false\n";
    }
    const bool lora = t.finetuning != Finetuning::Full;
    std::string out = "# LitGPT config (" + std::string(kLitgptRelease) + "), written by trainmem-cli export-run\n";
    out += "# run: litgpt " + std::string(lora ? "finetune_lora" : "finetune_full") + " --config THIS_FILE\n";
    out += "checkpoint_dir: checkpoints/" + hub + "\n";
    out += "precision: " + precision + "\n";
    if (lora) out += "quantize: " + std::string(t.finetuning == Finetuning::Qlora ? "bnb.nf4-dq" : "") + "\n";
    out += "devices: " + std::to_string(world) + "\nnum_nodes: 1\n";
    out += targets_yaml;
    out += "train:\n  global_batch_size: " + std::to_string(product(product(t.micro_batch_size, t.gradient_accumulation_steps), world)) + "\n";
    out += "  micro_batch_size: " + std::to_string(t.micro_batch_size) + "\n  epochs: 1\n";
    out += "  max_seq_length: " + std::to_string(t.sequence_length) + "\n";
    if (t.finetuning == Finetuning::Qlora) {
        out += "optimizer: AdamW\n";
    } else {
        out += "optimizer:\n  class_path: " + optimizer + "\n  init_args:\n    lr: 0.0002\n";
        if (optimizer.starts_with("torch.optim") && t.optimizer_impl == OptimizerImpl::Fused) out += "    fused: true\n";
    }
    return out;
}

}  // namespace trainmem::runconfig
