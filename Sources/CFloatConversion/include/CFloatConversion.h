#ifndef TACTUS_CFLOATCONVERSION_H
#define TACTUS_CFLOATCONVERSION_H

// Float-to-integer truncation without Swift's range checks. Swift's Int(Float) tests for
// NaN, infinity and range before converting (nine instructions and two branches on x86-64);
// in a render loop whose values are in range by construction (a table index, a delay-line
// position) that test costs more than the arithmetic around it. The caller guarantees the
// value is finite and within the range of long; the result is then Int(x) exactly.
static inline long tactus_truncate_float(float x) { return (long)x; }

#endif
