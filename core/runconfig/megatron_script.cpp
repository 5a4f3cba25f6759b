// Megatron-LM's flags from where people keep them: a launch script (the
// shell variables it defines resolved, arrays expanded as bash expands them,
// comments and the branches of `if [[ ... ]]` not taken left out) and the
// `arguments` block rank 0 prints into its log (megatron/training/
// arguments.py _print_args). Both become a document of "--flag" keys.
#include <map>
#include <regex>
#include <sstream>

#include "core/base/json_input.h"
#include "core/runconfig/formats.h"

namespace trainmem::runconfig {
namespace {

struct Word {
    std::string text;
    int line = 0;
};

// A script's arrays hold tens of flags; self-appending ones (A+=("${A[@]}")
// on every line) would double each time: refused past this many words.
constexpr size_t kMaxShellWords = 100000;

struct Shell {
    std::map<std::string, std::vector<Word>> arrays;
    std::map<std::string, Word> scalars;
    std::vector<std::string> unresolved;  // $(...) and positional parameters without a default
};

// Splits a logical line into raw words (quotes kept for expansion), dropping
// an unquoted comment.
std::vector<std::string> rawWords(const std::string& line) {
    std::vector<std::string> words;
    std::string cur;
    char quote = 0;
    int paren = 0;
    for (size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quote) {
            cur += c;
            if (c == quote) quote = 0;
            else if (c == '\\' && quote == '"' && i + 1 < line.size()) cur += line[++i];
            continue;
        }
        if (c == '\'' || c == '"') {
            quote = c;
            cur += c;
            continue;
        }
        if (c == '$' && i + 1 < line.size() && line[i + 1] == '(') {
            paren++;
            cur += c;
            continue;
        }
        if (paren > 0) {
            cur += c;
            if (c == '(') {
                // counted once above for "$(": nested parens
                if (i > 0 && line[i - 1] != '$') paren++;
            } else if (c == ')') {
                paren--;
            }
            continue;
        }
        if (c == '#' && cur.empty()) break;
        if (std::isspace(static_cast<unsigned char>(c)) || c == ';') {
            if (!cur.empty()) words.push_back(cur), cur.clear();
            if (c == ';') words.push_back(";");
            continue;
        }
        cur += c;
    }
    if (!cur.empty()) words.push_back(cur);
    return words;
}

std::string arithmetic(const std::string& expr) {
    // $(( a * b )) and + over integers, as launch scripts compute WORLD_SIZE.
    int64_t total = 0, term = 1;
    bool have = false;
    std::string number;
    auto flush = [&](char op) -> bool {
        if (number.empty()) return false;
        term *= std::stoll(number);
        number.clear();
        if (op != '*') total += term, term = 1;
        have = true;
        return true;
    };
    for (char c : expr) {
        if (std::isdigit(static_cast<unsigned char>(c))) number += c;
        else if (c == '*' || c == '+') {
            if (!flush(c)) return {};
        } else if (!std::isspace(static_cast<unsigned char>(c))) {
            return {};
        }
    }
    if (!flush('+') || !have) return {};
    return std::to_string(total);
}

// Expands one raw word: quotes, $VAR, ${VAR}, ${VAR:-default}, ${ARR[@]},
// $((...)). Unquoted expansions split on whitespace, as bash does.
std::vector<Word> expand(const std::string& raw, int line, Shell& sh, int depth = 0) {
    std::vector<Word> out;
    std::string cur;
    bool cur_started = false;
    auto emitSplit = [&](const std::string& text) {
        std::istringstream in(text);
        std::string piece;
        bool first = true;
        const bool leading_space = !text.empty() && std::isspace(static_cast<unsigned char>(text.front()));
        while (in >> piece) {
            if (first && !leading_space) {
                cur += piece;
                cur_started = true;
            } else {
                if (cur_started) out.push_back({cur, line});
                cur = piece;
                cur_started = true;
            }
            first = false;
        }
        if (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())) && cur_started) {
            out.push_back({cur, line});
            cur.clear();
            cur_started = false;
        }
    };
    auto value = [&](const std::string& expr, bool quoted, const std::string& fallback, bool has_fallback) {
        if (depth > 8) return;
        if (expr.ends_with("[@]") || expr.ends_with("[*]")) {
            const auto it = sh.arrays.find(expr.substr(0, expr.size() - 3));
            if (it == sh.arrays.end()) return;
            for (const auto& w : it->second) {
                if (quoted) {
                    if (cur_started) out.push_back({cur, line});
                    out.push_back(w);
                    cur.clear();
                    cur_started = false;
                } else {
                    std::istringstream in(w.text);
                    std::string piece;
                    while (in >> piece) {
                        if (cur_started) out.push_back({cur, line});
                        out.push_back({piece, w.line});
                        cur.clear();
                        cur_started = false;
                    }
                }
            }
            return;
        }
        std::string text;
        if (const auto it = sh.scalars.find(expr); it != sh.scalars.end()) text = it->second.text;
        else if (const auto a = sh.arrays.find(expr); a != sh.arrays.end() && !a->second.empty()) text = a->second.front().text;
        else if (has_fallback) {
            for (const auto& w : expand(fallback, line, sh, depth + 1)) text += (text.empty() ? "" : " ") + w.text;
        } else if (!expr.empty() && std::isdigit(static_cast<unsigned char>(expr[0]))) {
            sh.unresolved.push_back("$" + expr);
        }
        if (quoted) {
            cur += text;
            cur_started = true;
        } else {
            emitSplit(text);
        }
    };
    char quote = 0;
    for (size_t i = 0; i < raw.size(); ++i) {
        const char c = raw[i];
        if (quote == '\'') {
            if (c == '\'') quote = 0;
            else cur += c;
            continue;
        }
        if (c == '\'' && !quote) {
            quote = '\'';
            cur_started = true;
            continue;
        }
        if (c == '"') {
            quote = quote == '"' ? 0 : '"';
            cur_started = true;
            continue;
        }
        if (c == '$' && i + 1 < raw.size()) {
            if (raw.compare(i, 3, "$((") == 0) {
                const size_t end = raw.find("))", i);
                if (end == std::string::npos) break;
                std::string inner;
                for (const auto& w : expand(raw.substr(i + 3, end - i - 3), line, sh, depth + 1)) inner += w.text + " ";
                const std::string v = arithmetic(inner);
                if (v.empty()) sh.unresolved.push_back(raw.substr(i, end + 2 - i));
                cur += v;
                cur_started = true;
                i = end + 1;
                continue;
            }
            if (raw[i + 1] == '(') {
                const size_t end = raw.find(')', i);
                sh.unresolved.push_back(raw.substr(i, end == std::string::npos ? std::string::npos : end + 1 - i));
                i = end == std::string::npos ? raw.size() : end;
                continue;
            }
            if (raw[i + 1] == '{') {
                const size_t end = raw.find('}', i);
                if (end == std::string::npos) break;
                std::string expr = raw.substr(i + 2, end - i - 2);
                std::string fallback;
                bool has_fallback = false;
                if (const size_t d = expr.find(":-"); d != std::string::npos) {
                    fallback = expr.substr(d + 2);
                    expr = expr.substr(0, d);
                    has_fallback = true;
                }
                value(expr, quote == '"', fallback, has_fallback);
                i = end;
                continue;
            }
            size_t j = i + 1;
            while (j < raw.size() && (std::isalnum(static_cast<unsigned char>(raw[j])) || raw[j] == '_')) ++j;
            if (j > i + 1) {
                value(raw.substr(i + 1, j - i - 1), quote == '"', "", false);
                i = j - 1;
                continue;
            }
        }
        if (c == '\\' && i + 1 < raw.size()) {
            cur += raw[++i];
            cur_started = true;
            continue;
        }
        cur += c;
        cur_started = true;
    }
    if (cur_started) out.push_back({cur, line});
    return out;
}

bool isName(const std::string& s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
    for (char c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    return true;
}

// [[ A == B ]], [[ A != B ]], [[ -z A ]], [[ -n A ]], joined by || and &&.
bool condition(const std::vector<std::string>& raw, int line, Shell& sh) {
    std::vector<std::vector<std::string>> tests(1);
    std::vector<std::string> ops;
    for (const auto& w : raw) {
        if (w == "[[" || w == "]]" || w == "[" || w == "]" || w == "if" || w == "elif" || w == "then" || w == ";") continue;
        if (w == "||" || w == "&&") {
            ops.push_back(w);
            tests.emplace_back();
            continue;
        }
        const auto words = expand(w, line, sh);
        tests.back().push_back(words.empty() ? "" : words.front().text);
        if (words.empty()) tests.back().back() = "";
    }
    auto one = [](const std::vector<std::string>& t) {
        if (t.size() == 3 && (t[1] == "==" || t[1] == "=")) return t[0] == t[2];
        if (t.size() == 3 && t[1] == "!=") return t[0] != t[2];
        if (t.size() == 2 && t[0] == "-z") return t[1].empty();
        if (t.size() == 1 && t[0] == "-z") return true;
        if (t.size() == 2 && t[0] == "-n") return !t[1].empty();
        return false;
    };
    bool result = one(tests[0]);
    for (size_t i = 0; i < ops.size(); ++i) result = ops[i] == "||" ? (result || one(tests[i + 1])) : (result && one(tests[i + 1]));
    return result;
}

Expected<ConfigDocument> flagsToDocument(const std::vector<Word>& words, const std::string& file) {
    ConfigDocument doc;
    doc.file = file;
    for (size_t i = 0; i < words.size(); ++i) {
        const Word& w = words[i];
        if (!w.text.starts_with("--")) continue;
        ConfigValue v;
        v.file = file;
        v.line = w.line;
        std::string key = w.text;
        if (const size_t eq = key.find('='); eq != std::string::npos) {
            v.key = key.substr(0, eq);
            v.value = yaml11Scalar(key.substr(eq + 1));
            doc.values.push_back(std::move(v));
            continue;
        }
        v.key = key;
        std::vector<nlohmann::json> args;
        while (i + 1 < words.size() && !(words[i + 1].text.starts_with("--") && words[i + 1].text.size() > 2 &&
                                         !std::isdigit(static_cast<unsigned char>(words[i + 1].text[2])))) {
            args.push_back(yaml11Scalar(words[++i].text));
        }
        if (args.empty()) v.value = true;  // store_true
        else if (args.size() == 1) v.value = args.front();
        else v.value = nlohmann::json(args);
        doc.values.push_back(std::move(v));
    }
    return doc;
}

}  // namespace

Expected<ConfigDocument> megatronFlagsDocument(const std::vector<std::string>& words, const std::string& file) {
    std::vector<Word> list;
    for (const auto& w : words) list.push_back({w, 0});
    return flagsToDocument(list, file);
}

Expected<ConfigDocument> readMegatronScript(const std::filesystem::path& path, const std::vector<std::string>& overrides) {
    auto text = readInputFile(path, kMaxJsonFileBytes);
    if (!text) return text.error();
    const std::string file = path.string();
    // Logical lines: backslash-newline continues a line.
    std::vector<std::pair<std::string, int>> lines;
    {
        std::istringstream in(*text);
        std::string line, logical;
        int number = 0, start = 0;
        while (std::getline(in, line)) {
            ++number;
            if (logical.empty()) start = number;
            if (!line.empty() && line.back() == '\\') {
                logical += line.substr(0, line.size() - 1) + " ";
                continue;
            }
            logical += line;
            lines.emplace_back(logical, start);
            logical.clear();
        }
        if (!logical.empty()) lines.emplace_back(logical, start);
    }
    Shell sh;
    // NAME=value overrides: the script's own assignments to NAME are then
    // left out, as when the user edits that line (DTYPE=bf16).
    std::vector<std::string> fixed;
    for (const auto& o : overrides) {
        const size_t eq = o.find('=');
        if (o.starts_with("--")) continue;
        if (eq == std::string::npos || !isName(o.substr(0, eq)))
            return Error{o, "a Megatron override is NAME=value (a variable of the script) or --flag [value]"};
        sh.scalars[o.substr(0, eq)] = Word{o.substr(eq + 1), 0};
        fixed.push_back(o.substr(0, eq));
    }
    std::vector<bool> active{true};   // the if/else branches being taken
    std::vector<bool> taken{true};    // whether a branch of the current if was taken
    std::vector<Word> launch;
    std::string launch_script;
    int launch_line = 0;
    // An open array assignment: NAME=( or NAME+=( without its ).
    std::string open_array;
    for (size_t li = 0; li < lines.size(); ++li) {
        const auto& [line, number] = lines[li];
        std::vector<std::string> words = rawWords(line);
        if (words.empty()) continue;
        const bool on = std::all_of(active.begin(), active.end(), [](bool b) { return b; });
        if (!open_array.empty()) {
            for (const auto& w : words) {
                if (w == ")") {
                    open_array.clear();
                    break;
                }
                if (on)
                    for (auto& e : expand(w, number, sh)) sh.arrays[open_array].push_back(e);
                if (sh.arrays[open_array].size() > kMaxShellWords)
                    return Error{file + ":" + std::to_string(number) + ": " + open_array,
                                 "the array holds more than " + std::to_string(kMaxShellWords) + " words: not a launch script"};
            }
            continue;
        }
        const std::string& first = words.front();
        if (first == "if") {
            const bool c = on && condition(words, number, sh);
            active.push_back(c);
            taken.push_back(c);
            continue;
        }
        if (first == "elif" && active.size() > 1) {
            const bool c = !taken.back() && condition(words, number, sh);
            active.back() = c;
            taken.back() = taken.back() || c;
            continue;
        }
        if (first == "else" && active.size() > 1) {
            active.back() = !taken.back();
            continue;
        }
        if (first == "fi" && active.size() > 1) {
            active.pop_back();
            taken.pop_back();
            continue;
        }
        if (!on) {
            // Still skip the body of an array opened in a branch not taken.
            if (line.find("=(") != std::string::npos && line.find(')') == std::string::npos) {
                while (li + 1 < lines.size() && rawWords(lines[li + 1].first) != std::vector<std::string>{")"}) ++li;
                ++li;
            }
            continue;
        }
        size_t w0 = first == "export" || first == "local" || first == "declare" ? 1 : 0;
        if (w0 < words.size()) {
            const std::string& a = words[w0];
            const size_t eq = a.find('=');
            const bool append = eq != std::string::npos && eq > 0 && a[eq - 1] == '+';
            const std::string name = eq == std::string::npos ? "" : a.substr(0, append ? eq - 1 : eq);
            if (eq != std::string::npos && isName(name)) {
                const std::string rhs = a.substr(eq + 1);
                if (rhs.starts_with("(")) {
                    if (!append) sh.arrays[name].clear();
                    std::vector<std::string> items;
                    std::string inner = rhs.substr(1);
                    bool closed = false;
                    std::vector<std::string> rest(words.begin() + w0 + 1, words.end());
                    if (!inner.empty()) rest.insert(rest.begin(), inner);
                    for (auto& r : rest) {
                        if (r == ")" || r.ends_with(")")) {
                            if (r != ")" && r.size() > 1) items.push_back(r.substr(0, r.size() - 1));
                            closed = true;
                            break;
                        }
                        items.push_back(r);
                    }
                    for (const auto& item : items)
                        for (auto& e : expand(item, number, sh)) sh.arrays[name].push_back(e);
                    if (sh.arrays[name].size() > kMaxShellWords)
                        return Error{file + ":" + std::to_string(number) + ": " + name,
                                     "the array holds more than " + std::to_string(kMaxShellWords) + " words: not a launch script"};
                    if (!closed) open_array = name;
                } else if (std::find(fixed.begin(), fixed.end(), name) == fixed.end()) {
                    const auto parts = expand(rhs, number, sh);
                    std::string v;
                    for (const auto& p : parts) v += (v.empty() ? "" : " ") + p.text;
                    if (append) sh.scalars[name].text += v;
                    else sh.scalars[name] = Word{v, number};
                    if (sh.scalars[name].text.size() > kMaxShellWords * 16)
                        return Error{file + ":" + std::to_string(number) + ": " + name, "the variable grew past 1.6 MB: not a launch script"};
                }
                continue;
            }
        }
        // The launch: a command line that runs a Python training script.
        std::vector<Word> expanded;
        for (const auto& w : words) {
            if (w == ";") break;
            for (auto& e : expand(w, number, sh)) expanded.push_back(e);
        }
        for (size_t i = 0; i < expanded.size(); ++i)
            if (expanded[i].text.ends_with(".py") && expanded[i].text.find("pretrain") != std::string::npos) {
                launch = expanded;
                launch_script = expanded[i].text;
                launch_line = number;
                break;
            }
    }
    if (launch.empty())
        return Error{file, "no line runs Megatron-LM's pretrain_*.py (torchrun ... pretrain_gpt.py FLAGS): not a Megatron launch script"};
    // Flags after the script are Megatron's; --nproc_per_node / --nnodes before it are torchrun's.
    std::vector<Word> megatron, launcher;
    bool after = false;
    for (const auto& w : launch) {
        if (w.text == launch_script) {
            after = true;
            continue;
        }
        (after ? megatron : launcher).push_back(w);
    }
    auto doc = flagsToDocument(megatron, file);
    if (!doc) return doc;
    auto torchrun = flagsToDocument(launcher, file);
    if (!torchrun) return torchrun.error();
    for (auto& v : torchrun->values) {
        std::string key = v.key.substr(2);
        std::replace(key.begin(), key.end(), '-', '_');
        key = "--" + key;
        if (key == "--nproc_per_node" || key == "--nnodes") {
            v.key = "torchrun " + key;
            doc->values.push_back(v);
        }
    }
    (void)launch_line;
    // Extra flags given on trainmem's command line come last, as if appended to the launch.
    std::vector<Word> extra;
    for (const auto& o : overrides)
        if (o.starts_with("--"))
            for (auto& w : rawWords(o)) extra.push_back({w, 0});
    auto added = flagsToDocument(extra, "command line");
    if (!added) return added.error();
    for (auto& v : added->values) doc->values.push_back(v);
    return doc;
}

Expected<ConfigDocument> readMegatronLog(const std::filesystem::path& path) {
    auto text = readInputFile(path, int64_t{256} << 20);
    if (!text) return text.error();
    ConfigDocument doc;
    doc.file = path.string();
    std::istringstream in(*text);
    std::string line;
    int number = 0;
    bool inside = false, seen = false;
    static const std::regex arg(R"((\w+) \.{2,} (.*)$)");
    while (std::getline(in, line)) {
        ++number;
        if (line.find("------------------------ arguments ------------------------") != std::string::npos) {
            inside = true;
            seen = true;
            continue;
        }
        if (line.find("end of arguments") != std::string::npos) {
            if (inside) break;
            continue;
        }
        if (!inside) continue;
        std::smatch m;
        if (!std::regex_search(line, m, arg)) continue;
        std::string key = m[1].str();
        std::string value = m[2].str();
        while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) value.pop_back();
        std::replace(key.begin(), key.end(), '_', '-');
        nlohmann::json v;
        if (value == "True") v = true;
        else if (value == "False") v = false;
        else if (value == "None") v = nullptr;
        else v = yaml11Scalar(value);
        doc.values.push_back(ConfigValue{"--" + key, v, number, doc.file});
    }
    if (!seen)
        return Error{doc.file, "no \"------------------------ arguments ------------------------\" block (what Megatron-LM's rank 0 "
                               "prints at start, megatron/training/arguments.py _print_args)"};
    return doc;
}

}  // namespace trainmem::runconfig
