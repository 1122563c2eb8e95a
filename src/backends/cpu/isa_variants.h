// What the CPU's hot loops (sgemm's micro-kernel, the GELU epilogue) are compiled with, in one
// place. KILN_CPU_O3: -O3 whatever the build type (GCC's -O2 cost model leaves such loops
// scalar). KILN_CPU_X86_VARIANTS: GCC on x86-64, where a loop is also compiled for AVX2 (and
// AVX-512) with __attribute__((target(...))) and one version is picked once, at first use, from
// __builtin_cpu_supports; the source stays plain C++. Explicit dispatch rather than
// target_clones: an ifunc resolver runs before the sanitizer runtimes start and crashes TSan
// builds. Versions with FMA round differently from the baseline, so results may differ between
// machines (never between calls on one).
#pragma once

#if defined(__GNUC__) && !defined(__clang__)
#define KILN_CPU_O3 __attribute__((optimize("O3")))
#else
#define KILN_CPU_O3
#endif
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define KILN_CPU_X86_VARIANTS 1
#endif
