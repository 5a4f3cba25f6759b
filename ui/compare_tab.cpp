#include "ui/compare_tab.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLineEdit>
#include <QMenu>
#include <QLabel>
#include <QPushButton>
#include <QScrollBar>
#include <QSplitter>
#include <QTableWidget>
#include <QUndoCommand>
#include <QVBoxLayout>

#include <cmath>
#include <limits>

#include "ui/memory_chart.h"

namespace trainmem::ui {

// One undoable change of the pins: the whole list before and after (six pins
// at most, so a copy is small next to what it saves the user).
class PinsStep : public QUndoCommand {
public:
    PinsStep(CompareTab* tab, std::vector<PinnedScenario> before, std::vector<PinnedScenario> after, const QString& what)
        : QUndoCommand(what), tab_(tab), before_(std::move(before)), after_(std::move(after)) {}
    void redo() override { tab_->showPins(after_); }
    void undo() override { tab_->showPins(before_); }

private:
    CompareTab* tab_;
    std::vector<PinnedScenario> before_, after_;
};

CompareTab::CompareTab(ScenarioDocument* document, QWidget* parent) : ChartTab(document, parent) {
    auto* row = new QHBoxLayout();
    pin_ = new QPushButton(tr("Pin current"), this);
    pin_->setToolTip(tr("Add the current scenario as a column (up to %1). Then change anything and pin again.").arg(kMaxPins));
    remove_ = new QPushButton(tr("Remove last"), this);
    clear_ = new QPushButton(tr("Clear"), this);
    row->addWidget(pin_);
    row->addWidget(remove_);
    row->addWidget(clear_);
    row->addStretch();
    auto* baseline_label = new QLabel(tr("Changes against"), this);
    baseline_ = new QComboBox(this);
    baseline_->setToolTip(tr("The pin every other column's change (absolute and %) in the table is measured against."));
    baseline_label->setBuddy(baseline_);
    row->addWidget(baseline_label);
    row->addWidget(baseline_);
    column()->addLayout(row);

    table_ = new QTableWidget(this);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    // Compact rows, and the names' column takes what the pins' columns leave
    // (elided, full text in the tooltip): at 1000 x 700 a horizontal scroll
    // bar or a taller row cost the table its last rows.
    table_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    table_->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 3);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setStretchLastSection(false);
    // A long pin name ("llama3.1-8b with selective recompute") took half the
    // width at 1000 x 700: a column is at most 16 characters of the name
    // wider than its numbers, the name elided, whole in the tooltip.
    table_->horizontalHeader()->setMaximumSectionSize(fontMetrics().horizontalAdvance(QStringLiteral("0123456789ABCDEF  (+00.00, +000%)")));
    table_->horizontalHeader()->setTextElideMode(Qt::ElideRight);
    table_->setTextElideMode(Qt::ElideRight);
    table_->setWordWrap(false);
    table_->setMinimumHeight(70);
    table_->setToolTip(tr("Settings that differ between the pins, then each component of the heaviest GPU per pin, "
                          "with its change against the chosen pin."));
    table_->setVisible(false);
    // Chart over table in a splitter: the table starts small (the captions
    // already name what differs) and can be pulled up to read every row.
    split_ = new QSplitter(Qt::Vertical, this);
    auto* split = split_;
    split->setChildrenCollapsible(false);
    layout()->replaceWidget(chart(), split);
    split->addWidget(chart());
    split->addWidget(table_);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 0);
    split->setSizes({600, 90});
    table_->setMaximumHeight(QWIDGETSIZE_MAX);
    chart()->setMinimumHeight(200);

    connect(pin_, &QPushButton::clicked, this, &CompareTab::pin);
    connect(remove_, &QPushButton::clicked, this, &CompareTab::removeLast);
    connect(clear_, &QPushButton::clicked, this, &CompareTab::clear);
    connect(baseline_, &QComboBox::currentIndexChanged, this, &CompareTab::fillTable);
    // A pin's column header: rename, move, remove.
    table_->horizontalHeader()->setContextMenuPolicy(Qt::CustomContextMenu);
    table_->horizontalHeader()->setToolTip(tr("Right-click a pin to rename, move or remove it."));
    connect(table_->horizontalHeader(), &QWidget::customContextMenuRequested, this, [this](const QPoint& at) {
        const int i = table_->horizontalHeader()->logicalIndexAt(at);
        if (i < 0 || i >= static_cast<int>(pins_.size())) return;
        QMenu menu(this);
        menu.addAction(tr("Rename %1…").arg(pins_[static_cast<size_t>(i)].label), this, [this, i] {
            bool ok = false;
            const QString name = QInputDialog::getText(this, tr("Rename pin"), tr("Name:"), QLineEdit::Normal,
                                                       pins_[static_cast<size_t>(i)].label, &ok);
            if (ok) renamePin(i, name);
        });
        menu.addAction(tr("Move left"), this, [this, i] { movePin(i, i - 1); })->setEnabled(i > 0);
        menu.addAction(tr("Move right"), this, [this, i] { movePin(i, i + 1); })->setEnabled(i + 1 < static_cast<int>(pins_.size()));
        menu.addAction(tr("Remove %1").arg(pins_[static_cast<size_t>(i)].label), this, [this, i] { removePin(i); });
        menu.exec(table_->horizontalHeader()->mapToGlobal(at));
    });
    connect(document_, &ScenarioDocument::changed, this, &CompareTab::updateControls);
    updateControls();
}

bool CompareTab::pin() {
    if (!document_->hasResult() || document_->stale() || static_cast<int>(pins_.size()) >= kMaxPins) return false;
    // The first letter no pin is called (pins may have been removed or renamed).
    QString label;
    for (QChar c = 'A'; c <= 'Z' && label.isEmpty(); c = QChar(c.unicode() + 1))
        if (std::none_of(pins_.begin(), pins_.end(), [&](const PinnedScenario& p) { return p.label == QString(c); })) label = c;
    std::vector<PinnedScenario> after = pins_;
    after.push_back({label, document_->resultScenario(), document_->result()});
    changePins(std::move(after), tr("Pin %1").arg(label));
    return true;
}

void CompareTab::removeLast() {
    if (pins_.empty()) return;
    removePin(static_cast<int>(pins_.size()) - 1);
}

bool CompareTab::removePin(int index) {
    if (index < 0 || index >= static_cast<int>(pins_.size())) return false;
    std::vector<PinnedScenario> after = pins_;
    after.erase(after.begin() + index);
    changePins(std::move(after), tr("Remove pin %1").arg(pins_[static_cast<size_t>(index)].label));
    return true;
}

bool CompareTab::renamePin(int index, const QString& label) {
    const QString name = label.simplified();
    if (index < 0 || index >= static_cast<int>(pins_.size()) || name.isEmpty()) return false;
    for (int i = 0; i < static_cast<int>(pins_.size()); ++i)
        if (i != index && pins_[static_cast<size_t>(i)].label == name) return false;
    if (pins_[static_cast<size_t>(index)].label == name) return true;
    std::vector<PinnedScenario> after = pins_;
    after[static_cast<size_t>(index)].label = name;
    changePins(std::move(after), tr("Rename pin %1 to %2").arg(pins_[static_cast<size_t>(index)].label, name));
    return true;
}

bool CompareTab::movePin(int index, int to) {
    const int n = static_cast<int>(pins_.size());
    if (index < 0 || index >= n || to < 0 || to >= n || to == index) return false;
    std::vector<PinnedScenario> after = pins_;
    PinnedScenario moved = after[static_cast<size_t>(index)];
    after.erase(after.begin() + index);
    after.insert(after.begin() + to, moved);
    changePins(std::move(after), to < index ? tr("Move pin %1 left").arg(moved.label) : tr("Move pin %1 right").arg(moved.label));
    return true;
}

void CompareTab::changePins(std::vector<PinnedScenario> after, const QString& what) {
    document_->undoStack()->push(new PinsStep(this, pins_, std::move(after), what));  // push() runs redo()
}

void CompareTab::changePinsTo(std::vector<PinnedScenario> pins, const QString& what) {
    if (static_cast<int>(pins.size()) > kMaxPins) pins.resize(kMaxPins);
    if (samePins(pins_, pins)) return;
    changePins(std::move(pins), what);
}

bool CompareTab::samePins(const std::vector<PinnedScenario>& a, const std::vector<PinnedScenario>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const PinnedScenario& x, const PinnedScenario& y) {
        return x.label == y.label && x.scenario == y.scenario;
    });
}

void CompareTab::showPins(const std::vector<PinnedScenario>& pins) {
    pins_ = pins;
    pinsChanged();
}

void CompareTab::fitTable() {
    // Every row of the table in view while the plot keeps the height its
    // bars and captions need (305 px, 370 with five or six pins, whose
    // captions stagger onto more lines, more for captions of several
    // lines); past that the table scrolls.
    if (table_->isHidden() || table_->rowCount() == 0) return;
    const int total = split_->height() - split_->handleWidth();
    if (total <= 0) return;
    int wanted = table_->horizontalHeader()->height() + 2 * table_->frameWidth() + 2;
    for (int r = 0; r < table_->rowCount(); ++r) wanted += table_->rowHeight(r);
    // Room for a sideways scroll bar too: whether one shows is known only
    // after this layout, and without the room it would hide the last row.
    wanted += table_->horizontalScrollBar()->sizeHint().height();
    // Captions naming several settings take a line each (and wrap).
    int caption_lines = 1;
    for (const QString& c : chart()->spec().categories) caption_lines = std::max(caption_lines, static_cast<int>(c.count('\n')) + 1);
    const int chart_min = std::max(pins_.size() > 4 ? 370 : 305, 220 + 45 * caption_lines);
    const int table = std::max(std::min(wanted, total - chart_min), std::min(wanted, 90));
    split_->setSizes({total - table, table});
}

void CompareTab::resizeEvent(QResizeEvent* event) {
    ChartTab::resizeEvent(event);
    fitTable();
}

void CompareTab::showEvent(QShowEvent* event) {
    ChartTab::showEvent(event);
    fitTable();
}

void CompareTab::clear() {
    if (pins_.empty()) return;
    changePins({}, tr("Clear pins"));
}

void CompareTab::setPins(std::vector<PinnedScenario> pins) {
    if (static_cast<int>(pins.size()) > kMaxPins) pins.resize(kMaxPins);
    pins_ = std::move(pins);
    pinsChanged();
}

void CompareTab::updateControls() {
    const bool can_pin = document_->hasResult() && !document_->stale() && static_cast<int>(pins_.size()) < kMaxPins;
    pin_->setEnabled(can_pin);
    remove_->setEnabled(!pins_.empty());
    clear_->setEnabled(!pins_.empty());
    baseline_->setEnabled(pins_.size() > 1);
}

void CompareTab::pinsChanged() {
    updateControls();
    redrawSoon();
    {
        const int chosen = baseline_->currentIndex();
        const QSignalBlocker block(baseline_);
        baseline_->clear();
        for (const auto& p : pins_) baseline_->addItem(p.label);
        baseline_->setCurrentIndex(chosen >= 0 && chosen < baseline_->count() ? chosen : 0);
    }
    fillTable();
}

void CompareTab::unitsChanged() { fillTable(); }

void CompareTab::fillTable() {
    table_->setVisible(pins_.size() > 1);
    if (pins_.size() < 2) {
        table_->clear();
        table_->setRowCount(0);
        table_->setColumnCount(0);
        return;
    }
    FigureTable rows = comparisonTable(pins_, baseline_->currentIndex(), units());
    rows.rows.erase(std::remove_if(rows.rows.begin(), rows.rows.end(), [](const FigureTableRow& r) { return r.off_screen; }),
                    rows.rows.end());
    const int n = static_cast<int>(rows.columns.size());
    table_->clear();
    table_->setColumnCount(n);
    table_->setRowCount(static_cast<int>(rows.rows.size()));
    for (int i = 0; i < n; ++i) {
        auto* header = new QTableWidgetItem(rows.columns[i]);
        header->setToolTip(rows.columns[i]);
        table_->setHorizontalHeaderItem(i, header);
    }
    QFont bold = table_->font();
    bold.setBold(true);
    for (int r = 0; r < rows.rows.size(); ++r) {
        const FigureTableRow& row = rows.rows[r];
        const bool sizes = !std::isnan(row.numbers.value(0, std::numeric_limits<double>::quiet_NaN()));
        auto* head = new QTableWidgetItem(sizes ? QStringLiteral("%1 (%2)").arg(row.name, unitName(units())) : row.name);
        head->setToolTip(row.name);
        if (row.swatch.isValid()) {
            QPixmap swatch(10, 10);
            swatch.fill(row.swatch);
            head->setIcon(QIcon(swatch));
        }
        if (row.bold) head->setFont(bold);
        table_->setVerticalHeaderItem(r, head);
        for (int i = 0; i < n; ++i) {
            auto* item = new QTableWidgetItem(row.cells.value(i));
            const double v = row.numbers.value(i, std::numeric_limits<double>::quiet_NaN());
            if (std::isnan(v)) {
                item->setTextAlignment(Qt::AlignCenter);
            } else {
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
                item->setData(Qt::UserRole, v);  // bytes, for tests and sorting
            }
            if (row.bold || row.emphasised.value(i)) item->setFont(bold);
            table_->setItem(r, i, item);
        }
    }
    fitTable();
}

ChartSpec CompareTab::buildSpec() const {
    ChartSpec spec = compareChart(pins_, units());
    // On screen the table under the chart names every component with its
    // colour: a legend would only take the plot's height.
    if (pins_.size() > 1) spec.legend = false;
    return spec;
}

// The figure says on its own what each bar is: the table of settings and
// changes goes under its plot (issue 27: an export without it could not be read).
ChartSpec CompareTab::figureSpec() { return compareChart(pins_, units(), baseline_->currentIndex(), true); }

FigureTable CompareTab::comparison() const { return comparisonTable(pins_, baseline_->currentIndex(), units()); }

}  // namespace trainmem::ui
