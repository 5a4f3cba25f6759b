#include "ui/units_toggle.h"

#include <cmath>

#include <QAction>
#include <QActionGroup>
#include <QEvent>
#include <QHBoxLayout>
#include <QToolButton>

namespace trainmem::ui {

double contrastRatio(const QColor& a, const QColor& b) {
    auto luminance = [](const QColor& c) {
        auto channel = [](double v) { return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
        return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF());
    };
    const double la = luminance(a), lb = luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

namespace {

// `fill` darkened (or lightened, for dark text) until `text` on it reads at
// WCAG AA's 4.5:1: Qt's default highlight #308cc6 under white is 3.6:1.
QColor readableFill(QColor fill, const QColor& text) {
    const bool light_text = text.lightness() > 127;
    for (int i = 0; i < 20 && contrastRatio(fill, text) < 4.5; ++i) fill = light_text ? fill.darker(110) : fill.lighter(110);
    return fill;
}

}  // namespace

UnitsToggle::UnitsToggle(QActionGroup* units, QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("units_toggle"));
    setToolTip(tr("Units of every chart, the table and the status line (also in the View menu)"));
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(0, 0, 4, 0);
    row->setSpacing(0);
    for (QAction* a : units->actions()) {
        auto* button = new QToolButton(this);
        button->setDefaultAction(a);
        button->setToolButtonStyle(Qt::ToolButtonTextOnly);
        button->setObjectName(QStringLiteral("units_") + a->iconText());
        row->addWidget(button);
    }
    restyle();
}

void UnitsToggle::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) restyle();
}

void UnitsToggle::restyle() {
    // A segmented control: the style's own checked look is a faint shade that
    // hardly tells which unit is on, so the chosen one is filled. The other
    // is drawn on Base, so its text is Text (ButtonText goes with Button and
    // may not read on Base). Colours are written out, not palette(...)
    // references, so the checked fill can be made readable.
    const QPalette p = palette();
    const QColor on_text = p.color(QPalette::HighlightedText);
    const QColor on = readableFill(p.color(QPalette::Highlight), on_text);
    const QString sheet = QStringLiteral(
        "QToolButton { border: 1px solid %1; background: %2; color: %3; padding: 2px 9px; }"
        "QToolButton:hover:!checked { background: %4; }"
        "QToolButton:checked { background: %5; color: %6; border-color: %5; }"
        "#units_GiB { border-top-left-radius: 3px; border-bottom-left-radius: 3px; border-right: none; }"
        "#units_GB { border-top-right-radius: 3px; border-bottom-right-radius: 3px; }")
                              .arg(p.color(QPalette::Mid).name(), p.color(QPalette::Base).name(), p.color(QPalette::Text).name(),
                                   p.color(QPalette::AlternateBase).name(), on.name(), on_text.name());
    // Setting a style sheet changes the palette the buttons see, not ours:
    // no PaletteChange loop.
    if (sheet != styleSheet()) setStyleSheet(sheet);
}

}  // namespace trainmem::ui
