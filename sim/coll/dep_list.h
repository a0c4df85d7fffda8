// An op's dependency list (ScheduleOp::deps): the indices of the ops that must complete first.
//
// Almost every op of a collective schedule waits for one to three others (its input's arrival, the
// connection's previous transfer, a slot freed); building a ring or tree schedule made one heap
// allocation per op for them. A DepList keeps up to kInline indices inside the op and moves to the
// heap only beyond that (a barrier's join op, a decode step's rendezvous). It behaves as a
// contiguous sequence of int32_t: iteration, push_back, indexing, erasing a tail, comparison with
// another list or a std::vector.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "sim/core/check.h"

namespace specsim::coll {

class DepList {
 public:
  static constexpr int kInline = 4;
  using value_type = int32_t;
  using iterator = int32_t*;
  using const_iterator = const int32_t*;

  DepList() = default;
  DepList(std::initializer_list<int32_t> deps) { Assign(deps.begin(), deps.end()); }
  // Implicit: builders collect dependencies in a std::vector and hand it over.
  DepList(const std::vector<int32_t>& deps) { Assign(deps.data(), deps.data() + deps.size()); }  // NOLINT

  size_t size() const { return static_cast<size_t>(size_); }
  bool empty() const { return size_ == 0; }
  int32_t* data() { return size_ <= kInline ? inline_ : heap_.data(); }
  const int32_t* data() const { return size_ <= kInline ? inline_ : heap_.data(); }
  iterator begin() { return data(); }
  iterator end() { return data() + size_; }
  const_iterator begin() const { return data(); }
  const_iterator end() const { return data() + size_; }
  int32_t operator[](size_t i) const { return data()[i]; }
  int32_t& operator[](size_t i) { return data()[i]; }

  void push_back(int32_t dep) {
    if (size_ < kInline) {
      inline_[size_++] = dep;
      return;
    }
    if (size_ == kInline) heap_.assign(inline_, inline_ + kInline);  // spill once
    heap_.push_back(dep);
    ++size_;
  }
  void clear() {
    size_ = 0;
    heap_.clear();
  }
  // Removes [first, end()); `first` must point into this list (the erase of erase-remove/unique).
  void erase(iterator first, iterator last) {
    SPECSIM_CHECK(last == end() && first >= begin() && first <= last) << "DepList erases only a tail";
    Truncate(static_cast<int>(first - begin()));
  }

  friend bool operator==(const DepList& a, const DepList& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator==(const DepList& a, const std::vector<int32_t>& b) {
    return a.size_ == static_cast<int>(b.size()) && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  void Assign(const int32_t* first, const int32_t* last) {
    clear();
    for (; first != last; ++first) push_back(*first);
  }
  void Truncate(int n) {
    if (size_ > kInline && n <= kInline) {
      std::copy(heap_.begin(), heap_.begin() + n, inline_);
      heap_.clear();
    } else if (n > kInline) {
      heap_.resize(n);
    }
    size_ = n;
  }

  int size_ = 0;
  int32_t inline_[kInline] = {};
  std::vector<int32_t> heap_;  // every dependency once size_ > kInline, else empty
};

}  // namespace specsim::coll
