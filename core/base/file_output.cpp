#include "core/base/file_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <system_error>

namespace trainmem {

namespace {

namespace fs = std::filesystem;

std::string systemError(int error) { return std::generic_category().message(error); }

// Writes all of `data` to `fd`, retrying short writes; the count written is
// compared with the count meant by the caller (a short write with no error
// is not success).
bool writeAll(int fd, std::string_view data) {
    size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        if (n == 0) {
            errno = ENOSPC;
            return false;
        }
        done += static_cast<size_t>(n);
    }
    return true;
}

// The file a save replaces: through symlinks to their final target, so the
// link stays a link and its target is what gets replaced.
fs::path finalTarget(const fs::path& path) {
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

const char* kindOf(mode_t mode) {
    if (S_ISDIR(mode)) return "a folder";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

constexpr std::string_view kTempLetters =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

// A save killed by SIGKILL leaves its temporary file (issue 28: 300 kills
// left 60 files, 218 MB). One older than a minute is no save in progress.
void removeStaleTemporaries(const fs::path& dir, const fs::path& target) {
    std::error_code ec;
    const auto now = fs::file_time_type::clock::now();
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (!isTemporaryFileOf(it->path(), target)) continue;
        std::error_code e2;
        if (!it->is_regular_file(e2) || e2) continue;
        const auto written = fs::last_write_time(it->path(), e2);
        if (!e2 && now - written > std::chrono::minutes(1)) fs::remove(it->path(), e2);
    }
}

}  // namespace

bool isTemporaryFileOf(const fs::path& candidate, const fs::path& target) {
    const std::string name = candidate.filename().string();
    const std::string prefix = "." + target.filename().string() + ".";
    if (name.size() != prefix.size() + 6 || name.compare(0, prefix.size(), prefix) != 0) return false;
    return name.find_first_not_of(kTempLetters, prefix.size()) == std::string::npos;
}

Status writeFileAtomically(const fs::path& requested, std::string_view bytes) {
    const std::string name = requested.string();
    const fs::path path = finalTarget(requested);
    // A read-only file is refused, not silently replaced (the rename below
    // would succeed: it needs only the folder to be writable). Mode bits are
    // checked too, since access() lets root write anything. A FIFO or a
    // device would be replaced by a regular file (as root, /dev/null).
    if (struct stat current {}; ::stat(path.c_str(), &current) == 0) {
        if (!S_ISREG(current.st_mode))
            return Error{"", name + ": is " + kindOf(current.st_mode) + ", not a regular file; choose another name"};
        if ((current.st_mode & 0222) == 0 || ::access(path.c_str(), W_OK) != 0)
            return Error{"", name + ": is read-only; the file is unchanged (make it writable or save elsewhere)"};
    }
    const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
    removeStaleTemporaries(dir, path);
    std::string temp = (dir / ("." + path.filename().string() + ".XXXXXX")).string();
    const int fd = ::mkstemp(temp.data());
    if (fd < 0) return Error{"", name + ": cannot be written (" + systemError(errno) + "); the previous file is unchanged"};

    // Keep the permissions of the file being replaced; new files get 0644.
    struct stat existing {};
    const mode_t mode = ::stat(path.c_str(), &existing) == 0 ? (existing.st_mode & 07777) : 0644;
    bool written = ::fchmod(fd, mode) == 0 && writeAll(fd, bytes) && ::fsync(fd) == 0;
    int write_error = errno;
    // What is on disk is what was meant, byte for byte in count.
    if (struct stat done {}; written && (::fstat(fd, &done) != 0 || done.st_size != static_cast<off_t>(bytes.size()))) {
        written = false;
        write_error = EIO;
    }
    if (::close(fd) != 0 && written) {
        written = false;
        write_error = errno;
    }
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
