#include "importers/nsys/sqlite_db.h"

#include <sqlite3.h>

namespace commlens::importers::nsys {

namespace {

// Pages SQLite may cache: 2 MB, whatever the database's size.
constexpr int kCacheKiB = 2048;
// A database another process holds locked (nsys still writing it) is waited on this long.
constexpr int kBusyTimeoutMs = 2000;

}  // namespace

Statement::~Statement() {
  if (stmt_) sqlite3_finalize(stmt_);
}

Result<bool> Statement::Next() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return Error(db_->LastError("reading rows"));
}

bool Statement::IsNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
int64_t Statement::Int(int column) const { return sqlite3_column_int64(stmt_, column); }
double Statement::Real(int column) const { return sqlite3_column_double(stmt_, column); }

std::string_view Statement::Text(int column) const {
  const unsigned char* p = sqlite3_column_text(stmt_, column);
  if (!p) return {};
  return {reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, column))};
}

std::string_view Statement::Blob(int column) const {
  const void* p = sqlite3_column_blob(stmt_, column);
  if (!p) return {};
  return {static_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, column))};
}

Result<Database> Database::Open(const std::string& path, const std::string& name) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = name + ": cannot open as SQLite: " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_close(db);
    return Error(msg);
  }
  Database d(db, name);
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  const std::string pragmas = "PRAGMA cache_size=-" + std::to_string(kCacheKiB) + "; PRAGMA mmap_size=0;";
  if (sqlite3_exec(db, pragmas.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK)
    return Error(d.LastError("setting up the connection"));
  // Reading the schema is the first real access: a file that is not SQLite fails here.
  if (sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr) != SQLITE_OK)
    return Error(d.LastError("reading the schema"));
  return d;
}

Database::~Database() {
  if (db_) sqlite3_close(db_);
}

bool Database::HasTable(std::string_view table) const {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db_, "SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?1", -1, &s,
                         nullptr) != SQLITE_OK)
    return false;
  sqlite3_bind_text(s, 1, table.data(), static_cast<int>(table.size()), SQLITE_TRANSIENT);
  bool found = sqlite3_step(s) == SQLITE_ROW;
  sqlite3_finalize(s);
  return found;
}

bool Database::HasColumn(std::string_view table, std::string_view column) const {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db_, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2", -1, &s, nullptr) != SQLITE_OK)
    return false;
  sqlite3_bind_text(s, 1, table.data(), static_cast<int>(table.size()), SQLITE_TRANSIENT);
  sqlite3_bind_text(s, 2, column.data(), static_cast<int>(column.size()), SQLITE_TRANSIENT);
  bool found = sqlite3_step(s) == SQLITE_ROW;
  sqlite3_finalize(s);
  return found;
}

Result<Statement> Database::Prepare(std::string_view sql) const {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &s, nullptr) != SQLITE_OK)
    return Error(LastError("preparing a query"));
  return Statement(s, this);
}

std::string Database::LastError(std::string_view doing) const {
  int code = sqlite3_errcode(db_);
  std::string msg = name_ + ": SQLite error while " + std::string(doing) + ": " + sqlite3_errmsg(db_);
  if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
    msg += " (another process holds the database locked: is nsys still writing it?)";
  else if (code == SQLITE_NOTADB)
    msg += " (not a SQLite database)";
  else if (code == SQLITE_CORRUPT)
    msg += " (the file is damaged or cut short)";
  return msg;
}

}  // namespace commlens::importers::nsys
