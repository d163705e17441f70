#include "importers/nsys/sqlite_db.h"

#include <sqlite3.h>
#include <sys/stat.h>

namespace commlens::importers::nsys {

namespace {

// Pages SQLite may cache: 2 MB, whatever the database's size.
constexpr int kCacheKiB = 2048;
// A database another process holds locked (nsys still writing it) is waited on this long.
constexpr int kBusyTimeoutMs = 2000;
// The longest SQL statement: ours are a few hundred bytes, nsys's CREATE TABLEs a few kB.
constexpr int kMaxSqlBytes = 100'000;

// Each connection option that makes SQLite trust less of the file, with the value it
// gets. All exist in SQLite 3.31 and later.
constexpr struct {
  int option;
  int value;
} kDefensiveConfig[] = {
    {SQLITE_DBCONFIG_DEFENSIVE, 1},
    {SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0},
    {SQLITE_DBCONFIG_ENABLE_TRIGGER, 0},
    {SQLITE_DBCONFIG_ENABLE_VIEW, 0},
    {SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0},
    {SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0},
    {SQLITE_DBCONFIG_WRITABLE_SCHEMA, 0},
    {SQLITE_DBCONFIG_DQS_DML, 0},
    {SQLITE_DBCONFIG_DQS_DDL, 0},
};

// SQLite's names ignore ASCII case.
std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

}  // namespace

struct Database::Guard {
  uint64_t checks_left = 0;
  uint64_t budget_steps = 0;
  bool tripped = false;

  static int OnProgress(void* self) {
    Guard* g = static_cast<Guard*>(self);
    if (g->checks_left == 0) {
      g->tripped = true;
      return 1;  // SQLite stops the statement with SQLITE_INTERRUPT
    }
    --g->checks_left;
    return 0;
  }
};

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
bool Statement::IsInt(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_INTEGER; }
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

Database::Database(sqlite3* db, std::string name, std::unique_ptr<Guard> guard)
    : db_(db), name_(std::move(name)), guard_(std::move(guard)) {}

Database::Database(Database&& other) noexcept
    : db_(other.db_), name_(std::move(other.name_)), guard_(std::move(other.guard_)),
      objects_(std::move(other.objects_)) {
  other.db_ = nullptr;
}

Result<Database> Database::Open(const std::string& path, const std::string& name, ReadBudget budget) {
  // A relative name starting "file:" would be read as a URI (Debian builds SQLite with
  // URI names on): "./" keeps every path a path.
  const std::string file = !path.empty() && path[0] != '/' ? "./" + path : path;
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = name + ": cannot open as SQLite: " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_close(db);
    return Error(msg);
  }
  auto guard = std::make_unique<Guard>();
  struct stat st {};
  const uint64_t bytes = ::stat(path.c_str(), &st) == 0 && st.st_size > 0 ? static_cast<uint64_t>(st.st_size) : 0;
  guard->budget_steps = budget.base_steps + budget.steps_per_byte * bytes;
  guard->checks_left = guard->budget_steps / kStepsPerCheck;
  Database d(db, name, std::move(guard));
  for (const auto& c : kDefensiveConfig)
    if (sqlite3_db_config(db, c.option, c.value, nullptr) != SQLITE_OK)
      return Error(d.LastError("setting up the connection"));
  // Before the schema is read: a virtual table in it then finds no module to run.
  sqlite3_drop_modules(db, nullptr);
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, kMaxValueBytes);
  sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, kMaxSqlBytes);
  sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
  sqlite3_progress_handler(db, kStepsPerCheck, &Guard::OnProgress, d.guard_.get());
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  // BEGIN: the read transaction the schema read below starts lasts until the file is
  // closed, so the whole import reads one state of the file, and each later query neither
  // locks the file again nor checks whether it changed. (locking_mode=EXCLUSIVE would do
  // the same but cannot read a database in WAL mode read-only.)
  const std::string pragmas = "PRAGMA cache_size=-" + std::to_string(kCacheKiB) +
                              "; PRAGMA mmap_size=0; PRAGMA cell_size_check=ON; BEGIN;";
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

Status Database::ListSchema() const {
  auto objects = std::make_unique<std::unordered_map<std::string, Object>>();
  COMMLENS_ASSIGN_OR_RETURN(Statement s, Prepare("SELECT name, type FROM pragma_table_list WHERE schema = 'main'"));
  for (;;) {
    COMMLENS_ASSIGN_OR_RETURN(bool row, s.Next());
    if (!row) break;
    (*objects)[AsciiLower(s.Text(0))].type = std::string(s.Text(1));
  }
  objects_ = std::move(objects);
  return OkStatus();
}

Result<bool> Database::HasTable(std::string_view table) const {
  if (!objects_) COMMLENS_RETURN_IF_ERROR(ListSchema());
  auto it = objects_->find(AsciiLower(table));
  if (it == objects_->end()) return false;
  Object& object = it->second;
  const std::string what = name_ + ": " + std::string(table);
  if (object.type != "table")
    return Error(what + " is a " + object.type +
                 ", not a table: commlens reads only the tables nsys writes (a crafted export?)");
  if (object.checked) return true;
  // hidden: 2 and 3 are generated columns, computed by SQL the file defines.
  COMMLENS_ASSIGN_OR_RETURN(Statement computed,
                            Prepare("SELECT name FROM pragma_table_xinfo(?1) WHERE hidden != 0 LIMIT 1"));
  sqlite3_bind_text(computed.stmt_, 1, table.data(), static_cast<int>(table.size()), SQLITE_TRANSIENT);
  COMMLENS_ASSIGN_OR_RETURN(bool has_computed, computed.Next());
  if (has_computed)
    return Error(what + " has a computed column (" + std::string(computed.Text(0)) +
                 "): commlens reads only the tables nsys writes (a crafted export?)");
  object.checked = true;
  return true;
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
  if (guard_ && guard_->tripped)
    return name_ + ": took too long: " + std::string(doing) + " needed more than " +
           std::to_string(guard_->budget_steps) +
           " SQLite steps, the budget for a file of this size (a crafted or damaged export?)";
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
