// A small Status / StatusOr for specsim-validate (no absl on the GPU machine).
//
// Errors are values: every CUDA, cuBLAS and NCCL call goes through a check macro that turns its
// error code into a Status naming the call, the code's text and file:line (as NCCL's checks.h does).
// Library code never exits; main() prints the message and picks the exit code.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace specsim::validate {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kUnavailable,
  kOutOfMemory,
  kDeadlineExceeded,
  kInternal,
  kDataLoss
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;
  // Prefixes context: "while X: <message>".
  Status Annotate(const std::string& context) const {
    if (ok()) return *this;
    return Status(code_, context + ": " + message_);
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return Status(StatusCode::kInvalidArgument, std::move(m)); }
inline Status Unavailable(std::string m) { return Status(StatusCode::kUnavailable, std::move(m)); }
inline Status Internal(std::string m) { return Status(StatusCode::kInternal, std::move(m)); }
inline Status OutOfMemory(std::string m) { return Status(StatusCode::kOutOfMemory, std::move(m)); }
inline Status DeadlineExceeded(std::string m) { return Status(StatusCode::kDeadlineExceeded, std::move(m)); }
inline Status DataLoss(std::string m) { return Status(StatusCode::kDataLoss, std::move(m)); }

const char* StatusCodeName(StatusCode code);

inline std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

inline const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case StatusCode::kNotFound: return "NOT_FOUND";
    case StatusCode::kUnavailable: return "UNAVAILABLE";
    case StatusCode::kOutOfMemory: return "OUT_OF_MEMORY";
    case StatusCode::kDeadlineExceeded: return "DEADLINE_EXCEEDED";
    case StatusCode::kInternal: return "INTERNAL";
    case StatusCode::kDataLoss: return "DATA_LOSS";
  }
  return "UNKNOWN";
}

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(Status status) : status_(std::move(status)) {}  // NOLINT: implicit by design
  StatusOr(T value) : value_(std::move(value)) {}          // NOLINT
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace specsim::validate

#define SPECSIM_CONCAT_INNER(a, b) a##b
#define SPECSIM_CONCAT(a, b) SPECSIM_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)                 \
  do {                                        \
    ::specsim::validate::Status _st = (expr); \
    if (!_st.ok()) return _st;                \
  } while (0)

#define ASSIGN_OR_RETURN(lhs, expr)                                                         \
  auto SPECSIM_CONCAT(_so_, __LINE__) = (expr);                                             \
  if (!SPECSIM_CONCAT(_so_, __LINE__).ok()) return SPECSIM_CONCAT(_so_, __LINE__).status(); \
  lhs = std::move(SPECSIM_CONCAT(_so_, __LINE__)).value()
