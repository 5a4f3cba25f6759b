#pragma once
// Asks the size (and for PNG the scale) of a chart export.
#include <QDialog>

class QSpinBox;
class QComboBox;

namespace trainmem::ui {

class ExportSizeDialog : public QDialog {
    Q_OBJECT
public:
    ExportSizeDialog(QSize size, double scale, bool raster, QWidget* parent = nullptr);
    QSize size() const;
    double scale() const;
    QComboBox* presets() const { return presets_; }

private:
    QComboBox* presets_;
    QSpinBox* width_;
    QSpinBox* height_;
    QComboBox* scale_;
};

}  // namespace trainmem::ui
