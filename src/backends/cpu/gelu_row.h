// The erf GELU over a row in place (geluErfTerm, gelu_term.h), compiled for the best instruction
// set the CPU has: baseline x86-64 (SSE2) runs the term about 4x slower than AVX2 with FMA, whose
// blends and fused multiply-adds it lacks. Picked once, at first use (isa_variants.h), as sgemm.cpp
// picks its micro-kernel; FMA rounds differently, so results may differ between machines by an
// ulp or two.
#pragma once

#include <cstdint>

namespace kiln::cpu {

void geluErfRow(float* row, int64_t n);

}  // namespace kiln::cpu
