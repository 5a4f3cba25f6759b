#include "ui/timeline_tab.h"

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include "ui/chart_tab.h"
#include "ui/timeline_view.h"

namespace trainmem::ui {

TimelineTab::TimelineTab(ScenarioDocument* document, QWidget* parent) : QWidget(parent), document_(document) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* row = new QHBoxLayout();
    row->addWidget(new QLabel(tr("Pipeline stage:"), this));
    stage_ = new QComboBox(this);
    stage_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    stage_->setToolTip(tr("The stage whose step is drawn. It starts on the heaviest; the first stages keep more "
                          "micro-batches in flight, the last one holds the logits and loss."));
    row->addWidget(stage_);
    row->addSpacing(16);
    open_ = new QPushButton(tr("Open snapshot…"), this);
    open_->setToolTip(tr("A PyTorch memory snapshot (torch.cuda.memory._dump_snapshot after _record_memory_history): "
                         "its allocated and reserved curves are drawn over the estimate."));
    remove_ = new QPushButton(tr("Remove snapshot"), this);
    row->addWidget(open_);
    row->addWidget(remove_);
    row->addStretch();
    layout->addLayout(row);
    view_ = new TimelineView(this);
    layout->addWidget(view_, 1);
    status_ = new QLabel(this);
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(status_);

    connect(stage_, &QComboBox::activated, this, [this](int index) { setStage(index); });
    connect(open_, &QPushButton::clicked, this, &TimelineTab::openSnapshotDialog);
    connect(remove_, &QPushButton::clicked, this, &TimelineTab::removeSnapshot);
    connect(document_, &ScenarioDocument::changed, this, &TimelineTab::redrawSoon);
    remove_->setEnabled(false);
    showStatus({}, false);
}

void TimelineTab::setUnits(Units units) {
    if (units_ == units) return;
    units_ = units;
    redrawSoon();
}

void TimelineTab::setStage(int stage) {
    const int heaviest = document_->hasResult() ? static_cast<int>(document_->result().peak.stage) : 0;
    chosen_stage_ = stage < 0 || stage == heaviest ? std::nullopt : std::optional<int64_t>(stage);
    redrawSoon();
}

bool TimelineTab::openSnapshot(const QString& path) {
    Expected<MeasuredSnapshot> read = loadMeasuredSnapshot(path);
    if (!read) {
        snapshot_error_ = tr("Could not read the snapshot: %1").arg(QString::fromStdString(read.error().text()));
        showStatus(snapshot_error_, true);
        return false;
    }
    snapshot_ = std::move(read).value();
    snapshot_error_.clear();
    remove_->setEnabled(true);
    redrawSoon();
    return true;
}

void TimelineTab::openSnapshotDialog() {
    const QString start = snapshot_ ? QFileInfo(snapshot_->path).absolutePath() : QString();
    const QString path = QFileDialog::getOpenFileName(this, tr("Open a PyTorch memory snapshot"), start,
                                                      tr("Memory snapshots (*.pickle *.pkl);;All files (*)"));
    if (!path.isEmpty()) openSnapshot(path);
}

void TimelineTab::removeSnapshot() {
    snapshot_.reset();
    snapshot_error_.clear();
    remove_->setEnabled(false);
    redrawSoon();
}

const TimelineDrawing& TimelineTab::currentDrawing() {
    if (outdated_) redraw();
    return view_->drawing();
}

ExportResult TimelineTab::exportTo(const QString& path, QSize size, qreal scale) {
    currentDrawing();
    return view_->exportTo(path, size, scale);
}

QImage TimelineTab::renderImage(QSize size, qreal scale) {
    currentDrawing();
    return view_->renderImage(size, scale);
}

void TimelineTab::copyImage(qreal scale) { QApplication::clipboard()->setImage(renderImage(view_->size(), scale)); }

QString TimelineTab::statusText() const { return status_->text(); }

void TimelineTab::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    if (outdated_) redraw();
}

void TimelineTab::redrawSoon() {
    outdated_ = true;
    if (isVisible()) redraw();
}

void TimelineTab::refreshStages() {
    const bool have = document_->hasResult();
    const std::vector<StageEstimate> none;
    const std::vector<StageEstimate>& stages = have ? document_->stages() : none;
    const int64_t heaviest = have ? document_->result().peak.stage : 0;
    if (chosen_stage_ && *chosen_stage_ >= static_cast<int64_t>(stages.size())) chosen_stage_.reset();
    QStringList items;
    for (const StageEstimate& s : stages) {
        QString item = tr("%1 (layers %2–%3)").arg(s.stage + 1).arg(s.first_layer + 1).arg(s.first_layer + s.num_layers);
        if (s.num_layers <= 0) item = tr("%1 (no layers)").arg(s.stage + 1);
        if (s.stage == heaviest && stages.size() > 1) item += tr(" — heaviest");
        items << item;
    }
    const QSignalBlocker block(stage_);
    bool same = stage_->count() == items.size();
    for (int i = 0; same && i < items.size(); ++i) same = stage_->itemText(i) == items[i];
    if (!same) {
        stage_->clear();
        stage_->addItems(items);
    }
    stage_->setCurrentIndex(static_cast<int>(chosen_stage_.value_or(heaviest)));
    stage_->setEnabled(stages.size() > 1);
}

void TimelineTab::redraw() {
    outdated_ = false;
    refreshStages();
    TimelineDrawing drawing;
    drawing.units = units_;
    drawing.title = tr("Memory through one training step, per GPU");
    if (!document_->hasResult()) {
        drawing.emptyNotice = document_->error() ? tr("Fix the marked field: %1").arg(QString::fromStdString(document_->error()->text()))
                                                 : tr("Choose a preset or open a config.json");
    } else {
        Expected<TimelineDrawing> made = timelineDrawing(document_->resultScenario(), chosen_stage_, units_);
        if (made) {
            drawing = std::move(made).value();
            drawing.staleNotice = staleNotice(*document_);
        } else {
            drawing.emptyNotice = QString::fromStdString(made.error().text());
        }
    }
    if (snapshot_) addMeasured(drawing, *snapshot_);
    view_->setDrawing(std::move(drawing));

    if (!snapshot_error_.isEmpty()) return;  // the error stays until the next open or removal
    const TimelineDrawing& shown = view_->drawing();
    if (!shown.measured) {
        showStatus(tr("Hover to see what is alive at each moment. Open a PyTorch memory snapshot to set a measured step beside the estimate."),
                   false);
        return;
    }
    const QString device = snapshot_->devices > 1
                               ? tr("device %1 of the %2 in the file").arg(shown.measured->device).arg(snapshot_->devices)
                               : tr("device %1").arg(shown.measured->device);
    QString text = tr("%1 (%2, %3 events): %4; %5.")
                       .arg(shown.measured->source, device)
                       .arg(snapshot_->curves.event_count)
                       .arg(shown.measuredSummary, shown.measured->alignment);
    for (const QString& w : shown.measured->warnings) text += tr(" Note: %1.").arg(w);
    showStatus(text, false);
}

void TimelineTab::showStatus(const QString& text, bool error) {
    status_->setText(text);
    // A hint in the palette's muted text (a fixed #555 was unreadable on a
    // dark desktop); an error in red.
    status_->setStyleSheet(error ? QStringLiteral("color: #c0392b;") : QString());
    status_->setForegroundRole(error ? QPalette::WindowText : QPalette::PlaceholderText);
}

}  // namespace trainmem::ui
