#pragma once
// The one class that draws charts, and the only one that touches Qt Charts
// (through its ChartScene, ui/chart_scene.h): stacked bars by component, a capacity line,
// call-outs, legend and footer, on screen or into any QPainter for export.
#include <memory>

#include <QImage>
#include <QWidget>

#include "ui/chart_spec.h"

class QGraphicsView;
class QPainter;

namespace trainmem::ui {

class ChartScene;

class MemoryChart : public QWidget {
    Q_OBJECT
public:
    explicit MemoryChart(QWidget* parent = nullptr);
    ~MemoryChart() override;

    // Replaces what is drawn; redraws at once.
    void setSpec(const ChartSpec& spec);
    const ChartSpec& spec() const;

    // Draws `spec` laid out at `logicalSize` into `target` of `painter`: the
    // same drawing as on screen, at any size (PNG, SVG, PDF, clipboard).
    static void render(const ChartSpec& spec, QPainter& painter, const QRectF& target, QSizeF logicalSize);
    // `size` in logical pixels, `scale` = device pixels per logical pixel.
    static QImage renderImage(const ChartSpec& spec, QSize size, qreal scale = 1.0);

    // Texts currently on screen (title, call-outs, legend, labels): for tests.
    QStringList visibleTexts() const;
    // Where the text `prefix` (else the first starting with it) is drawn, and where bar
    // `bar` is with the label above it (chart coordinates): for tests.
    QRectF textRect(const QString& prefix) const;
    QRectF barRect(int bar) const;
    // Every visible text with where it is drawn (chart coordinates): for tests.
    QList<std::pair<QString, QRectF>> visibleTextRects() const;
    // How many times the chart's pixels were painted: for tests and the benchmark.
    int paintCount() const { return paint_count_; }

signals:
    // A bar (any of its segments) was clicked: its index in the spec's categories.
    void barClicked(int bar);

protected:
    void resizeEvent(QResizeEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    std::unique_ptr<ChartScene> scene_;
    QGraphicsView* view_ = nullptr;
    QObject* viewport_ = nullptr;  // view_'s viewport, whose paints are counted
    int paint_count_ = 0;
};

}  // namespace trainmem::ui
