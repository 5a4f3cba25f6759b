// The activation account against autograd: validation/saved_tensors.py
// records every tensor PyTorch saves for backward in small Hugging Face-style
// blocks (CPU, one forward pass) and writes validation/activations/
// saved_tensors.json. Each case's measured bytes per block, for the embedding
// and for the head must match layerActivations / endActivations within 1%.
// TRAINMEM_ACTIVATION_TRUTH names another file (CTest's activation_ground_truth
// points it at freshly generated output).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/activations.h"
#include "core/training_config.h"

namespace trainmem {
namespace {

using nlohmann::json;

constexpr double kTolerance = 0.01;

std::string truthPath() {
    if (const char* env = std::getenv("TRAINMEM_ACTIVATION_TRUTH"); env && *env) return env;
    return std::string(TRAINMEM_VALIDATION_DIR) + "/activations/saved_tensors.json";
}

const json& truth() {
    static const json doc = [] {
        std::ifstream in(truthPath());
        if (!in) return json();
        return json::parse(in, nullptr, /*allow_exceptions=*/false);
    }();
    return doc;
}

// The case's model from its config.json keys (GPT-2's or Llama-style names),
// built here so that this test depends on the account alone.
ModelConfig modelOf(const json& c) {
    ModelConfig m;
    m.family = c.at("model_type").get<std::string>();
    if (m.family == "gpt2") {
        m.hidden_size = c.at("n_embd");
        m.num_layers = c.at("n_layer");
        m.num_heads = m.num_kv_heads = c.at("n_head");
        m.head_dim = m.hidden_size / m.num_heads;
        m.ffn_hidden_size = c.at("n_inner");
        m.max_position_embeddings = c.at("n_positions");
        m.hidden_act = c.at("activation_function");
        m.attention_dropout = c.at("attn_pdrop");
        m.hidden_dropout = c.at("resid_pdrop");
        m.embedding_dropout = c.at("embd_pdrop");
        m.mlp = MlpKind::Plain;
        m.norm = NormKind::LayerNorm;
        m.attention_qkv_bias = m.attention_output_bias = m.mlp_bias = true;
        m.learned_positions = true;
    } else {
        m.hidden_size = c.at("hidden_size");
        m.num_layers = c.at("num_hidden_layers");
        m.num_heads = c.at("num_attention_heads");
        m.num_kv_heads = c.at("num_key_value_heads");
        m.head_dim = c.value("head_dim", int64_t{0});
        m.ffn_hidden_size = c.at("intermediate_size");
        m.max_position_embeddings = c.at("max_position_embeddings");
        m.hidden_act = c.at("hidden_act");
        if (m.family == "deepseek_v3") {
            MlaConfig mla;
            mla.q_lora_rank = c.at("q_lora_rank");
            mla.kv_lora_rank = c.at("kv_lora_rank");
            mla.qk_nope_head_dim = c.at("qk_nope_head_dim");
            mla.qk_rope_head_dim = c.at("qk_rope_head_dim");
            mla.v_head_dim = c.at("v_head_dim");
            m.mla = mla;
            m.head_dim = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
            MoeConfig moe;
            moe.num_experts = c.at("n_routed_experts");
            moe.experts_per_token = c.at("num_experts_per_tok");
            moe.expert_ffn = c.at("moe_intermediate_size");
            moe.shared_experts = c.at("n_shared_experts");
            moe.first_dense_layers = c.at("first_k_dense_replace");
            moe.router_score_bias = true;
            m.moe = moe;
        }
        m.attention_dropout = c.at("attention_dropout");
        m.attention_qkv_bias = c.value("attention_bias", false);
        m.qk_norm = m.family == "qwen3";                     // Qwen3Attention q_norm / k_norm
        m.norms_per_block = m.family == "gemma2" ? 4 : 2;    // Gemma2DecoderLayer
        if (c.contains("num_local_experts")) {
            MoeConfig moe;
            moe.num_experts = c.at("num_local_experts");
            moe.experts_per_token = c.at("num_experts_per_tok");
            moe.expert_ffn = m.ffn_hidden_size;
            m.moe = moe;
        }
    }
    m.vocab_size = c.at("vocab_size");
    m.tied_embeddings = c.value("tie_word_embeddings", false);
    return m;
}

TrainingConfig trainingOf(const json& c) {
    TrainingConfig t;
    t.micro_batch_size = c.at("micro_batch_size");
    t.sequence_length = c.at("sequence_length");
    t.precision = parsePrecision(c.at("precision").get<std::string>()).value();
    t.attention = parseAttention(c.at("attention").get<std::string>()).value();
    t.kernels = parseKernelProfile(c.at("kernels").get<std::string>()).value();
    t.checkpointing = parseCheckpointing(c.at("checkpointing").get<std::string>()).value();
    t.loss = parseLoss(c.at("loss").get<std::string>()).value();
    t.finetuning = parseFinetuning(c.at("finetuning").get<std::string>()).value();
    t.lora_rank = c.value("lora_rank", t.lora_rank);
    t.lora_dropout = c.value("lora_dropout", t.lora_dropout);
    if (c.contains("lora_targets")) t.lora_targets = c.at("lora_targets").get<std::vector<std::string>>();
    return t;
}

double relativeError(int64_t estimate, int64_t measured) {
    return std::abs(static_cast<double>(estimate - measured)) / std::max<double>(1.0, static_cast<double>(measured));
}

TEST(ActivationGroundTruth, FileCoversTheGrid) {
    const json& doc = truth();
    ASSERT_TRUE(doc.is_object() && doc.contains("cases")) << "cannot read " << truthPath();
    std::set<std::string> families, precisions, attentions, checkpointing, finetuning;
    for (const json& c : doc.at("cases")) {
        families.insert(c.at("model").at("model_type").get<std::string>());
        precisions.insert(c.at("training").at("precision").get<std::string>());
        attentions.insert(c.at("training").at("attention").get<std::string>());
        checkpointing.insert(c.at("training").at("checkpointing").get<std::string>());
        finetuning.insert(c.at("training").at("finetuning").get<std::string>());
    }
    EXPECT_EQ(families, (std::set<std::string>{"deepseek_v3", "gemma", "gemma2", "gpt2", "llama", "mistral", "mixtral", "qwen2",
                                         "qwen3"}));
    EXPECT_EQ(precisions, (std::set<std::string>{"amp-bf16", "fp32", "mixed-bf16"}));
    EXPECT_EQ(attentions.size(), 2u);
    EXPECT_EQ(checkpointing.size(), 2u);
    EXPECT_EQ(finetuning.size(), 2u);
}

TEST(ActivationGroundTruth, EveryBlockAndEndWithinOnePercent) {
    const json& doc = truth();
    ASSERT_TRUE(doc.is_object() && doc.contains("cases")) << "cannot read " << truthPath();
    double worst = 0;
    std::string worst_what;
    for (const json& c : doc.at("cases")) {
        const std::string name = c.at("name");
        SCOPED_TRACE(name);
        const ModelConfig model = modelOf(c.at("model"));
        const TrainingConfig training = trainingOf(c.at("training"));
        const ParallelConfig parallel;
        const json& measured = c.at("measured");
        const auto check = [&](const std::string& what, int64_t estimate, int64_t truth_bytes) {
            const double err = relativeError(estimate, truth_bytes);
            EXPECT_LE(err, kTolerance) << what << ": estimate " << estimate << " B, autograd " << truth_bytes << " B";
            if (err > worst) {
                worst = err;
                worst_what = name + ", " + what;
            }
        };
        const bool recompute = training.checkpointing == Checkpointing::Full;
        int64_t i = 0;
        for (const json& block : measured.at("block_bytes")) {
            const LayerActivations la = layerActivations(model, training, parallel, model.isMoeLayer(i));
            check("block " + std::to_string(i), recompute ? la.checkpoint_input : la.saved, block.get<int64_t>());
            ++i;
        }
        const EndActivations ends = endActivations(model, training, parallel);
        // The tensors every block shares (rotary cos/sin, the checkpointed
        // causal mask) are accounted with the embedding.
        check("embedding", ends.embedding_saved,
              measured.at("embedding_bytes").get<int64_t>() + measured.at("shared_bytes").get<int64_t>());
        check("head", ends.final_norm_saved + ends.logits_saved, measured.at("head_bytes").get<int64_t>());
    }
    std::printf("activation ground truth: %zu cases, largest relative error %.4f%% (%s)\n",
                doc.at("cases").size(), 100 * worst, worst_what.c_str());
}

}  // namespace
}  // namespace trainmem
