#pragma once
// The writer harness (issue 28): every file trainmem writes is written onto
// targets that must make it fail, and each must report the error and keep
// what was there. A writer is a function from a path to its error text
// (empty on success). The targets:
//   - a disk that fills during the write (a small tmpfs, root only; half the
//     file fits), and one already full;
//   - a read-only folder (a tmpfs remounted read-only as root, since root
//     writes through mode bits; a mode 0555 folder otherwise);
//   - a symlink to a FIFO and to a character device (mknod, root only): they
//     must stay what they are (QSaveFile replaced them with a regular file,
//     and as root /dev/null with it);
//   - a directory.
// A FIFO is drained while the writer runs, so a writer that opens it fails
// instead of hanging. Header-only, std + POSIX + GoogleTest, so core, CLI
// and UI tests share it.
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace trainmem::test_support {

namespace hostile_fs = std::filesystem;

using Writer = std::function<std::string(const hostile_fs::path&)>;  // error text, empty on success

inline std::string fileText(const hostile_fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void writeText(const hostile_fs::path& p, const std::string& text) {
    std::ofstream(p, std::ios::binary) << text;
}

class HostileTargets {
public:
    HostileTargets() {
        char name[] = "/tmp/trainmem-hostile-XXXXXX";
        root_ = ::mkdtemp(name);
    }
    ~HostileTargets() {
        for (const hostile_fs::path& m : mounts_) ::umount2(m.c_str(), MNT_DETACH);
        std::error_code ec;
        hostile_fs::permissions(root_ / "readonly", hostile_fs::perms::owner_all, ec);
        hostile_fs::remove_all(root_, ec);
    }
    HostileTargets(const HostileTargets&) = delete;
    HostileTargets& operator=(const HostileTargets&) = delete;

    const hostile_fs::path& root() const { return root_; }

    // Runs `write` against every target. `file_name` carries the suffix the
    // writer needs (chart.svg). What a successful write produces is learnt
    // first, so the full disk can leave room for half of it.
    void check(const Writer& write, const std::string& file_name) {
        const hostile_fs::path plain = root_ / ("plain-" + file_name);
        const std::string first = write(plain);
        ASSERT_EQ(first, "") << "the writer fails on a plain target";
        const auto size = static_cast<int64_t>(hostile_fs::file_size(plain));
        ASSERT_GT(size, 0);
        {
            SCOPED_TRACE("a directory");
            const hostile_fs::path dir = root_ / ("dir-" + file_name);
            hostile_fs::create_directory(dir);
            writeText(dir / "inside", "kept");
            expectRefused(write, dir);
            EXPECT_TRUE(hostile_fs::is_directory(dir));
            EXPECT_EQ(fileText(dir / "inside"), "kept");
        }
        {
            SCOPED_TRACE("a symlink to a FIFO");
            const hostile_fs::path fifo = root_ / ("fifo-" + file_name + ".pipe");
            ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
            const hostile_fs::path link = root_ / ("fifo-link-" + file_name);
            hostile_fs::create_symlink(fifo, link);
            // A reader that drains the FIFO, so a writer that opens it fails
            // the test instead of blocking it for good.
            const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
            std::atomic<bool> done{false};
            std::thread drain([&] {
                char buffer[65536];
                while (!done) {
                    if (::read(reader, buffer, sizeof buffer) <= 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
                }
            });
            expectRefused(write, link);
            done = true;
            drain.join();
            ::close(reader);
            EXPECT_TRUE(hostile_fs::is_fifo(hostile_fs::status(fifo))) << "the FIFO was replaced";
            EXPECT_TRUE(hostile_fs::is_symlink(hostile_fs::symlink_status(link)));
        }
        if (::geteuid() == 0) {
            SCOPED_TRACE("a symlink to a character device");
            const hostile_fs::path node = root_ / ("null-" + file_name + ".dev");
            if (::mknod(node.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) {
                const hostile_fs::path link = root_ / ("dev-link-" + file_name);
                hostile_fs::create_symlink(node, link);
                expectRefused(write, link);
                EXPECT_TRUE(hostile_fs::is_character_file(hostile_fs::status(node))) << "the device was replaced";
            }
        }
        {
            SCOPED_TRACE("a read-only folder");
            const hostile_fs::path dir = root_ / "readonly";
            hostile_fs::create_directory(dir);
            const hostile_fs::path target = dir / file_name;
            const bool as_root = ::geteuid() == 0;
            if (as_root && !mount(dir, "size=1m")) {
                // cannot mount: nothing to test for root here
            } else {
                writeText(target, kOld);
                if (as_root)
                    ASSERT_EQ(::mount("tmpfs", dir.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, "size=1m"), 0);
                else
                    hostile_fs::permissions(dir, hostile_fs::perms::owner_read | hostile_fs::perms::owner_exec);
                expectRefused(write, target);
                EXPECT_EQ(fileText(target), kOld);
            }
        }
        if (::geteuid() == 0) {
            // Half the file fits: the disk fills during the write. Then a
            // disk already full.
            for (const int64_t room : {(size / 2) / 4096 * 4096, int64_t{0}}) {
                SCOPED_TRACE("a disk that fills with " + std::to_string(room) + " bytes free for " +
                             std::to_string(size));
                const hostile_fs::path dir = root_ / ("full-" + std::to_string(room));
                hostile_fs::create_directory(dir);
                if (!mount(dir, "size=" + std::to_string(room + 4 * 4096))) continue;
                const hostile_fs::path target = dir / file_name;
                writeText(target, kOld);
                fill(dir, room);
                expectRefused(write, target);
                EXPECT_EQ(fileText(target), kOld);
                // Nothing of ours is left behind but the filler.
                int entries = 0;
                for ([[maybe_unused]] const auto& e : hostile_fs::directory_iterator(dir)) ++entries;
                EXPECT_EQ(entries, 2) << "a temporary file was left on the full disk";
            }
        }
    }

    static inline const std::string kOld = "the previous content\n";

private:
    static void expectRefused(const Writer& write, const hostile_fs::path& target) {
        const std::string error = write(target);
        EXPECT_NE(error, "") << target << ": the write reported success";
        EXPECT_NE(error.find(target.filename().string()), std::string::npos)
            << "the error does not name the file: " << error;
    }

    bool mount(const hostile_fs::path& dir, const std::string& options) {
        if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, options.c_str()) != 0) return false;
        mounts_.push_back(dir);
        return true;
    }

    // Fills the file system under `dir` until `room` bytes are left.
    static void fill(const hostile_fs::path& dir, int64_t room) {
        const int fd = ::open((dir / "filler").c_str(), O_WRONLY | O_CREAT, 0644);
        ASSERT_GE(fd, 0);
        const std::string block(4096, 'x');
        while (::write(fd, block.data(), block.size()) > 0) {
        }
        while (::write(fd, "x", 1) > 0) {
        }
        // Give back `room` bytes (whole pages on tmpfs).
        const off_t end = ::lseek(fd, 0, SEEK_END);
        if (room > 0) EXPECT_EQ(::ftruncate(fd, end - room), 0);
        ::close(fd);
    }

    hostile_fs::path root_;
    std::vector<hostile_fs::path> mounts_;
};

}  // namespace trainmem::test_support
