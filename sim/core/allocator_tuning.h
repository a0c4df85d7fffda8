// Process-wide allocator settings for the command line and the benchmarks.
//
// glibc's allocator returns memory to the kernel when the top of the heap is free past 128 KiB
// and serves blocks past 128 KiB (a pass's or a program's step list, a large schedule) from fresh
// mmaps; a search that builds and drops such lists per configuration then spends a third of its
// time in page faults (perf on `advise --exhaustive`: 17% in the kernel's fault path; 3.65 s ->
// 2.25 s on 2 cores with these settings). KeepFreedMemoryForReuse keeps freed memory instead:
// blocks up to 32 MiB from the heap, trimmed only past 256 MiB free. Results are unchanged
// (golden-output test); only where the bytes come from.
#pragma once

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace specsim {

inline void KeepFreedMemoryForReuse() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  mallopt(M_TOP_PAD, 16 << 20);
#endif
}

}  // namespace specsim
