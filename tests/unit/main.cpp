// Catch2's main lives alone in this file so the test files recompile quickly.
#define CATCH_CONFIG_MAIN
// GCC 12 warns of maybe-uninitialized members inside libstdc++'s <regex>,
// which Catch2's runner includes (a known false positive of the optimiser,
// not in our code).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <catch2/catch.hpp>
#pragma GCC diagnostic pop
