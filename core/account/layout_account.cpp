// A layout's estimate: the heaviest pipeline stage at its peak moment, with
// the reserved and device totals around it. The per-stage account is in
// step_account.cpp; terms and sources in docs/memory-model.md.
#include "core/account/layout_account.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/account/estimate_stages.h"
#include "core/account/step_account.h"
#include "core/account/step_moments.h"
#include "core/base/byte_count.h"
#include "core/base/byte_round.h"
#include "core/scenario/batch.h"

namespace trainmem {
namespace {

// PyTorch's caching allocator maps large blocks in 2 MiB pages
// (c10/cuda/CUDACachingAllocator.cpp, kRoundLarge).
int64_t roundUpTo2MiB(int64_t b) {
    if (b >= kTooLargeBytes) return kTooLargeBytes;
    return (b + 2 * kMiB - 1) / (2 * kMiB) * (2 * kMiB);
}

// NCCL communicators this rank belongs to (groups of size > 1).
int64_t communicators(const ParallelConfig& par) {
    int64_t n = 0;
    if (par.data * par.context > 1) ++n;  // gradient reduction / ZeRO
    if (par.tensor > 1) ++n;
    if (par.pipeline > 1) ++n;             // p2p with neighbours
    if (par.context > 1) ++n;              // ring attention
    if (par.expert > 1) ++n;               // all-to-all
    return n;
}

// MemoryBreakdown::total, inline here: the account takes eight totals per
// stage, and the call costs a fifth of each.
// `bits` is every component OR'ed (a component is negative or past 2^62
// exactly when its top two bits are not both zero: so is the OR).
inline int64_t breakdownTotal(const MemoryBreakdown& m, uint64_t& bits) {
    // Every component in [0, 2^58) (the usual case): the plain sum is below
    // 2^62, so no partial sum saturates. Vectorizable: no branch inside.
    // Two components per step (GCC/Clang vector extensions: SSE2 on x86-64,
    // NEON on ARM; plain pairs elsewhere): unsigned sums wrap, so the order
    // of the additions does not change the result.
    using Pair = uint64_t __attribute__((vector_size(16)));
    static_assert(kComponentCount == 11);
    Pair sums{}, ors{};
#pragma GCC unroll 5
    for (size_t i = 0; i < 10; i += 2) {
        Pair v;
        std::memcpy(&v, &m.bytes[i], sizeof v);
        sums += v;
        ors |= v;
    }
    const uint64_t last = static_cast<uint64_t>(m.bytes[10]);
    const uint64_t sum = sums[0] + sums[1] + last;
    bits = ors[0] | ors[1] | last;
    if ((bits >> 58) == 0) return static_cast<int64_t>(sum);
    // addBytes over the components, with its checks folded: once the sum
    // saturates it stays saturated, so the first saturation is the answer.
    int64_t t = 0;
    for (int64_t b : m.bytes) {
        if (b >= kTooLargeBytes) return kTooLargeBytes;
        t += b;  // |t|, |b| < 2^62: cannot overflow
        if (t >= kTooLargeBytes) return kTooLargeBytes;
    }
    return t;
}

// The account's moments, each total computed once, and the peak among them
// (stagePeak's order: the first of equal totals is the peak).
struct MomentTotals {
    static constexpr Phase kPhases[] = {Phase::Forward,  Phase::Loss,     Phase::Backward, Phase::Backward,
                                        Phase::Backward, Phase::Backward, Phase::Backward, Phase::OptimizerStep};
    const MemoryBreakdown* moments[8];
    int64_t totals[8];
    size_t best = 0;
    uint64_t best_bits = 0;  // the peak moment's components OR'ed
    MomentTotals() = default;  // nothing yet (HeaviestStage before its first stage)
    explicit MomentTotals(const StepAccount& acc)
        : moments{&acc.forward,      &acc.loss,         &acc.backward_head, &acc.backward_start,
                  &acc.backward_recompute, &acc.backward_end, &acc.backward_next, &acc.step} {
        uint64_t bits[8];
        for (size_t i = 0; i < 8; ++i) {
            totals[i] = breakdownTotal(*moments[i], bits[i]);
            if (totals[i] > totals[best]) best = i;
        }
        best_bits = bits[best];
    }
    int64_t peak() const { return totals[best]; }
};

// The part of deviceTotals' too_large check that is not implied by a larger
// peak: the stage's weights, and a component of its peak moment saturated or
// negative (as unsigned, a negative count is past kTooLargeBytes). No branch.
bool stageTooLarge(const StepAccount& acc, const MomentTotals& m) {
    return acc.states.gpu.weights >= kTooLargeBytes || (m.best_bits >> 62) != 0;
}

struct DeviceTotals {
    int64_t reserved = 0;
    int64_t device = 0;
    bool too_large = false;
};
// Reserved and device bytes around an allocated peak: both non-decreasing
// in the peak (a product with 1 + fragmentation >= 1, roundings, constants
// added), which deviceBytesFloor relies on.
int64_t reservedAt(const Overheads& ov, int64_t peak) {
    return roundUpTo2MiB(roundBytes(static_cast<double>(peak) * (1.0 + ov.fragmentation)));
}
// managed: paged optimizer states (CUDA managed memory, outside the
// allocator); the search's floors leave them out, which keeps them floors.
// `comms` is communicators(s.parallelism) (StagePlan::communicators).
int64_t deviceAt(const Overheads& ov, int64_t comms, int64_t reserved, int64_t managed = 0) {
    return roundBytes(static_cast<double>(reserved) + static_cast<double>(managed) +
                      static_cast<double>(ov.cuda_context_bytes) +
                      static_cast<double>(comms) * static_cast<double>(ov.nccl_bytes_per_group));
}

DeviceTotals deviceTotals(const Scenario& s, const StepAccount& acc, const MomentTotals& m) {
    DeviceTotals d;
    d.reserved = reservedAt(s.hardware.overheads, m.peak());
    d.device = deviceAt(s.hardware.overheads, communicators(s.parallelism), d.reserved, acc.states.managed_bytes);
    // Every count is at most kTooLargeBytes, so one look at the totals and the
    // components catches a saturated one anywhere in the account.
    d.too_large = d.device >= kTooLargeBytes || d.reserved >= kTooLargeBytes || m.peak() >= kTooLargeBytes ||
                  stageTooLarge(acc, m);
    return d;
}

StageEstimate toStageEstimate(const StepAccount& acc, const MomentTotals& m, const DeviceTotals& d) {
    StageEstimate e;
    e.stage = acc.stage.index;
    e.first_layer = acc.stage.first_layer;
    e.num_layers = acc.stage.num_layers;
    e.in_flight_microbatches = acc.stage.in_flight;
    e.model_states = acc.states.gpu;
    e.peak_phase = MomentTotals::kPhases[m.best];
    e.at_peak = *m.moments[m.best];
    e.allocated_bytes = m.peak();
    // Every moment holds the same workspace, so leaving it out moves no peak.
    auto exact = [&](size_t i) { return m.totals[i] - (*m.moments[i])[Component::Workspace]; };
    e.exact_allocated_bytes = exact(m.best);
    for (size_t i = 0; i < 8; ++i) {
        if (i == 1 && !acc.stage.has_lm_head) continue;  // no loss on this stage
        int64_t& slot = e.exact_phase_bytes[static_cast<size_t>(MomentTotals::kPhases[i])];
        slot = std::max(slot, exact(i));
    }
    e.reserved_bytes = d.reserved;
    e.device_bytes = d.device;
    e.managed_bytes = acc.states.managed_bytes;
    e.too_large = d.too_large;
    return e;
}

StageEstimate toStageEstimate(const Scenario& s, const StepAccount& acc) {
    const MomentTotals m(acc);
    return toStageEstimate(acc, m, deviceTotals(s, acc, m));
}

// The estimate from its candidate stages' accounts, given in stage order.
// Each account is written into a slot the heaviest stage so far does not
// hold, so the heaviest one is still there at the end: its StageEstimate
// and device totals are made once per estimate, not once per stage that
// was the heaviest for a while.
class HeaviestStage {
public:
    explicit HeaviestStage(Estimate& est) : est_(est) {}
    // Where the next stage's account goes: storage accountStep() makes a
    // fresh account in (std::construct_at).
    StepAccount& next() { return slots_.account[free_]; }
    // Takes the account just written into next().
    void take() {
        const StepAccount& acc = slots_.account[free_];
        const MomentTotals m(acc);
        if (first_ || m.peak() > best_.peak()) {
            best_ = m;
            free_ = 1 - free_;
        } else {
            // Its reserved and device bytes are at most the heaviest stage's
            // (both grow with the peak: rounding up, adding constants), so
            // they pass 2^62 only if the heaviest one's do; the rest of
            // deviceTotals' check is its own.
            est_.too_large = est_.too_large || stageTooLarge(acc, m);
        }
        est_.host_bytes = std::max(est_.host_bytes, acc.states.host_bytes);
        est_.too_large = est_.too_large || acc.states.host_bytes >= kTooLargeBytes;
        first_ = false;
    }
    // The heaviest stage into the estimate (after every take()).
    void finish(const Scenario& s) {
        if (first_) return;  // no stage
        const StepAccount& acc = slots_.account[1 - free_];
        const DeviceTotals d = deviceTotals(s, acc, best_);
        est_.peak = toStageEstimate(acc, best_, d);
        est_.activations_without_recompute = roundBytes(acc.activations_no_recompute);
        est_.recompute_fraction = acc.recompute_fraction;
        est_.too_large = est_.too_large || d.too_large;
    }

private:
    Estimate& est_;
    // Left unset: each account is made in place when written (zeroing two
    // accounts here would cost as much as accounting a stage).
    union Slots {
        Slots() {}
        StepAccount account[2];
    } slots_;
    MomentTotals best_;
    int free_ = 0;
    bool first_ = true;
};

// The same from the moments' totals alone, for the recipes whose moments
// are as their terms make them (momentsAsTermsMakeThem): per candidate
// stage its layout terms and eight sums; the one breakdown the estimate
// reports, the heaviest stage's peak moment, is built at the end
// (momentBreakdown), so it is the full account's moment by construction.
// The layout terms go into a slot the heaviest stage so far does not hold,
// as in HeaviestStage; a stage's ScheduledStage is the plan's, or the slot's
// own when the plan is not scheduled for the layout.
class HeaviestByTotals {
public:
    HeaviestByTotals() {}
    HeaviestByTotals(const HeaviestByTotals&) = delete;
    ~HeaviestByTotals() {}
    MomentTerms& next() { return slots_[free_].terms; }
    int free() const { return free_; }
    // Takes the layout terms just written into next(), of the stage `facts`
    // scheduled as `sched` (both must outlive finish()). False when a term
    // is too large for plain sums (2^56 bytes): then the full accounts give
    // the estimate.
    bool take(const StageFacts& facts, const ScheduledStage& sched, const LayoutActivations& act) {
        Slot& slot = slots_[free_];
        int64_t (&totals)[kMomentCount] = slot.totals;
        if (!momentTotals(sched, slot.terms, totals)) return false;
        int64_t peak = totals[0];  // which moment it is, finish() finds for the heaviest stage only
        for (int i = 1; i < kMomentCount; ++i) peak = std::max(peak, totals[i]);
        if (first_ || peak > peak_) {
            peak_ = peak;
            best_facts_ = &facts;
            best_sched_ = &sched;
            free_ = 1 - free_;
        }
        // The stage's weights and its moments' components are below 2^56
        // (momentTotals), so the only too-large count left is the host's.
        const int64_t host = act.offloads_to_host ? addBytes(facts.states.host_bytes, offloadedActivationHostBytes(
                                                                                   act.kinds, act.ends, sched.stage))
                                                  : facts.states.host_bytes;
        host_bytes_ = std::max(host_bytes_, host);
        host_too_large_ = host_too_large_ || host >= kTooLargeBytes;
        first_ = false;
        return true;
    }
    // The heaviest stage into the estimate (after every take()), as
    // HeaviestStage::finish and toStageEstimate make it from the account.
    // The heaviest stage's device bytes and whether a count is too large,
    // as finish() would write them (peak.device_bytes, too_large), without
    // the rest. `comms`: communicators(s.parallelism).
    LayoutPeak peak(const Scenario& s, int64_t comms) const {
        if (first_) return {0, host_too_large_};  // no stage
        const int64_t reserved = reservedAt(s.hardware.overheads, peak_);
        const int64_t device = deviceAt(s.hardware.overheads, comms, reserved, best_facts_->states.managed_bytes);
        return {device, host_too_large_ || device >= kTooLargeBytes || reserved >= kTooLargeBytes ||
                            peak_ >= kTooLargeBytes};
    }
    // The heaviest stage's paged optimizer states (0 when no stage).
    int64_t managedBytes() const { return first_ ? 0 : best_facts_->states.managed_bytes; }
    // The stages into `est` (after every take()).
    void finish(const Scenario& s, int64_t comms, Estimate& est_) {
        est_.host_bytes = std::max(est_.host_bytes, host_bytes_);
        est_.too_large = est_.too_large || host_too_large_;
        if (first_) return;  // no stage
        const StageFacts& f = *best_facts_;
        const ScheduledStage& sched = *best_sched_;
        const LayoutTerms& t = slots_[1 - free_].terms;
        const int64_t (&totals_)[kMomentCount] = slots_[1 - free_].totals;
        int best = 0;  // the first moment at the peak (stagePeak's order)
        while (totals_[best] != peak_) ++best;
        StageEstimate& e = est_.peak;
        e.stage = sched.stage.index;
        e.first_layer = sched.stage.first_layer;
        e.num_layers = sched.stage.num_layers;
        e.in_flight_microbatches = sched.stage.in_flight;
        e.model_states = f.states.gpu;
        e.peak_phase = kMomentPhases[best];
        momentBreakdown(f, sched, t, best, e.at_peak);  // written in place, not copied
        e.allocated_bytes = peak_;
        // Every moment holds the same workspace, so leaving it out moves no
        // peak; the moments that do not happen (zero) leave their phase alone.
        const int64_t workspace = f.resident[Component::Workspace];
        e.exact_allocated_bytes = peak_ - e.at_peak[Component::Workspace];
        auto exact = [&](int i) { return std::max<int64_t>(0, totals_[i] - workspace); };
        auto phase = [&](Phase p) -> int64_t& { return e.exact_phase_bytes[static_cast<size_t>(p)]; };
        static_assert(kMomentPhases[kBackwardHead] == Phase::Backward && kMomentPhases[kBackwardNext] == Phase::Backward);
        phase(Phase::Forward) = exact(kForward);
        phase(Phase::Loss) = sched.stage.has_lm_head ? exact(kLoss) : 0;  // no loss on this stage
        phase(Phase::Backward) = std::max({exact(kBackwardHead), exact(kBackwardStart), exact(kBackwardEnd),
                                           sched.backward_next ? exact(kBackwardNext) : 0});
        phase(Phase::OptimizerStep) = exact(kStep);
        e.reserved_bytes = reservedAt(s.hardware.overheads, e.allocated_bytes);
        e.device_bytes = deviceAt(s.hardware.overheads, comms, e.reserved_bytes, f.states.managed_bytes);
        e.managed_bytes = f.states.managed_bytes;
        e.too_large = e.device_bytes >= kTooLargeBytes || e.reserved_bytes >= kTooLargeBytes ||
                      e.allocated_bytes >= kTooLargeBytes;
        est_.activations_without_recompute = roundBytes(t.act.no_recompute * sched.stage.in_flight);
        est_.recompute_fraction = t.act.recompute_fraction;
        est_.too_large = est_.too_large || e.too_large;
    }

private:
    // A stage's terms and its moments' totals. Left unset: each stage's
    // are written whole.
    struct Slot {
        MomentTerms terms;
        int64_t totals[kMomentCount];
    };
    union {
        Slot slots_[2];
    };
    int64_t peak_ = 0;  // the largest of the heaviest stage's totals
    int64_t host_bytes_ = 0;  // the stages' largest host bytes
    bool host_too_large_ = false;
    const StageFacts* best_facts_ = nullptr;
    const ScheduledStage* best_sched_ = nullptr;
    int free_ = 0;
    bool first_ = true;
};

// The estimate's fields that depend on the degrees, ZeRO and the recipe
// only, into a fresh one (once per plan: StagePlan::estimate_start).
void beginEstimate(const Scenario& s, const PreparedScenario& prep, Estimate& est) {
    est.parameters = prep.parameters;
    est.num_stages = s.parallelism.pipeline;
    est.total_gpus = s.parallelism.totalGpus();
    est.capacity_bytes = prep.capacity_bytes;
    const int64_t p = s.parallelism.pipeline;
    if (p > 1 && s.model.num_layers % p != 0) est.warnings |= kWarnUnevenPipeline;
    if (s.training.optimizer_state_dtype == DType::Fp16) est.warnings |= kWarnFp16WithoutScaler;
    if ((s.parallelism.offload_optimizer || s.parallelism.offload_parameters) && s.parallelism.zero_stage == 0)
        est.warnings |= kWarnOffloadNeedsZero;
}

// The layout's own, before its stages: `m` micro-batches per step.
void beginLayoutEstimate(const Scenario& s, int64_t m, Estimate& est) {
    est.effective_batch = s.training.micro_batch_size * m * s.parallelism.data;
}

// After its stages.
// Paged optimizer states live in CUDA managed memory (core/account/paged_states.h):
// the driver keeps on the device what fits beside everything else and evicts
// the rest to host memory, paging it back as bitsandbytes touches each
// tensor's states (bitsandbytes/optim/optimizer.py prefetch_state). So they
// never make a run fail to fit: the device holds the rest first, the managed
// pages take what is left, and what is not left waits on the host.
void settleManagedMemory(Estimate& est) {
    const int64_t managed = est.peak.managed_bytes;
    if (managed <= 0 || est.too_large) return;
    const int64_t rest = est.peak.device_bytes - managed;  // allocator, CUDA context, NCCL
    const int64_t room = std::max<int64_t>(0, est.capacity_bytes - rest);
    if (managed <= room) return;
    est.managed_host_bytes = managed - room;
    est.peak.device_bytes = rest + room;
    est.host_bytes += est.managed_host_bytes;
    est.warnings |= kWarnManagedPagedOut;
}

void finishEstimate(const Scenario& s, int64_t m, Estimate& est) {
    settleManagedMemory(est);
    est.headroom_bytes = est.capacity_bytes - est.peak.device_bytes;
    est.fits = !est.too_large && est.headroom_bytes >= 0;
    const int64_t p = s.parallelism.pipeline;
    if (est.fits && est.headroom_bytes < est.capacity_bytes / 20 && !(est.warnings & kWarnManagedPagedOut))
        est.warnings |= kWarnTinyHeadroom;
    if (p > 1 && m < p) est.warnings |= kWarnPipelineBubble;
    if (est.host_bytes > 256 * kGiB) est.warnings |= kWarnHostMemory;
}

// A fresh estimate of the layout, before its stages.
void freshEstimate(const Scenario& s, const PreparedScenario& prep, int64_t m, Estimate& est) {
    est = Estimate{};
    beginEstimate(s, prep, est);
    beginLayoutEstimate(s, m, est);
}

// The full accounts of the plan's stages (every recipe), into `est`, fresh
// but for freshEstimate.
void accountEveryStage(const Scenario& s, const PreparedScenario& prep, const LayoutActivations& act, int64_t m,
                       const StagePlan& plan, Estimate& est) {
    HeaviestStage heaviest(est);
    for (const StageFacts& facts : plan.stages) {
        accountStep(s, prep, act, m, facts, heaviest.next());
        heaviest.take();
    }
    heaviest.finish(s);
}

}  // namespace

int64_t MemoryBreakdown::total() const {
    uint64_t bits;
    return breakdownTotal(*this, bits);
}

void planStages(const Scenario& s, const PreparedScenario& prep, StagePlan& plan) {
    plan.stages.clear();
    plan.every_k = checkpointsSomeLayers(s.training.checkpointing);
    forEachCandidateStage(s, prep, [&](int64_t i) { plan.stages.push_back(stageFacts(s, prep, i)); });
    for (size_t j = 1; j < plan.stages.size(); ++j) {
        plan.stages[j].within_first = stageOnlyWithinFirst(plan.stages[0], plan.stages[j]);
        plan.stages[j].same_blocks_as_previous = sameBlocks(plan.stages[j - 1].stage, plan.stages[j].stage);
    }
    plan.communicators = communicators(s.parallelism);
    plan.estimate_start = Estimate{};
    beginEstimate(s, prep, plan.estimate_start);
    plan.microbatches = 0;  // the stages changed: schedule them again
    scheduleStagePlan(s, prep, plan);
}

void scheduleStagePlan(const Scenario& s, const PreparedScenario& prep, StagePlan& plan) {
    const int64_t m = microbatchesPerStep(s);
    if (plan.scheduledFor(s.parallelism, m)) return;
    plan.scheduled.resize(plan.stages.size());
    for (size_t i = 0; i < plan.stages.size(); ++i) scheduledStage(s, prep, m, plan.stages[i], plan.scheduled[i]);
    for (size_t j = 1; j < plan.stages.size(); ++j)
        plan.scheduled[j].within_first = scheduledWithinFirst(plan.scheduled[0], plan.scheduled[j], plan.stages[j]);
    plan.moments_as_terms = scheduleKeepsMomentsAsTerms(s, m);
    plan.schedule = s.parallelism.schedule;
    plan.virtual_stages = s.parallelism.virtual_stages;
    plan.microbatches = m;
}

// The plan's candidate stages into `heaviest` by their moments' totals
// (the recipes momentsAsTermsMakeThem accepts): false when a term is too
// large for plain sums. `scheduled`: the plan is scheduled for the layout.
[[gnu::always_inline]] inline bool takeStagesByTotals(const Scenario& s, const PreparedScenario& prep, const LayoutActivations& act,
                        const StagePlan& plan, int64_t m, bool by_block, bool scheduled, HeaviestByTotals& heaviest) {
    bool first_acts_within = false;  // activationsWithinFirst(stage 0's)
    bool sums = true;
    // The previous stage's activations when it was accounted, reused by
    // a stage with the same blocks (stageActivations depends on the
    // kinds' counts only). They stay in that stage's slot: the
    // heaviest's, which the next stage does not write, or else the free
    // slot the next stage's terms go into, where they are already its
    // own (layoutTerms leaves them as they are).
    const StageActivations* previous_act = nullptr;
    const StageFacts* const facts = plan.stages.data();
    const ScheduledStage* const plan_sched = plan.scheduled.data();
    const size_t stages = plan.stages.size();
    for (size_t i = 0; i < stages && sums; ++i) {
        const StageFacts& f = facts[i];
        MomentTerms& t = heaviest.next();
        const ScheduledStage* sched = &t;
        if (scheduled) {
            sched = &plan_sched[i];
            // (Unscheduled, every candidate is accounted: it is not the search's path.)
            if (i > 0 && first_acts_within && sched->within_first) {
                previous_act = nullptr;
                continue;
            }
        } else {
            scheduledStage(s, prep, m, f, t);
        }
        layoutTerms(s, prep, act, *sched, t, by_block, f.same_blocks_as_previous ? previous_act : nullptr);
        if (i == 0) first_acts_within = activationsWithinFirst(t.act);
        previous_act = &t.act;  // before take() moves the free slot
        sums = heaviest.take(f, *sched, act);
    }
    return sums;
}

Estimate accountLayout(const Scenario& s, const PreparedScenario& prep, const LayoutActivations& act,
                       const StagePlan& plan) {
    const bool by_block = checkpointsSomeLayers(s.training.checkpointing);
    const int64_t m = microbatchesPerStep(s);
    // The plan's schedule terms when they are this layout's (the search and
    // the benchmarks schedule it); else each stage's own, made in its slot
    // (and then no stage is left out as within stage 0).
    const bool scheduled = plan.every_k == by_block && plan.scheduledFor(s.parallelism, m);
    Estimate est = scheduled ? plan.estimate_start : Estimate{};  // the one Estimate, returned in place
    if (plan.every_k != by_block) {  // a plan for the other candidate rule would skip stages
        est = estimatePrepared(s, prep);
        return est;
    }
    if (!scheduled) beginEstimate(s, prep, est);
    beginLayoutEstimate(s, m, est);
    const bool as_terms = scheduled ? plan.moments_as_terms && layoutKeepsMomentsAsTerms(act, by_block)
                                    : momentsAsTermsMakeThem(s, act, m, by_block);
    if (as_terms) {
        HeaviestByTotals heaviest;
        const bool sums = takeStagesByTotals(s, prep, act, plan, m, by_block, scheduled, heaviest);
        if (sums) {
            heaviest.finish(s, plan.communicators, est);
            finishEstimate(s, m, est);
            return est;
        }
        freshEstimate(s, prep, m, est);  // a term of 2^56 bytes or more: the full accounts
    }
    accountEveryStage(s, prep, act, m, plan, est);
    finishEstimate(s, m, est);
    return est;
}

LayoutPeak accountLayoutPeak(const Scenario& s, const PreparedScenario& prep, const LayoutActivations& act,
                             const StagePlan& plan) {
    const bool by_block = checkpointsSomeLayers(s.training.checkpointing);
    const int64_t m = microbatchesPerStep(s);
    if (plan.every_k == by_block && plan.scheduledFor(s.parallelism, m) && plan.moments_as_terms &&
        layoutKeepsMomentsAsTerms(act, by_block)) {
        HeaviestByTotals heaviest;
        if (takeStagesByTotals(s, prep, act, plan, m, by_block, true, heaviest)) {
            LayoutPeak peak = heaviest.peak(s, plan.communicators);
            // The paged states take only the room the rest leaves (settleManagedMemory).
            const int64_t managed = heaviest.managedBytes();
            if (managed > 0 && !peak.too_large) {
                const int64_t rest = peak.device_bytes - managed;
                peak.device_bytes = rest + std::min(managed, std::max<int64_t>(0, prep.capacity_bytes - rest));
            }
            return peak;
        }
    }
    const Estimate est = accountLayout(s, prep, act, plan);  // every other case
    return {est.peak.device_bytes, est.too_large};
}

// The estimate's peak is the largest of its candidate stages' moments, each
// at least that stage's floor (stagePeakFloor); its device bytes are
// non-decreasing in the peak (reservedAt, deviceAt). So the device bytes
// are at least those of the largest floor.
int64_t deviceBytesFloor(const Scenario& s, const PreparedScenario& prep, const LayoutActivations& act,
                         const StagePlan& plan) {
    if (plan.stages.empty() || plan.every_k != checkpointsSomeLayers(s.training.checkpointing)) return 0;
    const int64_t m = microbatchesPerStep(s);
    int64_t peak = 0;
    for (const StageFacts& facts : plan.stages) peak = std::max(peak, stagePeakFloor(s, prep, act, m, facts));
    return deviceAt(s.hardware.overheads, plan.communicators, reservedAt(s.hardware.overheads, peak));
}

// The largest floor's device bytes reach `bytes` exactly when one stage's
// do (deviceAt and reservedAt do not decrease as the peak grows).
bool deviceBytesAtLeast(const Scenario& s, const PreparedScenario& prep, const LayoutActivations& act,
                        const StagePlan& plan, int64_t bytes) {
    if (plan.stages.empty() || plan.every_k != checkpointsSomeLayers(s.training.checkpointing)) return bytes <= 0;
    const int64_t m = microbatchesPerStep(s);
    for (const StageFacts& facts : plan.stages)
        if (deviceAt(s.hardware.overheads, plan.communicators,
                     reservedAt(s.hardware.overheads, stagePeakFloor(s, prep, act, m, facts))) >= bytes)
            return true;
    return false;
}

Estimate estimatePrepared(const Scenario& s, const PreparedScenario& prep) {
    const LayoutActivations act = layoutActivations(s);
    const int64_t m = microbatchesPerStep(s);
    const bool by_block = checkpointsSomeLayers(s.training.checkpointing);
    Estimate est;
    freshEstimate(s, prep, m, est);
    if (momentsAsTermsMakeThem(s, act, m, by_block)) {
        HeaviestByTotals heaviest;
        // The heaviest stage's facts stay in the slot its terms hold.
        StageFacts facts[2];
        bool sums = true;
        forEachCandidateStage(s, prep, [&](int64_t i) {
            if (!sums) return;
            StageFacts& f = facts[heaviest.free()];
            f = stageFacts(s, prep, i);
            MomentTerms& t = heaviest.next();
            momentTerms(s, prep, act, m, f, t, by_block);
            sums = heaviest.take(f, t, act);
        });
        if (sums) {
            heaviest.finish(s, communicators(s.parallelism), est);
            finishEstimate(s, m, est);
            return est;
        }
        freshEstimate(s, prep, m, est);
    }
    HeaviestStage heaviest(est);
    forEachCandidateStage(s, prep, [&](int64_t i) {
        accountStep(s, prep, act, m, stageFacts(s, prep, i), heaviest.next());
        heaviest.take();
    });
    heaviest.finish(s);
    finishEstimate(s, m, est);
    return est;
}

std::vector<StageEstimate> stageEstimates(const Scenario& s, const PreparedScenario& prep) {
    const LayoutActivations act = layoutActivations(s);
    const int64_t m = microbatchesPerStep(s);
    std::vector<StageEstimate> out;
    out.reserve(static_cast<size_t>(s.parallelism.pipeline));
    for (int64_t i = 0; i < s.parallelism.pipeline; ++i)
        out.push_back(toStageEstimate(s, accountStep(s, prep, act, m, stageFacts(s, prep, i))));
    return out;
}

}  // namespace trainmem
