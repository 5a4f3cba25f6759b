#include "ui/export_size_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QSpinBox>

namespace trainmem::ui {

const std::vector<ExportSizePreset>& exportSizePresets() {
    static const std::vector<ExportSizePreset> presets = {
        {QStringLiteral("slide"), QObject::tr("Slide (16:9)"), {1280, 720}, {720, 405}},
        {QStringLiteral("column"), QObject::tr("Document column (16 cm)"), {640, 480}, {454, 340}},
        {QStringLiteral("page"), QObject::tr("Full page (17 × 24 cm)"), {900, 1270}, {482, 680}},
    };
    return presets;
}

ExportSizeDialog::ExportSizeDialog(QSize size, double scale, bool raster, QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Export size"));
    auto* form = new QFormLayout(this);
    const std::vector<ExportSizePreset>& presets = exportSizePresets();
    presets_ = new QComboBox(this);
    presets_->addItem(tr("Custom"));
    for (const ExportSizePreset& p : presets) {
        const QSize s = raster ? p.raster : p.vector;
        presets_->addItem(QStringLiteral("%1 — %2 × %3 %4").arg(p.name).arg(s.width()).arg(s.height()).arg(raster ? tr("px") : tr("pt")), s);
    }
    form->addRow(tr("Preset"), presets_);
    width_ = new QSpinBox(this);
    width_->setRange(100, 20000);
    width_->setValue(size.width());
    width_->setSuffix(raster ? tr(" px") : tr(" pt"));
    height_ = new QSpinBox(this);
    height_->setRange(80, 20000);
    height_->setValue(size.height());
    height_->setSuffix(width_->suffix());
    form->addRow(tr("Width"), width_);
    form->addRow(tr("Height"), height_);
    connect(presets_, &QComboBox::activated, this, [this](int index) {
        const QSize s = presets_->itemData(index).toSize();
        if (s.isEmpty()) return;
        width_->setValue(s.width());
        height_->setValue(s.height());
    });
    // Editing a number makes it a custom size, so the preset shown never lies.
    auto custom = [this] {
        if (presets_->currentData().toSize() != QSize(width_->value(), height_->value())) presets_->setCurrentIndex(0);
    };
    connect(width_, &QSpinBox::valueChanged, this, custom);
    connect(height_, &QSpinBox::valueChanged, this, custom);
    for (int i = 1; i < presets_->count(); ++i)
        if (presets_->itemData(i).toSize() == size) presets_->setCurrentIndex(i);
    scale_ = new QComboBox(this);
    for (double s : {1.0, 1.5, 2.0, 3.0, 4.0}) scale_->addItem(QStringLiteral("%1x").arg(s), s);
    scale_->setCurrentIndex(std::max(0, scale_->findData(scale)));
    scale_->setToolTip(tr("Device pixels per layout pixel: 2x gives a sharp image on high-DPI screens and slides."));
    if (raster) form->addRow(tr("Scale"), scale_);
    else scale_->hide();
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    form->addRow(buttons);
}

QSize ExportSizeDialog::size() const { return {width_->value(), height_->value()}; }
double ExportSizeDialog::scale() const { return scale_->currentData().toDouble(); }

}  // namespace trainmem::ui
