/* Kernels compiled for several instruction sets: on x86-64 with gcc or
 * clang on Linux, a function marked HLOI_CLONES is compiled for AVX-512,
 * AVX2 and the baseline, and the machine picks one when the program is
 * loaded (an ifunc). The loops are the same C, so the results are the same
 * bits: every op is IEEE-rounded whatever the vector width, and the build
 * keeps -ffp-contract=off, so no clone contracts a multiply-add.
 *
 * Not under ThreadSanitizer: the ifunc resolvers run while the program is
 * relocated, before the sanitizer's runtime exists, and their
 * instrumentation crashes there. Not in the fuzzing build either
 * (-DHLOI_NO_CLONES, tests/fuzz/CMakeLists.txt). */
#ifndef HLOI_EVAL_CLONES_H
#define HLOI_EVAL_CLONES_H

#if !defined(HLOI_NO_CLONES)
#if defined(__SANITIZE_THREAD__)
#define HLOI_NO_CLONES 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HLOI_NO_CLONES 1
#endif
#endif
#endif

#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__) && !defined(HLOI_NO_CLONES)
#define HLOI_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define HLOI_CLONES
#endif

#endif
