// The layout solver: enumerate, estimate, keep the best few. The space, the
// rules and the ranking are documented in docs/layout-search.md.
// One Scenario is mutated in place for every candidate and only the kept
// layouts are copied, so the loop allocates nothing per candidate.
// Factored (issue 14): the model's facts are prepared once per search, the
// candidate stages' parameters and model states once per (tensor, pipeline,
// context, expert, ZeRO), and the blocks' activations once per (tensor,
// context, sequence parallelism, micro-batch, checkpointing); each layout
// then costs one account of its few candidate stages.
#include "core/search/layout_search.h"

#include <algorithm>
#include <array>
#include <vector>

#include "core/scenario/layout_rules.h"
#include "core/account/step_account.h"
#include "core/account/scenario_validate.h"
#include "core/account/layout_account.h"

namespace trainmem {

namespace {

constexpr int64_t kMaxTop = int64_t{1} << 20;
constexpr int64_t kMaxMicroBatchCap = int64_t{1} << 20;  // validate()'s bound on training.micro_batch_size
constexpr int64_t kMaxGpus = int64_t{1} << 24;           // validate()'s bound on data x tensor x pipeline x context
constexpr int64_t kMaxTokensPerMicrobatch = int64_t{1} << 25;

std::vector<int64_t> divisorsOf(int64_t n) {
    std::vector<int64_t> low, high;
    for (int64_t d = 1; d * d <= n; ++d) {
        if (n % d != 0) continue;
        low.push_back(d);
        if (d != n / d) high.push_back(n / d);
    }
    low.insert(low.end(), high.rbegin(), high.rend());
    return low;
}

int recomputeRank(Checkpointing c) {
    switch (c) {
        case Checkpointing::None: return 0;
        case Checkpointing::Selective: return 1;
        case Checkpointing::Op: return 2;  // replays every block, keeps the save list's outputs
        case Checkpointing::MegatronBlock:
        case Checkpointing::TorchtitanLayer: return 2;
        case Checkpointing::EveryK: return 2;
        case Checkpointing::Full:
        case Checkpointing::MegatronUniform: return 3;  // recomputes every block
    }
    return 3;
}

// What the rankings read of a layout: itself, its headroom and its order.
struct RankKey {
    const Layout& layout;
    int64_t headroom;
    int64_t order;
    double tokens_per_second = 0;  // per GPU, modelled (0: no step time)
};
RankKey keyOf(const RankedLayout& r) {
    return {r.layout, r.estimate.headroom_bytes, r.order, r.time.tokens_per_second_per_gpu};
}

// Closest to fitting first: the smallest excess over capacity.
bool closerToFitting(const RankKey& a, const RankKey& b) {
    if (a.headroom != b.headroom) return a.headroom > b.headroom;
    return a.order < b.order;
}

bool rankedBefore(const RankKey& a, const RankKey& b) {
    const Layout& x = a.layout;
    const Layout& y = b.layout;
    // Among layouts that fit, people choose by speed (issue 26).
    if (a.tokens_per_second != b.tokens_per_second) return a.tokens_per_second > b.tokens_per_second;
    if (a.tokens_per_second > 0) {
        if (a.headroom != b.headroom) return a.headroom > b.headroom;
        if (x.pipeline != y.pipeline) return x.pipeline < y.pipeline;
        if (x.tensor != y.tensor) return x.tensor < y.tensor;
        return a.order < b.order;
    }
    // No step time (a GPU without published rates): memory's order.
    if (x.checkpointing != y.checkpointing) return recomputeRank(x.checkpointing) < recomputeRank(y.checkpointing);
    // "Largest micro-batch" in tokens each GPU processes per pass,
    // micro x sequence / context (the sequence is the same for all layouts):
    // counting sequences would rank a layout higher for splitting each
    // sequence over more context ranks.
    if (x.micro_batch_size * y.context != y.micro_batch_size * x.context)
        return x.micro_batch_size * y.context > y.micro_batch_size * x.context;
    if (a.headroom != b.headroom) return a.headroom > b.headroom;
    if (x.pipeline != y.pipeline) return x.pipeline < y.pipeline;
    if (x.tensor != y.tensor) return x.tensor < y.tensor;
    return a.order < b.order;
}

// The best `limit` items under `before`, in a heap whose top is the worst
// kept one: O(log limit) per offer, no allocation after reserve().
class BestOf {
public:
    using Before = bool (*)(const RankKey&, const RankKey&);
    BestOf(int64_t limit, Before before) : limit_(static_cast<size_t>(limit)), before_(before) {
        kept_.reserve(std::min<size_t>(limit_, 256));  // grows geometrically past that: O(log) allocations
    }
    // Whether offer() would keep a layout with this key (then its estimate
    // is worth making).
    bool admits(const RankKey& candidate) const {
        return limit_ > 0 && (kept_.size() < limit_ || before_(candidate, keyOf(kept_.front())));
    }
    void offer(const RankedLayout& candidate) {
        if (!admits(keyOf(candidate))) return;
        if (kept_.size() == limit_) {
            std::pop_heap(kept_.begin(), kept_.end(), heapOrder());
            kept_.back() = candidate;
        } else {
            kept_.push_back(candidate);
        }
        std::push_heap(kept_.begin(), kept_.end(), heapOrder());
    }
    bool keepsNone() const { return limit_ == 0; }
    bool full() const { return kept_.size() == limit_; }
    // The worst kept item (full() and not keepsNone() only).
    const RankedLayout& worst() const { return kept_.front(); }
    std::vector<RankedLayout> sorted() && {
        std::sort_heap(kept_.begin(), kept_.end(), heapOrder());
        return std::move(kept_);
    }

private:
    struct HeapOrder {
        Before before;
        bool operator()(const RankedLayout& a, const RankedLayout& b) const { return before(keyOf(a), keyOf(b)); }
    };
    HeapOrder heapOrder() const { return {before_}; }
    size_t limit_;
    Before before_;
    std::vector<RankedLayout> kept_;
};

Status checkOptions(const LayoutSearchOptions& o) {
    if (o.gpus < 1 || o.gpus > kMaxGpus)
        return Error{"gpus", "must be an integer from 1 to " + std::to_string(kMaxGpus) + " (got " +
                                 std::to_string(o.gpus) + ")"};
    if (o.global_batch && *o.global_batch < 1)
        return Error{"global_batch", "must be a positive number of sequences per optimizer step (got " +
                                         std::to_string(*o.global_batch) + ")"};
    if (o.top < 1 || o.top > kMaxTop)
        return Error{"top", "must be an integer from 1 to " + std::to_string(kMaxTop) + " (got " +
                                std::to_string(o.top) + ")"};
    if (o.rejected < 0 || o.rejected > kMaxTop)
        return Error{"rejected", "must be an integer from 0 to " + std::to_string(kMaxTop) + " (got " +
                                     std::to_string(o.rejected) + ")"};
    if (o.max_layouts < 1) return Error{"max_layouts", "must be a positive number of layouts"};
    if (o.max_micro_batch < 1 || o.max_micro_batch > kMaxMicroBatchCap)
        return Error{"max_micro_batch", "must be an integer from 1 to " + std::to_string(kMaxMicroBatchCap) +
                                            " (got " + std::to_string(o.max_micro_batch) + ")"};
    return ok();
}

// Micro-batches per step the base scenario asks for (pipeline micro-batches
// when it sets them, else accumulation steps).
int64_t baseMicrobatches(const Scenario& base) {
    if (base.parallelism.microbatches > 0) return base.parallelism.microbatches;
    return base.training.gradient_accumulation_steps;
}

struct ScheduleChoice {
    PipelineSchedule schedule;
    int64_t virtual_stages;
};

// 1F1B and GPipe for every pipeline; interleaved 1F1B with every chunk
// count v > 1 that gives each chunk the same number of layers.
std::vector<ScheduleChoice> scheduleChoices(int64_t pipeline, int64_t layers) {
    if (pipeline == 1) return {{PipelineSchedule::OneFOneB, 1}};
    std::vector<ScheduleChoice> choices = {{PipelineSchedule::OneFOneB, 1}, {PipelineSchedule::GPipe, 1}};
    if (layers % pipeline == 0)
        for (int64_t v : divisorsOf(layers / pipeline))
            if (v > 1) choices.push_back({PipelineSchedule::Interleaved1F1B, v});
    return choices;
}

}  // namespace

bool layoutRedundant(const Layout& l) {
    if (l.zero_stage > 0 && l.data * l.context == 1) return true;
    return l.schedule != PipelineSchedule::OneFOneB && l.microbatches == 1;
}

bool rankedBefore(const RankedLayout& a, const RankedLayout& b) { return rankedBefore(keyOf(a), keyOf(b)); }

void applyLayout(Scenario& s, const Layout& l) {
    ParallelConfig& p = s.parallelism;
    p.data = l.data;
    p.tensor = l.tensor;
    p.pipeline = l.pipeline;
    p.context = l.context;
    p.expert = l.expert;
    p.gpus = l.gpus();
    p.zero_stage = l.zero_stage;
    p.shard_group = 0;
    p.sequence_parallel = l.sequence_parallel;
    p.schedule = l.schedule;
    p.virtual_stages = l.virtual_stages;
    // validate(): pipeline micro-batches only exist with a pipeline, and must
    // then equal the accumulation steps.
    p.microbatches = l.pipeline > 1 ? l.microbatches : 0;
    s.training.gradient_accumulation_steps = l.microbatches;
    s.training.micro_batch_size = l.micro_batch_size;
    s.training.checkpointing = l.checkpointing;
}

Expected<LayoutSearchResult> searchLayouts(const Scenario& base, const LayoutSearchOptions& options) {
    if (Status st = checkOptions(options); !st) return st.error();

    // Everything the solver does not vary is checked once, on the base with
    // the simplest layout (one GPU) written over its own.
    Scenario work = base;
    const int64_t base_m = baseMicrobatches(base);
    {
        Layout probe;
        probe.microbatches = options.global_batch ? 1 : base_m;
        probe.zero_stage = base.parallelism.offload_parameters ? 3 : base.parallelism.offload_optimizer ? 1 : 0;
        applyLayout(work, probe);
        if (Status st = validate(work); !st) return st.error();
    }

    const int64_t n = options.gpus;
    const ModelConfig& model = base.model;
    const std::vector<int64_t> divisors = divisorsOf(n);
    const std::vector<int64_t> experts = model.isMoe() ? divisorsOf(model.moe->num_experts) : std::vector<int64_t>{1};
    constexpr std::array<Checkpointing, 3> kCheckpointing = {Checkpointing::None, Checkpointing::Selective,
                                                             Checkpointing::Full};
    const int64_t micro_cap = std::min(options.max_micro_batch, kMaxMicroBatchCap);
    int64_t micro_sizes = 0;  // 1, 2, 4, ... up to micro_cap
    for (int64_t micro = 1; micro <= micro_cap; micro *= 2) ++micro_sizes;

    LayoutSearchResult result;
    // The GPU's rates and the model's blocks for the step time, once; a GPU
    // without rates leaves every layout untimed (memory's order).
    const Expected<StepTimeModel> timed = prepareStepTime(work);
    const StepTimeModel* step_model = timed ? &*timed : nullptr;
    if (options.global_batch && *options.global_batch < n)
        result.note = "the global batch of " + std::to_string(*options.global_batch) + " sequences is smaller than the " +
                      std::to_string(n) + " GPUs: data parallelism is at most " +
                      std::to_string(*options.global_batch) + ", so every layout splits each sequence's work " +
                      "at least " + std::to_string((n + *options.global_batch - 1) / *options.global_batch) +
                      " ways (tensor, pipeline or context)";
    BestOf best(options.top, static_cast<BestOf::Before>(rankedBefore));
    BestOf rejected(options.rejected, closerToFitting);
    // Returns false once the search must stop (limit or progress callback).
    int64_t next_report = int64_t{1} << 16;
    auto keepGoing = [&] {
        if (result.enumerated >= options.max_layouts) {
            result.stopped = "the limit of " + std::to_string(options.max_layouts) + " layouts";
            return false;
        }
        if (options.progress && result.enumerated >= next_report) {
            next_report = result.enumerated + (int64_t{1} << 16);
            if (!options.progress(result.enumerated, result.fitting)) {
                result.stopped = "interrupted";
                return false;
            }
        }
        return true;
    };
    // What does not depend on the layout, once per search (or once per edit,
    // when the caller's estimate of the base prepared it).
    std::optional<PreparedScenario> own_preparation;
    const PreparedScenario& prepared =
        options.prepared ? *options.prepared : own_preparation.emplace(prepareScenario(work));
    // The candidate stages' facts for the current degrees and ZeRO stage,
    // planned at the first valid layout that needs them.
    StagePlan stages;
    bool stages_ready = false;
    // Activations per (context degree, sequence parallelism, log2
    // micro-batch, checkpointing) for the current tensor degree: they depend
    // on the layout through these only (not on the pipeline, data or expert
    // degree, nor ZeRO), so every pipeline degree under a tensor degree
    // reuses them. A context degree gets its block of slots when first met;
    // past kContextBlocks context degrees (a GPU count and sequence length
    // with hundreds of common divisors) the oldest block is taken over, so
    // the cache stays under 4 MB.
    constexpr size_t kMicroSlots = 21;  // micro-batches 1 .. 2^20
    constexpr size_t kPolicies = kCheckpointing.size();
    constexpr size_t kSlotsPerContext = 2 * kMicroSlots * kPolicies;
    constexpr size_t kContextBlocks = 64;
    std::vector<LayoutActivations> activations;
    std::vector<char> activations_ready;
    std::vector<int> context_block(divisors.size(), -1);  // per index in `divisors`: its block, or -1
    std::vector<size_t> block_context;                   // per block: the index in `divisors` it holds
    size_t context_blocks = 0;  // blocks taken under the current tensor degree
    size_t context_index = 0;   // the current context degree's index in `divisors`
    auto activationsFor = [&](const Layout& l) -> const LayoutActivations& {
        if (context_block[context_index] < 0) {
            const size_t block = context_blocks++ % kContextBlocks;
            if (block < block_context.size()) {
                if (context_blocks > kContextBlocks) context_block[block_context[block]] = -1;  // taken over
                block_context[block] = context_index;
            } else {
                block_context.push_back(context_index);
                activations.resize((block + 1) * kSlotsPerContext);
                activations_ready.resize((block + 1) * kSlotsPerContext);
            }
            context_block[context_index] = static_cast<int>(block);
            std::fill_n(activations_ready.begin() + static_cast<std::ptrdiff_t>(block * kSlotsPerContext),
                        kSlotsPerContext, 0);
        }
        size_t log2_micro = 0;
        while ((int64_t{1} << log2_micro) < l.micro_batch_size) ++log2_micro;
        const size_t policy = static_cast<size_t>(
            std::find(kCheckpointing.begin(), kCheckpointing.end(), l.checkpointing) - kCheckpointing.begin());
        const size_t slot = static_cast<size_t>(context_block[context_index]) * kSlotsPerContext +
                            (static_cast<size_t>(l.sequence_parallel) * kMicroSlots + log2_micro) * kPolicies + policy;
        if (!activations_ready[slot]) {
            activations[slot] = layoutActivations(work);
            activations_ready[slot] = 1;
        }
        return activations[slot];
    };
    bool degrees_ok = false;  // degreesAdmissible() of the current degrees
    auto consider = [&](const Layout& l) {
        ++result.enumerated;
        applyLayout(work, l);
        // The degrees' rules were checked once for the subtree (degrees_ok).
        if (l.microbatches < 1 || !degrees_ok || !belowDegreesAdmissible(work)) return;
        ++result.valid;
        if (layoutRedundant(l)) {
            ++result.redundant;
            return;
        }
        if (!stages_ready) {
            planStages(work, prepared, stages);
            stages_ready = true;
        }
        const LayoutActivations& activations = activationsFor(l);
        const int64_t order = result.valid - 1;
        // Skipped with a proof: its device bytes are at least the floor
        // (deviceBytesFloor); past the capacity it cannot fit, so it could
        // only enter the rejected list, with a headroom of at most
        // capacity - floor. When even that headroom would not enter the
        // list (no larger than the worst kept miss's: closerToFitting is
        // then false, kept layouts coming earlier in order), no result
        // depends on its account. Nothing is proved while the list has room.
        // The lists and counts stay exactly those of the plain loop
        // (tests/core/search_equivalence_test.cpp).
        if (rejected.keepsNone() || rejected.full()) {
            const int64_t cap = prepared.capacity_bytes;
            const int64_t proof = rejected.keepsNone() ? cap + 1
                                                       : std::max(cap + 1, cap - rejected.worst().estimate.headroom_bytes);
            if (deviceBytesAtLeast(work, prepared, activations, stages, proof)) {
                ++result.skipped;
                return;
            }
        }
        // The plan's schedule terms, made again only when the schedule or the
        // micro-batches per step changed since the last account.
        scheduleStagePlan(work, prepared, stages);
        // Whether it fits and where it ranks need only its device bytes; the
        // whole estimate is made for the layouts a list keeps (the same
        // numbers: accountLayoutPeak).
        const LayoutPeak peak = accountLayoutPeak(work, prepared, activations, stages);
        const int64_t headroom = prepared.capacity_bytes - peak.device_bytes;
        if (!peak.too_large && headroom >= 0) {
            ++result.fitting;
            // The step time ranks the layouts that fit (docs/step-time.md).
            const StepTime time = step_model ? stepTime(*step_model, work) : StepTime{};
            const RankKey key{l, headroom, order, time.tokens_per_second_per_gpu};
            if (best.admits(key))
                best.offer({l, accountLayout(work, prepared, activations, stages), order, time});
            return;
        }
        const RankKey key{l, headroom, order};
        if (rejected.admits(key)) {
            rejected.offer({l, accountLayout(work, prepared, activations, stages), order, StepTime{}});
        }
    };

    // One function, so a stop leaves every loop at once.
    [&] {
        for (int64_t t : divisors) {
            std::fill(context_block.begin(), context_block.end(), -1);  // new tensor degree
            context_blocks = 0;
            for (int64_t p : divisors) {
                if ((n / t) % p != 0) continue;
                const std::vector<ScheduleChoice> schedules = scheduleChoices(p, model.num_layers);
                for (size_t ci = 0; ci < divisors.size(); ++ci) {
                    const int64_t c = divisors[ci];
                    if ((n / t / p) % c != 0) continue;
                    const int64_t d = n / t / p / c;
                    context_index = ci;
                    for (int64_t e : experts) {
                        // Degrees no point below can pass: counted, not visited
                        // (unless the limit falls inside, where it stops exactly).
                        Layout degrees;
                        degrees.data = d;
                        degrees.tensor = t;
                        degrees.pipeline = p;
                        degrees.context = c;
                        degrees.expert = e;
                        applyLayout(work, degrees);
                        degrees_ok = degreesAdmissible(work);
                        if (!degrees_ok) {
                            const int64_t points = 4 * (t > 1 ? 2 : 1) * static_cast<int64_t>(schedules.size()) *
                                                   micro_sizes * static_cast<int64_t>(kCheckpointing.size());
                            if (result.enumerated + points < options.max_layouts) {
                                result.enumerated += points;
                                if (!keepGoing()) return;
                                continue;
                            }
                        }
                        for (int64_t zero = 0; zero <= 3; ++zero) {
                            stages_ready = false;  // new degrees or ZeRO stage
                            for (bool sp : {false, true}) {
                                if (sp && t == 1) continue;  // not a point of the space: SP splits over TP ranks
                                for (const ScheduleChoice& schedule : schedules)
                                    for (int64_t micro = 1; micro <= micro_cap; micro *= 2) {
                                        // With a global batch B, m = B / (micro x data) must be a whole
                                        // number; 0 marks the layout invalid.
                                        int64_t m = base_m;
                                        if (options.global_batch) {
                                            const int64_t per_step = micro * d;  // <= 2^20 x 2^24: no overflow
                                            m = *options.global_batch % per_step == 0 ? *options.global_batch / per_step : 0;
                                        }
                                        if (!keepGoing()) return;
                                        for (Checkpointing ckpt : kCheckpointing)
                                            consider(Layout{d, t, p, c, e, zero, sp, schedule.schedule,
                                                            schedule.virtual_stages, micro, m, ckpt});
                                    }
                            }
                        }
                    }
                }
            }
        }
    }();
    result.layouts = std::move(best).sorted();
    result.rejected = std::move(rejected).sorted();
    return result;
}

Expected<int64_t> largestMicroBatch(const Scenario& scenario) {
    if (Status st = validate(scenario); !st) return st.error();
    Scenario work = scenario;
    const PreparedScenario prepared = prepareScenario(work);
    // The largest micro-batch validate() accepts for this sequence length.
    const int64_t cap = std::min(kMaxMicroBatchCap, kMaxTokensPerMicrobatch / scenario.training.sequence_length);
    auto fits = [&](int64_t micro) {
        work.training.micro_batch_size = micro;
        return estimatePrepared(work, prepared).fits;
    };
    if (!fits(1)) return int64_t{0};
    int64_t good = 1;  // fits
    int64_t bad = cap + 1;  // does not fit, or is past the cap
    while (good * 2 <= cap) {
        if (!fits(good * 2)) {
            bad = good * 2;
            break;
        }
        good *= 2;
    }
    while (bad - good > 1) {
        const int64_t mid = good + (bad - good) / 2;
        if (fits(mid)) good = mid;
        else bad = mid;
    }
    return good;
}

}  // namespace trainmem
