#include "sim/net/solved_mix_memo.h"

#include <gtest/gtest.h>

#include <vector>

namespace specsim::net {
namespace {

// Classes' active counts as the fabric keeps them, and the key it sums: count x word per class.
struct Mix {
  std::vector<int> active_of;  // per class
  std::vector<int> active_classes;
  uint64_t Key() const {
    uint64_t key = 0;
    for (int c : active_classes) key += static_cast<uint64_t>(active_of[c]) * SolvedMixMemo::KeyWord(c);
    return key;
  }
};

TEST(SolvedMixMemo, AStoredMixIsRecalledWithItsRatesPerClass) {
  SolvedMixMemo memo;
  Mix m{{2, 0, 1}, {2, 0}};
  auto active = [&](int c) { return m.active_of[c]; };
  memo.Store(m.Key(), m.active_classes, active, {0.5, 0.25});
  std::vector<double> rate(3, -1);
  ASSERT_TRUE(memo.Recall(m.Key(), m.active_classes, active, &rate));
  EXPECT_EQ(rate, (std::vector<double>{0.25, -1, 0.5}));  // class 2 first, class 0 second
}

// With every key masked to one value each candidate is checked class by class: another count of
// the same classes, or another set of classes, is not the stored mix.
TEST(SolvedMixMemo, CollidingKeysAreToldApartByTheClassesCounts) {
  SolvedMixMemo memo(/*key_mask=*/0);
  Mix stored{{1, 3}, {0, 1}};
  memo.Store(0, stored.active_classes, [&](int c) { return stored.active_of[c]; }, {1.0, 2.0});
  std::vector<double> rate(2, -1);
  Mix other_count{{1, 2}, {0, 1}};
  EXPECT_FALSE(memo.Recall(
      7, other_count.active_classes, [&](int c) { return other_count.active_of[c]; }, &rate));
  Mix fewer{{1, 0}, {0}};
  EXPECT_FALSE(memo.Recall(
      7, fewer.active_classes, [&](int c) { return fewer.active_of[c]; }, &rate));
  EXPECT_EQ(rate, (std::vector<double>{-1, -1}));
  EXPECT_TRUE(memo.Recall(
      7, stored.active_classes, [&](int c) { return stored.active_of[c]; }, &rate));
  EXPECT_EQ(rate, (std::vector<double>{1.0, 2.0}));
}

// Bounded: the memo starts over at kMaxMixes mixes, and a mix of more than kMaxMixClasses classes
// is never stored.
TEST(SolvedMixMemo, StartsOverAtItsBoundAndSkipsHugeMixes) {
  SolvedMixMemo memo;
  auto one = [](int) { return 1; };
  for (size_t k = 0; k < SolvedMixMemo::kMaxMixes; ++k) memo.Store(k, {static_cast<int>(k)}, one, {1.0});
  EXPECT_EQ(memo.mixes(), SolvedMixMemo::kMaxMixes);
  memo.Store(1u << 30, {0}, one, {1.0});
  EXPECT_EQ(memo.mixes(), 1u);
  std::vector<int> huge(SolvedMixMemo::kMaxMixClasses + 1);
  for (size_t c = 0; c < huge.size(); ++c) huge[c] = static_cast<int>(c);
  memo.Store(5, huge, one, std::vector<double>(huge.size(), 1.0));
  EXPECT_EQ(memo.mixes(), 1u);
}

}  // namespace
}  // namespace specsim::net
