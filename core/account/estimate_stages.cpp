// The premises of leaving a later candidate stage out that depend on the
// plan only (the proof, and the schedule's and the layout's premises:
// scheduledWithinFirst and activationsWithinFirst, core/account/estimate_stages.h).
#include "core/account/estimate_stages.h"

#include <algorithm>

namespace trainmem {

// Stage j's stage-only terms against stage 0's (the premises that do not
// depend on the schedule or the layout).
bool stageOnlyWithinFirst(const StageFacts& first, const StageFacts& f) {
    const PipelineStage& a = first.stage;
    const PipelineStage& b = f.stage;
    const int64_t g0 = first.states.gpu.gradients, g = f.states.gpu.gradients;
    return a.index == 0 && b.index > 0 && !a.has_lm_head && !b.has_lm_head && a.num_layers == b.num_layers &&
           a.num_moe_layers == b.num_moe_layers && a.num_nope_layers == b.num_nope_layers &&
           a.num_nope_moe_layers == b.num_nope_moe_layers && a.hybrid_layers == b.hybrid_layers &&
           (f.stage_bits >> 56) == 0 &&
           f.resident_bytes <= first.resident_bytes && g <= g0 &&
           g - f.late_gradient_bytes <= g0 - first.late_gradient_bytes && f.fp8_copies <= first.fp8_copies &&
           f.step_transient_bytes <= first.step_transient_bytes && f.autocast_copies <= first.autocast_copies &&
           f.lasting_copies <= first.lasting_copies && f.gathered <= first.gathered && f.scatter <= first.scatter && f.ends.atMost(first.ends) &&
           f.states.host_bytes <= first.states.host_bytes;
}

}  // namespace trainmem
