// A move-only `void()` callable that stores small callables inside itself: the event engine's
// handlers and the fabric's completion callbacks capture a few pointers and indices, and
// std::function would heap-allocate each of them (its inline buffer is 16 bytes in libstdc++).
// Callables up to kInlineBytes (and nothrow-movable) live in the object; larger ones go to the
// heap, so any callable works. Calling an empty InlineFunction is a checked error.
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

#include "sim/core/check.h"

namespace specsim {

class InlineFunction {
 public:
  static constexpr size_t kInlineBytes = 48;

  InlineFunction() = default;
  InlineFunction(std::nullptr_t) {}  // NOLINT(google-explicit-constructor): like std::function

  template <typename F, typename D = std::decay_t<F>,
            typename = std::enable_if_t<!std::is_same_v<D, InlineFunction> && std::is_invocable_r_v<void, D&>>>
  InlineFunction(F&& f) {  // NOLINT(google-explicit-constructor): like std::function
    // NOLINTNEXTLINE(misc-redundant-expression): constant per D, which is the point
    if constexpr (sizeof(D) <= kInlineBytes && alignof(D) <= alignof(std::max_align_t) &&
                  std::is_nothrow_move_constructible_v<D>) {
      new (storage_) D(std::forward<F>(f));
      ops_ = &InlineOps<D>::kOps;
    } else {
      *reinterpret_cast<D**>(storage_) = new D(std::forward<F>(f));
      ops_ = &HeapOps<D>::kOps;
    }
  }

  InlineFunction(InlineFunction&& other) noexcept { MoveFrom(other); }
  InlineFunction& operator=(InlineFunction&& other) noexcept {
    if (this != &other) {
      Reset();
      MoveFrom(other);
    }
    return *this;
  }
  InlineFunction& operator=(std::nullptr_t) {
    Reset();
    return *this;
  }
  InlineFunction(const InlineFunction&) = delete;
  InlineFunction& operator=(const InlineFunction&) = delete;
  ~InlineFunction() { Reset(); }

  explicit operator bool() const { return ops_ != nullptr; }
  void operator()() {
    SPECSIM_CHECK(ops_ != nullptr) << "calling an empty InlineFunction";
    ops_->call(storage_);
  }

 private:
  struct Ops {
    void (*call)(void* storage);
    void (*move)(void* from, void* to);  // move-constructs into `to`, destroys `from`
    void (*destroy)(void* storage);
  };
  template <typename D>
  struct InlineOps {
    static constexpr Ops kOps = {
        [](void* s) { (*static_cast<D*>(s))(); },
        [](void* from, void* to) {
          new (to) D(std::move(*static_cast<D*>(from)));
          static_cast<D*>(from)->~D();
        },
        [](void* s) { static_cast<D*>(s)->~D(); },
    };
  };
  template <typename D>
  struct HeapOps {
    static constexpr Ops kOps = {
        [](void* s) { (**static_cast<D**>(s))(); },
        [](void* from, void* to) { *static_cast<D**>(to) = *static_cast<D**>(from); },
        [](void* s) { delete *static_cast<D**>(s); },
    };
  };

  void MoveFrom(InlineFunction& other) {
    if (other.ops_ == nullptr) return;
    other.ops_->move(other.storage_, storage_);
    ops_ = other.ops_;
    other.ops_ = nullptr;
  }
  void Reset() {
    if (ops_ == nullptr) return;
    ops_->destroy(storage_);
    ops_ = nullptr;
  }

  alignas(std::max_align_t) unsigned char storage_[kInlineBytes];
  const Ops* ops_ = nullptr;
};

}  // namespace specsim
