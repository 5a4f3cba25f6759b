#include "ui/model_panel.h"

#include <algorithm>

#include <QCheckBox>
#include <QToolButton>
#include <QVBoxLayout>

#include "core/model/hf_config.h"
#include "core/model/model_fields.h"
#include "core/report/report.h"
#include "ui/layer_pattern_strip.h"

namespace trainmem::ui {

namespace {

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

QString text(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

// A field of an absent block (the experts of a dense model) reads as 0.
int64_t integerOf(const nlohmann::json& v) { return v.is_number() ? v.get<int64_t>() : 0; }
double numberOf(const nlohmann::json& v) { return v.is_number() ? v.get<double>() : 0.0; }

}  // namespace

QWidget* ModelPanel::addField(FieldForm* form, const ModelFieldRow& row) {
    const FieldInfo info{text(row.label), {}, text(row.meaning)};
    auto get = [&row](const Scenario& s) { return row.get(s.model); };
    auto set = [&row](Scenario& s, const nlohmann::json& v) { row.set(s.model, v); };
    QWidget* widget = nullptr;
    switch (row.type) {
        case ModelFieldType::Integer:
            widget = form->addInteger(
                info, static_cast<int>(row.step_minimum), static_cast<int>(row.step_maximum),
                [get](const Scenario& s) { return integerOf(get(s)); },
                [set](Scenario& s, int64_t v) { set(s, v); });
            break;
        case ModelFieldType::Number:
            widget = form->addReal(
                info, row.step_minimum, row.step_maximum, 2, (row.step_maximum - row.step_minimum) / 20,
                [get](const Scenario& s) { return numberOf(get(s)); }, [set](Scenario& s, double v) { set(s, v); });
            break;
        case ModelFieldType::Flag:
            widget = form->addFlag(
                info, [get](const Scenario& s) { const nlohmann::json v = get(s); return v.is_boolean() && v.get<bool>(); },
                [set](Scenario& s, bool v) { set(s, v); });
            break;
        case ModelFieldType::Text:
            widget = form->addText(
                info, [get](const Scenario& s) { const nlohmann::json v = get(s); return v.is_string() ? v.get<std::string>() : std::string(); },
                [set](Scenario& s, std::string v) { set(s, v); });
            break;
        case ModelFieldType::Choice: {
            const std::vector<FieldChoice> choices = choicesOf(row);
            const bool named = std::all_of(choices.begin(), choices.end(),
                                           [](const FieldChoice& c) { return c.name == c.label; });
            auto name = [get](const Scenario& s) { const nlohmann::json v = get(s); return v.is_string() ? v.get<std::string>() : std::string(); };
            if (named) {
                // A list, so that an unmodelled activation cannot be typed; a
                // name read from a file that is not in it is shown as it is.
                QStringList names;
                for (const FieldChoice& c : choices) names << text(c.name);
                widget = form->addNamedChoice(info, names, name, [set](Scenario& s, std::string v) { set(s, v); });
            } else {
                std::vector<std::pair<QString, int>> items;
                for (size_t i = 0; i < choices.size(); ++i) items.emplace_back(text(choices[i].label), static_cast<int>(i));
                widget = form->addChoice<int>(
                    info, items,
                    [name, choices](const Scenario& s) {
                        const std::string v = name(s);
                        for (size_t i = 0; i < choices.size(); ++i)
                            if (choices[i].name == v) return static_cast<int>(i);
                        return -1;
                    },
                    [set, choices](Scenario& s, int i) {
                        if (i >= 0 && i < static_cast<int>(choices.size())) set(s, std::string(choices[static_cast<size_t>(i)].name));
                    });
            }
            break;
        }
    }
    // Every spelling any family's errors use; the open model's family's own
    // spellings are bound again on top in refresh() (bindFamily).
    QStringList paths;
    for (const std::string& p : fieldPaths(row)) paths << QString::fromStdString(p);
    bindings_->bind(paths, widget);
    widgets_[static_cast<size_t>(row.field)] = widget;
    return widget;
}

void ModelPanel::bindFamily(const std::string& family) {
    // In table order, so that where two fields share the family's key the
    // later row wins: Mixtral's, gpt-oss's and Llama 4's intermediate_size is
    // the experts' width, not the dense FFN's.
    for (const ModelFieldRow& row : modelFields()) {
        QStringList paths;
        for (const std::string& p : familyFieldPaths(row, family)) paths << QString::fromStdString(p);
        bindings_->bind(paths, widgets_[static_cast<size_t>(row.field)]);
    }
    bound_family_ = family;
}

QWidget* ModelPanel::fieldWidget(ModelField field) const { return widgets_[static_cast<size_t>(field)]; }

ModelPanel::ModelPanel(ScenarioDocument* document, FieldBindings* bindings, QWidget* parent)
    : QGroupBox(tr("Model"), parent), document_(document), bindings_(bindings) {
    auto* column = new QVBoxLayout(this);
    column->setSpacing(6);

    parameters_ = new QLabel(this);
    parameters_->setWordWrap(true);
    parameters_->setToolTip(tr("Parameters of the whole model, counted exactly from the architecture below."));
    column->addWidget(parameters_);
    pattern_ = new LayerPatternStrip(this);
    column->addWidget(pattern_);

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

    // Every row of the model-field table (core/model/model_fields.h) gets
    // its widget: the dense model's in one form so labels align, then the
    // experts' and latent attention's, each in the box its toggle opens.
    shape_ = new FieldForm(document, bindings, this);
    body->addWidget(shape_);

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

    // A hybrid's mixers: the rows of each mixer its layers use.
    mixers_box_ = new QGroupBox(tr("Hybrid layers"), this);
    auto* mixers_layout = new QVBoxLayout(mixers_box_);
    mixers_ = new FieldForm(document, bindings, mixers_box_);
    mixers_layout->addWidget(mixers_);
    body->addWidget(mixers_box_);

    for (ModelSection section : {ModelSection::Identity, ModelSection::Sizes, ModelSection::Structure,
                                 ModelSection::Layers, ModelSection::Dropout, ModelSection::Experts,
                                 ModelSection::Latent, ModelSection::Mixers}) {
        FieldForm* form = section == ModelSection::Experts  ? moe_
                          : section == ModelSection::Latent ? mla_
                          : section == ModelSection::Mixers ? mixers_
                                                            : shape_;
        for (const ModelFieldRow& row : modelFields())
            if (row.section == section) addField(form, row);
    }

    bindings->bind({"model.moe"}, moe_toggle_);
    bindings->bind({"model.mla"}, mla_toggle_);
    connect(document_, &ScenarioDocument::changed, this, &ModelPanel::refresh);
    refresh();
}

void ModelPanel::setArchitectureShown(bool shown) { expander_->setChecked(shown); }
bool ModelPanel::architectureShown() const { return expander_->isChecked(); }

void ModelPanel::refresh() {
    const Scenario& s = document_->scenario();
    if (!bound_family_ || *bound_family_ != s.model.family) bindFamily(s.model.family);
    shape_->refresh();
    for (auto [toggle, on] : {std::pair{moe_toggle_, s.model.moe.has_value()}, std::pair{mla_toggle_, s.model.mla.has_value()}})
        if (toggle->isChecked() != on) {
            QSignalBlocker block(toggle);
            toggle->setChecked(on);
        }
    pattern_->setVisible(LayerPatternStrip::worthShowing(s.model));
    if (pattern_->isVisibleTo(this)) pattern_->setScenario(s);
    moe_box_->setVisible(s.model.moe.has_value());
    mla_box_->setVisible(s.model.mla.has_value());
    if (s.model.moe) moe_->refresh();
    if (s.model.mla) mla_->refresh();
    mixers_box_->setVisible(s.model.isHybrid());
    if (s.model.isHybrid()) {
        // A row whose mixer the model does not use reads null: hidden.
        for (const ModelFieldRow& row : modelFields())
            if (row.section == ModelSection::Mixers)
                mixers_->setRowVisible(widgets_[static_cast<size_t>(row.field)],
                                       row.field == ModelField::AttentionOutputGate || !row.get(s.model).is_null());
        mixers_->refresh();
    }

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
