// Swift's SIMD types cannot pick bytes by a vector of indices (SSSE3's pshufb, NEON's tbl):
// a lane loop over variable indices compiles to 16 extracts, and an LLVM intrinsic declared
// from Swift lacks the attributes instruction selection needs. The compositor's enlarging
// kernel needs exactly that one instruction; everything around it stays Swift.
#ifndef DUALCAM_BYTE_SHUFFLE_H
#define DUALCAM_BYTE_SHUFFLE_H

#if defined(__SSSE3__)
#include <tmmintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

// Imported into Swift as SIMD16<UInt8>.
typedef unsigned char dc_bytes16 __attribute__((ext_vector_type(16)));

// result[i] = table[indices[i]] for indices in 0..15 (callers keep them there: the
// instructions differ only outside that range).
static inline __attribute__((always_inline)) dc_bytes16 dc_shuffle_bytes(dc_bytes16 table, dc_bytes16 indices) {
#if defined(__SSSE3__)
    return (dc_bytes16)_mm_shuffle_epi8((__m128i)table, (__m128i)indices);
#elif defined(__aarch64__)
    return (dc_bytes16)vqtbl1q_u8((uint8x16_t)table, (uint8x16_t)indices);
#else
    dc_bytes16 r;
    for (int i = 0; i < 16; i++) r[i] = table[indices[i] & 15];
    return r;
#endif
}

#endif
