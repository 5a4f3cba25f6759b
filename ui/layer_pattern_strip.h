#pragma once
// A hybrid's layer pattern at a glance (issue 23): one cell per layer,
// coloured by its token mixer (attention, Gated DeltaNet, Mamba-2, short
// convolution, or none), a mark on the layers with experts, and a tick where
// each pipeline stage begins; the legend names the kinds the model has. The
// tooltip of a cell says its layer's kind and what its stage holds. It draws
// ModelConfig::layerKind and core's pipeline stages; it computes nothing.
#include <QWidget>

#include "core/scenario/scenario.h"

namespace trainmem::ui {

class LayerPatternStrip : public QWidget {
    Q_OBJECT
public:
    explicit LayerPatternStrip(QWidget* parent = nullptr);
    // Shows the scenario's model and pipeline.
    void setScenario(const Scenario& scenario);
    // Whether the model has layers of more than one kind (else there is
    // nothing to draw).
    static bool worthShowing(const ModelConfig& model);
    // What the tooltip of layer `layer`'s cell says: its kind, its stage's kinds.
    QString layerText(int64_t layer) const;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;

private:
    QRectF cellRect(int64_t layer) const;
    int64_t layerAt(QPointF position) const;
    int stripHeight() const;

    Scenario scenario_;
};

}  // namespace trainmem::ui
