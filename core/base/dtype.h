#pragma once
#include <optional>
#include <string_view>

namespace trainmem {

// Storage types of tensors. Bytes may be fractional (NF4 is half a byte).
enum class DType { Fp32, Bf16, Fp16, Fp8, Int8, Nf4 };

constexpr double bytesOf(DType t) {
    switch (t) {
        case DType::Fp32: return 4.0;
        case DType::Bf16: return 2.0;
        case DType::Fp16: return 2.0;
        case DType::Fp8: return 1.0;
        case DType::Int8: return 1.0;
        case DType::Nf4: return 0.5;
    }
    return 4.0;
}

// Spelled, like every enum, in core/training/names.h (dtypeName, parseDType).

}  // namespace trainmem
