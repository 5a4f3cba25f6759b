#pragma once
// The GPU catalogue as a combo box, built in one place for the Hardware
// panel and Find a Layout: each item's data is the GPU's catalogue name, its
// text the name and memory in the app's units, its tooltip the description.
#include <QComboBox>

#include "core/base/units.h"

namespace trainmem::ui {

class GpuChoice : public QComboBox {
public:
    // `offer_custom`: a last item "Custom size" whose data is "custom".
    explicit GpuChoice(bool offer_custom, QWidget* parent = nullptr);
    // Memory sizes in GiB or GB.
    void setUnits(Units units);

    static const QString kCustom;  // the custom item's data, hardware.gpu = "custom"
};

}  // namespace trainmem::ui
