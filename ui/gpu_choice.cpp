#include "ui/gpu_choice.h"

#include "core/training/hardware.h"

namespace trainmem::ui {

namespace {

QString text(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

QString gpuItemText(const GpuSpec& spec, Units units) {
    const double unit = units == Units::GiB ? static_cast<double>(kGiB) : 1e9;
    return QStringLiteral("%1  (%2 %3)")
        .arg(text(spec.name))
        .arg(static_cast<double>(spec.memory_bytes) / unit, 0, 'f', 1)
        .arg(units == Units::GiB ? QStringLiteral("GiB") : QStringLiteral("GB"));
}

}  // namespace

const QString GpuChoice::kCustom = QStringLiteral("custom");

GpuChoice::GpuChoice(bool offer_custom, QWidget* parent) : QComboBox(parent) {
    for (const GpuSpec& spec : gpuCatalogue()) {
        addItem(gpuItemText(spec, Units::GiB), text(spec.name));
        setItemData(count() - 1, text(spec.description), Qt::ToolTipRole);
    }
    if (offer_custom) addItem(tr("Custom size"), kCustom);
}

void GpuChoice::setUnits(Units units) {
    const std::vector<GpuSpec>& catalogue = gpuCatalogue();
    for (size_t i = 0; i < catalogue.size() && static_cast<int>(i) < count(); ++i)
        setItemText(static_cast<int>(i), gpuItemText(catalogue[i], units));
}

}  // namespace trainmem::ui
