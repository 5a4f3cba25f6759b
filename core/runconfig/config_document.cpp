#include "core/runconfig/config_document.h"

#include <charconv>
#include <cmath>
#include <sstream>

#include <toml++/toml.h>
#include <yaml-cpp/yaml.h>

#include "core/base/json_input.h"

namespace trainmem::runconfig {

using nlohmann::json;

const ConfigValue* ConfigDocument::find(std::string_view key) const {
    // The last one wins, as a later --section.option overrides the file.
    for (auto it = values.rbegin(); it != values.rend(); ++it)
        if (it->key == key) return &*it;
    return nullptr;
}

const ConfigValue* ConfigDocument::take(std::string_view key) const {
    const ConfigValue* v = find(key);
    for (const auto& value : values)
        if (value.key == key) value.used = true;
    return v;
}

std::vector<const ConfigValue*> ConfigDocument::takeUnder(std::string_view prefix) const {
    std::vector<const ConfigValue*> out;
    const std::string dotted = std::string(prefix) + ".";
    for (const auto& value : values)
        if (value.key.starts_with(dotted)) {
            value.used = true;
            out.push_back(&value);
        }
    return out;
}

void ConfigDocument::set(ConfigValue value) { values.push_back(std::move(value)); }

std::string where(const ConfigValue& v) {
    std::string out = v.file;
    if (v.line > 0) out += ":" + std::to_string(v.line);
    return out + ": " + v.key;
}

Error valueError(const ConfigValue& v, const std::string& message) { return Error{where(v), message}; }

Expected<int64_t> asInteger(const ConfigValue& v) {
    if (v.value.is_number_integer()) {
        if (v.value.is_number_unsigned() && v.value.get<uint64_t>() > uint64_t(INT64_MAX))
            return valueError(v, "is too large (got " + describeJson(v.value) + ")");
        return v.value.get<int64_t>();
    }
    return valueError(v, "expected an integer (got " + describeJson(v.value) + ")");
}

Expected<double> asNumber(const ConfigValue& v) {
    if (v.value.is_number()) return v.value.get<double>();
    return valueError(v, "expected a number (got " + describeJson(v.value) + ")");
}

Expected<bool> asBoolean(const ConfigValue& v) {
    if (v.value.is_boolean()) return v.value.get<bool>();
    return valueError(v, "expected true or false (got " + describeJson(v.value) + ")");
}

Expected<std::string> asText(const ConfigValue& v) {
    if (v.value.is_string()) return v.value.get<std::string>();
    return valueError(v, "expected a string (got " + describeJson(v.value) + ")");
}

namespace {

bool allDigits(std::string_view s, int base) {
    if (s.empty()) return false;
    for (char c : s) {
        if (c == '_') continue;
        const bool ok = base == 16 ? std::isxdigit(static_cast<unsigned char>(c)) != 0
                        : base == 8 ? (c >= '0' && c <= '7')
                        : base == 2 ? (c == '0' || c == '1')
                                    : std::isdigit(static_cast<unsigned char>(c)) != 0;
        if (!ok) return false;
    }
    return true;
}

std::string withoutUnderscores(std::string_view s) {
    std::string out;
    for (char c : s)
        if (c != '_') out += c;
    return out;
}

json integerText(std::string_view digits, int base, bool negative, std::string_view original) {
    const std::string clean = withoutUnderscores(digits);
    int64_t v = 0;
    auto [end, ec] = std::from_chars(clean.data(), clean.data() + clean.size(), v, base);
    if (ec != std::errc() || end != clean.data() + clean.size()) return json(std::string(original));  // out of range: kept as text
    return json(negative ? -v : v);
}

}  // namespace

json yaml11Scalar(std::string_view text) {
    static const char* const kTrue[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", "y", "Y"};
    static const char* const kFalse[] = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF", "n", "N"};
    if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL") return json(nullptr);
    // PyYAML 1.1 resolves y/n as booleans only in the bool tag's regexp of
    // some versions; PyYAML 6 does not: keep them text.
    for (const char* t : kTrue)
        if (text == t && text != "y" && text != "Y") return json(true);
    for (const char* f : kFalse)
        if (text == f && text != "n" && text != "N") return json(false);
    std::string_view body = text;
    bool negative = false;
    if (body.front() == '-' || body.front() == '+') {
        negative = body.front() == '-';
        body.remove_prefix(1);
    }
    if (body.starts_with("0x") && allDigits(body.substr(2), 16)) return integerText(body.substr(2), 16, negative, text);
    if (body.starts_with("0b") && allDigits(body.substr(2), 2)) return integerText(body.substr(2), 2, negative, text);
    if (body.size() > 1 && body.front() == '0' && allDigits(body, 8)) return integerText(body.substr(1), 8, negative, text);
    if (!body.empty() && body.front() != '_' && allDigits(body, 10)) return integerText(body, 10, negative, text);
    // Floats: digits with a dot and/or an exponent (OmegaConf, which torchtune
    // uses, also reads 2e-5 as a float; PyYAML alone would keep it text).
    if (body == ".inf" || body == ".Inf" || body == ".INF") return json(negative ? -HUGE_VAL : HUGE_VAL);
    {
        const std::string clean = withoutUnderscores(text);
        double v = 0;
        auto [end, ec] = std::from_chars(clean.data(), clean.data() + clean.size(), v);
        const bool numeric = clean.find_first_of(".eE") != std::string::npos;
        if (ec == std::errc() && end == clean.data() + clean.size() && numeric && std::isfinite(v)) return json(v);
    }
    return json(std::string(text));
}

namespace {

// --- YAML ---------------------------------------------------------------

json yamlToJson(const YAML::Node& node, int depth);

json yamlScalar(const YAML::Node& node) {
    // A quoted scalar has the non-specific tag "!": always text.
    if (node.Tag() == "!") return json(node.Scalar());
    return yaml11Scalar(node.Scalar());
}

json yamlToJson(const YAML::Node& node, int depth) {
    if (depth > kMaxJsonDepth) throw std::runtime_error("nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    switch (node.Type()) {
        case YAML::NodeType::Null:
        case YAML::NodeType::Undefined: return json(nullptr);
        case YAML::NodeType::Scalar: return yamlScalar(node);
        case YAML::NodeType::Sequence: {
            json out = json::array();
            for (const auto& item : node) out.push_back(yamlToJson(item, depth + 1));
            return out;
        }
        case YAML::NodeType::Map: {
            json out = json::object();
            for (const auto& item : node) out[item.first.Scalar()] = yamlToJson(item.second, depth + 1);
            return out;
        }
    }
    return json(nullptr);
}

void flattenYaml(const YAML::Node& map, const std::string& prefix, ConfigDocument& doc, int depth) {
    if (depth > kMaxJsonDepth) throw std::runtime_error("nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    for (const auto& item : map) {
        const std::string key = prefix.empty() ? item.first.Scalar() : prefix + "." + item.first.Scalar();
        if (item.second.IsMap() && item.second.size() > 0) {
            flattenYaml(item.second, key, doc, depth + 1);
            continue;
        }
        ConfigValue v;
        v.key = key;
        v.value = yamlToJson(item.second, depth + 1);
        if (item.second.IsMap()) v.value = json::object();
        v.line = item.first.Mark().line + 1;
        v.file = doc.file;
        doc.values.push_back(std::move(v));
    }
}

// --- TOML ---------------------------------------------------------------

json tomlToJson(const toml::node& node, int depth) {
    if (depth > kMaxJsonDepth) throw std::runtime_error("nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    if (auto v = node.as_string()) return json(v->get());
    if (auto v = node.as_integer()) return json(v->get());
    if (auto v = node.as_floating_point()) return json(v->get());
    if (auto v = node.as_boolean()) return json(v->get());
    if (auto a = node.as_array()) {
        json out = json::array();
        for (const auto& item : *a) out.push_back(tomlToJson(item, depth + 1));
        return out;
    }
    if (auto t = node.as_table()) {
        json out = json::object();
        for (const auto& [k, item] : *t) out[std::string(k.str())] = tomlToJson(item, depth + 1);
        return out;
    }
    std::ostringstream text;  // dates and times: as TOML writes them
    if (auto d = node.as_date()) text << d->get();
    else if (auto t = node.as_time()) text << t->get();
    else if (auto dt = node.as_date_time()) text << dt->get();
    return json(text.str());
}

void flattenToml(const toml::table& table, const std::string& prefix, ConfigDocument& doc, int depth) {
    if (depth > kMaxJsonDepth) throw std::runtime_error("nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    for (const auto& [k, node] : table) {
        const std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
        if (auto sub = node.as_table()) {
            flattenToml(*sub, key, doc, depth + 1);
            continue;
        }
        ConfigValue v;
        v.key = key;
        v.value = tomlToJson(node, depth + 1);
        v.line = static_cast<int>(node.source().begin.line);
        v.file = doc.file;
        doc.values.push_back(std::move(v));
    }
}

}  // namespace

Expected<ConfigDocument> parseYamlDocument(std::string_view text, const std::string& file) {
    ConfigDocument doc;
    doc.file = file;
    try {
        const YAML::Node root = YAML::Load(std::string(text));
        if (root.IsNull()) return doc;
        if (!root.IsMap()) return Error{file + ":" + std::to_string(root.Mark().line + 1), "expected a mapping of keys at the top level"};
        flattenYaml(root, "", doc, 0);
    } catch (const YAML::Exception& e) {
        return Error{file + ":" + std::to_string(e.mark.line + 1), "YAML syntax error: " + printableText(e.msg)};
    } catch (const std::exception& e) {
        return Error{file, e.what()};
    }
    return doc;
}

Expected<ConfigDocument> parseTomlDocument(std::string_view text, const std::string& file) {
    ConfigDocument doc;
    doc.file = file;
    try {
        const toml::table table = toml::parse(text, file);
        flattenToml(table, "", doc, 0);
    } catch (const toml::parse_error& e) {
        return Error{file + ":" + std::to_string(e.source().begin.line), "TOML syntax error: " + printableText(e.description())};
    } catch (const std::exception& e) {
        return Error{file, e.what()};
    }
    return doc;
}

Expected<ConfigDocument> readYamlDocument(const std::filesystem::path& path) {
    auto text = readInputFile(path, kMaxJsonFileBytes);
    if (!text) return text.error();
    return parseYamlDocument(*text, path.string());
}

Expected<ConfigDocument> readTomlDocument(const std::filesystem::path& path) {
    auto text = readInputFile(path, kMaxJsonFileBytes);
    if (!text) return text.error();
    return parseTomlDocument(*text, path.string());
}

Expected<ConfigDocument> readJsonDocument(const std::filesystem::path& path) {
    auto text = readInputFile(path, kMaxJsonFileBytes);
    if (!text) return text.error();
    // JSON's own rules (and its limits) first; YAML, a superset, then gives the lines.
    if (auto parsed = parseJsonText(*text, path.string()); !parsed) return parsed.error();
    return parseYamlDocument(*text, path.string());
}

}  // namespace trainmem::runconfig
