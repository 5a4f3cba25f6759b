#include "ui/preset_picker.h"

#include <QHBoxLayout>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

#include "core/scenario/presets.h"

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
    // About twelve rows (9 of 48 at 150 px cut the selection off); the
    // column scrolls past it on a small screen.
    list_->setMinimumHeight(12 * list_->fontMetrics().height() + 12);
    list_->setMaximumHeight(12 * list_->fontMetrics().height() + 12);
    list_->setToolTip(tr("Click (or Enter) to load: a scenario preset replaces everything; a model preset replaces only "
                         "the model. Edit > Undo brings back what was there."));
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
    // One click loads (Undo takes it back); Enter too. A double-click's second
    // activation loads the same preset again, which the document ignores.
    connect(list_, &QListWidget::itemClicked, this,
            [this](QListWidgetItem* item) { choose(item->data(Qt::UserRole).toString()); });
    connect(list_, &QListWidget::itemActivated, this,
            [this](QListWidgetItem* item) { choose(item->data(Qt::UserRole).toString()); });
    connect(document_, &ScenarioDocument::changed, this, &PresetPicker::markLoaded);
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
        item->setData(Qt::UserRole + 2, p.kind == PresetKind::Scenario);
        item->setToolTip(QString::fromStdString(p.description));
        // Searchable by what the model is, not only by what its name says:
        // "moe" finds DeepSeek and Qwen-MoE too, "mla" DeepSeek.
        QString traits;
        const Expected<ModelConfig> model = p.kind == PresetKind::Scenario
                                                ? [&]() -> Expected<ModelConfig> {
                                                      Expected<Scenario> s = loadPreset(p.name);
                                                      if (!s) return s.error();
                                                      return s->model;
                                                  }()
                                                : loadModelPreset(p.name);
        if (model && model->moe) traits += QStringLiteral(" moe mixture-of-experts experts");
        if (model && model->mla) traits += QStringLiteral(" mla latent");
        if (model) traits += " " + QString::fromStdString(model->name) + " " + QString::fromStdString(model->family);
        item->setData(Qt::UserRole + 1, (name + " " + QString::fromStdString(p.description) + " " + kind + traits).toLower());
    }
    filter(search_->text());
    markLoaded();
}

void PresetPicker::focusSearch() {
    search_->setFocus(Qt::ShortcutFocusReason);
    search_->selectAll();
}

void PresetPicker::markLoaded() {
    const Scenario& s = document_->scenario();
    for (int i = 0; i < list_->count(); ++i) {
        QListWidgetItem* item = list_->item(i);
        const std::string name = item->data(Qt::UserRole).toString().toStdString();
        const bool scenario = item->data(Qt::UserRole + 2).toBool();
        // The scenario preset the open scenario is named after, or the model
        // preset its model still is (editing the model clears model_preset).
        const bool loaded = scenario ? (!name.empty() && s.name == name && document_->path().isEmpty())
                                     : (!s.model_preset.empty() && s.model_preset == name);
        QFont f = item->font();
        if (f.bold() != loaded) {
            f.setBold(loaded);
            item->setFont(f);
        }
        if (loaded && scenario) {
            const QSignalBlocker block(list_);
            list_->setCurrentItem(item);
            list_->scrollToItem(item, QAbstractItemView::PositionAtCenter);  // never cut off at the edge
        }
    }
}

QListWidgetItem* PresetPicker::loadedItem(bool scenario) const {
    for (int i = 0; i < list_->count(); ++i)
        if (list_->item(i)->font().bold() && list_->item(i)->data(Qt::UserRole + 2).toBool() == scenario) return list_->item(i);
    return nullptr;
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
            document_->load(*s, tr("Load preset %1").arg(name));
            return true;
        }
        Expected<ModelConfig> m = loadModelPreset(key);
        if (!m) {
            emit failed(QString::fromStdString(m.error().text()));
            return false;
        }
        document_->edit(
            [&](Scenario& s) {
                s.model = *m;
                s.model_preset = key;
                s.warnings.clear();
            },
            tr("Load model %1").arg(name));
        return true;
    }
    emit failed(tr("No preset named \"%1\"").arg(name));
    return false;
}

}  // namespace trainmem::ui
