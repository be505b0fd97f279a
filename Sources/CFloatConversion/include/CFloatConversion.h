#ifndef TACTUS_CFLOATCONVERSION_H
#define TACTUS_CFLOATCONVERSION_H

// Float-to-integer truncation without Swift's range checks. Swift's Int(Float) tests for
// NaN, infinity and range before converting (nine instructions and two branches on x86-64);
// in a render loop whose values are in range by construction (a table index, a delay-line
// position) that test costs more than the arithmetic around it. The caller guarantees the
// value is finite and within the range of long; the result is then Int(x) exactly.
static inline long tactus_truncate_float(float x) { return (long)x; }

// Four lanes at once, for the built-in synthesizer's voices run four to a SIMD vector. Swift
// imports these vector types as SIMD4<Float> and SIMD4<Int32>; its own conversions between
// the two are generic and not specialised (a call per lane). Each lane converts exactly as the
// scalar forms above do: truncation toward zero, and int to float rounded to nearest, as
// Float(Int32) does.
typedef float tactus_float4 __attribute__((ext_vector_type(4)));
typedef int tactus_int4 __attribute__((ext_vector_type(4)));
static inline tactus_int4 tactus_truncate_float4(tactus_float4 x) { return __builtin_convertvector(x, tactus_int4); }
static inline tactus_float4 tactus_int4_to_float4(tactus_int4 x) { return __builtin_convertvector(x, tactus_float4); }

// Whether any lane has level >= upper or level < lower: one test a sample for the rare event
// of an envelope changing stage. (Swift's any() on a SIMD mask reduces it lane by lane.)
static inline int tactus_any_outside4(tactus_float4 level, tactus_float4 upper, tactus_float4 lower) {
    tactus_int4 crossed = (level >= upper) | (level < lower);
    return (crossed[0] | crossed[1] | crossed[2] | crossed[3]) != 0;
}

// Whether any lane's phase t lies within one step dt of a wrap-around (t < dt or t > 1 - dt),
// where a polyBLEP correction is not zero. Away from both, in all four lanes, the correction
// is 0 and its two divisions are skipped.
static inline int tactus_any_near_edge4(tactus_float4 t, tactus_float4 dt) {
    tactus_int4 near = (t < dt) | (t > 1 - dt);
    return (near[0] | near[1] | near[2] | near[3]) != 0;
}

#endif
