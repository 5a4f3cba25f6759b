#include "ui/memory_chart.h"

#include <QEvent>
#include <QGraphicsView>
#include <QPainter>
#include <QResizeEvent>
#include <QVBoxLayout>

#include "ui/chart_scene.h"
#include "ui/chart_style.h"
#include "ui/painting_export.h"

namespace trainmem::ui {

MemoryChart::MemoryChart(QWidget* parent) : QWidget(parent), scene_(std::make_unique<ChartScene>()) {
    scene_->setOnScreen(true);
    scene_->setOnBarClicked([this](int bar) { emit barClicked(bar); });
    view_ = new QGraphicsView(&scene_->scene(), this);
    view_->setRenderHint(QPainter::Antialiasing);  // once, here, for every chart
    view_->setRenderHint(QPainter::TextAntialiasing);
    view_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    view_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    view_->setFrameShape(QFrame::NoFrame);
    view_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    // An edit moves most items; repainting the whole view is cheaper than
    // tracking each item's old and new region.
    view_->setViewportUpdateMode(QGraphicsView::FullViewportUpdate);
    viewport_ = view_->viewport();
    viewport_->installEventFilter(this);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(view_);
    setMinimumSize(360, 280);
}

MemoryChart::~MemoryChart() {
    // The view's teardown still sends events to its viewport; by then the view
    // is half destroyed, so stop filtering before deleting it (UBSan caught
    // the filter calling into the dying QAbstractScrollArea).
    viewport_->removeEventFilter(this);
    viewport_ = nullptr;
    delete view_;  // before the scene it shows
    view_ = nullptr;
}

void MemoryChart::setSpec(const ChartSpec& spec) {
    scene_->setSpec(spec);
    scene_->layout(QSizeF(view_->viewport()->size()));
    view_->viewport()->update();
}

const ChartSpec& MemoryChart::spec() const { return scene_->spec(); }

QStringList MemoryChart::visibleTexts() const { return scene_->texts(); }
QRectF MemoryChart::textRect(const QString& prefix) const { return scene_->textRect(prefix); }
QRectF MemoryChart::barRect(int bar) const { return scene_->barRect(bar); }
QList<std::pair<QString, QRectF>> MemoryChart::visibleTextRects() const { return scene_->textRects(); }

void MemoryChart::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    scene_->layout(QSizeF(view_->viewport()->size()));
}

bool MemoryChart::eventFilter(QObject* watched, QEvent* event) {
    if (watched == viewport_ && event->type() == QEvent::Paint) ++paint_count_;
    return QWidget::eventFilter(watched, event);
}

void MemoryChart::render(const ChartSpec& spec, QPainter& painter, const QRectF& target, QSizeF logicalSize) {
    const LightChartInks light;  // a figure for a document, whatever the desktop's scheme
    ChartScene scene;
    scene.setSpec(spec);
    scene.layout(logicalSize);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setRenderHint(QPainter::TextAntialiasing);
    scene.scene().render(&painter, target, QRectF(QPointF(0, 0), logicalSize));
}

QImage MemoryChart::renderImage(const ChartSpec& spec, QSize size, qreal scale) {
    return paintingImage([&spec](QPainter& painter, const QRectF& target) { render(spec, painter, target, target.size()); },
                         size, scale);
}

}  // namespace trainmem::ui
