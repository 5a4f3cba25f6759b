#pragma once
// Every preset (public models and named scenarios), searchable. A scenario
// preset replaces the whole scenario; a model preset replaces only the model
// and keeps the training, parallelism and hardware being explored.
#include <QGroupBox>

#include "ui/scenario_document.h"

class QLineEdit;
class QListWidget;
class QListWidgetItem;

namespace trainmem::ui {

class PresetPicker : public QGroupBox {
    Q_OBJECT
public:
    explicit PresetPicker(ScenarioDocument* document, QWidget* parent = nullptr);

    // Loads a preset by name; false (and `failed`) when it cannot.
    bool choose(const QString& name);
    void reload();  // re-reads the presets directory
    QListWidget* list() const { return list_; }
    void focusSearch();  // the search field, its text selected
    // The item drawn as loaded (bold): the scenario preset of the open
    // scenario, or the model preset of its model; nullptr when none.
    QListWidgetItem* loadedItem(bool scenario) const;

signals:
    void openConfigRequested();     // "Open config.json..." pressed
    void failed(const QString& message);

private:
    void filter(const QString& text);
    void markLoaded();

    ScenarioDocument* document_;
    QLineEdit* search_;
    QListWidget* list_;
};

}  // namespace trainmem::ui
