#include "ui/export_size_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QSpinBox>

namespace trainmem::ui {

ExportSizeDialog::ExportSizeDialog(QSize size, double scale, bool raster, QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Export size"));
    auto* form = new QFormLayout(this);
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
