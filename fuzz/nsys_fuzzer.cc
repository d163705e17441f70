// libFuzzer target: the Nsight Systems importer on real exports edited table by table.
//
// An input is either a whole SQLite database (it starts with "SQLite format 3"), read as
// it is, or a list of edits made to fuzz/corpus/nsys/base.sqlite, a real export cut down
// to 5 ms of a job (fuzz/make_nsys_seed.sh). The edits are the main path: base.sqlite
// (85 kB) is itself in the corpus, but scripts/fuzz.sh's 64 kB max_len cuts it short. The edits are what a crafted or damaged
// export holds: a cell set to NULL, an integer of any size, a real, a string, a blob or
// another cell's value; columns shifted; rows deleted or duplicated; bytes of a string or
// payload blob changed; a table dropped, or replaced by a view (also one that never ends),
// a virtual table or a table with a computed column; a trigger named like a table; bytes
// of the database file itself changed. The edits are made on an in-memory copy of the base
// (sqlite3_deserialize), the result is written over one file in /dev/shm, and that file is
// loaded as `commlens analyze` loads a file (importers/trace_loader.h: sniffed, imported,
// the rank and job passes), then analyzed.
//
// Besides sanitizer reports, a crash is: a loaded rank with a time beyond +-2^62 ns or a
// row that ends before it starts (the importer promises to count such rows instead); an
// input after which SQLite holds memory it did not hold before (a statement or connection
// left open: LeakSanitizer does not see SQLite's memory here, below).
//
// Speed (docs/reliability.md): SQLite's memory comes from sqlite_fuzz_allocator.h, size
// classes poisoned by hand, not from ASan's malloc. Debian's SQLite has no lookaside, so
// an input made about 8,000 SQLite mallocs (parsing the schema twice, each edit and query)
// and ASan's allocator was a quarter of the time. Overflows and uses after free of
// SQLite's buffers by our code are still reported (as use-after-poison), without the
// allocation stacks. SQLite is also set single-threaded with no memory statistics (it
// runs on one thread here; each was a lock per call), and the file is written in place.
// The fuzzer owns the process, so it configures SQLite before its first use (the replay
// test, which calls the same entry point, too).
//
// The job is analyzed only when its times span less than 2^50 ns (13 days), as
// summary_fuzzer does: the importers accept any time within +-2^62 ns, and of the
// analyses' duration sums only the kernel, class and busy totals saturate (found here:
// two rows each lasting over 2^62 ns overflowed analysis/kernel_breakdown.cc); the others
// assume a real run's span.
//
// Edit encoding, one after another until the input ends (at most kMaxEdits): an op byte,
// then its operands; a table is a byte (an index into kTables), a row two bytes (an
// offset, modulo the table's rows), a column a byte (modulo its columns), a value a kind
// byte and its bytes (ReadValue).
#include <fcntl.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "importers/trace_loader.h"
#include "sqlite_fuzz_allocator.h"

namespace {

using namespace commlens;

constexpr std::string_view kSqliteMagic{"SQLite format 3\0", 16};
constexpr int kMaxEdits = 32;
constexpr size_t kMaxImageBytes = 4 << 20;  // an edited export larger than this is not read

// The tables the importer reads (nsys_importer.cc).
constexpr const char* kTables[] = {
    "META_DATA_EXPORT",          "StringIds",
    "TARGET_INFO_SESSION_START_TIME", "TARGET_INFO_SYSTEM_ENV",
    "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    "NVTX_PAYLOAD_SCHEMA_ENTRIES", "NVTX_PAYLOAD_ENUMS",
    "NVTX_PAYLOAD_ENUM_ENTRIES",  "NVTX_EVENTS",
    "CUPTI_ACTIVITY_KIND_RUNTIME", "PROCESSES",
    "ThreadNames",               "TARGET_INFO_GPU",
    "GPU_METRICS",               "TARGET_INFO_GPU_METRICS",
};
constexpr size_t kTableCount = std::size(kTables);

// Integers that mean something to the importer or sit at an edge.
constexpr int64_t kEdgeInts[] = {
    0, -1, 1, 34, 59, 60, 75, INT32_MAX, int64_t{INT32_MAX} + 1, UINT32_MAX, int64_t{1} << 24, int64_t{1} << 31,
    int64_t{1} << 48, int64_t{1} << 62, -(int64_t{1} << 62), INT64_MAX, INT64_MIN, 16777221, 16777236,
    1795454264915953216,  // the base's session start (utcEpochNs)
};

// Reads the input front to back; past its end every read gives zeros.
class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool done() const { return at_ >= size_; }
  uint64_t Take(int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= uint64_t{at_ < size_ ? data_[at_++] : uint8_t{0}} << (8 * i);
    return v;
  }
  std::string Text(size_t n) {
    std::string s;
    while (n-- > 0 && at_ < size_) s.push_back(static_cast<char>(data_[at_++]));
    return s;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

// The base export, read once, and its tables' columns.
struct Base {
  std::string image;
  std::vector<std::vector<std::string>> columns;  // per kTables entry
};

const Base& TheBase() {
  static const Base base = [] {
    Base b;
    std::ifstream in(std::string(COMMLENS_SOURCE_DIR) + "/fuzz/corpus/nsys/base.sqlite", std::ios::binary);
    b.image.assign(std::istreambuf_iterator<char>(in), {});
    if (b.image.size() < 100) std::abort();  // the base is part of the fuzzer
    sqlite3* db = nullptr;
    sqlite3_open(":memory:", &db);
    auto* copy = static_cast<unsigned char*>(sqlite3_malloc64(b.image.size()));
    std::memcpy(copy, b.image.data(), b.image.size());
    sqlite3_deserialize(db, "main", copy, b.image.size(), b.image.size(), SQLITE_DESERIALIZE_FREEONCLOSE);
    for (const char* table : kTables) {
      b.columns.emplace_back();
      sqlite3_stmt* s = nullptr;
      sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info(?1)", -1, &s, nullptr);
      sqlite3_bind_text(s, 1, table, -1, SQLITE_STATIC);
      while (sqlite3_step(s) == SQLITE_ROW) b.columns.back().emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)));
      sqlite3_finalize(s);
      if (b.columns.back().empty()) b.columns.back().push_back("rowid");
    }
    sqlite3_close(db);
    return b;
  }();
  return base;
}

std::string Quoted(const std::string& name) { return "\"" + name + "\""; }

// Applies the edits to a writable in-memory copy of the base.
class Editor {
 public:
  Editor() {
    sqlite3_open(":memory:", &db_);
    const std::string& image = TheBase().image;
    auto* copy = static_cast<unsigned char*>(sqlite3_malloc64(image.size()));
    std::memcpy(copy, image.data(), image.size());
    sqlite3_deserialize(db_, "main", copy, image.size(), image.size(),
                        SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE);
    // An edit reads from tables an earlier edit may have made a view that never ends.
    sqlite3_progress_handler(db_, 1000, &Editor::StopLongStatements, &steps_);
  }
  ~Editor() { sqlite3_close(db_); }

  void Apply(Bytes& in) {
    for (int i = 0; i < kMaxEdits && !in.done(); ++i) Edit(in);
  }

  // The database file as edited, with the byte changes applied last.
  std::string Image() {
    sqlite3_int64 size = 0;
    unsigned char* p = sqlite3_serialize(db_, "main", &size, 0);
    std::string image(reinterpret_cast<char*>(p), p ? static_cast<size_t>(size) : 0);
    sqlite3_free(p);
    for (const auto& [offset, byte] : pokes_)
      if (!image.empty()) image[offset % image.size()] = static_cast<char>(byte);
    return image;
  }

 private:
  void Edit(Bytes& in) {
    const uint64_t op = in.Take(1) % 13;
    const size_t t = in.Take(1) % kTableCount;
    const std::string table = Quoted(kTables[t]);
    const std::vector<std::string>& cols = TheBase().columns[t];
    auto column = [&] { return Quoted(cols[in.Take(1) % cols.size()]); };
    switch (op) {
      case 0: {  // one cell
        const std::string c = column();
        const uint64_t row = in.Take(2);
        Update("UPDATE " + table + " SET " + c + " = ?1 WHERE rowid = (SELECT rowid FROM " + table +
                   " LIMIT 1 OFFSET ?2 % max(1, (SELECT count(*) FROM " + table + ")))",
               in, row);
        return;
      }
      case 1: {  // every k-th row of a column
        const std::string c = column();
        const uint64_t k = 1 + in.Take(1) % 8;
        Update("UPDATE " + table + " SET " + c + " = ?1 WHERE rowid % " + std::to_string(k) + " = 0", in, 0);
        return;
      }
      case 2: {  // a column shifted
        const std::string c = column();
        Run("UPDATE " + table + " SET " + c + " = " + c + " + " + std::to_string(static_cast<int64_t>(in.Take(8))));
        return;
      }
      case 3: {  // rows deleted
        const uint64_t row = in.Take(2), n = 1 + in.Take(1) % 16;
        Run("DELETE FROM " + table + " WHERE rowid IN (SELECT rowid FROM " + table + " LIMIT " + std::to_string(n) +
            " OFFSET " + std::to_string(row % 256) + ")");
        return;
      }
      case 4: {  // rows duplicated
        const uint64_t row = in.Take(2), n = 1 + in.Take(1) % 64;
        Run("INSERT INTO " + table + " SELECT * FROM " + table + " LIMIT " + std::to_string(n) + " OFFSET " +
            std::to_string(row % 256));
        return;
      }
      case 5: {  // bytes of a string or blob changed (or cut)
        const std::string c = column();
        const uint64_t row = in.Take(2), offset = in.Take(2), byte = in.Take(1);
        Poke(table, c, row, offset, byte);
        return;
      }
      case 6:
        Run("DROP TABLE " + table);
        return;
      case 7: {  // a view in the table's place; half of them never end
        const std::string data = Quoted(std::string(kTables[t]) + "_data");
        Run("ALTER TABLE " + table + " RENAME TO " + data);
        if (in.Take(1) % 2)
          Run("CREATE VIEW " + table + " AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT " +
              data + ".* FROM " + data + ", c");
        else
          Run("CREATE VIEW " + table + " AS SELECT * FROM " + data);
        return;
      }
      case 8:  // a trigger of the table's name
        Run("CREATE TRIGGER " + table + " AFTER INSERT ON " + table + " BEGIN DELETE FROM " + table + "; END");
        return;
      case 9: {  // a virtual table in the table's place, with the same columns and rows
        std::string list;
        for (const std::string& c : cols) list += (list.empty() ? "" : ", ") + Quoted(c);
        const std::string data = Quoted(std::string(kTables[t]) + "_data");
        Run("ALTER TABLE " + table + " RENAME TO " + data);
        Run("CREATE VIRTUAL TABLE " + table + " USING fts5(" + list + ")");
        Run("INSERT INTO " + table + " SELECT * FROM " + data);
        return;
      }
      case 10:  // a computed column
        Run("ALTER TABLE " + table + " ADD COLUMN computed GENERATED ALWAYS AS (length(" + column() + ") * 2)");
        return;
      case 11:  // a byte of the file
        pokes_.emplace_back(in.Take(3), in.Take(1));
        return;
      default: {  // a cell set to another cell's value
        const std::string c = column(), from = column();
        const uint64_t row = in.Take(2), from_row = in.Take(2);
        Run("UPDATE " + table + " SET " + c + " = (SELECT " + from + " FROM " + table + " LIMIT 1 OFFSET " +
            std::to_string(from_row % 256) + ") WHERE rowid = (SELECT rowid FROM " + table + " LIMIT 1 OFFSET " +
            std::to_string(row % 256) + ")");
        return;
      }
    }
  }

  // Every edit statement starts with a budget of kEditSteps virtual machine steps.
  static constexpr int kEditSteps = 1'000'000;
  static int StopLongStatements(void* steps) { return (*static_cast<int*>(steps) += 1000) > kEditSteps; }

  void Run(const std::string& sql) {
    steps_ = 0;
    sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr);
  }

  // |sql| with ?1 bound to a value read from |in| and ?2 to |row|.
  void Update(const std::string& sql, Bytes& in, uint64_t row) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) return;
    steps_ = 0;
    BindValue(s, in);
    sqlite3_bind_int64(s, 2, static_cast<int64_t>(row));
    sqlite3_step(s);
    sqlite3_finalize(s);
  }

  static void BindValue(sqlite3_stmt* s, Bytes& in) {
    switch (in.Take(1) % 9) {
      case 0: sqlite3_bind_null(s, 1); return;
      case 1: sqlite3_bind_int64(s, 1, static_cast<int8_t>(in.Take(1))); return;
      case 2: sqlite3_bind_int64(s, 1, static_cast<int64_t>(in.Take(8))); return;
      case 3: sqlite3_bind_int64(s, 1, kEdgeInts[in.Take(1) % std::size(kEdgeInts)]); return;
      case 4: {
        const uint64_t bits = in.Take(8);
        double d;
        std::memcpy(&d, &bits, sizeof d);
        sqlite3_bind_double(s, 1, d);
        return;
      }
      case 5: {
        const std::string text = in.Text(in.Take(1));
        sqlite3_bind_text(s, 1, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
        return;
      }
      case 6: {
        const std::string blob = in.Text(in.Take(1));
        sqlite3_bind_blob(s, 1, blob.data(), static_cast<int>(blob.size()), SQLITE_TRANSIENT);
        return;
      }
      case 7: {  // a long string: up to 64 KiB
        const std::string text(256 * in.Take(1), 'x');
        sqlite3_bind_text(s, 1, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
        return;
      }
      default: {  // a number written as text
        const std::string text = std::to_string(static_cast<int64_t>(in.Take(8)));
        sqlite3_bind_text(s, 1, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
        return;
      }
    }
  }

  // Changes one byte of a cell's string or blob (an offset past its end cuts it there).
  void Poke(const std::string& table, const std::string& column, uint64_t row, uint64_t offset, uint64_t byte) {
    const std::string where =
        " WHERE rowid = (SELECT rowid FROM " + table + " LIMIT 1 OFFSET " + std::to_string(row % 256) + ")";
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_, ("SELECT " + column + ", typeof(" + column + ") FROM " + table + where).c_str(), -1, &s,
                           nullptr) != SQLITE_OK)
      return;
    std::string value, type;
    steps_ = 0;
    if (sqlite3_step(s) == SQLITE_ROW) {
      const void* p = sqlite3_column_blob(s, 0);
      value.assign(p ? static_cast<const char*>(p) : "", static_cast<size_t>(sqlite3_column_bytes(s, 0)));
      type = reinterpret_cast<const char*>(sqlite3_column_text(s, 1));
    }
    sqlite3_finalize(s);
    if (type != "text" && type != "blob") return;
    if (offset < value.size()) value[offset] = static_cast<char>(byte);
    else value.resize(offset % (value.size() + 1));
    if (sqlite3_prepare_v2(db_, ("UPDATE " + table + " SET " + column + " = ?1" + where).c_str(), -1, &s, nullptr) !=
        SQLITE_OK)
      return;
    if (type == "text") sqlite3_bind_text(s, 1, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
    else sqlite3_bind_blob(s, 1, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
    steps_ = 0;
    sqlite3_step(s);
    sqlite3_finalize(s);
  }

  sqlite3* db_ = nullptr;
  int steps_ = 0;
  std::vector<std::pair<uint64_t, uint64_t>> pokes_;
};

// The file each input is written to: export.sqlite in a private folder in /dev/shm (else
// $TMPDIR, /tmp), one name for every input; removed at exit.
const std::string& ScratchFile() {
  static const std::string path = [] {
    std::string dir = "/dev/shm";
    if (::access(dir.c_str(), W_OK) != 0) dir = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp";
    std::string folder = dir + "/commlens-nsys-fuzz-XXXXXX";
    if (!::mkdtemp(folder.data())) std::abort();
    static std::string made = folder;
    std::atexit([] {
      ::unlink((made + "/export.sqlite").c_str());
      ::rmdir(made.c_str());
    });
    return folder + "/export.sqlite";
  }();
  return path;
}

// Writes |image| over the scratch file in place: truncating it to nothing first would
// give its pages in /dev/shm back to the kernel only to take them again.
bool WriteScratch(const std::string& path, const std::string& image) {
  static const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  for (size_t at = 0; at < image.size();) {
    const ssize_t n = ::pwrite(fd, image.data() + at, image.size() - at, static_cast<off_t>(at));
    if (n <= 0) return false;
    at += static_cast<size_t>(n);
  }
  return ::ftruncate(fd, static_cast<off_t>(image.size())) == 0;
}

void Require(bool ok) {
  if (!ok) std::abort();
}

// Whether every time of |trace| lies within one span under 2^50 ns (LikeARealRun).
bool LikeARealRun(const model::Trace& trace) {
  model::TimeNs lo = INT64_MAX, hi = INT64_MIN;
  auto add = [&](const std::vector<model::TimeNs>& times) {
    for (model::TimeNs t : times)
      if (t != model::kNoTime) lo = std::min(lo, t), hi = std::max(hi, t);
  };
  for (const model::RankTrace& r : trace.ranks) {
    add(r.gpu.start), add(r.gpu.end), add(r.host.start), add(r.host.end), add(r.annotations.start);
    add(r.annotations.end), add(r.comms.start), add(r.comms.end);
    for (const model::CounterSeries& c : r.counters) add(c.time);
  }
  return lo > hi || hi - lo < (int64_t{1} << 50);
}

// What the importer promises of every row it keeps.
void CheckTimes(const model::RankTrace& r) {
  auto spans = [](const std::vector<model::TimeNs>& start, const std::vector<model::TimeNs>& end) {
    Require(start.size() == end.size());
    for (size_t i = 0; i < start.size(); ++i)
      Require(model::TimeInRange(start[i]) && model::TimeInRange(end[i]) && start[i] <= end[i]);
  };
  spans(r.gpu.start, r.gpu.end);
  spans(r.host.start, r.host.end);
  spans(r.annotations.start, r.annotations.end);
  for (const model::CounterSeries& c : r.counters)
    for (model::TimeNs t : c.time) Require(model::TimeInRange(t));
}

// One input: the export it makes (an image as it is, or the base edited), loaded as
// `commlens analyze` loads a file, checked, and analyzed when like a real run.
void Run(const uint8_t* data, size_t size) {
  std::string image;
  if (size >= kSqliteMagic.size() && std::memcmp(data, kSqliteMagic.data(), kSqliteMagic.size()) == 0) {
    image.assign(reinterpret_cast<const char*>(data), size);
  } else {
    Editor editor;
    Bytes in(data, size);
    editor.Apply(in);
    image = editor.Image();
  }
  if (image.size() > kMaxImageBytes) return;
  const std::string& path = ScratchFile();
  if (!WriteScratch(path, image)) return;
  importers::LoadOptions options;
  options.threads = 1;
  importers::ImportedFile imported = importers::ImportOneFile(path, options);
  for (const model::RankTrace& r : imported.ranks) CheckTimes(r);
  std::vector<importers::ImportedFile> files;
  files.push_back(std::move(imported));
  auto trace = importers::AssembleJob({path}, std::move(files), options);
  if (!trace.ok() || trace->ranks.size() > 64 || !LikeARealRun(trace.value())) return;
  analysis::AnalyzeOptions analyze;
  analyze.threads = 1;
  analysis::Analyze(trace.value(), analyze);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool ready = [] {
    fuzz::SqliteFuzzAllocator::Install();  // before SQLite's first use
    sqlite3_initialize();
    TheBase();
    return true;
  }();
  (void)ready;
  const int64_t sqlite_blocks = fuzz::SqliteFuzzAllocator::LiveBlocks();
  Run(data, size);
  // Every statement finalized and every connection closed: SQLite holds what it held before.
  Require(fuzz::SqliteFuzzAllocator::LiveBlocks() == sqlite_blocks);
  return 0;
}
