// Status and Result<T>: the one way errors travel inside gpuu.
// Codes mirror the public gpuu_status values; the message says what and where.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <variant>

namespace gpuu {

// A numbered enum like tosa_grammar.h's: the values are part of the ABI.
enum class StatusCode : int32_t {
  kOk = 0,
  kInvalidArgument = 1,
  kNotFound = 2,
  kAlreadyExists = 3,
  kUnsupported = 4,
  kInvalidFormat = 5,
  kIo = 6,
  kOutOfMemory = 7,
  kVulkan = 8,
  kDeviceLost = 9,
  kFailedPrecondition = 10,
  kInternal = 11,
};

const char* status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "not found: no shared context 'tok:3'" style, for logs.
  std::string to_string() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Concatenates anything streamable: err(StatusCode::kNotFound, "no key '", k, "'").
template <typename... Parts>
std::string str_cat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

template <typename... Parts>
Status err(StatusCode code, const Parts&... parts) {
  return Status(code, str_cat(parts...));
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(v_);
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

}  // namespace gpuu

// Early return of a failed Status.
#define GPUU_RETURN_IF_ERROR(expr)          \
  do {                                      \
    ::gpuu::Status gpuu_status_ = (expr);   \
    if (!gpuu_status_.ok()) return gpuu_status_; \
  } while (0)

#define GPUU_CONCAT_INNER_(a, b) a##b
#define GPUU_CONCAT_(a, b) GPUU_CONCAT_INNER_(a, b)
// GPUU_ASSIGN_OR_RETURN(auto x, make_x()); returns the Status when make_x() failed.
#define GPUU_ASSIGN_OR_RETURN(lhs, expr) \
  GPUU_ASSIGN_OR_RETURN_IMPL_(GPUU_CONCAT_(gpuu_result_, __LINE__), lhs, expr)
#define GPUU_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()
