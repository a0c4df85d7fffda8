// The solved-mix memo: max-min rates of flow mixes already solved, so that a mix met again is
// not solved again.
//
// A mix is the set of (flow class, active flows) of the fabric's active classes, and a solve is a
// pure function of it (capacities are the fabric's, CPU forwarding collapse follows from the
// counts, and the solver's rates do not depend on the order of the classes), so a mix met again
// takes the rates it was solved to. Collectives repeat their mixes: a ring's steps, the same
// schedule at another size, a sweep's repeats.
//
// The key of a mix is the sum over its classes of (active flows x the class's KeyWord), mod 2^64:
// the fabric adds or subtracts one word as a flow begins or ends, with no sort or pass over the
// classes to find a candidate. A candidate is checked class by class against the classes' counts,
// so a hit is the same mix whatever the key (tests mask the key to make every mix collide).
// Large mixes pay most: a 256-rank one-shot's 65k-class mixes cost a check of 65k counts each
// where a solve costs ~150 instructions per class.
//
// Bounded: past kMaxMixes mixes or kMaxClassRates stored rates (16 MB) the memo starts over;
// mixes of more than kMaxMixClasses classes are solved every time, never stored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace specsim::net {

class SolvedMixMemo {
 public:
  static constexpr size_t kMaxMixes = 4096;
  static constexpr size_t kMaxClassRates = size_t{1} << 20;
  static constexpr size_t kMaxMixClasses = size_t{1} << 17;

  // A class's word in mix keys: one SplitMix64 step from its index, so that the keys of different
  // mixes collide no more often than random 64-bit words.
  static uint64_t KeyWord(int flow_class);

  // `key_mask` keeps only these bits of a key (~0 in use; tests give 0 so that every mix shares
  // one key and telling mixes apart rests on the check of their classes alone).
  explicit SolvedMixMemo(uint64_t key_mask = ~uint64_t{0}) : key_mask_(key_mask) {}

  // The active mix's rates, if stored: writes class_rate[c] for each of its classes and returns
  // true. `active_classes` lists the active classes (distinct), `active_of(c)` gives class c's
  // active flows.
  template <typename ActiveOf>
  bool Recall(uint64_t key, const std::vector<int>& active_classes, ActiveOf active_of,
              std::vector<double>* class_rate) const;

  // Stores the active mix's rates (rates[k] of active_classes[k]), unless it is too large.
  template <typename ActiveOf>
  void Store(uint64_t key, const std::vector<int>& active_classes, ActiveOf active_of,
             const std::vector<double>& rates);

  size_t mixes() const { return mixes_.size(); }

 private:
  struct Mix {
    size_t first = 0;  // its classes and rates: class_counts_, rates_ [first, first + size)
    int size = 0;
    int next = -1;  // the next mix with the same key, or -1
  };
  // Makes room for a mix of `classes` classes: starts over when either bound would be passed.
  void MakeRoom(size_t classes);
  int Insert(uint64_t key, size_t first, int size);

  uint64_t key_mask_;
  std::unordered_map<uint64_t, int> first_mix_;  // key -> the latest mix stored with it
  std::vector<Mix> mixes_;
  std::vector<int64_t> class_counts_;  // class << 32 | active flows
  std::vector<double> rates_;
};

template <typename ActiveOf>
bool SolvedMixMemo::Recall(uint64_t key, const std::vector<int>& active_classes, ActiveOf active_of,
                           std::vector<double>* class_rate) const {
  auto first = first_mix_.find(key & key_mask_);
  for (int m = first == first_mix_.end() ? -1 : first->second; m >= 0; m = mixes_[m].next) {
    const Mix& mix = mixes_[m];
    // The stored classes are distinct: if each is active with its count and there are as many
    // active classes, the active ones are these.
    if (static_cast<size_t>(mix.size) != active_classes.size()) continue;
    const int64_t* counts = class_counts_.data() + mix.first;
    bool same = true;
    for (int k = 0; k < mix.size && same; ++k)
      same = active_of(static_cast<int>(counts[k] >> 32)) == static_cast<int>(counts[k] & 0xffffffff);
    if (!same) continue;
    for (int k = 0; k < mix.size; ++k) (*class_rate)[counts[k] >> 32] = rates_[mix.first + k];
    return true;
  }
  return false;
}

template <typename ActiveOf>
void SolvedMixMemo::Store(uint64_t key, const std::vector<int>& active_classes, ActiveOf active_of,
                          const std::vector<double>& rates) {
  if (active_classes.size() > kMaxMixClasses) return;
  MakeRoom(active_classes.size());
  const size_t first = rates_.size();
  for (int c : active_classes) class_counts_.push_back(int64_t{c} << 32 | active_of(c));
  rates_.insert(rates_.end(), rates.begin(), rates.begin() + static_cast<std::ptrdiff_t>(active_classes.size()));
  Insert(key & key_mask_, first, static_cast<int>(active_classes.size()));
}

}  // namespace specsim::net
