#include "ui/chart_views.h"

#include <cmath>
#include <limits>
#include <map>

#include "core/training/optimizer_state.h"
#include "ui/component_palette.h"
#include "ui/display_names.h"
#include "core/scenario/scenario_file.h"
#include "core/account/estimate.h"

namespace trainmem::ui {

namespace {

QString q(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }
QString q(const std::string& s) { return QString::fromStdString(s); }

QString bytesText(int64_t bytes, Units units) { return q(formatBytes(bytes, units)); }

// The bar's total above it, with its number for a narrow slot's shorter forms.
void addTotal(ChartSpec& spec, int64_t bytes, Units units, const QString& note = {}) {
    spec.barTopLabels << bytesText(bytes, units) + note;
    spec.barTopValues << static_cast<double>(bytes) / unitBytes(units);
}

QString fitPhrase(const Estimate& e, Units units) {
    if (e.fits)
        return QStringLiteral("%1 of %2 per GPU: fits, %3 headroom")
            .arg(bytesText(e.peak.device_bytes, units), bytesText(e.capacity_bytes, units),
                 bytesText(e.headroom_bytes, units));
    return QStringLiteral("%1 of %2 per GPU: does NOT fit, %3 over")
        .arg(bytesText(e.peak.device_bytes, units), bytesText(e.capacity_bytes, units),
             bytesText(-e.headroom_bytes, units));
}

QString capacityLabel(const Scenario& s, const Estimate& e, Units units) {
    return QStringLiteral("%1 capacity %2").arg(q(s.hardware.gpu), bytesText(e.capacity_bytes, units));
}

QString peakPhrase(const Estimate& e) {
    QString where = e.num_stages > 1 ? QStringLiteral("stage %1 of %2").arg(e.peak.stage + 1).arg(e.num_stages)
                                     : QStringLiteral("the only stage");
    return QStringLiteral("peak on %1, during %2").arg(where, q(phaseName(e.peak.peak_phase)).toLower());
}

ChartLayer layerFor(const BarSegment& segment, int bars) {
    ChartLayer layer;
    layer.key = segment.key;
    layer.name = segment.name;
    layer.color = segment.color;
    layer.values = QVector<double>(bars, 0.0);
    return layer;
}

// Stacks bars made of barSegments() into layers in the canonical order, so
// the same component has the same place and colour in every bar and view.
QVector<ChartLayer> stackLayers(const std::vector<std::vector<BarSegment>>& bars, Units units) {
    std::vector<BarSegment> order;  // first occurrence of each key, canonical order
    for (const auto& bar : bars)
        for (const auto& seg : bar)
            if (std::none_of(order.begin(), order.end(), [&](const BarSegment& o) { return o.key == seg.key; }))
                order.push_back(seg);
    QVector<ChartLayer> layers;
    for (const BarSegment& kind : order) {
        ChartLayer layer = layerFor(kind, static_cast<int>(bars.size()));
        for (size_t i = 0; i < bars.size(); ++i)
            for (const auto& seg : bars[i])
                if (seg.key == kind.key) layer.values[static_cast<int>(i)] = seg.bytes / unitBytes(units);
        layers << layer;
    }
    // Canonical order: allocator components first (Component order), then device layers.
    std::stable_sort(layers.begin(), layers.end(), [](const ChartLayer& a, const ChartLayer& b) {
        auto rank = [](const QString& key) {
            for (Component c : allComponents())
                if (q(componentKey(c)) == key) return static_cast<int>(c);
            if (key == deviceLayerKey(DeviceLayer::AllocatorReserve)) return kComponentCount;
            return key == deviceLayerKey(DeviceLayer::PagedStates) ? kComponentCount + 1 : kComponentCount + 2;
        };
        return rank(a.key) < rank(b.key);
    });
    return layers;
}

// What a segment is and its formula, for its call-out or its hover text:
// "AdamW: 2x params, fp32  [8.03B × 8 B = 59.83 GiB]".
QString segmentDetail(const BarSegment& seg, const Scenario& scenario, const Estimate& e, Units units) {
    if (seg.component) {
        const ComponentExplanation why = explainComponent(*seg.component, scenario, e, units);
        QString detail = q(why.scaling);
        if (!why.formula.empty()) detail += QStringLiteral("  [%1]").arg(q(why.formula));
        return detail;
    }
    if (seg.key == deviceLayerKey(DeviceLayer::AllocatorReserve))
        return QStringLiteral("caching allocator's reserved - allocated (fragmentation %1%)")
            .arg(scenario.hardware.overheads.fragmentation * 100, 0, 'g', 3);
    if (seg.key == deviceLayerKey(DeviceLayer::PagedStates))
        return QStringLiteral("CUDA managed memory: on the device, outside PyTorch's counters");
    return QStringLiteral("outside PyTorch's allocator: fixed per process and per NCCL group");
}

// Bar `bar`'s hover texts, one per segment (issue 27: every bar of every
// chart tells its formula, not only the one-bar Breakdown's call-outs).
void addDetails(QVector<ChartLayer>& layers, int bar, const std::vector<BarSegment>& segments, const Scenario& scenario,
                const Estimate& e, Units units) {
    for (const BarSegment& seg : segments)
        for (ChartLayer& layer : layers)
            if (layer.key == seg.key) {
                while (layer.details.size() < layer.values.size()) layer.details << QString();
                if (bar < layer.details.size()) layer.details[bar] = segmentDetail(seg, scenario, e, units);
            }
}

}  // namespace

QString layoutPhrase(const Scenario& s) {
    const ParallelConfig& p = s.parallelism;
    QStringList parts;
    if (p.data > 1) parts << QStringLiteral("DP %1").arg(p.data);
    if (p.tensor > 1) parts << QStringLiteral("TP %1%2").arg(p.tensor).arg(p.sequence_parallel ? "+SP" : "");
    if (p.pipeline > 1) parts << QStringLiteral("PP %1").arg(p.pipeline);
    if (p.context > 1) parts << QStringLiteral("CP %1").arg(p.context);
    if (p.expert > 1) parts << QStringLiteral("EP %1").arg(p.expert);
    if (p.zero_stage > 0) parts << QStringLiteral("ZeRO-%1").arg(p.zero_stage);
    QString gpu = s.hardware.memory_bytes && s.hardware.gpu == "custom" ? QStringLiteral("custom GPU") : q(s.hardware.gpu);
    QString phrase = QStringLiteral("%1 × %2").arg(p.totalGpus()).arg(gpu);
    if (!parts.isEmpty()) phrase += " (" + parts.join(", ") + ")";
    return phrase;
}


QString chartViewKey(ChartView view) {
    switch (view) {
        case ChartView::Breakdown: return QStringLiteral("breakdown");
        case ChartView::Stages: return QStringLiteral("stages");
        case ChartView::StepTime: return QStringLiteral("steptime");
        case ChartView::StepTimeStages: return QStringLiteral("steptime-stages");
        case ChartView::Optimizers: return QStringLiteral("optimizers");
        case ChartView::Compare: return QStringLiteral("compare");
        case ChartView::Timeline: return QStringLiteral("timeline");
    }
    return {};
}

std::optional<ChartView> parseChartView(const QString& key) {
    for (ChartView v : {ChartView::Breakdown, ChartView::Stages, ChartView::StepTime, ChartView::StepTimeStages,
                        ChartView::Optimizers, ChartView::Compare, ChartView::Timeline})
        if (chartViewKey(v) == key) return v;
    return std::nullopt;
}

double unitBytes(Units units) { return units == Units::GiB ? 1024.0 * 1024.0 * 1024.0 : 1e9; }
QString unitName(Units units) { return units == Units::GiB ? QStringLiteral("GiB") : QStringLiteral("GB"); }
QString numberText(double value, int decimals) { return q(formatNumber(value, decimals)); }

std::vector<BarSegment> barSegments(const StageEstimate& stage) {
    std::vector<BarSegment> segments;
    for (Component c : allComponents()) {
        const int64_t bytes = stage.at_peak[c];
        if (bytes <= 0) continue;
        segments.push_back({q(componentKey(c)), q(componentName(c)), componentColor(c), bytes, c});
    }
    // The estimate's three totals nest: allocated <= reserved <= device. The
    // gaps are the allocator's reserve and what lives outside the allocator:
    // paged optimizer states (managed memory) and the CUDA context + NCCL.
    const int64_t reserve = stage.reserved_bytes - stage.allocated_bytes;
    const int64_t outside = stage.device_bytes - stage.reserved_bytes - stage.managed_bytes;
    for (auto [layer, bytes] : {std::pair{DeviceLayer::AllocatorReserve, reserve},
                                std::pair{DeviceLayer::PagedStates, stage.managed_bytes},
                                std::pair{DeviceLayer::OutsideAllocator, outside}})
        if (bytes > 0)
            segments.push_back({deviceLayerKey(layer), deviceLayerName(layer), deviceLayerColor(layer), bytes, std::nullopt});
    return segments;
}

ChartSpec breakdownChart(const Scenario& scenario, const Estimate& e, Units units, const QString& stale) {
    ChartSpec spec;
    spec.title = QStringLiteral("Training memory breakdown (per GPU)");
    spec.subtitle = QStringLiteral("%1 on %2, %3\n%4")
                        .arg(q(scenario.model.name.empty() ? scenario.name : scenario.model.name), layoutPhrase(scenario),
                             peakPhrase(e), fitPhrase(e, units));
    spec.valueAxisTitle = unitName(units) + QStringLiteral(" per GPU");
    spec.categories << (e.num_stages > 1 ? QStringLiteral("Stage %1 (heaviest)").arg(e.peak.stage + 1) : QStringLiteral("One GPU"));
    const std::vector<BarSegment> segments = barSegments(e.peak);
    spec.layers = stackLayers({segments}, units);
    for (ChartLayer& layer : spec.layers) {
        const auto seg = std::find_if(segments.begin(), segments.end(), [&](const BarSegment& s) { return s.key == layer.key; });
        const QString name = seg->component ? q(componentName(*seg->component)) : seg->name;
        layer.callout = QStringLiteral("%1: %2").arg(name, bytesText(seg->bytes, units));
        layer.calloutDetail = segmentDetail(*seg, scenario, e, units);
    }
    addTotal(spec, e.peak.device_bytes, units);
    spec.capacity = e.capacity_bytes / unitBytes(units);
    spec.capacityLabel = capacityLabel(scenario, e, units);
    spec.callouts = true;
    spec.legend = false;
    spec.footer << q(workedExample(scenario, e, units));
    spec.staleNotice = stale;
    spec.valueDecimals = 0;
    return spec;
}

ChartSpec stagesChart(const Scenario& scenario, const Estimate& e, const std::vector<StageEstimate>& stages,
                      Units units, const QString& stale) {
    ChartSpec spec;
    spec.title = QStringLiteral("Memory per pipeline stage (per GPU)");
    spec.subtitle = QStringLiteral("%1 on %2, %3\n%4")
                        .arg(q(scenario.model.name.empty() ? scenario.name : scenario.model.name), layoutPhrase(scenario),
                             peakPhrase(e), fitPhrase(e, units));
    spec.valueAxisTitle = unitName(units) + QStringLiteral(" per GPU");
    std::vector<std::vector<BarSegment>> bars;
    for (const StageEstimate& st : stages) {
        const int64_t last = st.first_layer + st.num_layers - 1;
        // Short lines: with 16+ stages a bar's slot is ~60 px wide.
        // Counted from 1 for people, as stages are ("Stage 1, L1-16").
        QString label = QStringLiteral("Stage %1\nL%2-%3").arg(st.stage + 1).arg(st.first_layer + 1).arg(last + 1);
        if (st.stage == e.peak.stage) {
            label += QStringLiteral("\npeak");
            spec.highlightedCategory = static_cast<int>(spec.categories.size());
        }
        spec.categories << label;
        spec.shortCategories << QStringLiteral("S%1").arg(st.stage + 1);
        addTotal(spec, st.device_bytes, units);
        bars.push_back(barSegments(st));
    }
    spec.layers = stackLayers(bars, units);
    // Each stage's formulas are its own: the estimate as if it were the peak.
    Estimate stage_estimate = e;
    for (size_t i = 0; i < stages.size(); ++i) {
        stage_estimate.peak = stages[i];
        addDetails(spec.layers, static_cast<int>(i), bars[i], scenario, stage_estimate, units);
    }
    spec.capacity = e.capacity_bytes / unitBytes(units);
    spec.capacityLabel = capacityLabel(scenario, e, units);
    spec.footer << q(workedExample(scenario, e, units));
    spec.staleNotice = stale;
    spec.emptyNotice = QStringLiteral("No stages");
    return spec;
}

std::vector<OptimizerOutcome> estimateEveryOptimizer(const Scenario& scenario) {
    std::vector<OptimizerOutcome> outcomes;
    for (OptimizerKind kind : allOptimizers()) {
        OptimizerOutcome o{kind, scenario, std::nullopt, {}};
        o.scenario.training.optimizer = kind;
        o.scenario.training.optimizer_impl = comparisonImpl(kind, scenario.training.optimizer_impl);
        Expected<Estimate> e = estimate(o.scenario);
        if (e)
            o.estimate = std::move(e).value();
        else
            o.error = q(e.error().text());
        outcomes.push_back(std::move(o));
    }
    return outcomes;
}

ChartSpec optimizerChart(const Scenario& scenario, const std::vector<OptimizerOutcome>& outcomes,
                         OptimizerScale scale, Units units) {
    ChartSpec spec;
    const int n = static_cast<int>(outcomes.size());
    for (const auto& o : outcomes)
        spec.categories << optimizerLabel(o.optimizer) +
                               (o.optimizer == scenario.training.optimizer ? QStringLiteral("\n(current)") : QString());

    if (scale == OptimizerScale::TimesParams) {
        // The seed figure: optimizer-state buffers per trainable parameter,
        // each buffer named inside its bar, one colour per optimizer.
        spec.title = QStringLiteral("Optimizer memory per parameter");
        spec.subtitle = QStringLiteral("state the optimizer keeps, in fp32 copies of the trainable parameters "
                                       "(an 8-bit buffer is a quarter of one)");
        spec.valueAxisTitle = QStringLiteral("extra memory (× params)");
        spec.valueDecimals = 1;
        spec.legend = false;
        spec.segmentSeparators = true;
        for (int i = 0; i < n; ++i) {
            const OptimizerKind kind = outcomes[static_cast<size_t>(i)].optimizer;
            // Heights in real bytes: the core's own state size for a block of
            // plain matrices, over an fp32 copy of them (AdamW 8-bit: m8 and
            // v8 at one byte each plus a scale per block, about 0.5x, not 2x).
            TensorGroup matrices;
            matrices.params = matrices.matrix_params = matrices.largest_tensor = 1 << 20;
            const double height = optimizerStateBytes(kind, DType::Fp32, matrices, false) /
                                  (4.0 * static_cast<double>(matrices.params));
            const QStringList names = QString::fromUtf8(optimizerBufferNames(kind)).split(',', Qt::SkipEmptyParts);
            // Bottom-up like the seed (Adam: v under m).
            QStringList stack = names;
            std::reverse(stack.begin(), stack.end());
            const int count = static_cast<int>(stack.size());
            for (int b = 0; b < count; ++b) {
                ChartLayer layer;
                layer.key = QStringLiteral("%1.%2").arg(q(optimizerName(kind)), stack[b].trimmed());
                layer.name = stack[b].trimmed();
                layer.color = optimizerColor(kind);
                layer.values = QVector<double>(n, 0.0);
                layer.values[i] = height / count;
                layer.inside = QStringList(n, layer.name);
                spec.layers << layer;
            }
            if (height > 0)
                spec.barTopLabels << QStringLiteral("%1×").arg(height, 0, 'g', 2);
            else
                spec.barTopLabels << (names.isEmpty() ? QStringLiteral("0×") : QStringLiteral("≈0× (%1)").arg(names.join('+')));
        }
        spec.footer << QStringLiteral("Adam(W) keeps 2 buffers per parameter (m, v); SGD+momentum, Adagrad, RMSprop, Lion and "
                                      "Muon 1; Adafactor factors v into row and column sums.")
                    << QStringLiteral("AdamW 8-bit keeps m and v in one byte each, with an fp32 scale per 256 values: "
                                      "about a quarter of AdamW's fp32 states.")
                    << QStringLiteral("Muon keeps AdamW's m and v for embeddings, head, norms and biases: the %1 view "
                                      "has this model's exact bytes.")
                           .arg(unitName(units));
        return spec;
    }

    spec.title = QStringLiteral("Per-GPU memory under every optimizer");
    spec.subtitle = QStringLiteral("%1 on %2").arg(q(scenario.model.name), layoutPhrase(scenario));
    spec.valueAxisTitle = unitName(units) + QStringLiteral(" per GPU");
    std::vector<std::vector<BarSegment>> bars;
    std::optional<int64_t> capacity;
    for (const auto& o : outcomes) {
        if (o.estimate) {
            bars.push_back(barSegments(o.estimate->peak));
            addTotal(spec, o.estimate->peak.device_bytes, units, o.estimate->fits ? QString() : QStringLiteral(" (no fit)"));
            capacity = o.estimate->capacity_bytes;
        } else {
            bars.emplace_back();
            spec.barTopLabels << QStringLiteral("invalid");
            spec.barTopValues << std::numeric_limits<double>::quiet_NaN();
        }
    }
    spec.layers = stackLayers(bars, units);
    for (size_t i = 0; i < outcomes.size(); ++i)
        if (outcomes[i].estimate)
            addDetails(spec.layers, static_cast<int>(i), bars[i], outcomes[i].scenario, *outcomes[i].estimate, units);
    if (capacity) {
        spec.capacity = *capacity / unitBytes(units);
        spec.capacityLabel = QStringLiteral("%1 capacity %2").arg(q(scenario.hardware.gpu), bytesText(*capacity, units));
    }
    // Optimizers without the scenario's kernel ran with their default one (comparisonImpl): say so.
    QStringList other_kernel;
    for (const auto& o : outcomes)
        if (o.scenario.training.optimizer_impl != scenario.training.optimizer_impl)
            other_kernel << QStringLiteral("%1 (%2)").arg(optimizerLabel(o.optimizer),
                                                          q(std::string(optimizerImplName(o.scenario.training.optimizer_impl))));
    if (!other_kernel.isEmpty())
        spec.footer << QStringLiteral("No %1 kernel, compared with their default: %2")
                           .arg(q(std::string(optimizerImplName(scenario.training.optimizer_impl))), other_kernel.join(", "));
    for (const auto& o : outcomes)
        if (!o.error.isEmpty()) spec.footer << QStringLiteral("%1: %2").arg(optimizerLabel(o.optimizer), o.error);
    return spec;
}

ChartSpec compareChart(const std::vector<PinnedScenario>& pins, Units units, int base, bool with_table) {
    ChartSpec spec;
    spec.title = QStringLiteral("Pinned scenarios side by side (per GPU)");
    spec.valueAxisTitle = unitName(units) + QStringLiteral(" per GPU");
    spec.emptyNotice = QStringLiteral("Press \"Pin current\" to add the current scenario as a column (up to 6)");
    if (pins.empty()) return spec;

    std::vector<Scenario> scenarios;
    for (const auto& p : pins) scenarios.push_back(p.scenario);
    const QStringList differences = scenarioDifferences(scenarios);
    const std::vector<QStringList> captions = pinCaptions(scenarios);

    std::vector<std::vector<BarSegment>> bars;
    for (size_t i = 0; i < pins.size(); ++i) {
        const PinnedScenario& p = pins[i];
        spec.categories << (QStringList(p.label) + captions[i]).join('\n');
        addTotal(spec, p.estimate.peak.device_bytes, units, p.estimate.fits ? QString() : QStringLiteral(" (no fit)"));
        bars.push_back(barSegments(p.estimate.peak));
    }
    spec.layers = stackLayers(bars, units);
    for (size_t i = 0; i < pins.size(); ++i)
        addDetails(spec.layers, static_cast<int>(i), bars[i], pins[i].scenario, pins[i].estimate, units);
    // Capacity line only when every pin uses the same GPU size.
    const int64_t cap = pins.front().estimate.capacity_bytes;
    if (std::all_of(pins.begin(), pins.end(), [&](const PinnedScenario& p) { return p.estimate.capacity_bytes == cap; })) {
        spec.capacity = cap / unitBytes(units);
        spec.capacityLabel = QStringLiteral("%1 capacity %2").arg(q(pins.front().scenario.hardware.gpu), bytesText(cap, units));
    }
    QStringList labels;
    for (const auto& p : pins) labels << p.label;
    // The captions name what differs; the full list is the table under the
    // chart (on screen) and not repeated here, so the plot keeps its height.
    spec.subtitle = pins.size() == 1      ? QStringLiteral("%1 on %2").arg(q(pins.front().scenario.model.name), layoutPhrase(pins.front().scenario))
                    : differences.isEmpty() ? QStringLiteral("%1: identical scenarios").arg(labels.join(", "))
                    : differences.size() == 1
                        ? QStringLiteral("1 setting differs between %1").arg(labels.join(", "))
                        : QStringLiteral("%1 settings differ between %2").arg(differences.size()).arg(labels.join(", "));
    if (with_table && pins.size() > 1) spec.table = comparisonTable(pins, base, units);
    return spec;
}

FigureTable comparisonTable(const std::vector<PinnedScenario>& pins, int base, Units units) {
    FigureTable table;
    const int n = static_cast<int>(pins.size());
    if (n == 0) return table;
    base = std::clamp(base, 0, n - 1);
    std::vector<Scenario> scenarios;
    for (const auto& p : pins) scenarios.push_back(p.scenario);
    table.corner = QStringLiteral("per GPU, %1").arg(unitName(units));
    for (int i = 0; i < n; ++i)
        table.columns << (i == base && n > 1 ? QStringLiteral("%1 (base)").arg(pins[static_cast<size_t>(i)].label)
                                             : pins[static_cast<size_t>(i)].label);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (const SettingDifference& d : settingDifferences(scenarios)) {
        FigureTableRow row;
        row.name = d.key;
        row.cells = d.values;
        row.numbers = QVector<double>(n, nan);
        for (int i = 0; i < n; ++i) row.emphasised << (d.values.value(i) != d.values.value(base));
        table.rows << row;
    }
    // Components in the order of the bars, each once, whichever pin has it;
    // then the device total, the bars' height.
    struct Bytes {
        QString key, name;
        QColor color;
        std::vector<int64_t> bytes;
    };
    std::vector<Bytes> rows;
    for (int i = 0; i < n; ++i)
        for (const BarSegment& seg : barSegments(pins[static_cast<size_t>(i)].estimate.peak)) {
            auto it = std::find_if(rows.begin(), rows.end(), [&](const Bytes& r) { return r.key == seg.key; });
            if (it == rows.end()) it = rows.insert(rows.end(), Bytes{seg.key, seg.name, seg.color, std::vector<int64_t>(static_cast<size_t>(n), 0)});
            it->bytes[static_cast<size_t>(i)] = seg.bytes;
        }
    Bytes total{QStringLiteral("device"), QStringLiteral("Device total"), QColor(), std::vector<int64_t>(static_cast<size_t>(n), 0)};
    for (int i = 0; i < n; ++i) total.bytes[static_cast<size_t>(i)] = pins[static_cast<size_t>(i)].estimate.peak.device_bytes;
    rows.push_back(total);
    const double unit = unitBytes(units);
    for (const Bytes& r : rows) {
        FigureTableRow row;
        row.name = r.name;
        row.swatch = r.color;
        row.bold = !r.color.isValid();
        row.detail = r.color.isValid();
        const double b = static_cast<double>(r.bytes[static_cast<size_t>(base)]);
        for (int i = 0; i < n; ++i) {
            const double v = static_cast<double>(r.bytes[static_cast<size_t>(i)]);
            QString text = numberText(v / unit, 2);
            row.shortCells << text;
            if (i != base && v != b) {
                text += QStringLiteral("  (%1%2").arg(v > b ? "+" : "−", numberText(std::abs(v - b) / unit, 2));
                if (b > 0) text += QStringLiteral(", %1%2%").arg(v > b ? "+" : "−", numberText(std::abs(v - b) / b * 100, 0));
                text += ')';
            }
            row.cells << text;
            row.numbers << v;
            row.emphasised << false;
        }
        table.rows << row;
    }
    FigureTableRow fits;
    fits.name = QStringLiteral("Fits");
    fits.bold = true;
    fits.off_screen = true;  // at 1000 x 700 one more row pushed the device total out of view
    for (int i = 0; i < n; ++i) {
        const Estimate& e = pins[static_cast<size_t>(i)].estimate;
        fits.cells << (e.fits ? QStringLiteral("yes") : QStringLiteral("no"));
        fits.shortCells << fits.cells.back();
        fits.numbers << nan;
        fits.emphasised << false;
    }
    table.rows << fits;
    return table;
}

QString figureTableMarkdown(const FigureTable& table) {
    auto cell = [](QString s) { return s.replace('|', QStringLiteral("\\|")); };
    QString out = QStringLiteral("| %1 |").arg(cell(table.corner));
    QString rule = QStringLiteral("|---|");
    for (const QString& c : table.columns) {
        out += QStringLiteral(" %1 |").arg(cell(c));
        rule += QStringLiteral("---:|");
    }
    out += '\n' + rule + '\n';
    for (const FigureTableRow& row : table.rows) {
        out += QStringLiteral("| %1 |").arg(row.bold ? QStringLiteral("**%1**").arg(cell(row.name)) : cell(row.name));
        for (const QString& c : row.cells) out += QStringLiteral(" %1 |").arg(cell(c));
        out += '\n';
    }
    return out;
}

QString figureTableCsv(const FigureTable& table) {
    auto field = [](QString s) {
        if (s.contains(',') || s.contains('"') || s.contains('\n')) s = '"' + s.replace('"', QStringLiteral("\"\"")) + '"';
        return s;
    };
    // Sizes in bytes, as trainmem-cli's CSV: a spreadsheet does the arithmetic.
    QStringList lines;
    QStringList head{QStringLiteral("row")};
    for (const QString& c : table.columns) head << field(c);
    lines << head.join(',');
    for (const FigureTableRow& row : table.rows) {
        QStringList fields{field(row.swatch.isValid() || row.name == QStringLiteral("Device total") ? row.name + QStringLiteral(" (bytes)") : row.name)};
        for (int c = 0; c < table.columns.size(); ++c) {
            const double v = row.numbers.value(c, std::numeric_limits<double>::quiet_NaN());
            fields << (std::isnan(v) ? field(row.cells.value(c)) : QString::number(static_cast<qint64>(v)));
        }
        lines << fields.join(',');
    }
    return lines.join('\n') + '\n';
}

namespace {

// The last part of a settings key, as a caption can afford it.
QString shortKey(const QString& key) {
    QString k = key.section('.', -1);
    k.replace('_', ' ');
    return k;
}

}  // namespace

std::vector<QStringList> pinCaptions(const std::vector<Scenario>& scenarios) {
    std::vector<QStringList> out(scenarios.size());
    const std::vector<SettingDifference> differences = settingDifferences(scenarios);
    if (scenarios.size() < 2 || differences.empty()) {
        for (size_t i = 0; i < scenarios.size(); ++i) out[i] << q(scenarios[i].model.name) << layoutPhrase(scenarios[i]);
        return out;
    }
    // What makes each pin different: its settings whose value is not the
    // one most pins share, the rarest first (a value no
    // other pin has before one two pins have), then in key order. The first
    // two by name and value; more are counted. Key order alone named the
    // same "gpus 8 / tensor 1" under five of six pins.
    constexpr size_t kShown = 2;
    for (size_t i = 0; i < scenarios.size(); ++i) {
        std::vector<std::pair<int, size_t>> distinct;  // (pins sharing the value, difference)
        for (size_t d = 0; d < differences.size(); ++d) {
            const QStringList& values = differences[d].values;
            // The value most pins share, when one value does: holding it is
            // not what sets a pin apart (two pins, two values: both do).
            int most = 0, holders_of_most = 0;
            for (const QString& v : values) {
                const int n = static_cast<int>(values.count(v));
                if (n > most) most = n, holders_of_most = 0;
                if (n == most) ++holders_of_most;
            }
            const bool one_majority = holders_of_most == most;  // counted once per pin holding it
            const int mine = static_cast<int>(values.count(values[static_cast<int>(i)]));
            if (!one_majority || mine < most) distinct.emplace_back(mine, d);
        }
        std::stable_sort(distinct.begin(), distinct.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        if (distinct.empty()) {
            out[i] << QStringLiteral("the common settings");
            continue;
        }
        for (size_t k = 0; k < std::min(kShown, distinct.size()); ++k) {
            const SettingDifference& d = differences[distinct[k].second];
            out[i] << QStringLiteral("%1 %2").arg(shortKey(d.key), d.values[static_cast<int>(i)]);
        }
        if (distinct.size() > kShown) out[i] << QStringLiteral("+%1 more").arg(distinct.size() - kShown);
    }
    return out;
}

namespace {

void flatten(const nlohmann::json& j, const std::string& prefix, std::map<std::string, std::string>& out) {
    if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it)
            flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
    } else {
        out[prefix] = j.is_string() ? j.get<std::string>() : j.dump();
    }
}

}  // namespace

QStringList scenarioDifferences(const std::vector<Scenario>& scenarios) {
    QStringList out;
    for (const SettingDifference& d : settingDifferences(scenarios))
        out << QStringLiteral("%1: %2").arg(d.key, d.values.join(QStringLiteral(" | ")));
    return out;
}

std::vector<SettingDifference> settingDifferences(const std::vector<Scenario>& scenarios) {
    std::vector<std::map<std::string, std::string>> flat(scenarios.size());
    std::map<std::string, int> keys;  // ordered, deduplicated
    for (size_t i = 0; i < scenarios.size(); ++i) {
        flatten(scenarioToJson(scenarios[i]), {}, flat[i]);
        for (const auto& [k, v] : flat[i]) keys[k] = 0;
    }
    std::vector<SettingDifference> out;
    for (const auto& [key, unused] : keys) {
        if (key == "name" || key == "description" || key.rfind("format", 0) == 0 || key == "version") continue;
        QStringList values;
        bool differ = false;
        for (size_t i = 0; i < flat.size(); ++i) {
            const auto it = flat[i].find(key);
            values << (it == flat[i].end() ? QStringLiteral("-") : q(it->second));
            if (i > 0 && values[static_cast<int>(i)] != values[0]) differ = true;
        }
        if (differ) out.push_back({q(key), values});
    }
    return out;
}

}  // namespace trainmem::ui
