#include "ui/model_panel.h"

#include <QCheckBox>
#include <QToolButton>
#include <QVBoxLayout>

#include "core/model/hf_config.h"
#include "core/report/report.h"

namespace trainmem::ui {

namespace {

constexpr int kBig = 1 << 30;

// Defaults when MoE or MLA is switched on by hand: Mixtral-8x7B's routing and
// DeepSeek-V3's latent sizes, so the result is a real architecture at once.
MoeConfig initialMoe(const ModelConfig& m) {
    MoeConfig moe;
    moe.num_experts = 8;
    moe.experts_per_token = 2;
    moe.expert_ffn = m.ffn_hidden_size;
    return moe;
}
MlaConfig initialMla() { return MlaConfig{1536, 512, 128, 64, 128}; }

}  // namespace

ModelPanel::ModelPanel(ScenarioDocument* document, FieldBindings* bindings, QWidget* parent)
    : QGroupBox(tr("Model"), parent), document_(document) {
    auto* column = new QVBoxLayout(this);
    column->setSpacing(6);

    parameters_ = new QLabel(this);
    parameters_->setWordWrap(true);
    parameters_->setToolTip(tr("Parameters of the whole model, counted exactly from the architecture below."));
    column->addWidget(parameters_);

    // The architecture is set by the preset or config.json and changed far
    // less than training and parallelism: collapsed, behind the parameter
    // count, until opened (or until an error names one of its fields).
    expander_ = new QToolButton(this);
    expander_->setText(tr("Architecture"));
    expander_->setCheckable(true);
    expander_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    expander_->setArrowType(Qt::RightArrow);
    expander_->setAutoRaise(true);
    expander_->setToolTip(tr("Every config.json field of the model: sizes, MLP and norm kind, biases, dropouts, experts, latent attention."));
    column->addWidget(expander_);
    architecture_ = new QWidget(this);
    architecture_->setVisible(false);
    auto* body = new QVBoxLayout(architecture_);
    body->setContentsMargins(0, 0, 0, 0);
    body->setSpacing(6);
    column->addWidget(architecture_);
    connect(expander_, &QToolButton::toggled, this, [this](bool open) {
        architecture_->setVisible(open);
        expander_->setArrowType(open ? Qt::DownArrow : Qt::RightArrow);
    });

    shape_ = new FieldForm(document, bindings, this);
    body->addWidget(shape_);
    shape_->addText({tr("Name"), {"model.name"}, tr("Display name used in titles and exports.")},
                    [](const Scenario& s) { return s.model.name; }, [](Scenario& s, std::string v) { s.model.name = v; });
    shape_->addInteger({tr("Hidden size"), {"model.hidden_size", "model.n_embd"},
                        tr("h, the width of the residual stream (hidden_size). 4096 for 7-8B models, 8192 for 70B, 16384 for 405B.")},
                       1, kBig, [](const Scenario& s) { return s.model.hidden_size; },
                       [](Scenario& s, int64_t v) { s.model.hidden_size = v; });
    shape_->addInteger({tr("Layers"), {"model.num_hidden_layers", "model.n_layer", "model.num_layers"},
                        tr("L, transformer blocks (num_hidden_layers). 32 for Llama-3-8B, 80 for 70B, 126 for 405B.")},
                       1, 100000, [](const Scenario& s) { return s.model.num_layers; },
                       [](Scenario& s, int64_t v) { s.model.num_layers = v; });
    shape_->addInteger({tr("Attention heads"), {"model.num_attention_heads", "model.n_head", "model.num_heads"},
                        tr("H, query heads (num_attention_heads). Usually hidden size / 128.")},
                       1, 100000, [](const Scenario& s) { return s.model.num_heads; },
                       [](Scenario& s, int64_t v) { s.model.num_heads = v; });
    shape_->addInteger({tr("KV heads"), {"model.num_key_value_heads", "model.num_kv_heads"},
                        tr("Key/value heads (num_key_value_heads): = heads for MHA, 8 for Llama-3 GQA, 1 for MQA. Must divide the heads.")},
                       1, 100000, [](const Scenario& s) { return s.model.num_kv_heads; },
                       [](Scenario& s, int64_t v) { s.model.num_kv_heads = v; });
    shape_->addInteger({tr("Head dim"), {"model.head_dim"},
                        tr("d, width of one head (head_dim); hidden size / heads unless the config says otherwise (Gemma: 256).")},
                       1, 100000, [](const Scenario& s) { return s.model.head_dim; },
                       [](Scenario& s, int64_t v) { s.model.head_dim = v; });
    shape_->addInteger({tr("FFN size"), {"model.intermediate_size", "model.n_inner", "model.ffn_hidden_size"},
                        tr("f, intermediate size of a dense MLP (intermediate_size). 14336 for Llama-3-8B; 4h for GPT-2.")},
                       1, kBig, [](const Scenario& s) { return s.model.ffn_hidden_size; },
                       [](Scenario& s, int64_t v) { s.model.ffn_hidden_size = v; });
    shape_->addInteger({tr("Vocabulary"), {"model.vocab_size"},
                        tr("V, tokens in the vocabulary (vocab_size). 32000 (Llama-2), 128256 (Llama-3), 151936 (Qwen2). "
                           "Drives the embedding, LM head and logits memory.")},
                       1, kBig, [](const Scenario& s) { return s.model.vocab_size; },
                       [](Scenario& s, int64_t v) { s.model.vocab_size = v; });
    shape_->addInteger({tr("Max positions"), {"model.max_position_embeddings", "model.n_positions"},
                        tr("Longest context the model was built for (max_position_embeddings); "
                           "sizes GPT-2's learned position table.")},
                       1, kBig, [](const Scenario& s) { return s.model.max_position_embeddings; },
                       [](Scenario& s, int64_t v) { s.model.max_position_embeddings = v; });

    shape_->addChoice<MlpKind>({tr("MLP"), {"model.mlp"},
                                  tr("Gated (SwiGLU/GeGLU: gate, up, down = 3 matrices) or plain (GELU: 2 matrices, GPT-2).")},
                                 {{tr("Gated (SwiGLU)"), MlpKind::Gated}, {tr("Plain (GELU)"), MlpKind::Plain}},
                                 [](const Scenario& s) { return s.model.mlp; }, [](Scenario& s, MlpKind v) { s.model.mlp = v; });
    shape_->addChoice<NormKind>({tr("Norm"), {"model.norm"},
                                   tr("RMSNorm (h weights, Llama and most current models) or LayerNorm (weights + biases, GPT-2).")},
                                  {{tr("RMSNorm"), NormKind::RMSNorm}, {tr("LayerNorm"), NormKind::LayerNorm}},
                                  [](const Scenario& s) { return s.model.norm; }, [](Scenario& s, NormKind v) { s.model.norm = v; });
    shape_->addInteger({tr("Norms per block"), {"model.norms_per_block"},
                          tr("2 for most models; 4 for Gemma-2 (pre and post norms around attention and MLP).")},
                         1, 8, [](const Scenario& s) { return s.model.norms_per_block; },
                         [](Scenario& s, int64_t v) { s.model.norms_per_block = v; });
    // The ACT2FN names the core models (core/model/hf_families.cpp activationCatalogue):
    // a list, so that an unmodelled activation cannot be entered.
    QStringList activations;
    for (const std::string& a : supportedActivations()) activations << QString::fromStdString(a);
    shape_->addNamedChoice({tr("Activation"), {"model.hidden_act"}, tr("MLP activation function: silu (Llama), gelu_pytorch_tanh (Gemma), gelu_new (GPT-2).")},
                           activations,
                           [](const Scenario& s) { return s.model.hidden_act; }, [](Scenario& s, std::string v) { s.model.hidden_act = v; });
    shape_->addFlag({tr("Tied embeddings"), {"model.tie_word_embeddings", "model.tied_embeddings"},
                       tr("LM head shares the embedding matrix (tie_word_embeddings): Gemma, GPT-2, Llama-3.2-1B/3B.")},
                      [](const Scenario& s) { return s.model.tied_embeddings; },
                      [](Scenario& s, bool v) { s.model.tied_embeddings = v; });
    shape_->addFlag({tr("Learned positions"), {"model.learned_positions"},
                       tr("A learned position embedding of max positions x h (GPT-2); rotary models have none.")},
                      [](const Scenario& s) { return s.model.learned_positions; },
                      [](Scenario& s, bool v) { s.model.learned_positions = v; });
    shape_->addFlag({tr("QK norm"), {"model.qk_norm"}, tr("Per-head RMSNorm on queries and keys (Qwen3, OLMo-2).")},
                      [](const Scenario& s) { return s.model.qk_norm; }, [](Scenario& s, bool v) { s.model.qk_norm = v; });
    shape_->addFlag({tr("q/k/v bias"), {"model.attention_bias", "model.attention_qkv_bias"},
                       tr("Biases on the q, k and v projections (Qwen2, GPT-2).")},
                      [](const Scenario& s) { return s.model.attention_qkv_bias; },
                      [](Scenario& s, bool v) { s.model.attention_qkv_bias = v; });
    shape_->addFlag({tr("Output bias"), {"model.attention_output_bias"}, tr("Bias on the attention output projection (GPT-2).")},
                      [](const Scenario& s) { return s.model.attention_output_bias; },
                      [](Scenario& s, bool v) { s.model.attention_output_bias = v; });
    shape_->addFlag({tr("MLP bias"), {"model.mlp_bias"}, tr("Biases on every MLP matrix (GPT-2).")},
                      [](const Scenario& s) { return s.model.mlp_bias; }, [](Scenario& s, bool v) { s.model.mlp_bias = v; });
    const QString dropout_tip = tr("Dropout probability; 0 in most LLM training today. Non-zero keeps a 1-byte mask per element for backward.");
    shape_->addReal({tr("Attention dropout"), {"model.attention_dropout", "model.attn_pdrop"}, dropout_tip}, 0, 1, 2, 0.05,
                      [](const Scenario& s) { return s.model.attention_dropout; },
                      [](Scenario& s, double v) { s.model.attention_dropout = v; });
    shape_->addReal({tr("Hidden dropout"), {"model.hidden_dropout", "model.resid_pdrop"}, dropout_tip}, 0, 1, 2, 0.05,
                      [](const Scenario& s) { return s.model.hidden_dropout; },
                      [](Scenario& s, double v) { s.model.hidden_dropout = v; });
    shape_->addReal({tr("Embedding dropout"), {"model.embedding_dropout", "model.embd_pdrop"}, dropout_tip}, 0, 1, 2, 0.05,
                      [](const Scenario& s) { return s.model.embedding_dropout; },
                      [](Scenario& s, double v) { s.model.embedding_dropout = v; });

    // Mixture of experts.
    moe_toggle_ = new QCheckBox(tr("Mixture of experts (MoE)"), this);
    moe_toggle_->setToolTip(tr("Routed experts replace the dense MLP (Mixtral, Qwen2-MoE, DeepSeek)."));
    body->addWidget(moe_toggle_);
    connect(moe_toggle_, &QCheckBox::toggled, this, [this](bool on) {
        document_->edit([&](Scenario& s) {
            if (on && !s.model.moe) s.model.moe = initialMoe(s.model);
            if (!on) s.model.moe.reset();
        }, tr("Mixture of experts"));
    });
    moe_box_ = new QGroupBox(tr("Experts"), this);
    auto* moe_layout = new QVBoxLayout(moe_box_);
    moe_ = new FieldForm(document, bindings, moe_box_);
    moe_layout->addWidget(moe_);
    body->addWidget(moe_box_);
    auto moe = [](const Scenario& s) -> const MoeConfig& {
        static const MoeConfig none;
        return s.model.moe ? *s.model.moe : none;
    };
    auto edit_moe = [](Scenario& s) -> MoeConfig& {
        if (!s.model.moe) s.model.moe.emplace();
        return *s.model.moe;
    };
    moe_->addInteger({tr("Experts"), {"model.num_local_experts", "model.n_routed_experts", "model.num_experts", "model.moe.num_experts"},
                      tr("E, routed experts per MoE layer: 8 (Mixtral), 60 (Qwen1.5-MoE), 256 (DeepSeek-V3).")},
                     1, 100000, [=](const Scenario& s) { return moe(s).num_experts; },
                     [=](Scenario& s, int64_t v) { edit_moe(s).num_experts = v; });
    moe_->addInteger({tr("Experts per token"), {"model.num_experts_per_tok", "model.moe.experts_per_token"},
                      tr("Top-k routing: 2 (Mixtral), 4 (Qwen1.5-MoE), 8 (DeepSeek-V3). Multiplies expert activations.")},
                     1, 1000, [=](const Scenario& s) { return moe(s).experts_per_token; },
                     [=](Scenario& s, int64_t v) { edit_moe(s).experts_per_token = v; });
    moe_->addInteger({tr("Expert FFN size"), {"model.moe_intermediate_size", "model.moe.expert_ffn"},
                      tr("Intermediate size of one routed expert (moe_intermediate_size; Mixtral uses intermediate_size).")},
                     1, kBig, [=](const Scenario& s) { return moe(s).expert_ffn; },
                     [=](Scenario& s, int64_t v) { edit_moe(s).expert_ffn = v; });
    moe_->addInteger({tr("Shared experts"), {"model.n_shared_experts", "model.moe.shared_experts"},
                      tr("Experts every token uses (DeepSeek n_shared_experts: 1-2). 0 for Mixtral.")},
                     0, 1000, [=](const Scenario& s) { return moe(s).shared_experts; },
                     [=](Scenario& s, int64_t v) { edit_moe(s).shared_experts = v; });
    moe_->addInteger({tr("Shared expert FFN"), {"model.shared_expert_intermediate_size", "model.moe.shared_expert_ffn"},
                      tr("Qwen2-MoE: width of the single shared expert; 0 = shared experts x expert FFN size.")},
                     0, kBig, [=](const Scenario& s) { return moe(s).shared_expert_ffn; },
                     [=](Scenario& s, int64_t v) { edit_moe(s).shared_expert_ffn = v; });
    moe_->addFlag({tr("Shared expert gate"), {"model.moe.shared_expert_gate"}, tr("Qwen2-MoE's sigmoid gate on the shared expert.")},
                  [=](const Scenario& s) { return moe(s).shared_expert_gate; },
                  [=](Scenario& s, bool v) { edit_moe(s).shared_expert_gate = v; });
    moe_->addInteger({tr("Leading dense layers"), {"model.first_k_dense_replace", "model.mlp_only_layers"},
                      tr("DeepSeek first_k_dense_replace: the first layers keep a dense MLP (3 in DeepSeek-V3).")},
                     0, 100000, [=](const Scenario& s) { return moe(s).first_dense_layers; },
                     [=](Scenario& s, int64_t v) { edit_moe(s).first_dense_layers = v; });
    moe_->addInteger({tr("MoE every k layers"), {"model.moe_layer_freq", "model.decoder_sparse_step", "model.moe.layer_frequency"},
                      tr("A MoE layer every k layers after the dense ones (moe_layer_freq / decoder_sparse_step); 1 = every layer.")},
                     1, 1000, [=](const Scenario& s) { return moe(s).layer_frequency; },
                     [=](Scenario& s, int64_t v) { edit_moe(s).layer_frequency = v; });
    moe_->addFlag({tr("Router score bias"), {"model.moe.router_score_bias"}, tr("DeepSeek-V3's e_score_correction_bias: E extra parameters per layer.")},
                  [=](const Scenario& s) { return moe(s).router_score_bias; },
                  [=](Scenario& s, bool v) { edit_moe(s).router_score_bias = v; });
    moe_->addReal({tr("Capacity factor"), {"model.moe.capacity_factor", "model.capacity_factor"},
                   tr("0 = dropless routing (Megablocks, DeepSeek). > 0 pads every expert to capacity x tokens x k / E (e.g. 1.25).")},
                  0, 16, 2, 0.25, [=](const Scenario& s) { return moe(s).capacity_factor; },
                  [=](Scenario& s, double v) { edit_moe(s).capacity_factor = v; });

    // Multi-head latent attention.
    mla_toggle_ = new QCheckBox(tr("Multi-head latent attention (MLA)"), this);
    mla_toggle_->setToolTip(tr("DeepSeek-V2/V3: low-rank compressed q and kv projections replace q/k/v/o."));
    body->addWidget(mla_toggle_);
    connect(mla_toggle_, &QCheckBox::toggled, this, [this](bool on) {
        document_->edit([&](Scenario& s) {
            if (on && !s.model.mla) s.model.mla = initialMla();
            if (!on) s.model.mla.reset();
        }, tr("Latent attention"));
    });
    mla_box_ = new QGroupBox(tr("Latent attention"), this);
    auto* mla_layout = new QVBoxLayout(mla_box_);
    mla_ = new FieldForm(document, bindings, mla_box_);
    mla_layout->addWidget(mla_);
    body->addWidget(mla_box_);
    auto mla = [](const Scenario& s) -> const MlaConfig& {
        static const MlaConfig none;
        return s.model.mla ? *s.model.mla : none;
    };
    auto edit_mla = [](Scenario& s) -> MlaConfig& {
        if (!s.model.mla) s.model.mla.emplace();
        return *s.model.mla;
    };
    mla_->addInteger({tr("q LoRA rank"), {"model.q_lora_rank"}, tr("Query compression rank: 1536 (DeepSeek-V3); 0 = none (V2-Lite).")},
                     0, kBig, [=](const Scenario& s) { return mla(s).q_lora_rank; },
                     [=](Scenario& s, int64_t v) { edit_mla(s).q_lora_rank = v; });
    mla_->addInteger({tr("kv LoRA rank"), {"model.kv_lora_rank"}, tr("Key/value latent rank: 512 (DeepSeek-V2/V3).")},
                     1, kBig, [=](const Scenario& s) { return mla(s).kv_lora_rank; },
                     [=](Scenario& s, int64_t v) { edit_mla(s).kv_lora_rank = v; });
    mla_->addInteger({tr("qk nope dim"), {"model.qk_nope_head_dim"}, tr("Per-head query/key width without rotary: 128.")},
                     1, 100000, [=](const Scenario& s) { return mla(s).qk_nope_head_dim; },
                     [=](Scenario& s, int64_t v) { edit_mla(s).qk_nope_head_dim = v; });
    mla_->addInteger({tr("qk rope dim"), {"model.qk_rope_head_dim"}, tr("Per-head rotary query/key width: 64.")},
                     1, 100000, [=](const Scenario& s) { return mla(s).qk_rope_head_dim; },
                     [=](Scenario& s, int64_t v) { edit_mla(s).qk_rope_head_dim = v; });
    mla_->addInteger({tr("v head dim"), {"model.v_head_dim"}, tr("Per-head value width: 128.")},
                     1, 100000, [=](const Scenario& s) { return mla(s).v_head_dim; },
                     [=](Scenario& s, int64_t v) { edit_mla(s).v_head_dim = v; });

    bindings->bind({"model.moe"}, moe_toggle_);
    bindings->bind({"model.mla"}, mla_toggle_);
    connect(document_, &ScenarioDocument::changed, this, &ModelPanel::refresh);
    refresh();
}

void ModelPanel::setArchitectureShown(bool shown) { expander_->setChecked(shown); }
bool ModelPanel::architectureShown() const { return expander_->isChecked(); }

void ModelPanel::refresh() {
    const Scenario& s = document_->scenario();
    shape_->refresh();
    for (auto [toggle, on] : {std::pair{moe_toggle_, s.model.moe.has_value()}, std::pair{mla_toggle_, s.model.mla.has_value()}})
        if (toggle->isChecked() != on) {
            QSignalBlocker block(toggle);
            toggle->setChecked(on);
        }
    moe_box_->setVisible(s.model.moe.has_value());
    mla_box_->setVisible(s.model.mla.has_value());
    if (s.model.moe) moe_->refresh();
    if (s.model.mla) mla_->refresh();

    if (document_->hasResult()) {
        const ParameterCount& p = document_->result().parameters;
        QString text = tr("<b>%1</b> parameters").arg(QString::fromStdString(formatCount(p.total)));
        if (p.active != p.total) text += tr(", %1 active per token").arg(QString::fromStdString(formatCount(p.active)));
        if (p.trainable != p.total) text += tr(", %1 trainable").arg(QString::fromStdString(formatCount(p.trainable)));
        if (document_->stale()) text += tr(" <span style='color:#888'>(last valid)</span>");
        parameters_->setText(text);
    } else {
        parameters_->setText(tr("<i>No valid model yet</i>"));
    }
}

}  // namespace trainmem::ui
