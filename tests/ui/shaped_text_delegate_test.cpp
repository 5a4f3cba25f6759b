// ShapedTextDelegate draws a table's cells from text shaped once: the table
// must look exactly as with Qt's own delegate (same pixels), and its columns
// must be measured the same, whatever the cells' texts become.
#include <QApplication>
#include <QHeaderView>
#include <QImage>
#include <QStyledItemDelegate>
#include <QTableWidget>

#include "ui/shaped_text_delegate.h"
#include "ui_test_support.h"

namespace trainmem::ui {
namespace {

// A table like Find a Layout's: numbers right-aligned, words left-aligned,
// alternating rows, a selected row, columns sized to their contents, and a
// last column that stretches (and elides when the table is too narrow).
struct Table {
    explicit Table(QAbstractItemDelegate* delegate) {
        table.setColumnCount(4);
        table.setHorizontalHeaderLabels({QStringLiteral("DP"), QStringLiteral("schedule"), QStringLiteral("peak"),
                                         QStringLiteral("why")});
        table.verticalHeader()->setVisible(false);
        table.horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
        table.horizontalHeader()->setStretchLastSection(true);
        table.setAlternatingRowColors(true);
        table.setSelectionBehavior(QAbstractItemView::SelectRows);
        table.setWordWrap(false);
        // Only one of the two tables can have the focus; the current cell's
        // focus frame is Qt's drawing either way (the delegate hands it on).
        table.setFocusPolicy(Qt::NoFocus);
        if (delegate) table.setItemDelegate(delegate);
        table.resize(520, 220);
    }
    void fill(const QList<QStringList>& rows) {
        table.setRowCount(static_cast<int>(rows.size()));
        for (int r = 0; r < rows.size(); ++r)
            for (int c = 0; c < rows[r].size(); ++c) {
                auto* item = new QTableWidgetItem(rows[r][c]);
                item->setTextAlignment((c == 0 || c == 2 ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter);
                table.setItem(r, c, item);
            }
    }
    QImage picture() {
        table.show();
        QApplication::processEvents();
        return table.grab().toImage();
    }
    QTableWidget table;
};

const QList<QStringList> kRows = {
    {QStringLiteral("64"), QStringLiteral("1F1B"), QStringLiteral("41.3 GiB"), QStringLiteral("fits")},
    {QStringLiteral("8"), QStringLiteral("interleaved 1F1B v4"), QStringLiteral("79.96 GiB"), QStringLiteral("–")},
    {QStringLiteral("1,024"), QStringLiteral("–"), QStringLiteral("7.2 GiB"),
     QStringLiteral("device 81.3 GiB > 80.0 GiB: the activations of 16 micro-batches in flight")},
    {QStringLiteral("2"), QStringLiteral("GPipe"), QStringLiteral("100%"), QStringLiteral("selective × 2")},
};

TEST(ShapedTextDelegate, PaintsTheSamePixelsAsQtsDelegate) {
    Table qt(nullptr);
    ShapedTextDelegate shaped;
    Table ours(&shaped);
    for (Table* t : {&qt, &ours}) {
        t->fill(kRows);
        t->table.selectRow(1);
    }
    const QImage want = qt.picture();
    const QImage got = ours.picture();
    ASSERT_EQ(got.size(), want.size());
    EXPECT_TRUE(got == want) << "the table with ShapedTextDelegate differs from Qt's drawing";
    // The same after the texts change (the cache holds the old ones too),
    // and with the last column too narrow for its text (Qt elides it).
    QList<QStringList> next = kRows;
    std::swap(next[0], next[3]);
    next[1][2] = QStringLiteral("12.5 GiB");
    for (Table* t : {&qt, &ours}) {
        t->fill(next);
        t->table.resize(400, 220);
    }
    const QImage want_next = qt.picture();
    ASSERT_LT(ours.table.columnWidth(3), ours.table.fontMetrics().horizontalAdvance(next[2][3])) << "not elided";
    const QImage got_next = ours.picture();
    ASSERT_EQ(got_next.size(), want_next.size());
    EXPECT_TRUE(got_next == want_next) << "after the rows changed";
    EXPECT_FALSE(want_next == want) << "the test changed nothing it could see";
}

TEST(ShapedTextDelegate, MeasuresColumnsAsQtsDelegate) {
    Table qt(nullptr);
    ShapedTextDelegate shaped;
    Table ours(&shaped);
    for (Table* t : {&qt, &ours}) t->fill(kRows);
    auto hint = [](Table& t, int c) { return static_cast<QAbstractItemView&>(t.table).sizeHintForColumn(c); };
    for (int c = 0; c < 4; ++c) {
        EXPECT_EQ(hint(ours, c), hint(qt, c)) << "column " << c;
        EXPECT_GT(hint(ours, c), 0);
    }
}

}  // namespace
}  // namespace trainmem::ui
