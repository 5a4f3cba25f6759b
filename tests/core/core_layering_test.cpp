// core/'s folders and the one direction of their includes (docs/architecture.md):
// a folder includes only itself and the folders below it, and no two units
// (a header and the .cpp of the same name) include each other, directly or
// round a longer circle. Read from the #include lines themselves, so a new
// file or include is checked the moment it exists.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// Bottom to top. A folder may include those before it in this list.
const std::vector<std::string> kLayers = {"base",     "model",  "training", "activations", "scenario", "account",
                                          "steptime", "search", "report",   "snapshot",    "runconfig"};

struct Include {
    std::string target;  // "account/estimate.h"
    int line = 0;
};
struct SourceFile {
    std::string path;  // "account/estimate.cpp", relative to core/
    std::vector<Include> includes;
};

int layerOf(const std::string& path) {
    const std::string folder = path.substr(0, path.find('/'));
    const auto it = std::find(kLayers.begin(), kLayers.end(), folder);
    return it == kLayers.end() ? -1 : static_cast<int>(it - kLayers.begin());
}

// "account/estimate.cpp" and "account/estimate.h" are the unit "account/estimate".
std::string unitOf(const std::string& path) { return path.substr(0, path.rfind('.')); }

std::string where(const SourceFile& f, const Include& inc) {
    return "core/" + f.path + ":" + std::to_string(inc.line) + " includes core/" + inc.target;
}

std::vector<std::string> layeringProblems(const std::vector<SourceFile>& files) {
    std::vector<std::string> problems;
    std::set<std::string> existing;
    for (const SourceFile& f : files) existing.insert(f.path);
    // unit -> (included unit -> the first include line that makes the edge)
    std::map<std::string, std::map<std::string, std::string>> edges;
    for (const SourceFile& f : files) {
        const int own = layerOf(f.path);
        if (own < 0) {
            problems.push_back("core/" + f.path + " is in no known folder: put it in one of core/{base, model, "
                               "training, ...} or add its folder to kLayers and docs/architecture.md");
            continue;
        }
        for (const Include& inc : f.includes) {
            if (!existing.count(inc.target)) {
                problems.push_back(where(f, inc) + ", which does not exist");
                continue;
            }
            const int target = layerOf(inc.target);
            if (target > own) {
                std::string allowed;
                for (int i = 0; i <= own; ++i) allowed += (i ? ", " : "") + kLayers[static_cast<size_t>(i)];
                problems.push_back(where(f, inc) + ": " + kLayers[static_cast<size_t>(own)] +
                                   "/ may include only " + allowed);
            }
            const std::string from = unitOf(f.path), to = unitOf(inc.target);
            if (from != to) edges[from].emplace(to, where(f, inc));
        }
    }
    // Circles: a depth-first walk that reports each back edge with the path it closes.
    std::map<std::string, int> state;  // 0 unseen, 1 on the path, 2 done
    std::vector<std::string> path;
    std::function<void(const std::string&)> visit = [&](const std::string& unit) {
        state[unit] = 1;
        path.push_back(unit);
        for (const auto& [next, line] : edges[unit]) {
            if (state[next] == 1) {
                std::string circle;
                const auto start = std::find(path.begin(), path.end(), next);
                for (auto it = start; it != path.end(); ++it) {
                    const auto to = std::next(it) == path.end() ? next : *std::next(it);
                    circle += "\n    " + edges[*it][to];
                }
                problems.push_back("include circle " + next + " -> ... -> " + unit + " -> " + next + ":" + circle);
            } else if (state[next] == 0) {
                visit(next);
            }
        }
        path.pop_back();
        state[unit] = 2;
    };
    std::vector<std::string> units;
    for (const auto& [unit, targets] : edges) units.push_back(unit);
    for (const std::string& unit : units)
        if (state[unit] == 0) visit(unit);
    return problems;
}

// Functions a header declares at namespace scope (a line at column 0 that
// names a function and whose statement ends with ';'), and functions a .cpp
// defines there (the statement reaches '{' first).
struct FunctionLines {
    std::map<std::string, std::vector<std::string>> declared;  // header -> names
    std::map<std::string, std::set<std::string>> defined_in;   // name -> .cpp files
    std::map<std::string, std::string> text;                   // header -> its text
};

FunctionLines readFunctions() {
    const fs::path root = TRAINMEM_CORE_SOURCE_DIR;
    const std::regex head(R"(^(?!(inline|constexpr|static|template|return|using|friend|typedef|struct|class|enum|namespace|case|default|if|for|while|else|do|switch)\b)[A-Za-z_][\w:<>,\*& ]*?\b(\w+)\()");
    FunctionLines out;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
        const fs::path& p = entry.path();
        const bool header = p.extension() == ".h";
        if (!entry.is_regular_file() || (!header && p.extension() != ".cpp")) continue;
        const std::string rel = fs::relative(p, root).generic_string();
        std::ifstream in(p);
        const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (header) out.text[rel] = all;
        size_t pos = 0;
        while (pos < all.size()) {
            const size_t end = all.find('\n', pos);
            const std::string line = all.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
            std::smatch m;
            if (std::regex_search(line, m, head)) {
                const size_t semi = all.find(';', pos), brace = all.find('{', pos);
                const bool declaration = semi < brace;
                if (header && declaration) out.declared[rel].push_back(m[2].str());
                if (!header && !declaration) out.defined_in[m[2].str()].insert(rel);
            }
            if (end == std::string::npos) break;
            pos = end + 1;
        }
    }
    return out;
}

std::vector<SourceFile> readCore() {
    const fs::path root = TRAINMEM_CORE_SOURCE_DIR;
    const std::regex include(R"(^\s*#\s*include\s*"core/([^"]+)\")");
    std::vector<SourceFile> files;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
        const fs::path& p = entry.path();
        if (!entry.is_regular_file() || (p.extension() != ".h" && p.extension() != ".cpp")) continue;
        SourceFile f{fs::relative(p, root).generic_string(), {}};
        std::ifstream in(p);
        std::string text;
        for (int line = 1; std::getline(in, text); ++line) {
            std::smatch m;
            if (std::regex_search(text, m, include)) f.includes.push_back({m[1].str(), line});
        }
        files.push_back(std::move(f));
    }
    std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
    return files;
}

std::string joined(const std::vector<std::string>& lines) {
    std::string s;
    for (const auto& l : lines) s += l + "\n";
    return s;
}

TEST(CoreLayering, TheCheckFindsAnUpwardIncludeACircleAndAStrayFile) {
    const std::vector<SourceFile> files = {
        {"model/a.h", {}},
        {"model/a.cpp", {{"model/a.h", 1}, {"account/b.h", 7}}},  // model -> account: upward
        {"account/b.h", {{"account/c.h", 3}}},
        {"account/c.h", {}},
        {"account/c.cpp", {{"account/c.h", 1}, {"account/b.h", 2}}},  // b -> c -> b: a circle
        {"stray.h", {}},
    };
    const auto problems = layeringProblems(files);
    ASSERT_EQ(problems.size(), 3u) << joined(problems);
    EXPECT_NE(joined(problems).find("core/model/a.cpp:7 includes core/account/b.h: model/ may include only base, model"),
              std::string::npos)
        << joined(problems);
    EXPECT_NE(joined(problems).find("include circle"), std::string::npos);
    EXPECT_NE(joined(problems).find("core/account/c.cpp:2 includes core/account/b.h"), std::string::npos);
    EXPECT_NE(joined(problems).find("core/stray.h is in no known folder"), std::string::npos);
}

TEST(CoreLayering, EveryFolderIncludesOnlyThoseBelowItAndNothingIncludesInACircle) {
    const std::vector<SourceFile> files = readCore();
    ASSERT_GT(files.size(), 90u) << "core/ was not found at " << TRAINMEM_CORE_SOURCE_DIR;
    const auto problems = layeringProblems(files);
    EXPECT_TRUE(problems.empty()) << joined(problems);
}

TEST(CoreLayering, AFunctionIsDefinedInTheFileNamedAfterItsHeaderOrTheHeaderSaysWhere) {
    const FunctionLines f = readFunctions();
    ASSERT_GT(f.declared.size(), 40u);
    std::vector<std::string> problems;
    for (const auto& [header, names] : f.declared) {
        const std::string own = header.substr(0, header.size() - 2) + ".cpp";
        for (const std::string& name : names) {
            const auto it = f.defined_in.find(name);
            if (it == f.defined_in.end() || it->second.count(own)) continue;
            for (const std::string& cpp : it->second) {
                const std::string file = cpp.substr(cpp.rfind('/') + 1);
                if (f.text.at(header).find(file) == std::string::npos)
                    problems.push_back("core/" + header + " declares " + name + ", defined in core/" + cpp +
                                       ": define it in " + own + " or say so in the header");
            }
        }
    }
    EXPECT_TRUE(problems.empty()) << joined(problems);
}

TEST(CoreLayering, NoSourceFileLiesDirectlyInCore) {
    for (const auto& entry : fs::directory_iterator(TRAINMEM_CORE_SOURCE_DIR)) {
        const fs::path& p = entry.path();
        EXPECT_FALSE(p.extension() == ".h" || p.extension() == ".cpp")
            << p << ": every core file lives in a domain folder (docs/architecture.md)";
    }
}

}  // namespace
