#include "cli/arguments.h"

#include <algorithm>

#include "core/scenario/scenario_fields.h"

namespace trainmem::cli {

namespace {

const FlagSpec* findFlag(const std::vector<FlagSpec>& flags, std::string_view name) {
    for (const auto& flag : flags)
        if (flag.name == name) return &flag;
    return nullptr;
}

Error unknownFlag(std::string_view name, const std::vector<FlagSpec>& flags) {
    std::vector<std::string_view> names;
    for (const auto& flag : flags) names.push_back(flag.name);
    std::string message = "unknown option";
    if (auto near = closestName(name, names); !near.empty()) message += " (did you mean " + std::string(near) + "?)";
    message += "; options: " + joinNames(names) + ", --help";
    return Error{std::string(name), message};
}

}  // namespace

Expected<ArgumentList> ArgumentList::parse(const std::vector<std::string>& args, const std::vector<FlagSpec>& flags) {
    ArgumentList list;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& token = args[i];
        if (!token.starts_with("--") || token.size() == 2)
            return Error{"", "unexpected argument \"" + token + "\"; options start with --"};
        const auto eq = token.find('=');
        const std::string name = token.substr(0, eq);
        const FlagSpec* spec = findFlag(flags, name);
        if (!spec) return unknownFlag(name, flags);
        std::string value;
        if (spec->takes_value) {
            if (eq != std::string::npos) {
                value = token.substr(eq + 1);
            } else {
                if (i + 1 >= args.size()) return Error{name, "missing value"};
                value = args[++i];
            }
        } else if (eq != std::string::npos) {
            return Error{name, "takes no value"};
        }
        if (!spec->repeatable && list.has(name)) return Error{name, "given more than once"};
        list.given_.emplace_back(name, std::move(value));
    }
    return list;
}

bool ArgumentList::has(std::string_view flag) const {
    return std::any_of(given_.begin(), given_.end(), [&](const auto& g) { return g.first == flag; });
}

std::optional<std::string> ArgumentList::value(std::string_view flag) const {
    for (const auto& [name, value] : given_)
        if (name == flag) return value;
    return std::nullopt;
}

std::vector<std::string> ArgumentList::values(std::string_view flag) const {
    std::vector<std::string> all;
    for (const auto& [name, value] : given_)
        if (name == flag) all.push_back(value);
    return all;
}

Expected<std::string> choice(const ArgumentList& args, std::string_view flag, const std::vector<std::string_view>& allowed,
                             std::string_view fallback) {
    const auto given = args.value(flag);
    if (!given) return std::string(fallback);
    if (std::find(allowed.begin(), allowed.end(), *given) == allowed.end())
        return Error{std::string(flag), "expected one of: " + joinNames(allowed) + " (got \"" + *given + "\")"};
    return *given;
}

}  // namespace trainmem::cli
