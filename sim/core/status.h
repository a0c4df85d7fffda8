// Status and StatusOr: errors at input boundaries are values, never exits or exceptions.
//
// A Status is OK or carries a code and a message. Messages for bad input name the file, the field
// path and what is allowed, e.g.
//   configs/hardware/x.textproto: links[3].bandwidth_gbps = -5: must be > 0
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "sim/core/check.h"

namespace specsim {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // bad input: a config, a flag, a trace
  kNotFound,            // a file or a named thing that does not exist
  kFailedPrecondition,  // input is well formed but cannot be used (no route, does not fit)
  kUnimplemented,
  kInternal,
  kResourceExhausted,  // well formed, but the box cannot hold it (no configuration fits in GPU memory)
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

  // Returns a copy whose message is "prefix: message" (for adding the file name or field path).
  Status WithPrefix(const std::string& prefix) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
inline Status InvalidArgumentError(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status NotFoundError(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status FailedPreconditionError(std::string m) { return {StatusCode::kFailedPrecondition, std::move(m)}; }
inline Status UnimplementedError(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
inline Status InternalError(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status ResourceExhaustedError(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }

// Either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const Status& status) : status_(status) {  // NOLINT: implicit by design
    SPECSIM_CHECK(!status.ok()) << "StatusOr built from an OK status without a value";
  }
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  T& value() & {
    SPECSIM_CHECK(ok()) << status_.ToString();
    return *value_;
  }
  const T& value() const& {
    SPECSIM_CHECK(ok()) << status_.ToString();
    return *value_;
  }
  T&& value() && {
    SPECSIM_CHECK(ok()) << status_.ToString();
    return std::move(*value_);
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace specsim

#define SPECSIM_STATUS_CONCAT_INNER(a, b) a##b
#define SPECSIM_STATUS_CONCAT(a, b) SPECSIM_STATUS_CONCAT_INNER(a, b)

// Returns early from the enclosing function when `expr` (a Status) is not OK.
#define RETURN_IF_ERROR(expr)                          \
  do {                                                 \
    ::specsim::Status _specsim_status = (expr);        \
    if (!_specsim_status.ok()) return _specsim_status; \
  } while (0)

// ASSIGN_OR_RETURN(auto x, FunctionReturningStatusOr());
#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(SPECSIM_STATUS_CONCAT(_specsim_statusor_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(tmp).value()
