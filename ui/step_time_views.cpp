#include "ui/step_time_views.h"

#include <algorithm>
#include <cmath>

#include <QLocale>

#include "ui/chart_views.h"

namespace trainmem::ui {

namespace {

QString q(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

QString percent(double share, int decimals = 0) { return numberText(share * 100, decimals) + QStringLiteral("%"); }
// A part's share of the step: "<1%" rather than a "0%" beside a drawn segment.
QString shareText(double share) { return share > 0 && share < 0.005 ? QStringLiteral("<1%") : percent(share); }

// "5,120": tokens per second read as a count, not a size.
QString grouped(double x) { return QLocale(QLocale::English).toString(static_cast<qlonglong>(std::llround(x))); }

int64_t microbatches(const Scenario& s) {
    return s.parallelism.microbatches > 0 ? s.parallelism.microbatches
                                          : std::max<int64_t>(s.training.gradient_accumulation_steps, 1);
}

QString plural(int64_t n, const QString& one, const QString& many) { return QStringLiteral("%1 %2").arg(n).arg(n == 1 ? one : many); }

QString titleLine(const Scenario& s) {
    return QStringLiteral("%1 on %2").arg(q(s.model.name.empty() ? s.name : s.model.name), layoutPhrase(s));
}

// The subtitle's second line: the three numbers, where the step is set, why it is slow.
QString resultLine(const Scenario& s, const StepTime& t) {
    QString line = throughputPhrase(t);
    if (s.parallelism.pipeline > 1)
        line += QStringLiteral(" · slowest: stage %1 of %2").arg(t.slowest_stage + 1).arg(s.parallelism.pipeline);
    const std::string slow = slowReason(t);
    if (!slow.empty()) line += QStringLiteral(" · slow: %1").arg(q(slow));
    return line;
}

// What a part of the step is, for its call-out and tooltip: how it scales
// and, for a collective, how much more of it is hidden behind compute.
QString partDetail(TimeComponent part, const Scenario& s, const StepTimeModel& m, const StepTime& t) {
    const ParallelConfig& p = s.parallelism;
    const int64_t mb = microbatches(s);
    const QString hidden = t.overlappedAt(part) > 0
                               ? QStringLiteral("; %1 more overlapped with compute").arg(secondsText(t.overlappedAt(part)))
                               : QString();
    switch (part) {
        case TimeComponent::Compute:
            return QStringLiteral("forward + backward of %1 of %2 × %3 tokens; matmuls at %4 of %5 TFLOP/s")
                .arg(plural(mb, QStringLiteral("micro-batch"), QStringLiteral("micro-batches")))
                .arg(s.training.micro_batch_size)
                .arg(s.training.sequence_length)
                .arg(percent(m.matmul_efficiency, 1), numberText(m.peak_flops / 1e12, 1));
        case TimeComponent::Recompute:
            return QStringLiteral("the forward that %1 checkpointing repeats in backward")
                .arg(q(checkpointingName(s.training.checkpointing)));
        case TimeComponent::TensorParallel:
            return QStringLiteral("2 all-reduces per block and pass over TP %1; not overlapped").arg(p.tensor);
        case TimeComponent::ContextParallel:
            return QStringLiteral("ring exchange of keys and values over CP %1%2").arg(p.context).arg(hidden);
        case TimeComponent::ExpertParallel:
            return QStringLiteral("all-to-all dispatch and combine over EP %1; not overlapped").arg(p.expert);
        case TimeComponent::PipelineP2P:
            return QStringLiteral("activations sent to the next stage and gradients back; not overlapped");
        case TimeComponent::FsdpGather:
            return QStringLiteral("parameter all-gathers and gradient reduce-scatters per micro-batch%1").arg(hidden);
        case TimeComponent::GradientReduce:
            return QStringLiteral("gradient reduction over DP %1: the last bucket%2%3")
                .arg(p.data * p.context)
                .arg(p.zero_stage == 1 || p.zero_stage == 2 ? QStringLiteral(", the updated parameters gathered back")
                                                            : QString())
                .arg(hidden);
        case TimeComponent::Bubble: {
            const bool interleaved = p.schedule == PipelineSchedule::Interleaved1F1B && mb >= p.pipeline;
            const double chunks = interleaved ? static_cast<double>(std::max<int64_t>(p.virtual_stages, 1)) : 1.0;
            return QStringLiteral("fill and drain: %1 micro-batch times of the slowest stage (%2, PP %3)")
                .arg(numberText(static_cast<double>(p.pipeline - 1) / chunks, 2), q(scheduleName(p.schedule)))
                .arg(p.pipeline);
        }
        case TimeComponent::Optimizer:
            return QStringLiteral("optimizer.step(): the shard's weights, master weights and states through HBM");
        case TimeComponent::Offload:
            return QStringLiteral("PCIe copies compute does not cover%1").arg(hidden);
    }
    return {};
}

// Where communication is: exposed (in the step) and overlapped (hidden
// behind compute) per collective, with the total of each.
FigureTable communicationTable(const StepTime& t) {
    FigureTable table;
    table.corner = QStringLiteral("Communication");
    table.columns << QStringLiteral("exposed") << QStringLiteral("overlapped");
    double exposed = 0, overlapped = 0;
    for (TimeComponent c : allTimeComponents()) {
        if (!isCommunication(c) || t[c] + t.overlappedAt(c) <= 0) continue;
        FigureTableRow row;
        row.name = timePartName(c);
        row.swatch = timePartColor(c);
        row.cells << secondsText(t[c]) << secondsText(t.overlappedAt(c));
        row.numbers << t[c] << t.overlappedAt(c);
        exposed += t[c];
        overlapped += t.overlappedAt(c);
        table.rows << row;
    }
    if (table.rows.size() > 1) {
        FigureTableRow total;
        total.name = QStringLiteral("All communication");
        total.bold = true;
        total.cells << secondsText(exposed) << secondsText(overlapped);
        total.numbers << exposed << overlapped;
        table.rows << total;
    }
    return table;
}

}  // namespace

TimeUnit timeUnitFor(double largest) {
    if (largest >= 10) return {1, QStringLiteral("s"), 0};
    if (largest >= 1) return {1, QStringLiteral("s"), 1};
    if (largest >= 0.01) return {1e-3, QStringLiteral("ms"), 0};
    return {1e-3, QStringLiteral("ms"), 2};
}

QString secondsText(double s) {
    if (s >= 1.0) return numberText(s, 2) + QStringLiteral(" s");
    return numberText(s * 1e3, 1) + QStringLiteral(" ms");
}

QString throughputPhrase(const StepTime& t) {
    return QStringLiteral("Step %1 · %2 tokens/s/GPU · MFU %3")
        .arg(secondsText(t.step_seconds), grouped(t.tokens_per_second_per_gpu), percent(t.mfu, 1));
}

QString timePartName(TimeComponent part) {
    switch (part) {
        case TimeComponent::Compute: return QStringLiteral("Compute");
        case TimeComponent::Recompute: return QStringLiteral("Recompute");
        case TimeComponent::TensorParallel: return QStringLiteral("Tensor parallel");
        case TimeComponent::ContextParallel: return QStringLiteral("Context parallel");
        case TimeComponent::ExpertParallel: return QStringLiteral("Expert all-to-all");
        case TimeComponent::PipelineP2P: return QStringLiteral("Pipeline send/receive");
        case TimeComponent::FsdpGather: return QStringLiteral("FSDP gathers");
        case TimeComponent::GradientReduce: return QStringLiteral("Gradient reduction");
        case TimeComponent::Bubble: return QStringLiteral("Pipeline bubble");
        case TimeComponent::Optimizer: return QStringLiteral("Optimizer step");
        case TimeComponent::Offload: return QStringLiteral("Offload (PCIe)");
    }
    return {};
}

// Compute in the blues of the memory chart's weights, communication in
// warm colours, waiting (the bubble) in grey.
QColor timePartColor(TimeComponent part) {
    switch (part) {
        case TimeComponent::Compute: return QColor(0x34, 0x98, 0xdb);
        case TimeComponent::Recompute: return QColor(0x85, 0xc1, 0xe9);
        case TimeComponent::TensorParallel: return QColor(0xe6, 0x7e, 0x22);
        case TimeComponent::ContextParallel: return QColor(0xf1, 0xc4, 0x0f);
        case TimeComponent::ExpertParallel: return QColor(0xd3, 0x54, 0x00);
        case TimeComponent::PipelineP2P: return QColor(0x16, 0xa0, 0x85);
        case TimeComponent::FsdpGather: return QColor(0x9b, 0x59, 0xb6);
        case TimeComponent::GradientReduce: return QColor(0xe7, 0x4c, 0x3c);
        case TimeComponent::Bubble: return QColor(0xbd, 0xc3, 0xc7);
        case TimeComponent::Optimizer: return QColor(0x27, 0xae, 0x60);
        case TimeComponent::Offload: return QColor(0x56, 0x65, 0x73);
    }
    return {};
}

bool isCommunication(TimeComponent part) {
    switch (part) {
        case TimeComponent::TensorParallel:
        case TimeComponent::ContextParallel:
        case TimeComponent::ExpertParallel:
        case TimeComponent::PipelineP2P:
        case TimeComponent::FsdpGather:
        case TimeComponent::GradientReduce:
        case TimeComponent::Offload: return true;
        default: return false;
    }
}

QString stepTimeAssumptionsShort(const StepTimeModel& m) {
    const StepTimeConstants& k = m.constants;
    return QStringLiteral("Modelled, not measured: matmuls at %1 of %2 TFLOP/s, attention at %3, HBM and links at %4 of "
                          "theirs (docs/step-time.md)")
        .arg(percent(m.matmul_efficiency, 1), numberText(m.peak_flops / 1e12, 1), percent(k.attention, 0),
             percent(k.hbm, 0));
}

QString stepTimeAssumptions(const Scenario& s, const StepTimeModel& m) {
    const StepTimeConstants& k = m.constants;
    QStringList lines;
    lines << QStringLiteral("How the step time is modelled (docs/step-time.md):")
          << QStringLiteral("• matmuls: %1 of %2's %3 TFLOP/s dense peak, tile-quantized, bounded by HBM")
                 .arg(percent(m.matmul_efficiency, 1), q(s.hardware.gpu), numberText(m.peak_flops / 1e12, 1))
          << QStringLiteral("• flash attention (causal): %1 of the %2 TFLOP/s 16-bit peak")
                 .arg(percent(k.attention, 1), numberText(m.peak_16bit_flops / 1e12, 1))
          << QStringLiteral("• norms, activations, residuals, loss: bytes ÷ %1 GB/s HBM × %2")
                 .arg(numberText(m.hbm_bytes_per_s / 1e9, 0), percent(k.hbm, 0))
          << QStringLiteral("• collectives: ring formulas at %1 GB/s inside a node of %2 GPUs, %3 across nodes")
                 .arg(numberText(m.scale_up_bytes_per_s / 1e9, 0))
                 .arg(m.gpus_per_node)
                 .arg(m.scale_out_bytes_per_s > 0 ? numberText(m.scale_out_bytes_per_s / 1e9, 0) + QStringLiteral(" GB/s per GPU")
                                                  : QStringLiteral("no network"))
          << QStringLiteral("• overlap: FSDP prefetch, DDP's bucketed reduction and the CP ring hide behind compute; "
                            "TP, EP and pipeline sends are exposed")
          << QStringLiteral("• MFU: 6 × (active − embedding parameters) + 12 · L · H · d · s FLOPs per token "
                            "(torchtitan, PaLM), recomputation not counted")
          << QStringLiteral("• not modelled: kernel launches, NCCL latency, TP overlap, the host's Adam, data loading")
          << QStringLiteral("Three constants fitted on torchtitan's published runs; the error on the runs held out "
                            "is in docs/accuracy-throughput.md");
    return lines.join('\n');
}

ChartSpec stepTimeChart(const Scenario& s, const StepTimeModel& m, const StepTime& t, const QString& stale) {
    ChartSpec spec;
    spec.title = QStringLiteral("Where the step's time goes (per GPU)");
    spec.subtitle = titleLine(s) + '\n' + resultLine(s, t);
    const TimeUnit unit = timeUnitFor(t.step_seconds);
    spec.valueAxisTitle = unit.name + QStringLiteral(" per step");
    spec.valueDecimals = unit.decimals;
    spec.categories << (s.parallelism.pipeline > 1 ? QStringLiteral("One step (stage %1)").arg(t.slowest_stage + 1)
                                                   : QStringLiteral("One step"));
    for (TimeComponent c : allTimeComponents()) {
        if (t[c] <= 0) continue;
        ChartLayer layer;
        layer.key = q(timeComponentKey(c));
        layer.name = timePartName(c);
        layer.color = timePartColor(c);
        layer.values = {t[c] / unit.seconds};
        layer.callout = QStringLiteral("%1: %2 (%3)")
                            .arg(layer.name, secondsText(t[c]), shareText(t.step_seconds > 0 ? t[c] / t.step_seconds : 0));
        layer.calloutDetail = partDetail(c, s, m, t);
        spec.layers << layer;
    }
    spec.barTopLabels << secondsText(t.step_seconds);
    spec.barTopValues << t.step_seconds / unit.seconds;
    spec.callouts = true;
    spec.legend = false;
    spec.table = communicationTable(t);
    spec.footer << stepTimeAssumptionsShort(m);
    spec.staleNotice = stale;
    spec.emptyNotice = QStringLiteral("No step time");
    return spec;
}

ChartSpec stageTimesChart(const Scenario& s, const StepTimeModel& m, const StepTime& t,
                          const std::vector<StageTime>& stages, const QString& stale) {
    ChartSpec spec;
    spec.title = QStringLiteral("One micro-batch per pipeline stage (per GPU)");
    spec.subtitle = titleLine(s) + '\n' + resultLine(s, t);
    double largest = 0;
    for (const StageTime& st : stages) largest = std::max(largest, st.total());
    const TimeUnit unit = timeUnitFor(largest);
    spec.valueAxisTitle = unit.name + QStringLiteral(" per micro-batch");
    spec.valueDecimals = unit.decimals;
    struct Part {
        const char* key;
        const char* name;
        QColor color;
        double StageTime::*value;
    };
    const Part parts[] = {
        {"forward", "Forward", timePartColor(TimeComponent::Compute), &StageTime::forward},
        {"backward", "Backward", QColor(0x1f, 0x61, 0x8d), &StageTime::backward},
        {"recompute", "Recompute", timePartColor(TimeComponent::Recompute), &StageTime::recompute},
        {"exposed_communication", "Exposed communication", timePartColor(TimeComponent::TensorParallel),
         &StageTime::exposed_communication},
    };
    const int n = static_cast<int>(stages.size());
    int64_t first = 0;
    for (const StageTime& st : stages) {
        // Counted from 1 for people, as the memory chart's stages are.
        QString label = QStringLiteral("Stage %1\nL%2-%3").arg(st.stage + 1).arg(first + 1).arg(first + st.num_layers);
        first += st.num_layers;
        if (st.stage == t.slowest_stage) {
            label += QStringLiteral("\nslowest");
            spec.highlightedCategory = static_cast<int>(spec.categories.size());
        }
        spec.categories << label;
        spec.shortCategories << QStringLiteral("S%1").arg(st.stage + 1);
        spec.barTopLabels << secondsText(st.total());
        spec.barTopValues << st.total() / unit.seconds;
    }
    for (const Part& part : parts) {
        ChartLayer layer;
        layer.key = QString::fromLatin1(part.key);
        layer.name = QString::fromLatin1(part.name);
        layer.color = part.color;
        layer.values = QVector<double>(n, 0.0);
        bool any = false;
        for (int i = 0; i < n; ++i) {
            layer.values[i] = stages[static_cast<size_t>(i)].*part.value / unit.seconds;
            any = any || layer.values[i] > 0;
        }
        if (any) spec.layers << layer;
    }
    spec.footer << QStringLiteral("The step waits for the slowest stage: %1 micro-batches of it, the pipeline's fill and "
                                  "drain, and the once-per-step gradient reduction and optimizer step")
                       .arg(microbatches(s));
    spec.footer << stepTimeAssumptionsShort(m);
    spec.staleNotice = stale;
    spec.emptyNotice = QStringLiteral("No stages");
    return spec;
}

}  // namespace trainmem::ui
