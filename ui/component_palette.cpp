#include "ui/component_palette.h"

#include "core/training/optimizer_state.h"

namespace trainmem::ui {

QColor componentColor(Component c) {
    switch (c) {
        case Component::Weights: return QColor(0x34, 0x98, 0xdb);            // seed: Params
        case Component::Gradients: return QColor(0xe7, 0x4c, 0x3c);          // seed: Gradients
        case Component::MasterWeights: return QColor(0x16, 0xa0, 0x85);
        case Component::OptimizerStates: return QColor(0x9b, 0x59, 0xb6);    // seed: Optimizer states
        case Component::WeightCopies: return QColor(0x85, 0xc1, 0xe9);
        case Component::GatheredWeights: return QColor(0x1f, 0x61, 0x8d);
        case Component::CommBuffers: return QColor(0x7f, 0x8c, 0x8d);
        case Component::Activations: return QColor(0xf3, 0x9c, 0x12);        // seed: Activations
        case Component::LogitsLoss: return QColor(0xd3, 0x54, 0x00);
        case Component::OptimizerTransient: return QColor(0xc3, 0x9b, 0xd3);
        case Component::Workspace: return QColor(0x34, 0x49, 0x5e);
    }
    return Qt::gray;
}

QColor deviceLayerColor(DeviceLayer layer) {
    switch (layer) {
        case DeviceLayer::AllocatorReserve: return QColor(0xbd, 0xc3, 0xc7);
        case DeviceLayer::PagedStates: return QColor(0xa5, 0x69, 0x9e);
        case DeviceLayer::OutsideAllocator: return QColor(0x56, 0x65, 0x73);
    }
    return Qt::gray;
}

QString deviceLayerName(DeviceLayer layer) {
    switch (layer) {
        case DeviceLayer::AllocatorReserve: return QStringLiteral("Allocator reserve");
        case DeviceLayer::PagedStates: return QStringLiteral("Paged optimizer states");
        case DeviceLayer::OutsideAllocator: return QStringLiteral("CUDA context + NCCL");
    }
    return {};
}

QString deviceLayerKey(DeviceLayer layer) {
    switch (layer) {
        case DeviceLayer::AllocatorReserve: return QStringLiteral("allocator_reserve");
        case DeviceLayer::PagedStates: return QStringLiteral("paged_states");
        case DeviceLayer::OutsideAllocator: return QStringLiteral("outside_allocator");
    }
    return {};
}

QColor optimizerColor(OptimizerKind kind) { return QColor(QRgb(optimizerSpec(kind).colour)); }

QColor textColorOn(const QColor& fill) {
    // Relative luminance (ITU-R BT.709 weights) decides legibility.
    const double y = 0.2126 * fill.redF() + 0.7152 * fill.greenF() + 0.0722 * fill.blueF();
    return y > 0.6 ? QColor(0x22, 0x22, 0x22) : Qt::white;
}

}  // namespace trainmem::ui
