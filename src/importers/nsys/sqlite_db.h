// A read-only SQLite database and its prepared statements, as the Nsight importer uses
// them: every error names the file and says what SQLite said. The database is opened
// read-only with no memory map and a small page cache, so reading a 1 GB export costs the
// trace model's memory, not the file's.
//
// The file is program input and may be crafted, so the connection trusts nothing in it
// (SQLite's advice for untrusted databases, as far as Debian 12's SQLite 3.40 allows):
//  - no SQL the file defines is run: views and triggers are disabled, the schema is not
//    trusted (no function with side effects from it), every virtual table module is
//    dropped (a virtual table the file declares runs no module code), no extension
//    loading, defensive mode, cell size checks;
//  - HasTable accepts only a plain table whose every column is stored: a view, a virtual
//    table or a table with computed columns of a name the importer reads is an error;
//  - limits: values up to kMaxValueBytes, statements up to 100 kB, nothing attached;
//  - a budget of SQLite steps proportional to the file's size (ReadBudget): a query that
//    needs more stops, and the error says the file took too long.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace commlens::importers::nsys {

// The longest value (string, blob or row) SQLite returns from the file; a longer one is
// an error ("string or blob too big"). nsys's longest are demangled kernel names and the
// profiled environment, far below this.
inline constexpr int kMaxValueBytes = 16 << 20;
// SQLite calls the step budget's check every this many steps of a statement.
inline constexpr int kStepsPerCheck = 10'000;

// SQLite virtual machine steps a whole import may take: base + per_byte x the file's
// size. SQLite counts each statement's steps and calls back every kStepsPerCheck of them
// (a statement of fewer steps is not counted). Reading the real exports of
// examples/traces/nsys-* takes 0.05 steps per byte (about 10 per row); rows as small as
// SQLite stores them would take about 2. The default allows 64 per byte, and 100 M steps
// (half a second) for any file.
struct ReadBudget {
  uint64_t base_steps = 100'000'000;
  uint64_t steps_per_byte = 64;
};

class Database;

class Statement {
 public:
  Statement(Statement&& other) noexcept : stmt_(other.stmt_), db_(other.db_) { other.stmt_ = nullptr; }
  Statement& operator=(Statement&&) = delete;
  ~Statement();

  // Advances to the next row: true with a row, false at the end; an error names the file.
  [[nodiscard]] Result<bool> Next();
  bool IsNull(int column) const;
  bool IsInt(int column) const;      // stored as an integer (not NULL, text, real or blob)
  int64_t Int(int column) const;     // 0 for NULL
  double Real(int column) const;
  std::string_view Text(int column) const;  // empty for NULL; valid until the next Next()
  std::string_view Blob(int column) const;  // empty for NULL; valid until the next Next()

 private:
  friend class Database;
  Statement(sqlite3_stmt* stmt, const Database* db) : stmt_(stmt), db_(db) {}
  sqlite3_stmt* stmt_;
  const Database* db_;
};

class Database {
 public:
  // Opens |path| read-only. |name| is what messages call it (the user's file, when |path|
  // is a decompressed copy). Fails when the file is not a SQLite database.
  [[nodiscard]] static Result<Database> Open(const std::string& path, const std::string& name,
                                             ReadBudget budget = {});
  Database(Database&& other) noexcept;
  Database& operator=(Database&&) = delete;
  ~Database();

  const std::string& name() const { return name_; }
  // Whether the export has |table|: false when nothing of that name exists; an error,
  // naming the file and the table, when it is not a plain table of stored columns. The
  // schema is listed once and each table checked once (the file does not change).
  [[nodiscard]] Result<bool> HasTable(std::string_view table) const;
  bool HasColumn(std::string_view table, std::string_view column) const;
  [[nodiscard]] Result<Statement> Prepare(std::string_view sql) const;
  // The message for SQLite's last error, naming the file ("database is locked" says why,
  // a spent budget says the file took too long).
  std::string LastError(std::string_view doing) const;

 private:
  struct Guard;  // the step budget, at a fixed address for SQLite's progress handler
  struct Object {
    std::string type;      // "table", "view", "virtual", "shadow"
    bool checked = false;  // a table whose columns were found all stored
  };
  Database(sqlite3* db, std::string name, std::unique_ptr<Guard> guard);
  Status ListSchema() const;

  sqlite3* db_;
  std::string name_;
  std::unique_ptr<Guard> guard_;
  // The schema's tables and views by name in lower case (SQLite's names ignore ASCII case).
  mutable std::unique_ptr<std::unordered_map<std::string, Object>> objects_;
};

}  // namespace commlens::importers::nsys
