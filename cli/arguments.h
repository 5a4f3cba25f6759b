#pragma once
// Command-line flags of one command: "--name value", "--name=value", and
// switches. Anything not declared is an error naming the flag.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.h"

namespace trainmem::cli {

struct FlagSpec {
    std::string_view name;    // "--preset"
    bool takes_value = true;  // false: a switch
    bool repeatable = false;  // --set, --variant
};

class ArgumentList {
public:
    static Expected<ArgumentList> parse(const std::vector<std::string>& args, const std::vector<FlagSpec>& flags);

    bool has(std::string_view flag) const;
    std::optional<std::string> value(std::string_view flag) const;  // of a flag given once
    std::vector<std::string> values(std::string_view flag) const;   // every occurrence, in order

private:
    std::vector<std::pair<std::string, std::string>> given_;
};

// The value of `flag` when it is one of `allowed` (or `fallback` when absent).
Expected<std::string> choice(const ArgumentList& args, std::string_view flag, const std::vector<std::string_view>& allowed,
                             std::string_view fallback);

}  // namespace trainmem::cli
