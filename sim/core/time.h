// Simulated time: an integer count of picoseconds. int64 covers about 106 days, far beyond any
// simulated run, and integer time makes every run bit-for-bit deterministic.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace specsim {

using SimTime = int64_t;  // picoseconds

inline constexpr SimTime kPicosPerNano = 1000;
inline constexpr SimTime kPicosPerMicro = 1000 * 1000;
inline constexpr SimTime kPicosPerMilli = 1000 * 1000 * 1000;
inline constexpr SimTime kSimTimeMax = std::numeric_limits<SimTime>::max();

// The longest duration a conversion yields, 2^60 ps (about 13 days): durations beyond it (or NaN)
// saturate instead of overflowing the cast, and a few saturated durations still add up within
// int64. Inputs are range-checked where they enter (configs, calibrations, traces, flags); this
// keeps what slips through defined.
inline constexpr SimTime kMaxDurationPs = SimTime{1} << 60;
inline SimTime SaturatedPicos(double ps) {
  if (!(ps < static_cast<double>(kMaxDurationPs))) return kMaxDurationPs;  // also NaN
  if (ps < -static_cast<double>(kMaxDurationPs)) return -kMaxDurationPs;
  return static_cast<SimTime>(ps);
}
// The clock never passes kClockHorizonPs, 2^61 ps (about 26 days): an instant computed past it
// (a transfer at a rate so small that it would end after it, a delay that saturated) is clamped to
// it, so the event queue's time stays ordered and int64 never overflows (the horizon plus any
// saturated duration is below 2^63). A run whose result reaches kMaxDurationPs (a single op, or
// the run) has saturated: its callers report an error instead of a figure.
inline constexpr SimTime kClockHorizonPs = SimTime{1} << 61;
// `now` + `delay` (delay >= 0), clamped to the horizon. REQUIRES: 0 <= now <= kClockHorizonPs.
inline SimTime ClampedAdd(SimTime now, SimTime delay) {
  return delay >= kClockHorizonPs - now ? kClockHorizonPs : now + delay;
}
// The longest single op (a kernel, a collective, a host cost, a copy) a decode loop simulates,
// 2^40 ps (1.1 s): a decode op past it comes from an input out of any plausible range, and with
// every op below it a run of up to 2^20 ops per cycle keeps its clocks far below the horizon.
inline constexpr SimTime kMaxOpDurationPs = SimTime{1} << 40;

// Rounds up so that a positive duration never becomes zero: time always advances.
inline SimTime PicosFromNanos(double ns) { return SaturatedPicos(std::ceil(ns * 1e3)); }
inline SimTime PicosFromMicros(double us) { return SaturatedPicos(std::ceil(us * 1e6)); }
inline double NanosFromPicos(SimTime ps) { return static_cast<double>(ps) * 1e-3; }
inline double MicrosFromPicos(SimTime ps) { return static_cast<double>(ps) * 1e-6; }
inline double MillisFromPicos(SimTime ps) { return static_cast<double>(ps) * 1e-9; }
inline double SecondsFromPicos(SimTime ps) { return static_cast<double>(ps) * 1e-12; }

// GB/s (1e9 bytes per second) is exactly 1e-3 bytes per picosecond.
inline constexpr double BytesPerPicoFromGbps(double gbps) { return gbps * 1e-3; }
inline constexpr double GbpsFromBytesPerPico(double bytes_per_ps) { return bytes_per_ps * 1e3; }

}  // namespace specsim
