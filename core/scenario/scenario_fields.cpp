// The key table of the scenario format. Units on disk are the ones people
// think in (MiB, GiB); the Scenario holds bytes. Defaults are those of the
// structs in training_config.h, parallel_config.h and hardware.h, listed in
// docs/scenario-format.md.
#include "core/scenario/scenario_fields.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "core/scenario/frameworks.h"
#include "core/base/json_input.h"
#include "core/training/names.h"

namespace trainmem {

namespace {

using nlohmann::json;

// Largest MiB / GiB figure accepted, so the conversion to bytes cannot
// overflow int64 (2^32 GiB = 4 EiB is far beyond any device or host).
// Integers, not doubles: they are template arguments of ByteCodec, and a
// double non-type template parameter does not compile with clang 14
// (Debian 12's, which builds the fuzzers).
constexpr int64_t kMaxMib = int64_t{1} << 42;
constexpr int64_t kMaxGib = int64_t{1} << 32;

// Integral doubles are written as JSON integers ("80", not "80.0").
json numberJson(double x) {
    if (std::isfinite(x) && x == std::floor(x) && std::fabs(x) < 9.0e15)
        return static_cast<int64_t>(x);
    return x;
}

Error rangeError(const std::string& path, double max) {
    return Error{path, "must be at most " + json(max).dump()};
}

// A field with its identity set and its accessors still to fill in.
ScenarioField makeField(std::string_view section, std::string_view key, ValueKind kind, bool nullable = false) {
    ScenarioField f;
    f.section = section;
    f.key = key;
    f.kind = kind;
    f.nullable = nullable;
    return f;
}

// How each kind of value is written to the file and read back. The JSON
// type was checked before set() is called (scenario_json.cpp); read() only
// adds what the type cannot say, such as a unit conversion's range.
struct IntegerCodec {
    static constexpr ValueKind kind = ValueKind::Integer;
    static json write(int64_t v) { return v; }
    static Expected<int64_t> read(const json& v, const std::string&) { return v.get<int64_t>(); }
};

struct NumberCodec {
    static constexpr ValueKind kind = ValueKind::Number;
    static json write(double v) { return numberJson(v); }
    static Expected<double> read(const json& v, const std::string&) { return v.get<double>(); }
};

struct BooleanCodec {
    static constexpr ValueKind kind = ValueKind::Boolean;
    static json write(bool v) { return v; }
    static Expected<bool> read(const json& v, const std::string&) { return v.get<bool>(); }
};

struct TextCodec {
    static constexpr ValueKind kind = ValueKind::Text;
    static json write(const std::string& v) { return v; }
    static Expected<std::string> read(const json& v, const std::string&) { return v.get<std::string>(); }
};

struct NameListCodec {
    static constexpr ValueKind kind = ValueKind::NameList;
    static json write(const std::vector<std::string>& v) { return v; }
    static Expected<std::vector<std::string>> read(const json& v, const std::string&) {
        return v.get<std::vector<std::string>>();
    }
};

// Bytes in the Scenario, MiB or GiB in the file.
template <int64_t Unit, int64_t Max>
struct ByteCodec {
    static constexpr ValueKind kind = ValueKind::Number;
    static json write(int64_t bytes) { return numberJson(static_cast<double>(bytes) / Unit); }
    static Expected<int64_t> read(const json& v, const std::string& path) {
        const double amount = v.get<double>();
        if (std::fabs(amount) > static_cast<double>(Max)) return rangeError(path, static_cast<double>(Max));
        return std::llround(amount * Unit);
    }
};
using MibCodec = ByteCodec<kMiB, kMaxMib>;
using GibCodec = ByteCodec<kGiB, kMaxGib>;

template <class Codec, class Access>
ScenarioField plainField(std::string_view section, std::string_view key, Access access) {
    ScenarioField f = makeField(section, key, Codec::kind);
    f.get = [access](const Scenario& s) { return Codec::write(access(s)); };
    f.set = [access, path = f.path()](Scenario& s, const json& v) -> Status {
        auto value = Codec::read(v, path);
        if (!value) return value.error();
        access(s) = std::move(value.value());
        return ok();
    };
    return f;
}

// A std::optional member: null in the file is "not set".
template <class Codec, class Access>
ScenarioField optionalField(std::string_view section, std::string_view key, Access access) {
    ScenarioField f = makeField(section, key, Codec::kind, true);
    f.get = [access](const Scenario& s) { return access(s) ? Codec::write(*access(s)) : json(nullptr); };
    f.set = [access, path = f.path()](Scenario& s, const json& v) -> Status {
        if (v.is_null()) {
            access(s).reset();
            return ok();
        }
        auto value = Codec::read(v, path);
        if (!value) return value.error();
        access(s) = std::move(value.value());
        return ok();
    };
    return f;
}

template <class Access>
ScenarioField integerField(std::string_view section, std::string_view key, Access access) {
    return plainField<IntegerCodec>(section, key, access);
}
template <class Access>
ScenarioField optionalIntegerField(std::string_view section, std::string_view key, Access access) {
    return optionalField<IntegerCodec>(section, key, access);
}
template <class Access>
ScenarioField numberField(std::string_view section, std::string_view key, Access access) {
    return plainField<NumberCodec>(section, key, access);
}
template <class Access>
ScenarioField optionalNumberField(std::string_view section, std::string_view key, Access access) {
    return optionalField<NumberCodec>(section, key, access);
}
template <class Access>
ScenarioField booleanField(std::string_view section, std::string_view key, Access access) {
    return plainField<BooleanCodec>(section, key, access);
}
template <class Access>
ScenarioField textField(std::string_view section, std::string_view key, Access access) {
    return plainField<TextCodec>(section, key, access);
}
template <class Access>
ScenarioField nameListField(std::string_view section, std::string_view key, Access access) {
    return plainField<NameListCodec>(section, key, access);
}
template <class Access>
ScenarioField mibField(std::string_view section, std::string_view key, Access access) {
    return plainField<MibCodec>(section, key, access);
}
template <class Access>
ScenarioField optionalMibField(std::string_view section, std::string_view key, Access access) {
    return optionalField<MibCodec>(section, key, access);
}
template <class Access>
ScenarioField optionalGibField(std::string_view section, std::string_view key, Access access) {
    return optionalField<GibCodec>(section, key, access);
}

template <class E, class Access>
ScenarioField enumField(std::string_view section, std::string_view key, Access access) {
    ScenarioField f = makeField(section, key, ValueKind::Name);
    for (const auto& entry : enumNames<E>()) f.names.push_back(entry.name);
    f.get = [access](const Scenario& s) { return json(enumName(access(s))); };
    f.set = [access](Scenario& s, const json& v) -> Status {
        access(s) = *parseEnum<E>(v.get<std::string>());
        return ok();
    };
    return f;
}

// A dtype override: "auto" (or null) keeps the precision recipe's default.
template <class Access>
ScenarioField dtypeOverrideField(std::string_view section, std::string_view key,
                                 std::vector<std::string_view> dtypes, Access access) {
    ScenarioField f = makeField(section, key, ValueKind::Name, true);
    f.names = {"auto"};
    f.names.insert(f.names.end(), dtypes.begin(), dtypes.end());
    f.get = [access](const Scenario& s) { return access(s) ? json(dtypeName(*access(s))) : json("auto"); };
    f.set = [access](Scenario& s, const json& v) -> Status {
        if (v.is_null() || v.get<std::string>() == "auto")
            access(s).reset();
        else
            access(s) = *parseDType(v.get<std::string>());
        return ok();
    };
    return f;
}

// training.framework sets the defaults of the keys its row names
// (core/scenario/frameworks.h); it is read before the other keys of the section, and
// the training section before the parallelism section (scenario_json.cpp,
// scenario_setting.cpp), so explicit keys override it; the keys its row sets
// by layout are set again once the whole scenario is read. NAME@RELEASE (or
// NAME@YYYY-MM-DD) names an older release than the newest.
ScenarioField frameworkField() {
    ScenarioField f = makeField("training", "framework", ValueKind::Text);
    for (const auto& entry : enumNames<Framework>()) f.names.push_back(entry.name);
    f.get = [](const Scenario& s) {
        std::string text(enumName(s.training.framework));
        if (!s.training.framework_release.empty()) text += "@" + s.training.framework_release;
        return json(text);
    };
    f.set = [names = f.names](Scenario& s, const json& v) -> Status {
        const std::string text = v.get<std::string>();
        const size_t at = text.find('@');
        const std::string name = text.substr(0, at);
        const auto framework = parseEnum<Framework>(name);
        if (!framework) {
            std::string hint;
            if (auto near = closestName(name, names); !near.empty()) hint = "; did you mean " + std::string(near) + "?";
            return Error{"training.framework", "unknown name \"" + describeText(name) + "\"" + hint + "; allowed: " +
                                                   joinNames(names) + " (each optionally @RELEASE or @YYYY-MM-DD)"};
        }
        std::string_view release;
        if (at != std::string::npos) {
            auto found = findFrameworkRelease(*framework, std::string_view(text).substr(at + 1));
            if (!found) return found.error();
            release = (*found)->release;
        }
        applyFrameworkDefaults(s, *framework, release);
        return ok();
    };
    return f;
}

std::vector<ScenarioField> buildFields() {
    constexpr std::string_view T = "training";
    constexpr std::string_view P = "parallelism";
    constexpr std::string_view H = "hardware";
    std::vector<ScenarioField> f;
    // training
    f.push_back(frameworkField());
    f.push_back(integerField(T, "micro_batch_size", [](auto& s) -> auto& { return s.training.micro_batch_size; }));
    f.push_back(integerField(T, "sequence_length", [](auto& s) -> auto& { return s.training.sequence_length; }));
    f.push_back(integerField(T, "gradient_accumulation_steps",
                             [](auto& s) -> auto& { return s.training.gradient_accumulation_steps; }));
    f.push_back(enumField<Precision>(T, "precision", [](auto& s) -> auto& { return s.training.precision; }));
    f.push_back(dtypeOverrideField(T, "grad_dtype", {"fp32", "bf16", "fp16"},
                                   [](auto& s) -> auto& { return s.training.grad_dtype; }));
    f.push_back(enumField<OptimizerKind>(T, "optimizer", [](auto& s) -> auto& { return s.training.optimizer; }));
    f.push_back(enumField<OptimizerImpl>(T, "optimizer_impl",
                                         [](auto& s) -> auto& { return s.training.optimizer_impl; }));
    f.push_back(booleanField(T, "optimizer_in_backward",
                             [](auto& s) -> auto& { return s.training.optimizer_in_backward; }));
    f.push_back(dtypeOverrideField(T, "optimizer_state_dtype", {"fp32", "bf16"},
                                   [](auto& s) -> auto& { return s.training.optimizer_state_dtype; }));
    f.push_back(enumField<Checkpointing>(T, "activation_checkpointing",
                                         [](auto& s) -> auto& { return s.training.checkpointing; }));
    f.push_back(integerField(T, "checkpoint_every", [](auto& s) -> auto& { return s.training.checkpoint_every; }));
    f.push_back(nameListField(T, "checkpoint_save_ops",
                              [](auto& s) -> auto& { return s.training.checkpoint_save_ops; }));
    f.push_back(enumField<AttentionImpl>(T, "attention", [](auto& s) -> auto& { return s.training.attention; }));
    f.push_back(enumField<KernelProfile>(T, "kernels", [](auto& s) -> auto& { return s.training.kernels; }));
    f.push_back(enumField<LossImpl>(T, "loss", [](auto& s) -> auto& { return s.training.loss; }));
    f.push_back(integerField(T, "loss_chunks", [](auto& s) -> auto& { return s.training.loss_chunks; }));
    f.push_back(enumField<Finetuning>(T, "finetuning", [](auto& s) -> auto& { return s.training.finetuning; }));
    f.push_back(integerField(T, "lora_rank", [](auto& s) -> auto& { return s.training.lora_rank; }));
    f.push_back(nameListField(T, "lora_targets", [](auto& s) -> auto& { return s.training.lora_targets; }));
    f.push_back(numberField(T, "lora_dropout", [](auto& s) -> auto& { return s.training.lora_dropout; }));
    f.push_back(optionalIntegerField(T, "base_batch_size",
                                     [](auto& s) -> auto& { return s.training.base_batch_size; }));
    f.push_back(optionalNumberField(T, "base_learning_rate",
                                    [](auto& s) -> auto& { return s.training.base_learning_rate; }));
    f.push_back(integerField(T, "warmup_steps", [](auto& s) -> auto& { return s.training.warmup_steps; }));
    f.push_back(enumField<ActivationOffloading>(T, "activation_offloading",
                                                [](auto& s) -> auto& { return s.training.activation_offloading; }));
    f.push_back(booleanField(T, "deepspeed_partition_activations",
                             [](auto& s) -> auto& { return s.training.deepspeed_partition_activations; }));
    f.push_back(booleanField(T, "deepspeed_cpu_checkpointing",
                             [](auto& s) -> auto& { return s.training.deepspeed_cpu_checkpointing; }));
    // parallelism
    f.push_back(integerField(P, "data", [](auto& s) -> auto& { return s.parallelism.data; }));
    f.push_back(integerField(P, "tensor", [](auto& s) -> auto& { return s.parallelism.tensor; }));
    f.push_back(integerField(P, "pipeline", [](auto& s) -> auto& { return s.parallelism.pipeline; }));
    f.push_back(integerField(P, "context", [](auto& s) -> auto& { return s.parallelism.context; }));
    f.push_back(integerField(P, "expert", [](auto& s) -> auto& { return s.parallelism.expert; }));
    f.push_back(integerField(P, "zero_stage", [](auto& s) -> auto& { return s.parallelism.zero_stage; }));
    f.push_back(integerField(P, "shard_group", [](auto& s) -> auto& { return s.parallelism.shard_group; }));
    f.push_back(booleanField(P, "sequence_parallel", [](auto& s) -> auto& { return s.parallelism.sequence_parallel; }));
    f.push_back(enumField<PipelineSchedule>(P, "pipeline_schedule",
                                            [](auto& s) -> auto& { return s.parallelism.schedule; }));
    f.push_back(integerField(P, "virtual_stages", [](auto& s) -> auto& { return s.parallelism.virtual_stages; }));
    f.push_back(integerField(P, "microbatches", [](auto& s) -> auto& { return s.parallelism.microbatches; }));
    f.push_back(booleanField(P, "offload_optimizer", [](auto& s) -> auto& { return s.parallelism.offload_optimizer; }));
    f.push_back(booleanField(P, "offload_parameters",
                             [](auto& s) -> auto& { return s.parallelism.offload_parameters; }));
    f.push_back(optionalIntegerField(P, "gpus", [](auto& s) -> auto& { return s.parallelism.gpus; }));
    // hardware
    f.push_back(textField(H, "gpu", [](auto& s) -> auto& { return s.hardware.gpu; }));
    f.push_back(optionalGibField(H, "memory_gib", [](auto& s) -> auto& { return s.hardware.memory_bytes; }));
    f.push_back(mibField(H, "cuda_context_mib", [](auto& s) -> auto& { return s.hardware.overheads.cuda_context_bytes; }));
    f.push_back(optionalMibField(H, "cublas_workspace_mib",
                                 [](auto& s) -> auto& { return s.hardware.overheads.cublas_workspace_bytes; }));
    f.push_back(mibField(H, "nccl_mib_per_group",
                         [](auto& s) -> auto& { return s.hardware.overheads.nccl_bytes_per_group; }));
    f.push_back(mibField(H, "ddp_bucket_mib", [](auto& s) -> auto& { return s.hardware.overheads.ddp_bucket_bytes; }));
    f.push_back(booleanField(H, "ddp_gradient_as_bucket_view",
                             [](auto& s) -> auto& { return s.hardware.overheads.ddp_gradient_as_bucket_view; }));
    f.push_back(integerField(H, "fsdp_prefetch_units",
                             [](auto& s) -> auto& { return s.hardware.overheads.fsdp_prefetch_units; }));
    f.push_back(numberField(H, "fragmentation", [](auto& s) -> auto& { return s.hardware.overheads.fragmentation; }));
    f.push_back(optionalIntegerField(H, "gpus_per_node", [](auto& s) -> auto& { return s.hardware.gpus_per_node; }));
    f.push_back(optionalNumberField(H, "scale_up_gb_s", [](auto& s) -> auto& { return s.hardware.scale_up_gb_s; }));
    f.push_back(optionalNumberField(H, "scale_out_gb_s", [](auto& s) -> auto& { return s.hardware.scale_out_gb_s; }));
    // FSDP2 policies, QLoRA backends, paged optimizers (docs/memory-model.md);
    // saved with their sections (scenarioToOrderedJson groups by section).
    f.push_back(enumField<QloraBackend>(T, "qlora_backend", [](auto& s) -> auto& { return s.training.qlora_backend; }));
    f.push_back(booleanField(T, "optimizer_paged", [](auto& s) -> auto& { return s.training.optimizer_paged; }));
    f.push_back(booleanField(P, "reshard_after_forward",
                             [](auto& s) -> auto& { return s.parallelism.reshard_after_forward; }));
    f.push_back(integerField(P, "reshard_after_forward_ranks",
                             [](auto& s) -> auto& { return s.parallelism.reshard_after_forward_ranks; }));
    f.push_back(enumField<FsdpGradientSync>(P, "fsdp_gradient_sync",
                                            [](auto& s) -> auto& { return s.parallelism.fsdp_gradient_sync; }));
    f.push_back(enumField<FsdpEnds>(P, "fsdp_ends", [](auto& s) -> auto& { return s.parallelism.fsdp_ends; }));
    return f;
}

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::string_view trim(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
    return text;
}

size_t editDistance(std::string_view a, std::string_view b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

}  // namespace

std::string ScenarioField::path() const { return std::string(section) + "." + std::string(key); }

const std::vector<ScenarioField>& scenarioFields() {
    static const std::vector<ScenarioField> fields = buildFields();
    return fields;
}

const ScenarioField* findField(std::string_view section, std::string_view key) {
    for (const auto& f : scenarioFields())
        if (f.section == section && f.key == key) return &f;
    return nullptr;
}

std::vector<std::string_view> sectionKeys(std::string_view section) {
    std::vector<std::string_view> keys;
    for (const auto& f : scenarioFields())
        if (f.section == section) keys.push_back(f.key);
    return keys;
}

std::string joinNames(const std::vector<std::string_view>& names) {
    std::string text;
    for (auto name : names) {
        if (!text.empty()) text += ", ";
        text += name;
    }
    return text;
}

std::string describeValue(const json& value) { return describeJson(value, 40); }

std::string_view closestName(std::string_view word, const std::vector<std::string_view>& candidates) {
    std::string_view best;
    size_t best_distance = std::numeric_limits<size_t>::max();
    // Beyond a third of the word it is a different word, not a typo.
    const size_t most = std::max<size_t>(2, word.size() / 3);
    for (auto candidate : candidates) {
        // The distance is at least the lengths' difference: a name that far
        // off is not computed (a 100 KB key against every name took seconds).
        const size_t gap = word.size() > candidate.size() ? word.size() - candidate.size() : candidate.size() - word.size();
        if (gap > most && !(candidate.starts_with(word) && word.size() >= 3)) continue;
        // A prefix ("micro_batch" for "micro_batch_size") is the commonest slip.
        const size_t d = candidate.starts_with(word) && word.size() >= 3 ? 1 : editDistance(word, candidate);
        if (d < best_distance) {
            best_distance = d;
            best = candidate;
        }
    }
    if (best_distance > most) return {};
    return best;
}

Status checkValue(const ScenarioField& field, const json& value) {
    const std::string path = field.path();
    const std::string got = " (got " + describeValue(value) + ")";
    if (value.is_null()) {
        if (field.nullable) return ok();
        return Error{path, "must not be null" + got};
    }
    switch (field.kind) {
        case ValueKind::Integer:
            if (value.is_number_unsigned() && value.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
                return Error{path, "is too large" + got};
            if (!value.is_number_integer()) return Error{path, "expected an integer" + got};
            return ok();
        case ValueKind::Number:
            if (!value.is_number()) return Error{path, "expected a number" + got};
            return ok();
        case ValueKind::Boolean:
            if (!value.is_boolean()) return Error{path, "expected true or false" + got};
            return ok();
        case ValueKind::Text:
            if (!value.is_string()) return Error{path, "expected a string" + got};
            return ok();
        case ValueKind::Name: {
            const std::string allowed = "one of: " + joinNames(field.names);
            if (!value.is_string()) return Error{path, "expected a name, " + allowed + got};
            const auto name = value.get<std::string>();
            if (std::find(field.names.begin(), field.names.end(), name) == field.names.end()) {
                std::string hint;
                if (auto near = closestName(name, field.names); !near.empty())
                    hint = "; did you mean " + std::string(near) + "?";
                return Error{path, "unknown name \"" + describeText(name) + "\"" + hint + "; allowed: " + joinNames(field.names)};
            }
            return ok();
        }
        case ValueKind::NameList:
            if (!value.is_array()) return Error{path, "expected an array of names" + got};
            for (const auto& item : value)
                if (!item.is_string()) return Error{path, "expected an array of names, found " + describeValue(item)};
            return ok();
    }
    return ok();
}

Expected<json> parseSettingText(const ScenarioField& field, std::string_view raw) {
    const std::string_view text = trim(raw);
    const std::string path = field.path();
    const std::string got = " (got \"" + describeText(text) + "\")";
    const std::string lowered = lower(text);
    if (field.nullable && field.kind != ValueKind::Name &&
        (lowered == "auto" || lowered == "none" || lowered == "null"))
        return json(nullptr);
    switch (field.kind) {
        case ValueKind::Integer: {
            int64_t v = 0;
            auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            if (ec == std::errc::result_out_of_range) return Error{path, "is too large" + got};
            if (ec != std::errc() || end != text.data() + text.size() || text.empty())
                return Error{path, "expected an integer" + got};
            return json(v);
        }
        case ValueKind::Number: {
            double v = 0;
            auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            if (ec != std::errc() || end != text.data() + text.size() || text.empty() || !std::isfinite(v))
                return Error{path, "expected a number" + got};
            return json(v);
        }
        case ValueKind::Boolean:
            if (lowered == "true" || lowered == "1" || lowered == "yes" || lowered == "on") return json(true);
            if (lowered == "false" || lowered == "0" || lowered == "no" || lowered == "off") return json(false);
            return Error{path, "expected true or false (also 1/0, yes/no, on/off)" + got};
        case ValueKind::Text:
        case ValueKind::Name:
            return json(std::string(text));
        case ValueKind::NameList: {
            json list = json::array();
            std::string_view rest = text;
            while (!rest.empty()) {
                const size_t comma = rest.find(',');
                const std::string_view item = trim(rest.substr(0, comma));
                if (!item.empty()) list.push_back(std::string(item));
                if (comma == std::string_view::npos) break;
                rest.remove_prefix(comma + 1);
            }
            return list;
        }
    }
    return Error{path, "cannot be set from text"};
}

}  // namespace trainmem
