#include "exporters/paraver/pcf_row.h"

#include <string>
#include <string_view>

#include <fmt/format.h>

#include "exporters/paraver/paraver_ids.h"
#include "model/collective.h"

namespace commlens::exporters::paraver {

namespace {

struct StateLabel {
  State state;
  const char* label;
  const char* color;
};

constexpr StateLabel kStates[] = {
    {kStateIdle, "Idle", "{117,195,255}"},
    {kStateCompute, "Compute kernel", "{0,0,255}"},
    {kStateCommunication, "Communication kernel (NCCL)", "{228,26,28}"},
    {kStateMemory, "Memory operation (memcpy, memset)", "{0,176,80}"},
    {kStateOther, "Other GPU activity (synchronization)", "{160,160,160}"},
};
static_assert(std::size(kStates) == kStateCount);

// A label on one line of printable text: the .pcf and .row are line-based, and Paraver
// reads a label to the end of its line. Every control byte (a line break, a tab, an
// escape sequence, NUL, DEL) becomes a space; other bytes are kept as they are.
std::string OneLine(std::string_view text) {
  std::string s(text);
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return s.empty() ? "(unnamed)" : s;
}

void Line(OutputFile* out, std::string_view text) {
  out->Write(text);
  out->Write("\n");
}

}  // namespace

void WritePcf(const model::Trace& trace, const Layout& layout, OutputFile* out) {
  Line(out, "DEFAULT_OPTIONS\n\nLEVEL               THREAD\nUNITS               NANOSEC\n"
            "LOOK_BACK           100\nSPEED               1\nFLAG_ICONS          ENABLED\n"
            "NUM_OF_STATE_COLORS 1000\nYMAX_SCALE          37\n\n"
            "DEFAULT_SEMANTIC\n\nTHREAD_FUNC         State As Is\n");

  Line(out, "STATES");
  for (const StateLabel& s : kStates) Line(out, fmt::format("{}    {}", static_cast<int>(s.state), s.label));
  Line(out, "\nSTATES_COLOR");
  for (const StateLabel& s : kStates) Line(out, fmt::format("{}    {}", static_cast<int>(s.state), s.color));

  // Activity names: one value table shared by the four name types.
  Line(out, "\nEVENT_TYPE");
  Line(out, fmt::format("0    {}    CUDA kernel (compute)", static_cast<int>(kEventKernelName)));
  Line(out, fmt::format("0    {}    NCCL kernel (communication)", static_cast<int>(kEventNcclName)));
  Line(out, fmt::format("0    {}    CUDA memory operation (memcpy, memset)", static_cast<int>(kEventMemoryName)));
  Line(out, fmt::format("0    {}    Other GPU activity (synchronization)", static_cast<int>(kEventOtherName)));
  Line(out, "VALUES\n0      End");
  for (size_t v = 0; v < layout.names().size(); ++v) Line(out, fmt::format("{}      {}", v + 1, OneLine(layout.names()[v])));

  Line(out, "\nEVENT_TYPE");
  Line(out, fmt::format("0    {}    Collective operation", static_cast<int>(kEventCollectiveOp)));
  Line(out, "VALUES\n0      End");
  for (int op = 0; op < static_cast<int>(model::CommOp::kCount); ++op)
    Line(out, fmt::format("{}      {}", op + 1, model::CommOpName(static_cast<model::CommOp>(op))));

  Line(out, "\nEVENT_TYPE");
  Line(out, fmt::format("0    {}    Bytes (message size, or memory operation size)", static_cast<int>(kEventBytes)));

  Line(out, "\nEVENT_TYPE");
  Line(out, fmt::format("0    {}    Process group", static_cast<int>(kEventGroup)));
  Line(out, "VALUES\n0      End");
  for (size_t g = 0; g < trace.groups.size(); ++g) {
    const model::JobGroup& group = trace.groups[g];
    std::string label = group.description.empty() ? group.name : group.name + " (" + group.description + ")";
    Line(out, fmt::format("{}      {}", g + 1, OneLine(label)));
  }

  Line(out, "\nEVENT_TYPE");
  Line(out, fmt::format("0    {}    Sequence number in process group", static_cast<int>(kEventSequence)));
}

void WriteRow(const model::Trace& trace, const Layout& layout, OutputFile* out) {
  Line(out, fmt::format("LEVEL APPL SIZE 1\ncommlens job ({} ranks)\n", trace.ranks.size()));
  Line(out, fmt::format("LEVEL TASK SIZE {}", trace.ranks.size()));
  for (const model::RankTrace& rank : trace.ranks) Line(out, OneLine(TaskLabel(rank)));
  Line(out, fmt::format("\nLEVEL THREAD SIZE {}", layout.threads().size()));
  for (const Thread& t : layout.threads()) Line(out, OneLine(ThreadLabel(trace.ranks[t.rank_index], t)));
}

}  // namespace commlens::exporters::paraver
