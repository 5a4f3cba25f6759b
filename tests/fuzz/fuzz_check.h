#pragma once
// The fuzz drivers' invariant check. A failed check prints the condition and
// its line before aborting, so a CI log (which keeps the output but not the
// crash artifact) says which invariant broke, not only "deadly signal".
#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(condition)                                                                            \
    do {                                                                                                 \
        if (!(condition)) {                                                                              \
            std::fprintf(stderr, "fuzz check failed: %s (%s:%d)\n", #condition, __FILE__, __LINE__);     \
            std::abort();                                                                                \
        }                                                                                                \
    } while (false)
