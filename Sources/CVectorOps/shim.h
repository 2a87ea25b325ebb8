// The vector instructions the compositor needs that Swift's SIMD types cannot spell: bytes
// picked by a vector of indices (SSSE3's pshufb, NEON's tbl: a lane loop over variable
// indices compiles to 16 extracts), a rounded high multiply of 16-bit lanes (SSSE3's
// pmulhrsw, NEON's sqrdmulh: written as widening arithmetic it needs the standard library's
// width conversions, which stay calls), and the colour conversions' sums of products and
// saturating packs and adds. An LLVM intrinsic declared from Swift lacks the
// attributes instruction selection needs, so each is one inline function here; the kernels
// around them stay Swift.
#ifndef DUALCAM_VECTOR_OPS_H
#define DUALCAM_VECTOR_OPS_H

#if defined(__SSSE3__)
#include <tmmintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

// Imported into Swift as SIMD16<UInt8>, SIMD16<Int8>, SIMD8<Int16> and SIMD4<Int32>.
typedef unsigned char dc_bytes16 __attribute__((ext_vector_type(16)));
typedef signed char dc_signed_bytes16 __attribute__((ext_vector_type(16)));
typedef short dc_words8 __attribute__((ext_vector_type(8)));
typedef int dc_ints4 __attribute__((ext_vector_type(4)));

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

// The colour conversions' instructions (pmaddwd, the saturating packs, paddsb): as Swift
// lane loops each became several instructions or a call. A sum of two products in 32-bit
// lanes is what makes a conversion in 16-bit lanes exact without splitting each
// coefficient in two.

// result[i] = a[2i] * b[2i] + a[2i+1] * b[2i+1], in 32 bits.
static inline __attribute__((always_inline)) dc_ints4 dc_multiply_add_pairs(dc_words8 a, dc_words8 b) {
#if defined(__SSSE3__)
    return (dc_ints4)_mm_madd_epi16((__m128i)a, (__m128i)b);
#elif defined(__aarch64__)
    int32x4_t low = vmull_s16(vget_low_s16((int16x8_t)a), vget_low_s16((int16x8_t)b));
    int32x4_t high = vmull_high_s16((int16x8_t)a, (int16x8_t)b);
    return (dc_ints4)vpaddq_s32(low, high);
#else
    dc_ints4 r;
    for (int i = 0; i < 4; i++) r[i] = (int)a[2 * i] * b[2 * i] + (int)a[2 * i + 1] * b[2 * i + 1];
    return r;
#endif
}

static inline __attribute__((always_inline)) int dc_clamp(int x, int low, int high) {
    return x < low ? low : x > high ? high : x;
}

// a's lanes then b's, each clamped to -32768...32767.
static inline __attribute__((always_inline)) dc_words8 dc_pack_words_saturated(dc_ints4 a, dc_ints4 b) {
#if defined(__SSSE3__)
    return (dc_words8)_mm_packs_epi32((__m128i)a, (__m128i)b);
#elif defined(__aarch64__)
    return (dc_words8)vcombine_s16(vqmovn_s32((int32x4_t)a), vqmovn_s32((int32x4_t)b));
#else
    dc_words8 r;
    for (int i = 0; i < 4; i++) {
        r[i] = (short)dc_clamp(a[i], -32768, 32767);
        r[i + 4] = (short)dc_clamp(b[i], -32768, 32767);
    }
    return r;
#endif
}

// a's lanes then b's, each clamped to -128...127.
static inline __attribute__((always_inline)) dc_signed_bytes16 dc_pack_signed_bytes_saturated(dc_words8 a, dc_words8 b) {
#if defined(__SSSE3__)
    return (dc_signed_bytes16)_mm_packs_epi16((__m128i)a, (__m128i)b);
#elif defined(__aarch64__)
    return (dc_signed_bytes16)vcombine_s8(vqmovn_s16((int16x8_t)a), vqmovn_s16((int16x8_t)b));
#else
    dc_signed_bytes16 r;
    for (int i = 0; i < 8; i++) {
        r[i] = (signed char)dc_clamp(a[i], -128, 127);
        r[i + 8] = (signed char)dc_clamp(b[i], -128, 127);
    }
    return r;
#endif
}

// a's lanes then b's, each clamped to 0...255.
static inline __attribute__((always_inline)) dc_bytes16 dc_pack_bytes_saturated(dc_words8 a, dc_words8 b) {
#if defined(__SSSE3__)
    return (dc_bytes16)_mm_packus_epi16((__m128i)a, (__m128i)b);
#elif defined(__aarch64__)
    return (dc_bytes16)vcombine_u8(vqmovun_s16((int16x8_t)a), vqmovun_s16((int16x8_t)b));
#else
    dc_bytes16 r;
    for (int i = 0; i < 8; i++) {
        r[i] = (unsigned char)dc_clamp(a[i], 0, 255);
        r[i + 8] = (unsigned char)dc_clamp(b[i], 0, 255);
    }
    return r;
#endif
}

// a[i] + b[i], clamped to -128...127.
static inline __attribute__((always_inline)) dc_signed_bytes16 dc_add_bytes_saturated(dc_signed_bytes16 a, dc_signed_bytes16 b) {
#if defined(__SSSE3__)
    return (dc_signed_bytes16)_mm_adds_epi8((__m128i)a, (__m128i)b);
#elif defined(__aarch64__)
    return (dc_signed_bytes16)vqaddq_s8((int8x16_t)a, (int8x16_t)b);
#else
    dc_signed_bytes16 r;
    for (int i = 0; i < 16; i++) r[i] = (signed char)dc_clamp(a[i] + b[i], -128, 127);
    return r;
#endif
}

#endif
