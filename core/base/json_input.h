#pragma once
// Reading input files and JSON text with limits, for every reader of user
// input (scenario files, config.json, the presets folder, --set values,
// snapshots). A hostile input gets an error that names the limit it hit,
// never a crash, a hang or an allocation out of proportion to it. The limits
// are listed in docs/robustness.md.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/base/error.h"

namespace trainmem {

// Largest JSON file read (scenario, config.json, preset). Real files are a
// few KB; the largest Hugging Face configs (label maps) stay under 1 MiB.
constexpr int64_t kMaxJsonFileBytes = int64_t{16} << 20;
// Largest memory snapshot read. Decoding takes about 6x the file (docs/snapshots.md).
constexpr int64_t kMaxSnapshotFileBytes = int64_t{2} << 30;
// Deepest JSON nesting accepted: objects and arrays inside each other. A
// scenario is 3 deep and a config.json at most 4; the copy, dump and
// destruction of a JSON value recurse once per level.
constexpr int kMaxJsonDepth = 32;

// The whole content of a regular file of at most `max_bytes`. Refuses, with
// a message naming the path: a missing file (ENOENT), no permission (EACCES),
// a symlink loop (ELOOP), a folder, anything not a regular file (FIFO,
// device such as /dev/zero, socket; also behind a symlink), and a file over
// the limit. A FIFO is refused without blocking. The error's field is the path.
Expected<std::string> readInputFile(const std::filesystem::path& path, int64_t max_bytes);

// JSON text -> value, refusing nesting deeper than kMaxJsonDepth and a key
// that appears twice in one object (naming the key's dotted path and both
// lines). `source` names the input in messages ("run.json", "--set model.x").
// The error's field is empty; its message starts with `source`.
Expected<nlohmann::json> parseJsonText(std::string_view text, std::string_view source);

// Reads a JSON file with every limit above; errors say which file and what
// went wrong (field empty, message "PATH: ...").
Expected<nlohmann::json> readJsonFile(const std::filesystem::path& path);

// A JSON value for an error message, cut to about `max_chars` characters
// without serialising more than that (a 100 KB string or a deep array costs
// no more than a short one). Control characters are escaped.
std::string describeJson(const nlohmann::json& value, size_t max_chars = 40);

// Raw text (a --set value) for an error message: at most `max_chars`
// characters, control characters escaped, "..." when cut.
std::string describeText(std::string_view text, size_t max_chars = 40);

// A name from a file for a terminal: control characters (newlines, escape
// sequences) shown as \n, \x1b, ..., so a file cannot write to the terminal.
std::string printableText(std::string_view text);

}  // namespace trainmem
