// A progress line on a terminal stream (stderr), redrawn in place ("\r") at most once per
// `min_interval_s` (a tenth of a second) and once more by Finish, which ends the line. Thread-safe: workers call Advance as they
// finish items. The text of a redraw is format(items done, seconds since construction).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <ostream>
#include <string>
#include <utility>

namespace specsim {

class ProgressLine {
 public:
  using Format = std::function<std::string(size_t done, double seconds)>;

  // `out` null: counts, prints nothing.
  ProgressLine(std::ostream* out, Format format, double min_interval_s = 0.1)
      : out_(out),
        format_(std::move(format)),
        min_interval_s_(min_interval_s),
        start_(std::chrono::steady_clock::now()) {}

  void Advance(size_t items = 1) {
    std::lock_guard<std::mutex> lock(mu_);
    done_ += items;
    Draw(false);
  }
  // The final redraw and a newline (once; nothing when nothing was counted).
  void Finish() {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_ || done_ == 0) return;
    finished_ = true;
    Draw(true);
  }
  size_t done() const {
    std::lock_guard<std::mutex> lock(mu_);
    return done_;
  }

 private:
  void Draw(bool final) {  // REQUIRES: mu_ held
    if (out_ == nullptr) return;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (!final && last_draw_s_ >= 0 && seconds - last_draw_s_ < min_interval_s_) return;
    last_draw_s_ = seconds;
    *out_ << "\r" << format_(done_, seconds) << (final ? "\n" : "") << std::flush;
  }

  std::ostream* out_;
  Format format_;
  double min_interval_s_;
  std::chrono::steady_clock::time_point start_;
  mutable std::mutex mu_;
  size_t done_ = 0;
  double last_draw_s_ = -1;
  bool finished_ = false;
};

}  // namespace specsim
