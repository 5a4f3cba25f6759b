#include "core/base/text_table.h"

#include <algorithm>

namespace trainmem {

namespace {

// Display width: count UTF-8 code points, not bytes ("×" is one column).
size_t displayWidth(const std::string& s) {
    return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

Align alignOf(const TextTable& t, size_t column) {
    return column < t.align.size() ? t.align[column] : Align::Left;
}

std::string escapePipes(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '|') out += '\\';
        out += c;
    }
    return out;
}

}  // namespace

std::string renderPlain(const TextTable& table) {
    size_t columns = table.header.size();
    for (const auto& row : table.rows) columns = std::max(columns, row.size());
    std::vector<size_t> width(columns, 0);
    auto measure = [&](const std::vector<std::string>& row) {
        for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], displayWidth(row[c]));
    };
    measure(table.header);
    for (const auto& row : table.rows) measure(row);

    size_t total = 0;
    for (size_t w : width) total += w;
    total += columns > 0 ? 2 * (columns - 1) : 0;

    std::string out;
    auto emit = [&](const std::vector<std::string>& row) {
        std::string line;
        for (size_t c = 0; c < columns; ++c) {
            const std::string cell = c < row.size() ? row[c] : "";
            const std::string pad(width[c] - displayWidth(cell), ' ');
            if (c > 0) line += "  ";
            line += alignOf(table, c) == Align::Right ? pad + cell : cell + pad;
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out += line + "\n";
    };
    if (!table.header.empty()) {
        emit(table.header);
        out += std::string(total, '-') + "\n";
    }
    for (const auto& row : table.rows) {
        if (row.empty())
            out += std::string(total, '-') + "\n";
        else
            emit(row);
    }
    return out;
}

std::string renderMarkdown(const TextTable& table) {
    std::string out = "|";
    for (const auto& cell : table.header) out += " " + escapePipes(cell) + " |";
    out += "\n|";
    for (size_t c = 0; c < table.header.size(); ++c) out += alignOf(table, c) == Align::Right ? " ---: |" : " --- |";
    out += "\n";
    for (const auto& row : table.rows) {
        if (row.empty()) continue;
        out += "|";
        for (size_t c = 0; c < table.header.size(); ++c) out += " " + escapePipes(c < row.size() ? row[c] : "") + " |";
        out += "\n";
    }
    return out;
}

std::string csvCell(const std::string& cell) {
    if (cell.find_first_of(",\"\n\r") == std::string::npos) return cell;
    std::string out = "\"";
    for (char c : cell) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

}  // namespace trainmem
