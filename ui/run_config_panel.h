#pragma once
// The report of an opened run config (File > Open Run Config…, or a drop):
// what was read, defaulted (with the stack's source), unknown, not
// representable and ignored, as trainmem-cli import prints it, and what the
// window kept of the open scenario. An unknown stays highlighted until its
// field is set; clicking an entry goes to the field it is about.
#include <vector>

#include <QWidget>

#include <nlohmann/json.hpp>

#include "ui/run_config_files.h"
#include "ui/scenario_document.h"

class QLabel;
class QTreeWidget;
class QTreeWidgetItem;

namespace trainmem::ui {

class RunConfigPanel : public QWidget {
    Q_OBJECT
public:
    explicit RunConfigPanel(ScenarioDocument* document, QWidget* parent = nullptr);

    // Shows the report of `opened`, whose scenario the document now holds.
    void showImport(const OpenedRunConfig& opened);
    QTreeWidget* tree() const { return tree_; }
    QLabel* header() const { return header_; }
    // The trainmem keys of the unknowns not set since the import.
    QStringList unsetUnknowns() const;
    // The category's item ("Read", "Defaults", "Unknown", "Not representable",
    // "Ignored", "Kept from the open scenario"), for tests.
    QTreeWidgetItem* category(const QString& name) const;

signals:
    // An entry about this trainmem key was clicked: the window shows its field.
    void fieldRequested(const QString& trainmem_key);

private:
    void refreshUnknowns();

    struct Unknown {
        QTreeWidgetItem* item;
        std::string key;
        nlohmann::json imported;  // the scenario's value when imported
        bool set = false;         // changed since: no longer highlighted
    };
    ScenarioDocument* document_;
    QLabel* header_;
    QTreeWidget* tree_;
    QTreeWidgetItem* unknown_category_ = nullptr;
    std::vector<Unknown> unknowns_;
};

}  // namespace trainmem::ui
