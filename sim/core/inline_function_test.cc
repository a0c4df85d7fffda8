#include "sim/core/inline_function.h"

#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <string>

namespace specsim {
namespace {

// Counts live copies, to check that moves and destruction neither leak nor double-destroy.
struct Counted {
  static int live;
  int* calls;
  explicit Counted(int* c) : calls(c) { ++live; }
  Counted(Counted&& o) noexcept : calls(o.calls) { ++live; }
  Counted(const Counted& o) : calls(o.calls) { ++live; }
  ~Counted() { --live; }
  void operator()() const { ++*calls; }
};
int Counted::live = 0;

TEST(InlineFunction, SmallCallablesCallMoveAndDestroyOnce) {
  int calls = 0;
  {
    InlineFunction f = Counted(&calls);
    EXPECT_EQ(Counted::live, 1);
    f();
    InlineFunction g = std::move(f);
    EXPECT_FALSE(static_cast<bool>(f));  // NOLINT(bugprone-use-after-move): the moved-from state is the test
    EXPECT_EQ(Counted::live, 1);
    g();
    g = nullptr;
    EXPECT_EQ(Counted::live, 0);
  }
  EXPECT_EQ(calls, 2);
}

// A capture larger than the inline buffer goes to the heap and still works, moves and frees.
TEST(InlineFunction, LargeCallablesLiveOnTheHeap) {
  std::array<int64_t, 16> big{};  // 128 bytes > kInlineBytes
  big[15] = 7;
  int64_t seen = 0;
  int calls = 0;
  {
    Counted c(&calls);
    InlineFunction f = [big, &seen, c] {
      seen = big[15];
      c();
    };
    InlineFunction g;
    g = std::move(f);
    g();
  }
  EXPECT_EQ(seen, 7);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(Counted::live, 0);
}

TEST(InlineFunction, MoveOnlyCaptures) {
  auto p = std::make_unique<std::string>("done");
  std::string out;
  InlineFunction f = [p = std::move(p), &out] { out = *p; };
  InlineFunction g = std::move(f);
  g();
  EXPECT_EQ(out, "done");
}

TEST(InlineFunctionDeathTest, CallingAnEmptyOneIsABug) {
  InlineFunction f;
  EXPECT_DEATH(f(), "empty InlineFunction");
}

}  // namespace
}  // namespace specsim
