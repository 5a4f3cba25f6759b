#pragma once
// The table a figure carries under its plot (ChartSpec::table): the Compare
// figure's settings that differ, each component and the device total per
// pin with its change against the base, so an exported comparison says on
// its own what each bar is (issue 27: Export Chart on Compare left it out).
#include "ui/chart_callouts.h"
#include "ui/chart_spec.h"

namespace trainmem::ui {

// How the table is drawn in a width: its font, whether the cells carry
// their change against the base, and the columns' widths.
struct FigureTableLayout {
    int px = 11;
    bool full_cells = true;
    bool compact = false;  // the component rows left out (the legend names the colours)
    double name_width = 0;
    std::vector<double> column_widths;
    double height = 0;
};

// The largest font and the fullest cells that fit `width`; `compact` leaves
// out the detail rows.
FigureTableLayout layoutFigureTable(const FigureTable& table, double width, bool compact);
void placeFigureTable(ChartOverlay& overlay, const FigureTable& table, const FigureTableLayout& layout, double left,
                      double top, double width);

}  // namespace trainmem::ui
