#pragma once
// Table cells drawn from text shaped once. Qt's item delegate lays the text
// of every cell out again (HarfBuzz shaping, a QTextLayout, an elision test)
// each time the cell is painted and each time its column is measured: in
// Find a Layout, whose tables repaint at every edit of the scenario, that was
// about 95,000 of the ~115,000 instructions a cell cost (callgrind,
// docs/performance.md, "Live search in the app"). This delegate keeps, per
// text, the shaped line (QStaticText) and the size hint, and draws the cell's
// background, selection and focus with the style as before; only the text is
// drawn from the cache. A cell that is not one plain line of text (an icon, a
// check box, wrapping, right-to-left, text wider than its column, which Qt
// elides, or the current cell's focus frame, which the style sizes to the
// text) is drawn by QStyledItemDelegate unchanged.
#include <QFont>
#include <QHash>
#include <QStaticText>
#include <QStyledItemDelegate>

namespace trainmem::ui {

class ShapedTextDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override;
    QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override;

private:
    struct Shaped {
        QStaticText line;
        QSize hint;  // QStyledItemDelegate's size hint for this text; empty until asked
    };
    // The cache entry for `text` in `font`; a new font empties the cache.
    Shaped& shaped(const QString& text, const QFont& font) const;

    mutable QFont font_;
    mutable QHash<QString, Shaped> cache_;
};

}  // namespace trainmem::ui
