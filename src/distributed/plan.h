// Which process of `analyze --mpi` imports which file (README.md here: the deal). Rank 0
// expands the inputs, deals the files and broadcasts the plan, so every process reads the
// same paths in the same order.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace commlens::distributed {

struct Plan {
  std::string error;  // the inputs name no trace: nothing to do
  std::vector<std::string> files;
  std::vector<uint64_t> sizes;  // on disk
  std::vector<uint64_t> owner;  // the process that imports files[i]
  // Rank 0 only, not broadcast: the note on files of the input folders that are not
  // traces (importers::SkippedFilesNote), for the job's warnings.
  std::string skipped_note;

  // The files of |process|, largest first.
  std::vector<size_t> FilesOf(int process) const;
};

// Largest file first, to the process with the least work so far: its bytes (+1 a file,
// so files of unknown size still spread); ties to the lower process, so the same files
// give the same plan. Rank 0 also receives and decodes every rank the others import,
// runs the job-level analyses and writes the report, so it is charged a fifth of each
// other file too (measured when whole models travelled: 2 ms of decoding against 10 ms of
// import a file; a summary decodes faster). That keeps its own share, and the GPU tables
// it holds beside every summary, small: about an eighth of the files at 4 processes.
// |sizes[i]| is files[i]'s size on disk (0 when unknown).
Plan DealFiles(std::vector<std::string> files, std::vector<uint64_t> sizes, int processes);

// The plan as rank 0 broadcasts it: {0, files, then per file {path, size, owner}}, or
// {1, the error}.
std::vector<uint8_t> EncodePlan(const Plan& plan);
// The plan back; a plan whose |error| says so when the bytes are damaged.
Plan DecodePlan(std::span<const uint8_t> bytes);

}  // namespace commlens::distributed
