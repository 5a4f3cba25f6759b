#include "ui/preset_picker.h"

#include <QHBoxLayout>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

#include "core/presets.h"

namespace trainmem::ui {

PresetPicker::PresetPicker(ScenarioDocument* document, QWidget* parent)
    : QGroupBox(tr("Preset"), parent), document_(document) {
    auto* column = new QVBoxLayout(this);
    search_ = new QLineEdit(this);
    search_->setPlaceholderText(tr("Search presets (llama, moe, 405b, …)"));
    search_->setClearButtonEnabled(true);
    search_->setToolTip(tr("Filters by name and description. Enter loads the first match."));
    column->addWidget(search_);
    list_ = new QListWidget(this);
    list_->setMaximumHeight(150);
    list_->setToolTip(tr("Double-click or Enter: a scenario preset replaces everything; "
                         "a model preset replaces only the model."));
    column->addWidget(list_);
    auto* buttons = new QHBoxLayout();
    auto* open = new QPushButton(tr("Open config.json…"), this);
    open->setToolTip(tr("Load any Hugging Face model's config.json as the model (keeps training and parallelism)."));
    buttons->addWidget(open);
    buttons->addStretch();
    column->addLayout(buttons);

    connect(search_, &QLineEdit::textChanged, this, &PresetPicker::filter);
    connect(search_, &QLineEdit::returnPressed, this, [this] {
        for (int i = 0; i < list_->count(); ++i)
            if (!list_->item(i)->isHidden()) {
                choose(list_->item(i)->data(Qt::UserRole).toString());
                return;
            }
    });
    connect(list_, &QListWidget::itemActivated, this,
            [this](QListWidgetItem* item) { choose(item->data(Qt::UserRole).toString()); });
    connect(open, &QPushButton::clicked, this, &PresetPicker::openConfigRequested);
    reload();
}

void PresetPicker::reload() {
    list_->clear();
    for (const PresetInfo& p : listPresets()) {
        const QString name = QString::fromStdString(p.name);
        const QString kind = p.kind == PresetKind::Scenario ? tr("scenario") : tr("model");
        auto* item = new QListWidgetItem(QStringLiteral("%1   · %2").arg(name, kind), list_);
        item->setData(Qt::UserRole, name);
        item->setToolTip(QString::fromStdString(p.description));
        item->setData(Qt::UserRole + 1, (name + " " + QString::fromStdString(p.description) + " " + kind).toLower());
    }
    filter(search_->text());
}

void PresetPicker::filter(const QString& text) {
    const QStringList words = text.toLower().split(' ', Qt::SkipEmptyParts);
    for (int i = 0; i < list_->count(); ++i) {
        QListWidgetItem* item = list_->item(i);
        const QString hay = item->data(Qt::UserRole + 1).toString();
        item->setHidden(!std::all_of(words.begin(), words.end(), [&](const QString& w) { return hay.contains(w); }));
    }
}

bool PresetPicker::choose(const QString& name) {
    const std::string key = name.toStdString();
    for (const PresetInfo& p : listPresets()) {
        if (p.name != key) continue;
        if (p.kind == PresetKind::Scenario) {
            Expected<Scenario> s = loadPreset(key);
            if (!s) {
                emit failed(QString::fromStdString(s.error().text()));
                return false;
            }
            document_->replace(*s);
            return true;
        }
        Expected<ModelConfig> m = loadModelPreset(key);
        if (!m) {
            emit failed(QString::fromStdString(m.error().text()));
            return false;
        }
        document_->edit([&](Scenario& s) {
            s.model = *m;
            s.model_preset = key;
            s.warnings.clear();
        });
        return true;
    }
    emit failed(tr("No preset named \"%1\"").arg(name));
    return false;
}

}  // namespace trainmem::ui
