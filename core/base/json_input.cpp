// Limited reading of input files and JSON text; see json_input.h and
// docs/robustness.md.
#include "core/base/json_input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <iterator>
#include <optional>
#include <system_error>
#include <unordered_map>
#include <vector>

namespace trainmem {

namespace {

using nlohmann::json;

std::string mib(int64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

// Closes a file descriptor on every path out.
struct FileDescriptor {
    int fd = -1;
    ~FileDescriptor() {
        if (fd >= 0) ::close(fd);
    }
};

std::string openError(const std::filesystem::path& path, int error) {
    switch (error) {
        case ENOENT: {
            struct stat link {};
            if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode))
                return "is a symbolic link to a file that does not exist";
            return "no such file";
        }
        case EACCES: return "permission denied (the file or a folder on its path cannot be read)";
        case ELOOP: return "too many levels of symbolic links (a symlink loop)";
        case ENOTDIR: return "a part of the path is not a folder";
        case ENAMETOOLONG: return "the path is too long";
        default: return "cannot be opened (" + std::generic_category().message(error) + ")";
    }
}

std::string fileKind(mode_t mode) {
    if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

// nlohmann's messages start "[json.exception.parse_error.101] parse error at
// line 3, column 5: ..."; keep what a user needs.
std::string parseMessage(const std::string& what) {
    const std::string marker = "parse error ";
    const auto at = what.find(marker);
    if (at != std::string::npos) return what.substr(at + marker.size());
    const auto bracket = what.find("] ");
    return bracket == std::string::npos ? what : what.substr(bracket + 2);
}

// Where the parser is in the text, so a key can be given its line. The
// parser reads through this iterator one character at a time, forward only.
struct TextPosition {
    const char* current = nullptr;
    const char* counted = nullptr;  // lines are counted up to here
    int line = 1;
    int lineNow() {
        for (; counted < current; ++counted)
            if (*counted == '\n') ++line;
        return line;
    }
};

class CountingIterator {
public:
    using iterator_category = std::input_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char*;
    using reference = const char&;

    CountingIterator() = default;
    CountingIterator(const char* p, TextPosition* position) : p_(p), position_(position) {}
    reference operator*() const { return *p_; }
    CountingIterator& operator++() {
        ++p_;
        if (position_) position_->current = p_;
        return *this;
    }
    CountingIterator operator++(int) {
        CountingIterator before = *this;
        ++*this;
        return before;
    }
    bool operator==(const CountingIterator& other) const { return p_ == other.p_; }

private:
    const char* p_ = nullptr;
    TextPosition* position_ = nullptr;
};

// nlohmann's DOM builder with the limits added: depth counted at every
// container, keys checked against the others of their object. nlohmann's
// parser itself is iterative, so stopping at the limit is enough.
class LimitedJsonBuilder {
public:
    using number_integer_t = json::number_integer_t;
    using number_unsigned_t = json::number_unsigned_t;
    using number_float_t = json::number_float_t;
    using string_t = json::string_t;
    using binary_t = json::binary_t;

    LimitedJsonBuilder(json& result, TextPosition& position) : dom_(result, false), position_(position) {}

    bool null() { return value() && dom_.null(); }
    bool boolean(bool v) { return value() && dom_.boolean(v); }
    bool number_integer(number_integer_t v) { return value() && dom_.number_integer(v); }
    bool number_unsigned(number_unsigned_t v) { return value() && dom_.number_unsigned(v); }
    bool number_float(number_float_t v, const string_t& s) { return value() && dom_.number_float(v, s); }
    bool string(string_t& v) { return value() && dom_.string(v); }
    bool binary(binary_t& v) { return value() && dom_.binary(v); }

    bool start_object(std::size_t n) { return open(true) && dom_.start_object(n); }
    bool start_array(std::size_t n) { return open(false) && dom_.start_array(n); }
    bool end_object() {
        stack_.pop_back();
        return dom_.end_object();
    }
    bool end_array() {
        stack_.pop_back();
        return dom_.end_array();
    }

    bool key(string_t& k) {
        Container& object = stack_.back();
        const int line = position_.lineNow();
        const auto [it, inserted] = object.key_lines.emplace(k, line);
        object.key = k;
        if (!inserted) {
            error_ = "duplicate key \"" + describeText(path(), 80) + "\" (lines " + std::to_string(it->second) +
                     " and " + std::to_string(line) + "); each key may appear once in an object";
            return false;
        }
        return dom_.key(k);
    }

    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
        error_ = "malformed JSON " + parseMessage(e.what());
        return false;
    }

    const std::optional<std::string>& error() const { return error_; }

private:
    struct Container {
        bool object = false;
        size_t count = 0;  // values so far, for an array's index
        std::string key;   // the object's current key
        std::unordered_map<std::string, int> key_lines;
    };

    // Every value: counted in its array, for the path of a later error.
    bool value() {
        if (!stack_.empty() && !stack_.back().object) ++stack_.back().count;
        return true;
    }

    bool open(bool object) {
        value();
        if (static_cast<int>(stack_.size()) >= kMaxJsonDepth) {
            error_ = "nested deeper than " + std::to_string(kMaxJsonDepth) +
                     " levels of objects and arrays (line " + std::to_string(position_.lineNow()) +
                     "); the limit keeps a hostile file from exhausting the stack";
            return false;
        }
        stack_.push_back(Container{object, 0, {}, {}});
        return true;
    }

    // "training.micro_batch_size", "layers[3].name": where the parser is.
    std::string path() const {
        std::string p;
        for (const Container& c : stack_) {
            if (c.object) {
                if (!p.empty()) p += '.';
                p += c.key;
            } else {
                p += "[" + std::to_string(c.count == 0 ? 0 : c.count - 1) + "]";
            }
            if (p.size() > 200) break;
        }
        return p;
    }

    nlohmann::detail::json_sax_dom_parser<json> dom_;
    TextPosition& position_;
    std::vector<Container> stack_;
    std::optional<std::string> error_;
};

void appendEscaped(std::string& out, char c) {
    static const char* hex = "0123456789abcdef";
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
        case '\n': out += "\\n"; return;
        case '\r': out += "\\r"; return;
        case '\t': out += "\\t"; return;
        default: break;
    }
    if (u < 0x20 || u == 0x7f) {
        out += "\\x";
        out += hex[u >> 4];
        out += hex[u & 15];
        return;
    }
    out += c;
}

// One character of `text` at `i` for a terminal or a message: control
// characters escaped, also the C1 ones (U+0080..U+009F, which a UTF-8
// terminal may take as escape sequences). Returns the bytes consumed.
size_t appendPrintableAt(std::string& out, std::string_view text, size_t i) {
    static const char* hex = "0123456789abcdef";
    const auto u = static_cast<unsigned char>(text[i]);
    if (u == 0xc2 && i + 1 < text.size()) {
        const auto next = static_cast<unsigned char>(text[i + 1]);
        if (next >= 0x80 && next <= 0x9f) {
            out += "\\u00";
            out += hex[next >> 4];
            out += hex[next & 15];
            return 2;
        }
    }
    appendEscaped(out, text[i]);
    return 1;
}

void appendPrintable(std::string& out, std::string_view text, size_t limit) {
    for (size_t i = 0; i < text.size() && out.size() <= limit;) i += appendPrintableAt(out, text, i);
}

void appendQuoted(std::string& out, std::string_view text, size_t limit) {
    out += '"';
    for (size_t i = 0; i < text.size() && out.size() <= limit;) {
        if (text[i] == '"' || text[i] == '\\') {
            out += '\\';
            out += text[i++];
        } else {
            i += appendPrintableAt(out, text, i);
        }
    }
    out += '"';
}

// Recursion is bounded by the budget: every level writes at least one character.
void appendBounded(std::string& out, const json& v, size_t limit) {
    if (out.size() > limit) return;
    switch (v.type()) {
        case json::value_t::object: {
            out += '{';
            bool first = true;
            for (auto it = v.begin(); it != v.end() && out.size() <= limit; ++it) {
                if (!first) out += ',';
                first = false;
                appendQuoted(out, it.key(), limit);
                out += ':';
                appendBounded(out, it.value(), limit);
            }
            out += '}';
            return;
        }
        case json::value_t::array: {
            out += '[';
            bool first = true;
            for (auto it = v.begin(); it != v.end() && out.size() <= limit; ++it) {
                if (!first) out += ',';
                first = false;
                appendBounded(out, *it, limit);
            }
            out += ']';
            return;
        }
        case json::value_t::string: appendQuoted(out, v.get_ref<const std::string&>(), limit); return;
        case json::value_t::binary: out += "<binary>"; return;
        default: out += v.dump(); return;  // a number, true/false or null: short
    }
}

// Cuts to `max_chars` on a UTF-8 character boundary, with "..." when cut.
std::string cut(std::string text, size_t max_chars) {
    if (text.size() <= max_chars) return text;
    size_t end = max_chars > 3 ? max_chars - 3 : 0;
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xc0) == 0x80) --end;
    text.resize(end);
    return text + "...";
}

}  // namespace

Expected<std::string> readInputFile(const std::filesystem::path& path, int64_t max_bytes) {
    const std::string name = path.string();
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
    FileDescriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
    if (file.fd < 0) return Error{name, openError(path, errno)};
    struct stat info {};
    if (::fstat(file.fd, &info) != 0)
        return Error{name, "cannot be read (" + std::generic_category().message(errno) + ")"};
    if (S_ISDIR(info.st_mode)) return Error{name, "is a directory, not a file"};
    if (!S_ISREG(info.st_mode))
        return Error{name, "is " + fileKind(info.st_mode) + ", not a regular file; only regular files are read"};
    if (info.st_size > max_bytes)
        return Error{name, "is " + std::to_string(info.st_size) + " bytes, more than the limit of " + mib(max_bytes) +
                               " for this kind of file"};
    std::string bytes;
    bytes.resize(static_cast<size_t>(info.st_size));
    size_t done = 0;
    // Read to the end even if the file grew since fstat, but never past the limit.
    for (;;) {
        if (done == bytes.size()) {
            if (static_cast<int64_t>(bytes.size()) > max_bytes)
                return Error{name, "grew past the limit of " + mib(max_bytes) + " while being read"};
            bytes.resize(std::min<size_t>(bytes.size() + 65536, static_cast<size_t>(max_bytes) + 1));
        }
        const ssize_t n = ::read(file.fd, bytes.data() + done, bytes.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            return Error{name, "cannot be read (" + std::generic_category().message(errno) + ")"};
        }
        if (n == 0) break;
        done += static_cast<size_t>(n);
    }
    bytes.resize(done);
    return bytes;
}

Expected<json> parseJsonText(std::string_view text, std::string_view source) {
    const std::string prefix = source.empty() ? std::string() : std::string(source) + ": ";
    TextPosition position{text.data(), text.data(), 1};
    json result;
    LimitedJsonBuilder builder(result, position);
    try {
        const bool parsed = json::sax_parse(CountingIterator(text.data(), &position),
                                            CountingIterator(text.data() + text.size(), &position), &builder);
        if (builder.error()) return Error{"", prefix + *builder.error()};
        if (!parsed) return Error{"", prefix + "malformed JSON"};
    } catch (const std::exception& e) {
        return Error{"", prefix + "cannot be parsed (" + parseMessage(e.what()) + ")"};
    }
    return result;
}

Expected<json> readJsonFile(const std::filesystem::path& path) {
    auto bytes = readInputFile(path, kMaxJsonFileBytes);
    if (!bytes) return Error{"", bytes.error().text()};
    return parseJsonText(*bytes, path.string());
}

std::string describeJson(const json& value, size_t max_chars) {
    std::string out;
    appendBounded(out, value, max_chars);
    return cut(std::move(out), max_chars);
}

std::string describeText(std::string_view text, size_t max_chars) {
    std::string out;
    appendPrintable(out, text, max_chars);
    return cut(std::move(out), max_chars);
}

std::string printableText(std::string_view text) {
    std::string out;
    appendPrintable(out, text, std::string::npos);
    return out;
}

}  // namespace trainmem
