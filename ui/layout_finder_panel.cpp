#include "ui/layout_finder_panel.h"

#include <cmath>

#include <chrono>
#include <vector>

#include <QApplication>
#include <QCheckBox>
#include <QLocale>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTableWidget>
#include <QThread>
#include <QTimer>
#include <QVBoxLayout>

#include "core/scenario/batch.h"
#include "core/training/hardware.h"
#include "ui/shaped_text_delegate.h"
#include "core/scenario/scenario_file.h"

namespace trainmem::ui {

namespace {

constexpr double kGiBd = 1024.0 * 1024.0 * 1024.0;
const QString& kCustom = GpuChoice::kCustom;

QString q(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

// The columns that describe a layout, shared by both tables.
const QStringList kLayoutColumns = {QObject::tr("DP"), QObject::tr("TP"), QObject::tr("PP"), QObject::tr("CP"),
                                    QObject::tr("EP"), QObject::tr("ZeRO"), QObject::tr("SP"), QObject::tr("schedule"),
                                    QObject::tr("micro-batch"), QObject::tr("checkpointing")};

QString scheduleText(const Layout& l) {
    if (l.pipeline == 1) return QStringLiteral("–");
    QString text = q(scheduleName(l.schedule));
    if (l.schedule == PipelineSchedule::Interleaved1F1B) text += QStringLiteral(" v%1").arg(l.virtual_stages);
    return text;
}

QStringList layoutCells(const Layout& l) {
    return {QString::number(l.data),
            QString::number(l.tensor),
            QString::number(l.pipeline),
            QString::number(l.context),
            QString::number(l.expert),
            QString::number(l.zero_stage),
            l.sequence_parallel ? QObject::tr("yes") : QStringLiteral("–"),
            scheduleText(l),
            // size × micro-batches per step, as trainmem-cli fit writes it
            QStringLiteral("%1 × %2").arg(l.micro_batch_size).arg(l.microbatches),
            q(checkpointingName(l.checkpointing))};
}

QTableWidget* makeTable(const QStringList& columns, QWidget* parent) {
    auto* t = new QTableWidget(0, static_cast<int>(columns.size()), parent);
    t->setHorizontalHeaderLabels(columns);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->setSelectionMode(QAbstractItemView::SingleSelection);
    t->verticalHeader()->setVisible(false);
    t->verticalHeader()->setDefaultSectionSize(t->fontMetrics().height() + 6);
    // Sized to their contents by fillTable, once per update (the header's
    // ResizeToContents sized them again on a later turn, repainting the table).
    t->horizontalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    t->horizontalHeader()->setStretchLastSection(true);
    t->horizontalHeader()->resizeSections(QHeaderView::ResizeToContents);  // the labels, until rows come
    t->setAlternatingRowColors(true);
    t->setWordWrap(false);
    // Both tables repaint at every edit: their cells' texts are shaped once.
    t->setItemDelegate(new ShapedTextDelegate(t));
    return t;
}

// The table's rows, written over the items it has (a cell whose text is
// unchanged is not touched), its columns sized to their contents once, and
// each cell repainted once. Measured in bench/ui_layout_finder_bench.cpp
// (docs/performance.md, "Live search in the app"):
// - the header sized the columns to their contents as each cell was set,
//   measuring every cell of the column again: ~170 ms per update;
// - each cell set asked the view to repaint it on the next turn of the event
//   loop, and QTableView repainted the whole table again a turn later when
//   the new column widths arrived (it applies them on a zero timer): every
//   changed cell was painted twice. The model is now quiet while the cells
//   are set and the header while the columns are sized; then either the
//   table is laid out and repainted once (a width changed: everything moved)
//   or only the changed cells are repainted.
void fillTable(QTableWidget* t, const std::vector<QStringList>& rows) {
    QHeaderView* header = t->horizontalHeader();
    const bool rows_changed = t->rowCount() != static_cast<int>(rows.size());  // a removed row may have been the widest
    t->setRowCount(static_cast<int>(rows.size()));
    // Quantities right-aligned, words left, as in the breakdown table.
    static const QRegularExpression quantity(QStringLiteral("^-?[\\d.,]+( × \\d+| GiB| GB|%)?$"));
    std::vector<QTableWidgetItem*> changed;
    {
        const QSignalBlocker quiet(t->model());
        for (size_t r = 0; r < rows.size(); ++r) {
            const QStringList& cells = rows[r];
            for (int c = 0; c < cells.size(); ++c) {
                QTableWidgetItem* item = t->item(static_cast<int>(r), c);
                if (item && item->text() == cells[c]) continue;
                const Qt::Alignment align =
                    (quantity.match(cells[c]).hasMatch() ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter;
                if (!item) {
                    item = new QTableWidgetItem(cells[c]);
                    item->setTextAlignment(align);
                    t->setItem(static_cast<int>(r), c, item);
                } else {
                    item->setText(cells[c]);
                    if (item->textAlignment() != static_cast<int>(align)) item->setTextAlignment(align);
                }
                changed.push_back(item);
            }
        }
    }
    if (changed.empty() && !rows_changed) return;
    const int columns = t->columnCount();
    std::vector<int> widths(static_cast<size_t>(columns));
    for (int c = 0; c < columns; ++c) widths[static_cast<size_t>(c)] = header->sectionSize(c);
    {
        // The header's own mode is Fixed (makeTable): sized here, now, not on
        // a later turn; and QTableView is not told column by column (it would
        // repaint on a zero timer, after the changed cells' repaint).
        const QSignalBlocker quiet(header);
        header->resizeSections(QHeaderView::ResizeToContents);
    }
    bool resized = false;
    for (int c = 0; c < columns && !resized; ++c) resized = header->sectionSize(c) != widths[static_cast<size_t>(c)];
    if (resized) {
        t->doItemsLayout();  // what QTableView does after a column resize: scroll bars, the whole viewport repainted
        return;
    }
    for (QTableWidgetItem* item : changed) t->viewport()->update(t->visualItemRect(item));
}

}  // namespace

struct LayoutFinderPanel::Outcome {
    Scenario base;
    LayoutSearchOptions options;
    int64_t generation = 0;
    std::optional<LayoutSearchResult> result;
    std::optional<Error> error;
    double milliseconds = 0;
    bool other_batch = false;  // the user allowed layouts that train another global batch
};

LayoutFinderPanel::LayoutFinderPanel(ScenarioDocument* document, QWidget* parent) : QWidget(parent), document_(document) {
    auto* column = new QVBoxLayout(this);
    // One row of options over the tables: the tables want the width.
    auto* form = new QHBoxLayout();
    auto labelled = [&](const QString& label, QWidget* field) {
        auto* l = new QLabel(label, this);
        l->setBuddy(field);
        form->addWidget(l);
        form->addWidget(field);
        form->addSpacing(10);
    };
    gpus_ = new QSpinBox(this);
    gpus_->setRange(1, 1'000'000);
    gpus_->setToolTip(tr("GPUs to spread the run over: data × tensor × pipeline × context."));
    labelled(tr("&GPUs"), gpus_);
    gpu_ = new GpuChoice(false, this);
    gpu_->setToolTip(tr("The GPU every layout must fit into."));
    labelled(tr("GP&U"), gpu_);
    // The global batch is a training decision, not a memory one: by default
    // every layout trains the scenario's, and another is listed only when asked.
    other_batch_ = new QCheckBox(tr("Allow another global &batch:"), this);
    other_batch_->setToolTip(tr("Off: every layout trains the scenario's global batch (sequences per optimizer step), "
                                "and layouts that cannot divide it are skipped. On: the global batch set here, or "
                                "\"keep accumulation\" to keep the scenario's accumulation steps (each layout then "
                                "trains its own global batch)."));
    form->addWidget(other_batch_);
    global_batch_ = new QSpinBox(this);
    global_batch_->setRange(0, 100'000'000);
    global_batch_->setSpecialValueText(tr("keep accumulation"));
    global_batch_->setToolTip(other_batch_->toolTip());
    global_batch_->setEnabled(false);
    form->addWidget(global_batch_);
    form->addSpacing(10);
    connect(other_batch_, &QCheckBox::toggled, this, [this](bool on) {
        global_batch_->setEnabled(on);
        if (!on) global_batch_->setValue(static_cast<int>(std::min<int64_t>(scenarioBatch(), global_batch_->maximum())));
    });
    top_ = new QSpinBox(this);
    top_->setRange(1, 500);
    top_->setValue(20);
    top_->setToolTip(tr("How many fitting layouts to list, best first."));
    labelled(tr("&Top"), top_);
    apply_ = new QPushButton(tr("Apply selected layout"), this);
    apply_->setEnabled(false);
    apply_->setToolTip(tr("Write this layout's settings into the scenario (double-click a row does the same)."));
    form->addWidget(apply_);
    form->addStretch();
    column->addLayout(form);

    largest_ = new QLabel(this);
    largest_->setWordWrap(true);
    column->addWidget(largest_);
    summary_ = new QLabel(this);
    summary_->setWordWrap(true);
    column->addWidget(summary_);

    QStringList ranked_columns{tr("#")};
    ranked_columns << kLayoutColumns << tr("peak") << tr("headroom") << tr("recompute") << tr("step")
                   << tr("tokens/s/GPU") << tr("MFU") << tr("slow because");
    table_ = makeTable(ranked_columns, this);
    table_->setToolTip(tr("Searched again at every change. Ranked by least recomputation, then the larger "
                          "micro-batch, then headroom, then fewer pipeline stages, then less tensor parallelism "
                          "(docs/layout-search.md)."));
    column->addWidget(table_, 3);
    column->addWidget(new QLabel(tr("Closest layouts that do not fit:"), this));
    QStringList rejected_columns = kLayoutColumns;
    rejected_columns << tr("peak") << tr("why");
    rejected_table_ = makeTable(rejected_columns, this);
    rejected_table_->setSelectionMode(QAbstractItemView::NoSelection);
    column->addWidget(rejected_table_, 1);
    status_ = new QLabel(this);
    status_->setWordWrap(true);
    column->addWidget(status_);

    connect(apply_, &QPushButton::clicked, this, [this] { apply(table_->currentRow()); });
    connect(table_, &QTableWidget::cellDoubleClicked, this, [this](int row, int) { apply(row); });
    connect(table_, &QTableWidget::itemSelectionChanged, this,
            [this] { apply_->setEnabled(last_ && last_->result && !table_->selectedItems().isEmpty()); });
    connect(document_, &ScenarioDocument::replaced, this, &LayoutFinderPanel::takeScenarioDefaults);
    connect(document_, &ScenarioDocument::changed, this, [this] {
        if (!other_batch_->isChecked())
            global_batch_->setValue(static_cast<int>(std::min<int64_t>(scenarioBatch(), global_batch_->maximum())));
        if (!isVisible()) {
            search_due_ = true;  // searched when shown
            return;
        }
        // An edit's search starts now, not on the next turn: the worker then
        // runs beside the rest of the edit's work on this thread (the label
        // below, its relayout, whatever else the window redraws), which
        // comes before a posted call (issue 14: the table a frame after an edit).
        searchIfChanged();
        refreshLargest();
    });
    connect(document_, &ScenarioDocument::replaced, this, &LayoutFinderPanel::scheduleSearch);
    connect(gpus_, &QSpinBox::valueChanged, this, &LayoutFinderPanel::scheduleSearch);
    connect(gpu_, &QComboBox::currentIndexChanged, this, &LayoutFinderPanel::scheduleSearch);
    connect(other_batch_, &QCheckBox::toggled, this, &LayoutFinderPanel::scheduleSearch);
    connect(global_batch_, &QSpinBox::valueChanged, this, &LayoutFinderPanel::scheduleSearch);
    connect(top_, &QSpinBox::valueChanged, this, &LayoutFinderPanel::scheduleSearch);
    takeScenarioDefaults();
}

LayoutFinderPanel::~LayoutFinderPanel() {
    if (worker_) {
        worker_->disconnect(this);
        ++*generation_;  // the running search stops at its next poll
        worker_->wait();
    }
}

void LayoutFinderPanel::takeScenarioDefaults() {
    const Scenario& s = document_->scenario();
    gpus_->setValue(static_cast<int>(std::min<int64_t>(s.parallelism.totalGpus(), gpus_->maximum())));
    const int custom = gpu_->findData(kCustom);
    if (s.hardware.gpu == kCustom.toStdString()) {
        const QString label = tr("custom (%1 GiB)").arg(s.hardware.memory_bytes.value_or(0) / kGiBd, 0, 'f', 1);
        if (custom < 0)
            gpu_->addItem(label, kCustom);
        else
            gpu_->setItemText(custom, label);
    } else if (custom >= 0) {
        gpu_->removeItem(custom);
    }
    const int index = gpu_->findData(QString::fromStdString(s.hardware.gpu));
    if (index >= 0) gpu_->setCurrentIndex(index);
    other_batch_->setChecked(false);
    global_batch_->setValue(static_cast<int>(std::min<int64_t>(scenarioBatch(), global_batch_->maximum())));
    refreshLargest();
}

int64_t LayoutFinderPanel::scenarioBatch() const { return planBatch(document_->scenario()).effective_batch; }

void LayoutFinderPanel::setUnits(Units units) {
    if (units_ == units) return;
    units_ = units;
    gpu_->setUnits(units);
    refreshLargest();
    if (last_ && last_->result) showResult();
}

std::shared_ptr<LayoutFinderPanel::Outcome> LayoutFinderPanel::outcomeForForm() const {
    auto outcome = std::make_shared<Outcome>();
    outcome->base = document_->scenario();
    const std::string gpu = gpu_->currentData().toString().toStdString();
    outcome->base.hardware.gpu = gpu;
    if (gpu != kCustom.toStdString()) outcome->base.hardware.memory_bytes.reset();
    outcome->options.gpus = gpus_->value();
    outcome->other_batch = other_batch_->isChecked();
    if (!outcome->other_batch)
        outcome->options.global_batch = scenarioBatch();
    else if (global_batch_->value() > 0)
        outcome->options.global_batch = global_batch_->value();
    outcome->options.top = top_->value();
    outcome->options.rejected = 5;
    // The edit that starts this search prepared the same model, recipe and
    // GPU already: the search reuses it unless the panel names another GPU.
    if (!document_->stale() && outcome->base.hardware == document_->scenario().hardware)
        outcome->options.prepared = document_->prepared();
    return outcome;
}

namespace {
bool sameSearch(const Scenario& a, const LayoutSearchOptions& x, const Scenario& b, const LayoutSearchOptions& y) {
    return a == b && x.gpus == y.gpus && x.global_batch == y.global_batch && x.top == y.top && x.rejected == y.rejected &&
           x.max_micro_batch == y.max_micro_batch;
}
}  // namespace

void LayoutFinderPanel::scheduleSearch() {
    if (!isVisible()) {
        search_due_ = true;  // searched when shown
        return;
    }
    if (search_scheduled_) return;
    search_scheduled_ = true;
    QTimer::singleShot(0, this, [this] {
        search_scheduled_ = false;
        searchIfChanged();
    });
}

void LayoutFinderPanel::searchIfChanged() {
    if (document_->stale()) {
        showStatus(tr("Fix the marked field first: %1").arg(QString::fromStdString(document_->error()->text())), true);
        return;
    }
    const std::shared_ptr<Outcome> wanted = outcomeForForm();
    // Nothing changed that the search reads (an edit of a name, say), or
    // this search is already under way.
    const std::shared_ptr<Outcome>& current = pending_ ? pending_ : running_ ? running_ : last_;
    if (current && sameSearch(current->base, current->options, wanted->base, wanted->options)) return;
    startSearch(wanted);
}

bool LayoutFinderPanel::search() {
    if (document_->stale()) {
        showStatus(tr("Fix the marked field first: %1").arg(QString::fromStdString(document_->error()->text())), true);
        return false;
    }
    const std::shared_ptr<Outcome> wanted = outcomeForForm();
    // The running search is this one: its searchFinished will do.
    if (running_ && !pending_ && sameSearch(running_->base, running_->options, wanted->base, wanted->options)) return true;
    startSearch(wanted);
    return true;
}

void LayoutFinderPanel::startSearch(std::shared_ptr<Outcome> outcome) {
    search_due_ = false;
    outcome->generation = ++*generation_;  // an older search still running stops at its next poll
    if (worker_) {
        pending_ = std::move(outcome);  // started when the old one has stopped
        return;
    }
    pending_.reset();
    running_ = outcome;
    // The core polls this every 2^16 layouts: a search of millions of
    // layouts stops within about a millisecond of being out of date.
    outcome->options.progress = [generation = generation_, mine = outcome->generation](int64_t, int64_t) {
        return generation->load(std::memory_order_relaxed) == mine;
    };
    worker_ = QThread::create([outcome] {
        const auto start = std::chrono::steady_clock::now();
        Expected<LayoutSearchResult> r = searchLayouts(outcome->base, outcome->options);
        outcome->milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        if (r)
            outcome->result = std::move(r).value();
        else
            outcome->error = r.error();
    });
    connect(worker_, &QThread::finished, this, [this, outcome] { finish(outcome); });
    connect(worker_, &QThread::finished, worker_, &QObject::deleteLater);
    if (!last_) showStatus(tr("Searching…"), false);
    worker_->start();
}

void LayoutFinderPanel::finish(const std::shared_ptr<Outcome>& outcome) {
    worker_ = nullptr;
    running_.reset();
    if (pending_) {
        // Out of date: dropped, and the latest request runs.
        startSearch(std::move(pending_));
        return;
    }
    if (outcome->generation != generation_->load()) return;
    // Keep the user's choice when the same layout is still offered.
    std::optional<Layout> chosen;
    if (last_ && last_->result) {
        const int row = table_->currentRow();
        if (row >= 0 && row < static_cast<int>(last_->result->layouts.size()))
            chosen = last_->result->layouts[static_cast<size_t>(row)].layout;
    }
    last_ = outcome;
    if (outcome->error) {
        // Errors name the option ("gpus") or the scenario's field.
        showStatus(tr("Search refused: %1").arg(QString::fromStdString(outcome->error->text())), true);
        table_->setRowCount(0);
        rejected_table_->setRowCount(0);
        summary_->clear();
    } else {
        showStatus({}, false);
        showResult();
        if (chosen)
            for (size_t i = 0; i < outcome->result->layouts.size(); ++i)
                if (outcome->result->layouts[i].layout == *chosen) table_->selectRow(static_cast<int>(i));
    }
    emit searchFinished();
}

void LayoutFinderPanel::showResult() {
    const LayoutSearchResult& r = *last_->result;
    summary_->setText(tr("%1 layouts of %2 GPUs visited, %3 valid, %4 fit; %5 ms.")
                          .arg(QLocale().toString(static_cast<qlonglong>(r.enumerated)))
                          .arg(last_->options.gpus)
                          .arg(QLocale().toString(static_cast<qlonglong>(r.valid)))
                          .arg(QLocale().toString(static_cast<qlonglong>(r.fitting)))
                          .arg(last_->milliseconds, 0, 'f', 0) +
                      (r.note.empty() ? QString() : QStringLiteral(" ") + tr("Note: %1.").arg(q(r.note))));
    std::vector<QStringList> rows;
    rows.reserve(r.layouts.size());
    for (size_t i = 0; i < r.layouts.size(); ++i) {
        const RankedLayout& k = r.layouts[i];
        QStringList cells{QString::number(i + 1)};
        cells << layoutCells(k.layout) << q(formatBytes(k.estimate.peak.device_bytes, units_))
              << q(formatBytes(k.estimate.headroom_bytes, units_))
              << QStringLiteral("%1%").arg(k.estimate.recompute_fraction * 100, 0, 'f', 0);
        // The modelled step time the rows are ranked by (docs/step-time.md).
        const StepTime& t = k.time;
        if (t.step_seconds > 0)
            cells << (t.step_seconds >= 1 ? tr("%1 s").arg(t.step_seconds, 0, 'f', 2)
                                          : tr("%1 ms").arg(t.step_seconds * 1e3, 0, 'f', 0))
                  << QLocale().toString(static_cast<qlonglong>(std::llround(t.tokens_per_second_per_gpu)))
                  << QStringLiteral("%1%").arg(t.mfu * 100, 0, 'f', 0) << q(slowReason(t));
        else
            cells << QStringLiteral("-") << QStringLiteral("-") << QStringLiteral("-") << QString();
        rows.push_back(std::move(cells));
    }
    fillTable(table_, rows);
    rows.clear();
    for (const RankedLayout& k : r.rejected) {
        QStringList cells = layoutCells(k.layout);
        cells << q(formatBytes(k.estimate.peak.device_bytes, units_)) << q(rejectionText(rejectionOf(k.estimate)));
        rows.push_back(std::move(cells));
    }
    fillTable(rejected_table_, rows);
    if (r.layouts.empty()) showStatus(tr("No layout of %1 GPUs fits this GPU; the closest misses are listed.").arg(last_->options.gpus), true);
    if (!r.layouts.empty()) table_->selectRow(0);
}

std::vector<std::pair<std::string, std::string>> LayoutFinderPanel::settingsFor(int row) const {
    if (!last_ || !last_->result || row < 0 || row >= static_cast<int>(last_->result->layouts.size())) return {};
    Scenario s = last_->base;
    applyLayout(s, last_->result->layouts[static_cast<size_t>(row)].layout);
    std::vector<std::pair<std::string, std::string>> settings = layoutSettings(s);
    // The search may have been for another GPU than the scenario's.
    const HardwareConfig& now = document_->scenario().hardware;
    if (s.hardware.gpu != now.gpu) settings.emplace_back("hardware.gpu", s.hardware.gpu);
    if (!s.hardware.memory_bytes && now.memory_bytes) settings.emplace_back("hardware.memory_gib", "auto");
    return settings;
}

bool LayoutFinderPanel::apply(int row) {
    const auto settings = settingsFor(row);
    if (settings.empty()) {
        showStatus(tr("Choose a layout in the table first."), true);
        return false;
    }
    Scenario next = document_->scenario();
    for (const auto& [key, value] : settings) {
        if (Status st = applySetting(next, key, value); !st) {
            showStatus(tr("Cannot apply: %1").arg(QString::fromStdString(st.error().text())), true);
            return false;
        }
    }
    // Apply never changes the global batch behind the user's back: only a
    // search that was allowed another batch may, and then it says so.
    const int64_t batch_now = scenarioBatch();
    const int64_t batch_next = planBatch(next).effective_batch;
    if (batch_next != batch_now && !last_->other_batch) {
        showStatus(tr("Not applied: layout #%1 trains a global batch of %2, the scenario %3. Search again: the scenario "
                      "changed since this search.")
                       .arg(row + 1)
                       .arg(batch_next)
                       .arg(batch_now),
                   true);
        return false;
    }
    document_->edit([&](Scenario& s) { s = next; }, tr("Apply layout #%1").arg(row + 1));
    if (batch_next != batch_now)
        showStatus(tr("Applied layout #%1; the global batch is now %2 sequences per step (was %3).")
                       .arg(row + 1)
                       .arg(batch_next)
                       .arg(batch_now),
                   false);
    else
        showStatus(tr("Applied layout #%1; global batch %2 sequences per step, as before.").arg(row + 1).arg(batch_now), false);
    return true;
}

QString LayoutFinderPanel::largestMicroBatchText() const { return largest_->text(); }
QString LayoutFinderPanel::statusText() const { return status_->text(); }

void LayoutFinderPanel::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    refreshLargest();
    if (search_due_ || !last_) scheduleSearch();
}

void LayoutFinderPanel::refreshLargest() {
    if (document_->stale()) {
        largest_->setText(tr("Largest micro-batch for the current layout: fix the marked field first."));
        return;
    }
    const Scenario& s = document_->scenario();
    Expected<int64_t> largest = largestMicroBatch(s);
    if (!largest) {
        largest_->setText(tr("Largest micro-batch for the current layout: %1").arg(QString::fromStdString(largest.error().text())));
    } else if (*largest == 0) {
        largest_->setText(tr("Largest micro-batch that fits the current layout: none — even 1 does not fit."));
    } else {
        largest_->setText(tr("Largest micro-batch that fits the current layout: <b>%1</b> (now %2).")
                              .arg(*largest)
                              .arg(s.training.micro_batch_size));
    }
}

void LayoutFinderPanel::showStatus(const QString& text, bool error) {
    status_->setText(text);
    status_->setStyleSheet(error ? QStringLiteral("color: #c0392b;") : QString());
}

}  // namespace trainmem::ui
