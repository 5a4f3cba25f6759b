#pragma once
// The spelling of every enum in scenario files, on the command line and in
// error messages. One table per enum, so parsing, printing and the "allowed:"
// lists of error messages can never disagree.
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/base/dtype.h"
#include "core/training/parallel_config.h"
#include "core/training/training_config.h"

namespace trainmem {

std::string_view dtypeName(DType t);
std::optional<DType> parseDType(std::string_view name);  // "fp32", "bf16", ...

template <class E>
struct EnumName {
    E value;
    std::string_view name;
};

// Specialised in names.cpp for every enum of the configuration.
template <class E>
std::span<const EnumName<E>> enumNames();

template <>
std::span<const EnumName<DType>> enumNames<DType>();
template <>
std::span<const EnumName<Precision>> enumNames<Precision>();
template <>
std::span<const EnumName<OptimizerKind>> enumNames<OptimizerKind>();
template <>
std::span<const EnumName<OptimizerImpl>> enumNames<OptimizerImpl>();
template <>
std::span<const EnumName<Checkpointing>> enumNames<Checkpointing>();
template <>
std::span<const EnumName<AttentionImpl>> enumNames<AttentionImpl>();
template <>
std::span<const EnumName<KernelProfile>> enumNames<KernelProfile>();
template <>
std::span<const EnumName<LossImpl>> enumNames<LossImpl>();
template <>
std::span<const EnumName<ActivationOffloading>> enumNames<ActivationOffloading>();
template <>
std::span<const EnumName<Finetuning>> enumNames<Finetuning>();
template <>
std::span<const EnumName<Framework>> enumNames<Framework>();
template <>
std::span<const EnumName<FsdpGradientSync>> enumNames<FsdpGradientSync>();
template <>
std::span<const EnumName<FsdpEnds>> enumNames<FsdpEnds>();
template <>
std::span<const EnumName<QloraBackend>> enumNames<QloraBackend>();
template <>
std::span<const EnumName<PipelineSchedule>> enumNames<PipelineSchedule>();

template <class E>
std::optional<E> parseEnum(std::string_view name) {
    for (const auto& entry : enumNames<E>())
        if (entry.name == name) return entry.value;
    return std::nullopt;
}

template <class E>
std::string_view enumName(E value) {
    for (const auto& entry : enumNames<E>())
        if (entry.value == value) return entry.name;
    return "?";
}

// "sgd, sgd-momentum, adam" for error messages and help texts.
template <class E>
std::string allowedNames() {
    std::string text;
    for (const auto& entry : enumNames<E>()) {
        if (!text.empty()) text += ", ";
        text += entry.name;
    }
    return text;
}

}  // namespace trainmem
