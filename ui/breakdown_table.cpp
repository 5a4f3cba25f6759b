#include "ui/breakdown_table.h"

#include <QHeaderView>
#include <QPainter>
#include <QPixmap>

#include "ui/chart_views.h"
#include "ui/component_palette.h"

namespace trainmem::ui {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

QIcon swatch(const QColor& color) {
    QPixmap pixmap(12, 12);
    pixmap.fill(color);
    QPainter p(&pixmap);
    p.setPen(color.darker(130));
    p.drawRect(0, 0, 11, 11);
    return QIcon(pixmap);
}

}  // namespace

BreakdownTable::BreakdownTable(ScenarioDocument* document, QWidget* parent)
    : QTableWidget(parent), document_(document) {
    setColumnCount(4);
    // Share of the allocated peak, as trainmem-cli's table: the allocator's
    // components add up to 100%, reserved and device show what is on top.
    setHorizontalHeaderLabels({tr("Component"), tr("Memory"), tr("% of allocated"), tr("Formula")});
    // Sized to their contents by refresh(), column by column as they change:
    // ResizeToContents measured every cell again for each cell set.
    horizontalHeader()->setSectionResizeMode(3, QHeaderView::Stretch);
    verticalHeader()->hide();
    verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    setSelectionBehavior(QAbstractItemView::SelectRows);
    setAlternatingRowColors(true);
    setWordWrap(false);
    setToolTip(tr("The heaviest GPU at its peak. Copy it as Markdown or CSV from the Edit menu."));
    connect(document_, &ScenarioDocument::changed, this, &BreakdownTable::refresh);
    refresh();
}

void BreakdownTable::showStage(int stage) {
    if (stage_ == stage) return;
    stage_ = stage;
    refresh();
}

void BreakdownTable::setUnits(Units units) {
    if (units_ == units) return;
    units_ = units;
    refresh();
}

void BreakdownTable::refresh() {
    if (!document_->hasResult()) {
        setRowCount(0);
        return;
    }
    int row = 0;
    bool resize[3] = {false, false, false};  // columns whose texts changed
    // A chosen stage: the estimate as if that stage were the heaviest, so
    // the components, totals and formulas are its own.
    const bool one_stage = stage_ >= 0 && stage_ < static_cast<int>(document_->stages().size());
    Estimate chosen;
    if (one_stage) {
        chosen = document_->result();
        chosen.peak = document_->stages()[static_cast<size_t>(stage_)];
    }
    const Estimate& e = one_stage ? chosen : document_->result();
    const QString first = one_stage ? tr("Component: stage %1 of %2").arg(stage_ + 1).arg(document_->stages().size())
                                    : tr("Component");
    if (!horizontalHeaderItem(0) || horizontalHeaderItem(0)->text() != first) setHorizontalHeaderItem(0, new QTableWidgetItem(first));
    const Scenario& s = document_->resultScenario();
    const double allocated = static_cast<double>(e.peak.allocated_bytes);
    auto add = [&](const QIcon& icon, const QString& name, int64_t bytes, const QString& formula, bool total) {
        const QString texts[4] = {name, q(formatBytes(bytes, units_)),
                                  allocated > 0 ? QStringLiteral("%1%").arg(100.0 * bytes / allocated, 0, 'f', 1) : QString(),
                                  formula};
        // An edit changes a few cells: update those in place, so that only
        // they are shaped and repainted again (callgrind: rebuilding every
        // row was a seventh of an edit's repaint).
        if (row < rowCount() && item(row, 0) && item(row, 0)->text() == name && item(row, 0)->font().bold() == total &&
            (item(row, 0)->foreground().style() != Qt::NoBrush) == document_->stale()) {
            for (int c = 1; c < 4; ++c)
                if (item(row, c)->text() != texts[c]) {
                    item(row, c)->setText(texts[c]);
                    if (c == 3) item(row, c)->setToolTip(texts[c]);
                    else resize[c] = true;
                }
            ++row;
            return;
        }
        if (row >= rowCount()) insertRow(row);
        resize[0] = resize[1] = resize[2] = true;
        auto* name_item = new QTableWidgetItem(icon, name);
        auto* bytes_item = new QTableWidgetItem(texts[1]);
        bytes_item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        auto* share_item = new QTableWidgetItem(texts[2]);
        share_item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        auto* formula_item = new QTableWidgetItem(formula);
        formula_item->setToolTip(formula);
        for (auto* item : {name_item, bytes_item, share_item, formula_item}) {
            if (total) {
                QFont f = item->font();
                f.setBold(true);
                item->setFont(f);
            }
            if (document_->stale()) item->setForeground(QColor(0x88, 0x88, 0x88));
        }
        setItem(row, 0, name_item);
        setItem(row, 1, bytes_item);
        setItem(row, 2, share_item);
        setItem(row, 3, formula_item);
        ++row;
    };
    for (const BarSegment& seg : barSegments(e.peak)) {
        QString formula;
        if (seg.component) {
            const ComponentExplanation why = explainComponent(*seg.component, s, e, units_);
            formula = q(why.formula.empty() ? why.scaling : why.formula);
        } else if (seg.key == deviceLayerKey(DeviceLayer::AllocatorReserve)) {
            formula = tr("reserved - allocated: allocated x %1 fragmentation").arg(s.hardware.overheads.fragmentation, 0, 'g', 3);
        } else if (seg.key == deviceLayerKey(DeviceLayer::PagedStates)) {
            formula = tr("optimizer states of tensors >= 1e5 elements in CUDA managed memory (bitsandbytes paged)");
        } else {
            formula = tr("device - reserved - paged: CUDA context + cuBLAS handles + NCCL buffers per group");
        }
        add(swatch(seg.color), seg.name, seg.bytes, formula, false);
    }
    add({}, tr("Allocated (max_memory_allocated)"), e.peak.allocated_bytes, tr("sum of the components above"), true);
    add({}, tr("Reserved (max_memory_reserved)"), e.peak.reserved_bytes, tr("allocated + allocator reserve"), true);
    add({}, tr("Device (nvidia-smi)"), e.peak.device_bytes, tr("reserved + memory outside the allocator"), true);
    if (e.host_bytes > 0) add({}, tr("Host memory per rank (offload)"), e.host_bytes, tr("offloaded states / parameters"), false);
    if (rowCount() != row) resize[0] = resize[1] = resize[2] = true;
    setRowCount(row);
    for (int c = 0; c < 3; ++c)
        if (resize[c]) resizeColumnToContents(c);
}

EstimateStatus::EstimateStatus(ScenarioDocument* document, QWidget* parent) : QLabel(parent), document_(document) {
    setWordWrap(true);
    setTextFormat(Qt::RichText);
    setTextInteractionFlags(Qt::TextSelectableByMouse);
    connect(document_, &ScenarioDocument::changed, this, &EstimateStatus::refresh);
    refresh();
}

// A rich-text label that wraps measures its text at several widths for each
// hint, and the window's layout asks for them several times per edit
// (callgrind: an eighth of an edit). Its height for the current text and
// width is what the layout needs; computed once per text and width.
int EstimateStatus::heightForWidth(int width) const {
    if (width != hint_width_ || text() != hint_text_) {
        hint_width_ = width;
        hint_text_ = text();
        hint_height_ = QLabel::heightForWidth(width);
    }
    return hint_height_;
}

QSize EstimateStatus::sizeHint() const {
    const int w = std::max(width(), 200);
    return {w, heightForWidth(w)};
}

QSize EstimateStatus::minimumSizeHint() const {
    // As narrow as the window lets it be, the text wrapping; as tall as that
    // wrapped text, so a splitter never cuts its last line.
    return {100, heightForWidth(std::max(width(), 200))};
}

void EstimateStatus::setUnits(Units units) {
    if (units_ == units) return;
    units_ = units;
    refresh();
}

void EstimateStatus::refresh() {
    QStringList parts;
    if (document_->stale()) {
        // Only the error in colour: a green "fits" beside it would be about a
        // scenario that is no longer the one in the panels.
        parts << tr("<span style='color:#c0392b'><b>Invalid input</b>: %1.</span>")
                     .arg(QString::fromStdString(document_->error()->text()).toHtmlEscaped());
        if (document_->hasResult()) {
            const Estimate& e = document_->result();
            parts << tr("<span style='color:#7f8c8d'>charts show the last valid result (%1 of %2 per GPU, %3)</span>")
                         .arg(q(formatBytes(e.peak.device_bytes, units_)), q(formatBytes(e.capacity_bytes, units_)),
                              e.fits ? tr("fitted") : tr("did not fit"));
        }
        setText(parts.join(QStringLiteral(" &nbsp;·&nbsp; ")));
        return;
    }
    if (document_->hasResult()) {
        const Estimate& e = document_->result();
        const QString total = q(formatBytes(e.peak.device_bytes, units_));
        const QString capacity = q(formatBytes(e.capacity_bytes, units_));
        if (e.fits)
            parts << tr("<b>%1</b> of %2 per GPU: <span style='color:#1e8449'><b>fits</b></span>, %3 headroom")
                         .arg(total, capacity, q(formatBytes(e.headroom_bytes, units_)));
        else
            parts << tr("<b>%1</b> of %2 per GPU: <span style='color:#c0392b'><b>does not fit</b></span>, %3 over")
                         .arg(total, capacity, q(formatBytes(-e.headroom_bytes, units_)));
        parts << (e.total_gpus == 1 ? tr("1 GPU, effective batch %1").arg(e.effective_batch)
                                    : tr("%1 GPUs, effective batch %2").arg(e.total_gpus).arg(e.effective_batch));
        // core's list, as the CLI prints it (import warnings, the estimate's, the family's caveat)
        for (const std::string& w : reportWarnings(document_->resultScenario(), e))
            parts << QStringLiteral("<span style='color:#b9770e'>⚠ %1</span>").arg(q(w).toHtmlEscaped());
    }
    setText(parts.join(QStringLiteral(" &nbsp;·&nbsp; ")));
}

}  // namespace trainmem::ui
