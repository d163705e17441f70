// The two companion files of a .prv: the .pcf (what the states and event types and
// values mean, and their colours) and the .row (the names of the tasks and threads).
#pragma once

#include "common/output_file.h"
#include "exporters/paraver/paraver_layout.h"
#include "model/trace.h"

namespace commlens::exporters::paraver {

void WritePcf(const model::Trace& trace, const Layout& layout, OutputFile* out);
void WriteRow(const model::Trace& trace, const Layout& layout, OutputFile* out);

}  // namespace commlens::exporters::paraver
