#include "sim/net/solved_mix_memo.h"

#include "sim/core/splitmix.h"

namespace specsim::net {

uint64_t SolvedMixMemo::KeyWord(int flow_class) {
  uint64_t state = static_cast<uint64_t>(flow_class);
  return SplitMix64(state);
}

void SolvedMixMemo::MakeRoom(size_t classes) {
  if (mixes_.size() < kMaxMixes && rates_.size() + classes <= kMaxClassRates) return;
  first_mix_.clear();
  mixes_.clear();
  class_counts_.clear();
  rates_.clear();
}

int SolvedMixMemo::Insert(uint64_t key, size_t first, int size) {
  const int index = static_cast<int>(mixes_.size());
  Mix mix{.first = first, .size = size, .next = -1};
  auto [slot, inserted] = first_mix_.try_emplace(key, index);
  if (!inserted) {
    mix.next = slot->second;
    slot->second = index;
  }
  mixes_.push_back(mix);
  return index;
}

}  // namespace specsim::net
