#pragma once
// Which layouts validate() accepts, decided without allocating: the solver
// visits ~10^5 layouts per search and validate() builds an error string for
// every one it refuses.
#include "core/scenario/scenario.h"

namespace trainmem {

// validate()'s rules (scenario_validate.cpp) for the fields applyLayout()
// writes, for a scenario whose other fields already passed validate().
// tests/core/layout_search_test.cpp checks that every layout it accepts
// passes validate(), so the two cannot drift apart unnoticed.
bool layoutAdmissible(const Scenario& scenario);

// The part of those rules that depends only on the data, tensor, pipeline,
// context and expert degrees (ranges, heads and widths divisible by TP,
// PP <= layers, EP dividing the experts and DP x CP, the sequence in 2 x CP
// chunks). False means layoutAdmissible() is false whatever the ZeRO stage,
// sequence parallelism, schedule, micro-batch and checkpointing: the search
// counts such a subtree without visiting it.
bool degreesAdmissible(const Scenario& scenario);

// layoutAdmissible() for a scenario whose degrees passed
// degreesAdmissible(): the rules on the fields below them (ZeRO stage,
// sequence parallelism, schedule, micro-batches and their size,
// checkpointing), which is all the search's inner loops change.
bool belowDegreesAdmissible(const Scenario& scenario);

}  // namespace trainmem
