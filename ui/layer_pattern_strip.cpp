#include "ui/layer_pattern_strip.h"

#include <algorithm>
#include <array>

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

#include "core/training/pipeline.h"

namespace trainmem::ui {

namespace {

struct MixerStyle {
    MixerKind kind;
    const char* name;
    QColor colour;
};
// Distinct in light and dark palettes (Tableau 10), the order of the legend.
// One row per MixerKind, in its order.
const std::array<MixerStyle, kMixerKinds> kMixers = {{
    {MixerKind::Attention, QT_TRANSLATE_NOOP("LayerPatternStrip", "attention"), QColor(0x4C, 0x78, 0xA8)},
    {MixerKind::GatedDeltaNet, QT_TRANSLATE_NOOP("LayerPatternStrip", "Gated DeltaNet"), QColor(0xF5, 0x85, 0x18)},
    {MixerKind::Mamba2, QT_TRANSLATE_NOOP("LayerPatternStrip", "Mamba-2"), QColor(0x54, 0xA2, 0x4B)},
    {MixerKind::ShortConv, QT_TRANSLATE_NOOP("LayerPatternStrip", "short conv"), QColor(0xB2, 0x79, 0xA2)},
    {MixerKind::None, QT_TRANSLATE_NOOP("LayerPatternStrip", "MLP / MoE only"), QColor(0x9D, 0x9D, 0x9D)},
    {MixerKind::ParallelAttentionMamba2, QT_TRANSLATE_NOOP("LayerPatternStrip", "attention ‖ Mamba-2"),
     QColor(0x72, 0xB7, 0xB2)},
    {MixerKind::Mamba1, QT_TRANSLATE_NOOP("LayerPatternStrip", "Mamba-1"), QColor(0xEE, 0xCA, 0x3B)},
    {MixerKind::KimiDeltaAttention, QT_TRANSLATE_NOOP("LayerPatternStrip", "Kimi delta attention"),
     QColor(0xFF, 0x9D, 0xA6)},
}};
static_assert(static_cast<size_t>(MixerKind::KimiDeltaAttention) + 1 == kMixerKinds, "a style per mixer");
const QColor kExperts(0xE4, 0x57, 0x56);

const MixerStyle& styleOf(MixerKind k) { return kMixers[static_cast<size_t>(k)]; }

QString kindText(LayerKind k) {
    QString text = LayerPatternStrip::tr(styleOf(k.mixer).name);
    if (k.mixer == MixerKind::None) text = LayerPatternStrip::tr("no mixer");
    if (k.ffn == FfnKind::Moe) return LayerPatternStrip::tr("%1 + MoE").arg(text);
    if (k.ffn == FfnKind::Dense) return LayerPatternStrip::tr("%1 + MLP").arg(text);
    return text;
}

constexpr int kLegendGap = 4;

}  // namespace

LayerPatternStrip::LayerPatternStrip(QWidget* parent) : QWidget(parent) {
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    setToolTip(tr("Each layer's kind; a red mark: the layer has experts; ticks: where each pipeline stage begins"));
}

bool LayerPatternStrip::worthShowing(const ModelConfig& model) { return model.isHybrid(); }

namespace {
// While an edit leaves the model invalid (the layer count changed, its
// pattern not yet), there is no layer-by-layer picture to draw.
bool drawable(const ModelConfig& m) {
    return m.isHybrid() && m.num_layers > 0 && static_cast<int64_t>(m.layer_kinds.size()) == m.num_layers;
}
}  // namespace

void LayerPatternStrip::setScenario(const Scenario& scenario) {
    scenario_ = scenario;
    updateGeometry();
    update();
}

int LayerPatternStrip::stripHeight() const { return fontMetrics().height(); }

QSize LayerPatternStrip::sizeHint() const {
    return {240, stripHeight() + kLegendGap + fontMetrics().height() * 2 + 4};
}
QSize LayerPatternStrip::minimumSizeHint() const { return {120, sizeHint().height()}; }

QRectF LayerPatternStrip::cellRect(int64_t layer) const {
    const int64_t n = std::max<int64_t>(scenario_.model.num_layers, 1);
    const double w = static_cast<double>(width() - 1) / static_cast<double>(n);
    return {w * static_cast<double>(layer), 0.0, w, static_cast<double>(stripHeight())};
}

int64_t LayerPatternStrip::layerAt(QPointF p) const {
    const int64_t n = scenario_.model.num_layers;
    if (n <= 0 || p.y() > stripHeight() || p.x() < 0) return -1;
    const auto layer = static_cast<int64_t>(p.x() / (static_cast<double>(width() - 1) / static_cast<double>(n)));
    return layer < n ? layer : -1;
}

QString LayerPatternStrip::layerText(int64_t layer) const {
    const ModelConfig& m = scenario_.model;
    if (!drawable(m) || layer < 0 || layer >= m.num_layers) return {};
    QString text = tr("Layer %1: %2").arg(layer + 1).arg(kindText(m.layerKind(layer)));
    const int64_t p = std::max<int64_t>(scenario_.parallelism.pipeline, 1);
    for (int64_t i = 0; i < p; ++i) {
        const PipelineStage st = pipelineStage(m, scenario_.parallelism, 1, i);
        if (layer < st.first_layer || layer >= st.first_layer + st.num_layers) continue;
        text += tr("\nStage %1 of %2 (layers %3–%4):").arg(i + 1).arg(p).arg(st.first_layer + 1).arg(st.first_layer + st.num_layers);
        for (size_t k = 0; k < kLayerKinds; ++k)
            if (st.hybrid_layers[k] > 0) text += tr("\n  %1 × %2").arg(st.hybrid_layers[k]).arg(kindText(hybridKindAt(k)));
    }
    return text;
}

bool LayerPatternStrip::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(e);
        const int64_t layer = layerAt(help->pos());
        if (layer >= 0 && drawable(scenario_.model))
            QToolTip::showText(help->globalPos(), layerText(layer), this);
        else
            QToolTip::showText(help->globalPos(), toolTip(), this);
        return true;
    }
    return QWidget::event(e);
}

void LayerPatternStrip::paintEvent(QPaintEvent*) {
    const ModelConfig& m = scenario_.model;
    if (!drawable(m)) return;
    QPainter painter(this);
    std::array<bool, kMixerKinds> present{};
    bool experts = false;
    for (int64_t i = 0; i < m.num_layers; ++i) {
        const LayerKind k = m.layerKind(i);
        const QRectF cell = cellRect(i);
        painter.fillRect(cell.adjusted(0, 0, cell.width() > 3 ? -1 : 0, 0), styleOf(k.mixer).colour);
        present[static_cast<size_t>(k.mixer)] = true;
        if (k.ffn == FfnKind::Moe) {
            experts = true;
            const double mark = std::max(2.0, cell.height() / 4);
            painter.fillRect(QRectF(cell.left(), cell.bottom() - mark, std::max(1.0, cell.width() - 1), mark), kExperts);
        }
    }
    // Where each pipeline stage begins.
    const int64_t p = std::max<int64_t>(scenario_.parallelism.pipeline, 1);
    painter.setPen(QPen(palette().color(QPalette::WindowText), 2));
    for (int64_t i = 1; i < p && p <= m.num_layers; ++i) {
        const double x = cellRect(pipelineStage(m, scenario_.parallelism, 1, i).first_layer).left();
        painter.drawLine(QPointF(x, -1), QPointF(x, stripHeight() + 2));
    }
    // The legend: the kinds the model has, wrapping onto a second line.
    painter.setPen(palette().color(QPalette::WindowText));
    const QFontMetrics fm = fontMetrics();
    const int box = fm.ascent() - 2;
    int x = 0, y = stripHeight() + kLegendGap;
    auto entry = [&](const QColor& colour, const QString& name) {
        const int w = box + 4 + fm.horizontalAdvance(name) + 12;
        if (x > 0 && x + w > width()) {
            x = 0;
            y += fm.height();
        }
        painter.fillRect(QRect(x, y + (fm.height() - box) / 2, box, box), colour);
        painter.drawText(QPoint(x + box + 4, y + fm.ascent()), name);
        x += w;
    };
    for (const MixerStyle& s : kMixers)
        if (present[static_cast<size_t>(s.kind)]) entry(s.colour, tr(s.name));
    if (experts) entry(kExperts, tr("experts"));
}

}  // namespace trainmem::ui
