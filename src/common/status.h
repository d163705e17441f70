// Two tiers of errors (docs/reliability.md, "The readers"):
//  - |Status| / |Result<T>|: what stops an operation (unreadable file, wrong format). The
//    message names the file and, where there is one, the byte offset.
//  - a bad single event is not an error: importers count it by kind (ImportStats) and go on.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace commlens {

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  static Status Error(std::string message) { return Status(std::move(message)); }

  bool ok() const { return !message_.has_value(); }
  const std::string& message() const {
    static const std::string kOk = "OK";
    return message_ ? *message_ : kOk;
  }

 private:
  explicit Status(std::string message) : message_(std::move(message)) {}
  std::optional<std::string> message_;
};

inline Status OkStatus() { return Status(); }
inline Status Error(std::string message) { return Status::Error(std::move(message)); }

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}            // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {      // NOLINT: implicit by design
    if (std::get<Status>(v_).ok()) std::abort();       // a Result never holds an OK status
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace commlens

#define COMMLENS_CONCAT_INNER_(a, b) a##b
#define COMMLENS_CONCAT_(a, b) COMMLENS_CONCAT_INNER_(a, b)

#define COMMLENS_RETURN_IF_ERROR(expr)            \
  do {                                            \
    ::commlens::Status status_ = (expr);          \
    if (!status_.ok()) return status_;            \
  } while (0)

#define COMMLENS_ASSIGN_OR_RETURN(lhs, expr)                                  \
  auto COMMLENS_CONCAT_(result_, __LINE__) = (expr);                          \
  if (!COMMLENS_CONCAT_(result_, __LINE__).ok())                              \
    return COMMLENS_CONCAT_(result_, __LINE__).status();                      \
  lhs = std::move(COMMLENS_CONCAT_(result_, __LINE__)).value()
