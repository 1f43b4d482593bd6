// C support for the SIP fuzz binary (fuzz_support.c): the sequence fuzzer's virtual clock.
#pragma once
#include <stdint.h>

/// Stops CLOCK_MONOTONIC where it is now; from here on only fuzz_clock_advance moves it.
void fuzz_clock_freeze(void);
/// Moves the frozen clock forward by `ns` nanoseconds (never back).
void fuzz_clock_advance(int64_t ns);
