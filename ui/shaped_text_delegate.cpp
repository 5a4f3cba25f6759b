#include "ui/shaped_text_delegate.h"

#include <QApplication>
#include <QPainter>
#include <QStyle>

namespace trainmem::ui {

namespace {

// Past this many texts the cache starts again: the tables show a few
// hundred distinct texts, and the cache should not grow with every edit.
constexpr qsizetype kMaxTexts = 4096;

const QStyleOptionViewItem::ViewItemFeatures kNotPlain =
    QStyleOptionViewItem::WrapText | QStyleOptionViewItem::HasCheckIndicator | QStyleOptionViewItem::HasDecoration;

}  // namespace

ShapedTextDelegate::Shaped& ShapedTextDelegate::shaped(const QString& text, const QFont& font) const {
    if (font != font_ || cache_.size() >= kMaxTexts) {
        cache_.clear();
        font_ = font;
    }
    auto it = cache_.find(text);
    if (it == cache_.end()) {
        it = cache_.insert(text, Shaped{});
        it->line.setTextFormat(Qt::PlainText);  // never rich text, as the item view draws it
        it->line.setText(text);
        it->line.prepare(QTransform(), font);
    }
    return *it;
}

void ShapedTextDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const {
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    const QWidget* widget = opt.widget;
    const QStyle* style = widget ? widget->style() : QApplication::style();
    // The text's box as QCommonStyle lays it out for a cell with only text:
    // the cell less the focus frame's margin on each side.
    const int margin = style->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, widget) + 1;
    const QRect box = opt.rect.adjusted(margin, 0, -margin, 0);
    if (!(opt.features & QStyleOptionViewItem::HasDisplay) || (opt.features & kNotPlain) ||
        opt.direction != Qt::LeftToRight || opt.text.contains(QLatin1Char('\n')) ||
        (opt.state & QStyle::State_HasFocus)) {  // the style sizes the focus frame to the text: one cell, as before
        QStyledItemDelegate::paint(painter, option, index);
        return;
    }
    const QStaticText& line = shaped(opt.text, opt.font).line;
    const QSizeF size = line.size();
    if (size.width() > box.width()) {  // elided: Qt's own drawing
        QStyledItemDelegate::paint(painter, option, index);
        return;
    }
    // Background, alternate row, selection and focus frame by the style, as
    // before; the text is left out and drawn below.
    const QString text = opt.text;
    opt.text.clear();
    opt.features &= ~QStyleOptionViewItem::HasDisplay;
    style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, widget);

    // The pen QCommonStyle takes for an item's text.
    QPalette::ColorGroup group = (opt.state & QStyle::State_Enabled) ? QPalette::Normal : QPalette::Disabled;
    if (group == QPalette::Normal && !(opt.state & QStyle::State_Active)) group = QPalette::Inactive;
    const QColor ink = opt.palette.color(group, (opt.state & QStyle::State_Selected) ? QPalette::HighlightedText : QPalette::Text);
    // Placed as QCommonStyle places a line: its height truncated to whole
    // pixels and aligned in the box; horizontally the line's natural width
    // aligned in the box's width.
    const Qt::Alignment align = QStyle::visualAlignment(opt.direction, opt.displayAlignment);
    const int height = static_cast<int>(size.height());
    qreal x = box.left();
    if (align & Qt::AlignRight) x += box.width() - size.width();
    else if (align & Qt::AlignHCenter) x += (box.width() - size.width()) / 2;
    int y = box.top();
    if (align & Qt::AlignBottom) y += box.height() - height;
    else if (align & Qt::AlignVCenter) y += (box.height() - height) / 2;
    painter->save();
    painter->setPen(ink);
    painter->setFont(opt.font);
    painter->drawStaticText(QPointF(x, y), line);
    painter->restore();
}

QSize ShapedTextDelegate::sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const {
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    if (!(opt.features & QStyleOptionViewItem::HasDisplay) || (opt.features & kNotPlain))
        return QStyledItemDelegate::sizeHint(option, index);
    // The hint depends on the text and the font (the cache's key), not on
    // where the cell is.
    Shaped& s = shaped(opt.text, opt.font);
    if (s.hint.isEmpty()) s.hint = QStyledItemDelegate::sizeHint(option, index);
    return s.hint;
}

}  // namespace trainmem::ui
