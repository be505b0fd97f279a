// The conversions are static inline functions in the header; SwiftPM builds a C target only
// when it has a source file.
#include "CFloatConversion.h"
