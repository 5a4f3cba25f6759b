#pragma once
// Writing a file, the one way every writer of trainmem does it (scenario
// saves, chart exports, the app's session): the bytes go to a temporary file
// of our own naming in the target's folder, every byte is checked written
// and the file's size compared with what was meant, then a rename replaces
// the target atomically. On any failure the previous file is unchanged and
// the error says why. docs/robustness.md lists what is refused.
#include <filesystem>
#include <string_view>

#include "core/base/error.h"

namespace trainmem {

// Writes `bytes` to `path` (through symlinks: their final target is
// replaced, the link stays). Refused, naming the path: a target that is not
// a regular file (a folder, FIFO, device or socket, also behind a symlink),
// a read-only target, a folder that cannot be written. A full disk or any
// short write fails the same way. Temporary files of this naming older than
// a minute, left by a save that was killed, are removed from the folder.
Status writeFileAtomically(const std::filesystem::path& path, std::string_view bytes);

// The temporary files writeFileAtomically uses for `target`: ".NAME.XXXXXX".
bool isTemporaryFileOf(const std::filesystem::path& candidate, const std::filesystem::path& target);

}  // namespace trainmem
