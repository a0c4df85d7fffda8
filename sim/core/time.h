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
