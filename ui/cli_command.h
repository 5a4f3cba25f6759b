#pragma once
// Edit > Copy as trainmem-cli Command: the one `trainmem-cli estimate` line
// that computes the open scenario, as its source (a preset, or the scenario
// file) and the --set edits on top of it.
#include <QString>

#include "core/base/error.h"
#include "core/scenario/scenario.h"

namespace trainmem::ui {

// "trainmem-cli estimate --preset llama3.1-8b-fsdp-8xh100 --set training.micro_batch_size=2".
// The source is the scenario preset it is named after, else its model
// preset, else `path` (the file it was opened from); the edits are every
// setting whose value differs from the source's. The line is checked by
// applying the edits to the source as the CLI does (applySettings): when that
// does not give back the scenario, the error says so instead of a wrong line.
Expected<QString> cliCommand(const Scenario& scenario, const QString& path = {});

}  // namespace trainmem::ui
