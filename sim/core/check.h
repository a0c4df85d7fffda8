// Always-on invariant checks. A failed CHECK is a bug in specsim, never bad user input (input
// errors are Status values): it prints the condition and location and aborts.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace specsim::internal {

class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition) {
    stream_ << file << ":" << line << ": CHECK failed: " << condition << " ";
  }
  [[noreturn]] ~CheckFailure() {
    std::fprintf(stderr, "%s\n", stream_.str().c_str());
    std::fflush(stderr);
    std::abort();
  }
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};

}  // namespace specsim::internal

// Usage: SPECSIM_CHECK(x > 0) << "x=" << x;
#define SPECSIM_CHECK(condition) \
  if (condition) {               \
  } else /* NOLINT */            \
    ::specsim::internal::CheckFailure(__FILE__, __LINE__, #condition).stream()

#define SPECSIM_CHECK_OP(a, op, b) SPECSIM_CHECK((a)op(b)) << "(" << (a) << " vs " << (b) << ") "
#define SPECSIM_CHECK_EQ(a, b) SPECSIM_CHECK_OP(a, ==, b)
#define SPECSIM_CHECK_NE(a, b) SPECSIM_CHECK_OP(a, !=, b)
#define SPECSIM_CHECK_LT(a, b) SPECSIM_CHECK_OP(a, <, b)
#define SPECSIM_CHECK_LE(a, b) SPECSIM_CHECK_OP(a, <=, b)
#define SPECSIM_CHECK_GT(a, b) SPECSIM_CHECK_OP(a, >, b)
#define SPECSIM_CHECK_GE(a, b) SPECSIM_CHECK_OP(a, >=, b)
