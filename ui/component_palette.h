#pragma once
// One colour per memory component, shared by every tab, the table and the
// exports, so "orange" means activations everywhere. The first four are the
// seed figure's (docs/seeds training-memory-breakdown.svg).
#include <QColor>
#include <QString>

#include "core/account/estimate.h"
#include "core/training/training_config.h"

namespace trainmem::ui {

// What a bar segment stands for: one of the allocator's components, or one of
// the device-level layers the estimate reports beside them.
enum class DeviceLayer {
    AllocatorReserve,  // reserved - allocated: the caching allocator's fragmentation
    PagedStates,       // paged optimizer states in CUDA managed memory (core/account/paged_states.h)
    OutsideAllocator,  // device - reserved - paged: CUDA context, NCCL buffers
};

QColor componentColor(Component c);
QColor deviceLayerColor(DeviceLayer layer);
QString deviceLayerName(DeviceLayer layer);
QString deviceLayerKey(DeviceLayer layer);  // "allocator_reserve", for tests and SVG ids

// The optimizer comparison in "x params" colours each optimizer like the seed
// figure does (optimizer-memory-per-parameter.svg).
QColor optimizerColor(OptimizerKind kind);

// Text on a coloured fill: white on dark fills, near-black on light ones.
QColor textColorOn(const QColor& fill);

}  // namespace trainmem::ui
