// Scenario files: read through the bounded JSON reader, written atomically.
// The JSON mapping is in scenario_json.cpp, --set in scenario_setting.cpp.
#include "core/scenario/scenario_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "core/scenario/scenario_fields.h"

namespace trainmem {

namespace {

namespace fs = std::filesystem;

std::string systemError(int error) { return std::generic_category().message(error); }

// Writes all of `data` to `fd`, retrying short writes.
bool writeAll(int fd, const std::string& data) {
    size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        done += static_cast<size_t>(n);
    }
    return true;
}

}  // namespace

Expected<Scenario> loadScenarioFile(const fs::path& path) {
    auto doc = readJsonFile(path);
    if (!doc) return doc.error();
    auto scenario = scenarioFromJson(*doc);
    if (!scenario) {
        Error e = scenario.error();
        e.message += " (in " + path.string() + ")";
        return e;
    }
    return scenario;
}

// The file a save replaces: through symlinks to their final target, so the
// link stays a link and its target is what gets replaced.
static fs::path saveTarget(const fs::path& path) {
    fs::path target = path;
    for (int hops = 0; hops < 40; ++hops) {
        std::error_code ec;
        if (!fs::is_symlink(fs::symlink_status(target, ec)) || ec) return target;
        const fs::path link = fs::read_symlink(target, ec);
        if (ec) return target;
        target = link.is_absolute() ? link : target.parent_path() / link;
    }
    return target;  // a loop: the rename below reports it
}

Status saveScenarioFile(const Scenario& scenario, const fs::path& requested, const nlohmann::json& pins) {
    const std::string name = requested.string();
    const fs::path path = saveTarget(requested);
    std::string text;
    try {
        nlohmann::ordered_json doc = scenarioToOrderedJson(scenario);
        if (!pins.is_null()) doc["pins"] = pins;
        text = doc.dump(2) + "\n";
    } catch (const std::exception& e) {
        return Error{"", name + ": cannot be written (" + e.what() + ")"};
    }
    // A read-only file is refused, not silently replaced (the rename below
    // would succeed: it needs only the folder to be writable). Mode bits are
    // checked too, since access() lets root write anything.
    if (struct stat current {}; ::stat(path.c_str(), &current) == 0) {
        if (!S_ISREG(current.st_mode)) return Error{"", name + ": is not a regular file; choose another name"};
        if ((current.st_mode & 0222) == 0 || ::access(path.c_str(), W_OK) != 0)
            return Error{"", name + ": is read-only; the file is unchanged (make it writable or save elsewhere)"};
    }
    const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
    std::string temp = (dir / ("." + path.filename().string() + ".XXXXXX")).string();
    const int fd = ::mkstemp(temp.data());
    if (fd < 0) return Error{"", name + ": cannot be written (" + systemError(errno) + ")"};

    // Keep the permissions of the file being replaced; new files get 0644.
    struct stat existing {};
    const mode_t mode = ::stat(path.c_str(), &existing) == 0 ? (existing.st_mode & 07777) : 0644;
    bool written = ::fchmod(fd, mode) == 0 && writeAll(fd, text) && ::fsync(fd) == 0;
    const int write_error = errno;
    written = (::close(fd) == 0) && written;
    if (!written || ::rename(temp.c_str(), path.c_str()) != 0) {
        const int error = written ? errno : write_error;
        ::unlink(temp.c_str());
        return Error{"", name + ": cannot be written (" + systemError(error) + "); the previous file is unchanged"};
    }
    // Make the rename itself durable.
    if (const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY); dir_fd >= 0) {
        ::fsync(dir_fd);
        ::close(dir_fd);
    }
    return ok();
}

}  // namespace trainmem
