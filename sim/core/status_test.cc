#include "sim/core/status.h"

#include <gtest/gtest.h>

namespace specsim {
namespace {

StatusOr<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgumentError("x = " + std::to_string(x) + ": must be even");
  return x / 2;
}

Status Quarter(int x, int* out) {
  ASSIGN_OR_RETURN(int h, Half(x));
  ASSIGN_OR_RETURN(*out, Half(h));
  return OkStatus();
}

TEST(Status, PropagatesFirstError) {
  int out = 0;
  EXPECT_TRUE(Quarter(8, &out).ok());
  EXPECT_EQ(out, 2);
  Status s = Quarter(6, &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "x = 3: must be even");
}

TEST(Status, WithPrefixNamesTheContext) {
  Status s = InvalidArgumentError("must be > 0").WithPrefix("box.textproto: links[2].bandwidth_gbps");
  EXPECT_EQ(s.ToString(), "INVALID_ARGUMENT: box.textproto: links[2].bandwidth_gbps: must be > 0");
  EXPECT_TRUE(OkStatus().WithPrefix("x").ok());
}

}  // namespace
}  // namespace specsim
