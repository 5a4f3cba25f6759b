#include "ui/run_config_panel.h"

#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace trainmem::ui {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

// Amber over the palette's base: readable on light and dark alike.
QColor unknownBackground() { return QColor(255, 176, 0, 90); }

constexpr int kKeyRole = Qt::UserRole + 1;  // the entry's trainmem key

// `main`: the opened file, which the header names; its entries give only
// their line, a companion's its name too.
QTreeWidgetItem* entryItem(QTreeWidgetItem* parent, const runconfig::ReportEntry& e, const QString& main) {
    QString where = q(e.key);
    if (!e.file.empty()) {
        const QString file = QFileInfo(q(e.file)).fileName();
        const bool own = QFileInfo(q(e.file)).fileName() == main;
        if (own && e.line > 0) where += QStringLiteral("  :%1").arg(e.line);
        else if (!own) where += e.line > 0 ? QStringLiteral("  (%1:%2)").arg(file).arg(e.line) : QStringLiteral("  (%1)").arg(file);
    }
    QString trainmem = q(e.trainmem_key);
    if (!e.trainmem_value.empty()) trainmem += QStringLiteral(" = ") + q(e.trainmem_value);
    QString why = q(e.source);
    if (!e.note.empty()) why += (why.isEmpty() ? QString() : QStringLiteral("; ")) + q(e.note);
    auto* item = new QTreeWidgetItem(parent, {where, q(e.value), trainmem, why});
    item->setData(0, kKeyRole, q(e.trainmem_key));
    QString tip = QStringLiteral("<b>%1</b>").arg(q(e.key).toHtmlEscaped());
    if (!e.file.empty()) tip += QStringLiteral("<br>%1%2").arg(q(e.file).toHtmlEscaped(), e.line > 0 ? QStringLiteral(", line %1").arg(e.line) : QString());
    if (!trainmem.isEmpty()) tip += QStringLiteral("<br>trainmem: %1").arg(trainmem.toHtmlEscaped());
    if (!e.source.empty()) tip += QStringLiteral("<br>source: %1").arg(q(e.source).toHtmlEscaped());
    if (!e.note.empty()) tip += QStringLiteral("<br>%1").arg(q(e.note).toHtmlEscaped());
    for (int c = 0; c < 4; ++c) item->setToolTip(c, tip);
    return item;
}

}  // namespace

RunConfigPanel::RunConfigPanel(ScenarioDocument* document, QWidget* parent) : QWidget(parent), document_(document) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    header_ = new QLabel(tr("File > Open Run Config… reads a torchtitan, torchtune, axolotl, LLaMA-Factory, Accelerate, "
                            "DeepSpeed or Megatron-LM run config; its report shows here."),
                         this);
    header_->setWordWrap(true);
    header_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(header_);
    tree_ = new QTreeWidget(this);
    tree_->setColumnCount(4);
    tree_->setHeaderLabels({tr("Key  :line"), tr("Value"), tr("trainmem"), tr("Source or note")});
    tree_->setUniformRowHeights(true);
    tree_->setWordWrap(false);
    tree_->header()->setStretchLastSection(true);
    layout->addWidget(tree_, 1);
    connect(tree_, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* item) {
        const QString key = item->data(0, kKeyRole).toString();
        if (!key.isEmpty()) emit fieldRequested(key);
    });
    connect(tree_, &QTreeWidget::itemClicked, this, [this](QTreeWidgetItem* item) {
        const QString key = item->data(0, kKeyRole).toString();
        if (!key.isEmpty()) emit fieldRequested(key);
    });
    connect(document_, &ScenarioDocument::changed, this, &RunConfigPanel::refreshUnknowns);
}

void RunConfigPanel::showImport(const OpenedRunConfig& opened) {
    tree_->clear();
    unknowns_.clear();
    unknown_category_ = nullptr;
    const runconfig::RunConfigImport& r = opened.imported;
    const runconfig::RunConfigReport& report = r.report;
    header_->setText(tr("<b>%1</b> read as %2: %3 read, %4 defaulted, %5 unknown, %6 not representable, %7 ignored. "
                        "Click an entry to go to its field; Undo goes back to the scenario before.")
                         .arg(QFileInfo(opened.path).fileName().toHtmlEscaped(), q(r.format).toHtmlEscaped())
                         .arg(report.read.size())
                         .arg(report.defaults.size())
                         .arg(report.unknown.size())
                         .arg(report.not_representable.size())
                         .arg(report.ignored.size()));
    header_->setToolTip(opened.path);
    auto add = [&](const QString& title, const std::vector<runconfig::ReportEntry>& entries, bool expanded) {
        auto* category = new QTreeWidgetItem(tree_, {QStringLiteral("%1 (%2)").arg(title).arg(entries.size())});
        category->setData(0, Qt::UserRole, title);
        QFont bold = category->font(0);
        bold.setBold(true);
        category->setFont(0, bold);
        category->setFirstColumnSpanned(true);
        for (const auto& e : entries) entryItem(category, e, QFileInfo(opened.path).fileName());
        category->setExpanded(expanded);
        return category;
    };
    // What needs the user first: the unknowns, then what trainmem cannot count.
    unknown_category_ = add(tr("Unknown"), report.unknown, true);
    for (int i = 0; i < unknown_category_->childCount(); ++i) {
        QTreeWidgetItem* item = unknown_category_->child(i);
        const std::string key = item->data(0, kKeyRole).toString().toStdString();
        unknowns_.push_back({item, key, scenarioValue(r.scenario, key), false});
    }
    add(tr("Not representable"), report.not_representable, true);
    if (!opened.kept.empty()) {
        auto* kept = new QTreeWidgetItem(tree_, {tr("Kept from the open scenario (%1)").arg(opened.kept.size())});
        kept->setData(0, Qt::UserRole, tr("Kept from the open scenario"));
        QFont bold = kept->font(0);
        bold.setBold(true);
        kept->setFont(0, bold);
        kept->setFirstColumnSpanned(true);
        for (const KeptSetting& k : opened.kept) {
            auto* item = new QTreeWidgetItem(kept, {k.trainmem_key, k.value, k.trainmem_key, k.why});
            item->setData(0, kKeyRole, k.trainmem_key);
            for (int c = 0; c < 4; ++c) item->setToolTip(c, k.why);
        }
        kept->setExpanded(true);
    }
    add(tr("Read"), report.read, true);
    add(tr("Defaults"), report.defaults, true);
    add(tr("Ignored"), report.ignored, false);
    tree_->header()->resizeSections(QHeaderView::ResizeToContents);
    // The note column takes what is left; a very long key or value does not
    // push it off the panel.
    const int widest[3] = {300, 180, 260};
    for (int c = 0; c < 3; ++c) tree_->header()->resizeSection(c, std::min(tree_->header()->sectionSize(c), widest[c]));
    refreshUnknowns();
}

void RunConfigPanel::refreshUnknowns() {
    if (!unknown_category_) return;
    int open = 0;
    for (Unknown& u : unknowns_) {
        // Set once its value is not the one the import left: the user chose it.
        const bool set = !u.key.empty() && scenarioValue(document_->scenario(), u.key) != u.imported;
        u.set = set;
        for (int c = 0; c < 4; ++c) u.item->setBackground(c, set ? QBrush() : QBrush(unknownBackground()));
        QString text = QString::fromStdString(u.key);
        if (set) {
            const nlohmann::json now = scenarioValue(document_->scenario(), u.key);
            text += tr("  set: %1").arg(QString::fromStdString(u.key == "model" ? document_->scenario().model.name : now.dump()));
        } else {
            ++open;
        }
        u.item->setText(2, text);
    }
    unknown_category_->setText(0, open == 0 && !unknowns_.empty()
                                      ? tr("Unknown (%1, every one set since)").arg(unknowns_.size())
                                      : tr("Unknown (%1 to set)").arg(open));
}

QStringList RunConfigPanel::unsetUnknowns() const {
    QStringList keys;
    for (const Unknown& u : unknowns_)
        if (!u.set) keys << QString::fromStdString(u.key);
    return keys;
}

QTreeWidgetItem* RunConfigPanel::category(const QString& name) const {
    for (int i = 0; i < tree_->topLevelItemCount(); ++i)
        if (tree_->topLevelItem(i)->data(0, Qt::UserRole).toString() == name) return tree_->topLevelItem(i);
    return nullptr;
}

}  // namespace trainmem::ui
