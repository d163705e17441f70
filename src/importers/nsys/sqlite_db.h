// A read-only SQLite database and its prepared statements, as the Nsight importer uses
// them: every error names the file and says what SQLite said. The database is opened
// read-only with no memory map and a small page cache, so reading a 1 GB export costs the
// trace model's memory, not the file's.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace commlens::importers::nsys {

class Statement {
 public:
  Statement(Statement&& other) noexcept : stmt_(other.stmt_), db_(other.db_) { other.stmt_ = nullptr; }
  Statement& operator=(Statement&&) = delete;
  ~Statement();

  // Advances to the next row: true with a row, false at the end; an error names the file.
  [[nodiscard]] Result<bool> Next();
  bool IsNull(int column) const;
  int64_t Int(int column) const;     // 0 for NULL
  double Real(int column) const;
  std::string_view Text(int column) const;  // empty for NULL; valid until the next Next()
  std::string_view Blob(int column) const;  // empty for NULL; valid until the next Next()

 private:
  friend class Database;
  Statement(sqlite3_stmt* stmt, const class Database* db) : stmt_(stmt), db_(db) {}
  sqlite3_stmt* stmt_;
  const Database* db_;
};

class Database {
 public:
  // Opens |path| read-only. |name| is what messages call it (the user's file, when |path|
  // is a decompressed copy). Fails when the file is not a SQLite database.
  [[nodiscard]] static Result<Database> Open(const std::string& path, const std::string& name);
  Database(Database&& other) noexcept : db_(other.db_), name_(std::move(other.name_)) { other.db_ = nullptr; }
  Database& operator=(Database&&) = delete;
  ~Database();

  const std::string& name() const { return name_; }
  bool HasTable(std::string_view table) const;
  bool HasColumn(std::string_view table, std::string_view column) const;
  [[nodiscard]] Result<Statement> Prepare(std::string_view sql) const;
  // The message for SQLite's last error, naming the file ("database is locked" says why).
  std::string LastError(std::string_view doing) const;

 private:
  Database(sqlite3* db, std::string name) : db_(db), name_(std::move(name)) {}
  sqlite3* db_;
  std::string name_;
};

}  // namespace commlens::importers::nsys
