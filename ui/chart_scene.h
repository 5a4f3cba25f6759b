#pragma once
// The scene behind a MemoryChart, private to it; chart_scene.cpp is the only
// file that includes Qt Charts. A QChart draws the axes, the bars and the capacity line; graphics items laid
// over it carry what Qt Charts cannot place (titles, call-outs beside a
// segment, labels inside segments, legend, footer).
//   chart_scene.cpp         the series and axes, the layout's order, bar geometry
//   chart_scene_labels.cpp  every text placed around the bars
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include <QGraphicsScene>
#include <QRectF>
#include <QSizeF>

#include "ui/chart_callouts.h"
#include "ui/chart_spec.h"

class QBarCategoryAxis;
class QChart;
class QGraphicsSimpleTextItem;
class QLineSeries;
class QStackedBarSeries;
class QValueAxis;

namespace trainmem::ui {

class ChartScene {
public:
    ChartScene();
    // On screen: texts keep their painted pixels between edits (ChartOverlay).
    void setOnScreen(bool on) { overlay_.setCached(on); }
    // Called with the bar's index when any segment of a bar is clicked.
    void setOnBarClicked(std::function<void(int)> f) { on_bar_clicked_ = std::move(f); }

    QGraphicsScene& scene() { return scene_; }
    const ChartSpec& spec() const { return spec_; }
    const QStringList& texts() const { return overlay_.texts(); }
    // The text item that is `prefix`, else the first that starts with it, in
    // scene coordinates.
    QRectF textRect(const QString& prefix) const;
    QList<std::pair<QString, QRectF>> textRects() const;
    // A bar with the label above it, in scene coordinates.
    QRectF barRect(int i) const;

    // A spec's bars become one QBarSet per layer (Qt's stacked-bar idiom).
    void setSpec(const ChartSpec& spec);
    // Places the plot and every text for a scene `size` large.
    void layout(QSizeF size);

private:
    // --- series (chart_scene.cpp) --------------------------------------------
    bool sameShape(const ChartSpec& next) const;
    void updateValues();
    void rebuildSeries();
    void applyInks();
    void showTip(bool on, int layer, int index);

    // --- geometry of the bars, from the axis ranges we set ourselves ----------
    double barCenterX(int i) const;
    double slotWidth() const { return plot_.width() / std::max<qsizetype>(1, spec_.categories.size()); }
    double barWidthFraction() const;
    double barPixelWidth() const { return slotWidth() * barWidthFraction(); }
    double valueY(double v) const { return plot_.bottom() - v / value_max_ * plot_.height(); }
    // Segment [bottom, top] in values of layer `l` in bar `i`.
    std::pair<double, double> segment(int l, int i) const;

    // --- texts around the bars (chart_scene_labels.cpp) -----------------------
    struct LabelLine {
        QString text;  // empty: the staggered labels' spacer line
        QFont font;
        bool first;    // a line of the category's first (bold) line
        double room;   // width it may use, centred on its bar
    };
    double placeTitle(double y);
    bool staggered(double slot) const;
    std::vector<LabelLine> categoryLines(int i, double slot, bool stagger, const std::vector<LabelLine>& spacer) const;
    std::vector<LabelLine> lowerRowSpacer(double slot) const;
    std::vector<LabelLine> ownLines(int i, double slot, bool stagger) const;       // the label's own lines
    double estimatedSlotWidth() const;
    double categoryLabelHeight() const;
    void placeCategoryLabels();
    void placeInsideLabels();
    void placeTopLabels();
    std::pair<QString, QFont> topLabelFor(int i, double room) const;
    void placeCapacityLabel();
    std::optional<QPointF> capacityLabelPlace(QSizeF size, double ceiling) const;
    bool rowAboveNeeded() const;
    void placeBarCallouts();
    std::vector<const ChartLayer*> legendLayers() const;
    static bool anyPositive(const ChartLayer& layer);
    static constexpr int kMaxFooterLines = 8;
    QStringList footerLines(double width) const;
    double footerHeight(double width) const;
    void placeFooter(double top, double width);
    void placeEmptyNotice();
    void placeStaleNotice();

    // --- overlay items (chart_callouts.h) -------------------------------------
    QGraphicsSimpleTextItem* text(const QString& s, const QFont& font, const QColor& color) { return overlay_.text(s, font, color); }
    QGraphicsSimpleTextItem* centeredText(const QString& s, const QFont& font, const QColor& color, double cx, double top) {
        return overlay_.centeredText(s, font, color, cx, top);
    }
    template <class Item>
    Item* own(Item* item, double z = 5) {
        return overlay_.own(item, z);
    }

    QGraphicsScene scene_;
    QChart* chart_ = nullptr;  // owned by scene_
    QValueAxis* value_axis_ = nullptr;
    QBarCategoryAxis* category_axis_ = nullptr;
    QStackedBarSeries* bars_ = nullptr;
    QLineSeries* capacity_ = nullptr;
    ChartOverlay overlay_{scene_};  // after scene_, which owns its items
    ChartSpec spec_;
    QSizeF size_;
    QRectF plot_;
    double value_max_ = 1;
    double category_height_ = 0;  // of the labels under the bars, this layout
    std::function<void(int)> on_bar_clicked_;
    bool inks_set_ = false;
    bool inks_dark_ = false;
};

}  // namespace trainmem::ui
