#!/bin/sh
# Retakes the screenshots of docs/gui.md from a build (cmake --build build
# --target trainmem-screenshot trainmem). Needs xvfb-run; renders the SVG
# figure with ImageMagick's convert and the PDF with Ghostscript when present.
# Usage: docs/screenshots/take.sh [BUILD_DIR]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
shot="$build/app/trainmem-screenshot"
app="$build/app/trainmem"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A throw-away settings folder: no saved session, size or units leak in.
export XDG_CONFIG_HOME="$work/config"

# The Compare tab's pins: the 8B FSDP preset, then micro-batch 4, then
# AdamW 8-bit, saved with the scenario as File > Save writes them.
python3 - "$root/presets/scenarios/llama3.1-8b-fsdp-8xh100.json" "$work/compare.json" <<'PY'
import copy, json, sys
base = json.load(open(sys.argv[1]))
def variant(**training):
    s = copy.deepcopy(base)
    s["training"].update(training)
    return s
doc = copy.deepcopy(base)
doc["pins"] = [{"name": "A", "scenario": base},
               {"name": "B", "scenario": variant(micro_batch_size=4)},
               {"name": "C", "scenario": variant(optimizer="adamw-8bit", optimizer_impl="for-loop")}]
json.dump(doc, open(sys.argv[2], "w"), indent=2)
PY

take() {  # take NAME SIZE [options]
    name=$1 size=$2
    shift 2
    xvfb-run -a -s "-screen 0 1700x1100x24" "$shot" "$here/$name.png" "$size" "$@" 2>/dev/null
}
fsdp="--preset llama3.1-8b-fsdp-8xh100"
for mode in light dark; do
    prefix="" flag=""
    if [ $mode = dark ]; then prefix="dark-" flag="--dark"; fi
    for size in 1600x1000 1366x768 1000x700; do
        suffix="-$size"
        if [ $size = 1600x1000 ]; then suffix=""; fi
        take "${prefix}breakdown$suffix" $size $flag $fsdp
        take "${prefix}stages$suffix" $size $flag --preset llama3.1-405b-3d --view stages
        take "${prefix}steptime$suffix" $size $flag --preset llama3.1-405b-3d --view steptime
        take "${prefix}steptime-stages$suffix" $size $flag --preset llama3.1-405b-3d --view steptime-stages
        take "${prefix}run-config$suffix" $size $flag $fsdp --run-config "$root/tests/data/run_configs/torchtitan_llama3_8b.toml"
        take "${prefix}timeline$suffix" $size $flag $fsdp --view timeline
        take "${prefix}optimizers$suffix" $size $flag $fsdp --view optimizers
        take "${prefix}compare$suffix" $size $flag --scenario "$work/compare.json" --view compare
        take "${prefix}layout-finder$suffix" $size $flag --preset llama3.1-405b-3d --finder
    done
done

# Exported figures: PNG as written, SVG and PDF at the document-column size
# (454 x 340 pt, 16 x 12 cm) rendered to PNG by other programs.
QT_QPA_PLATFORM=offscreen "$app" $fsdp --export "$here/export-breakdown.png" --width 1200 --height 750 2>/dev/null
QT_QPA_PLATFORM=offscreen "$app" $fsdp --export "$work/column.svg" --width 454 --height 340 2>/dev/null
QT_QPA_PLATFORM=offscreen "$app" $fsdp --view optimizers --export "$work/column.pdf" --width 454 --height 340 2>/dev/null
# The comparison as a design doc gets it: bars and the table of settings and
# changes in one 16 cm column, from the pins saved in the file.
QT_QPA_PLATFORM=offscreen "$app" --scenario "$work/compare.json" --view compare --size column --export "$work/compare.svg" 2>/dev/null
QT_QPA_PLATFORM=offscreen "$app" --scenario "$work/compare.json" --view compare --size column --export "$here/export-compare-column.png" --scale 2 2>/dev/null
if command -v convert >/dev/null; then
    # An ImageMagick without an SVG delegate cannot: keep the last rendering.
    convert -density 200 "$work/column.svg" "$here/export-column-svg.png" || echo "take.sh: export-column-svg.png not retaken" >&2
    convert -density 200 "$work/compare.svg" "$here/export-compare-column-svg.png" || echo "take.sh: export-compare-column-svg.png not retaken" >&2
fi
if command -v gs >/dev/null; then
    gs -q -dSAFER -dBATCH -dNOPAUSE -sDEVICE=png16m -r200 -sOutputFile="$here/export-column-pdf.png" "$work/column.pdf"
fi
