#ifndef DUALCAM_ALLOCATION_COUNT_H
#define DUALCAM_ALLOCATION_COUNT_H
#include <stdint.h>

// The allocation counter `dualcam bench --allocations` preloads (libDualCamAllocationCount.so).
// Nothing links this target into a program: it replaces malloc and its kin for the whole
// process, so only a process that preloads it counts. The harness finds these with dlsym.

// Both counts back to zero.
void dualcam_allocations_zero(void);
// Counts every allocation (on every thread) while on.
void dualcam_allocations_count(int on);
// The allocations counted since the zero, and those above 16 KiB (the frame-sized ones;
// package-benchmark's malloc interposer draws its small/large line there too).
void dualcam_allocations_read(uint64_t *total, uint64_t *large);

#endif
