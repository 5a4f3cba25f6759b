#pragma once
// The layer a chart lays over Qt Charts' plot: graphics items it owns and
// replaces on every layout, the call-outs beside a single bar, and the legend
// under the bars. No Qt Charts types here; chart_scene.cpp keeps those.
#include <vector>

#include <QColor>
#include <QFont>
#include <QMultiHash>
#include <QString>
#include <QStringList>

class QGraphicsItem;
class QGraphicsScene;
class QGraphicsSimpleTextItem;

namespace trainmem::ui {

struct ChartLayer;

// Items over the chart. The scene owns them; clear() removes them all before
// the next layout. Every text added is recorded, for tests.
//
// Text items are kept for the next layout rather than deleted: an edit moves
// most texts but changes few of them, and a new QGraphicsSimpleTextItem
// shapes its text again (callgrind: about a sixth of a per-stage edit). With
// setCached(true) (on screen; never for exports, which must stay vectors)
// each text also keeps its painted pixels while it is unchanged.
class ChartOverlay {
public:
    explicit ChartOverlay(QGraphicsScene& scene) : scene_(scene) {}
    void setCached(bool cached) { cached_ = cached; }
    // clear() before a layout, finish() after it: texts the layout did not
    // ask for again are deleted then.
    void clear();
    void finish();
    QGraphicsSimpleTextItem* text(const QString& s, const QFont& font, const QColor& color);
    QGraphicsSimpleTextItem* centeredText(const QString& s, const QFont& font, const QColor& color, double cx, double top);
    template <class Item>
    Item* own(Item* item, double z = 5) {
        add(item, z);
        return item;
    }
    const QStringList& texts() const { return texts_; }

private:
    void add(QGraphicsItem* item, double z);

    QGraphicsScene& scene_;
    std::vector<QGraphicsItem*> items_;
    QMultiHash<QString, QGraphicsSimpleTextItem*> spare_;  // last layout's texts not yet reused, by font and text
    QStringList texts_;
    bool cached_ = false;
};

// `s` cut to `width` with an ellipsis.
QString elided(const QString& s, const QFont& font, double width);

// `text` broken at spaces into lines no wider than `width`. A double space
// marks a preferred break: what follows it starts a new line unless it fits
// whole on the current one (a call-out's "[formula]" stays in one piece).
// With more than `max_lines` lines the last one shown ends in an ellipsis; a
// single word wider than `width` is elided too.
QStringList wrapLines(const QString& text, const QFont& font, double width, int max_lines);

// --- call-outs ---------------------------------------------------------------

struct Callout {
    QString title;        // "Weights: 3.74 GiB"
    QString detail;       // how it scales and its arithmetic; wraps
    QColor color;
    double anchor_y = 0;  // the segment's centre, or the capacity line
    bool capacity = false;
};

struct PlacedCallout {
    double top = 0;
    double height = 0;         // the title and the detail lines shown
    QStringList detail_lines;  // empty when there was no room for any detail
};

// Where call-outs go between area_top and area_bottom, for `items` sorted by
// anchor, top first: each at its anchor where it can be, pushed apart where
// not, never overlapping as long as the titles alone fit. Details wrap to
// `width`. When the whole details do not fit, every call-out gets the same
// number of lines and the room left goes a line at a time to those still cut,
// from the top; when not even one line each fits, the details are dropped.
std::vector<PlacedCallout> layoutCallouts(const std::vector<Callout>& items, double area_top, double area_bottom,
                                          double width);

// Lays out and draws call-outs: titles and details at text_x, leader lines
// from the bar's right edge (capacity: from plot_right, dashed).
void placeCallouts(ChartOverlay& overlay, const std::vector<Callout>& items, double area_top, double area_bottom,
                   double bar_right, double plot_right, double text_x, double text_width);

// --- legend ------------------------------------------------------------------

// Rows of swatches and names, centred in [left, left + width].
double legendHeight(const std::vector<const ChartLayer*>& layers, double width);
void placeLegend(ChartOverlay& overlay, const std::vector<const ChartLayer*>& layers, double left, double top, double width);

}  // namespace trainmem::ui
