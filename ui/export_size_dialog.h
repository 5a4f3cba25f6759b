#pragma once
// Asks the size (and for PNG the scale) of a chart export.
#include <QDialog>

class QSpinBox;
class QComboBox;

#include <vector>

#include <QSize>
#include <QString>

namespace trainmem::ui {

// Sizes for where a figure goes, in the dialog and as `trainmem --size KEY`.
// Vector sizes are in points, so a document column is a physical 16 cm and
// the chart's 11-12 px text is 11-12 pt there; raster sizes are pixels.
struct ExportSizePreset {
    QString key;   // "slide", "column", "page"
    QString name;  // "Document column (16 cm)"
    QSize raster, vector;
};
const std::vector<ExportSizePreset>& exportSizePresets();

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
