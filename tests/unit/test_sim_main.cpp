// Catch2's main for the simulator tests (tests/unit/sim_tests), apart from the
// core unit tests so the two test lists are kept independently.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
