// The vector instructions the compositor needs that Swift's SIMD types cannot spell: bytes
// picked by a vector of indices (SSSE3's pshufb, NEON's tbl: a lane loop over variable
// indices compiles to 16 extracts) and a rounded high multiply of 16-bit lanes (SSSE3's
// pmulhrsw, NEON's sqrdmulh: written as widening arithmetic it needs the standard library's
// width conversions, which stay calls). An LLVM intrinsic declared from Swift lacks the
// attributes instruction selection needs, so each is one inline function here; the kernels
// around them stay Swift.
#ifndef DUALCAM_VECTOR_OPS_H
#define DUALCAM_VECTOR_OPS_H

#if defined(__SSSE3__)
#include <tmmintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

// Imported into Swift as SIMD16<UInt8> and SIMD8<Int16>.
typedef unsigned char dc_bytes16 __attribute__((ext_vector_type(16)));
typedef short dc_words8 __attribute__((ext_vector_type(8)));

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

// result[i] = (a[i] * b[i] + 0x4000) >> 15, for products callers keep inside 16 bits after
// the shift (the instructions saturate only -32768 * -32768).
static inline __attribute__((always_inline)) dc_words8 dc_multiply_high_rounded(dc_words8 a, dc_words8 b) {
#if defined(__SSSE3__)
    return (dc_words8)_mm_mulhrs_epi16((__m128i)a, (__m128i)b);
#elif defined(__aarch64__)
    return (dc_words8)vqrdmulhq_s16((int16x8_t)a, (int16x8_t)b);
#else
    dc_words8 r;
    for (int i = 0; i < 8; i++) r[i] = (short)(((int)a[i] * (int)b[i] + 0x4000) >> 15);
    return r;
#endif
}

#endif
