#include <catch2/catch.hpp>

#include <map>

#include "src/core/byte_count.hpp"
#include "src/runtime/config.hpp"

using namespace gencoll;

namespace {
Config parse(const std::map<std::string, std::string>& env) { return parse_config(env); }
}  // namespace

TEST_CASE("defaults: the MPI's own algorithms, blocking waits", "[config]") {
  const Config c = parse({});
  CHECK(c.errors.empty());
  CHECK_FALSE(c[Collective::allreduce].alg.has_value());
  CHECK_FALSE(c[Collective::allgather].alg.has_value());
  CHECK(c.wait == WaitPolicy::block);
}

TEST_CASE("algorithm and radix per collective", "[config]") {
  const Config c = parse({{"GENCOLL_ALLREDUCE_INTRA_ALGORITHM", "recursive_multiplying"},
                          {"GENCOLL_ALLREDUCE_RECURSIVE_MULTIPLYING_KVAL", "4"},
                          {"GENCOLL_ALLGATHER_INTRA_ALGORITHM", "kring"},
                          {"GENCOLL_ALLGATHER_KRING_KVAL", "3"},
                          {"GENCOLL_WAIT_POLICY", "yield"}});
  REQUIRE(c.errors.empty());
  CHECK(c[Collective::allreduce].alg == Algorithm::recursive_multiplying);
  CHECK(c[Collective::allreduce].k == 4);
  CHECK(c[Collective::allgather].alg == Algorithm::kring);
  CHECK(c[Collective::allgather].k == 3);
  CHECK(c.wait == WaitPolicy::yield);
  CHECK(kval_variable(Collective::allreduce, Algorithm::recursive_multiplying) ==
        "GENCOLL_ALLREDUCE_RECURSIVE_MULTIPLYING_KVAL");
}

TEST_CASE("bad settings name the variable and the valid values", "[config]") {
  auto one_error = [](const Config& c) {
    REQUIRE(c.errors.size() == 1);
    return c.errors[0];
  };
  const std::string bad_alg = one_error(parse({{"GENCOLL_ALLREDUCE_INTRA_ALGORITHM", "bogus"}}));
  CHECK_THAT(bad_alg, Catch::Contains("GENCOLL_ALLREDUCE_INTRA_ALGORITHM=bogus") && Catch::Contains("kring") &&
                          Catch::Contains("native"));
  CHECK_THAT(one_error(parse({{"GENCOLL_ALLGATHER_KNOMIAL_KVAL", "1"}})),
             Catch::Contains("GENCOLL_ALLGATHER_KNOMIAL_KVAL=1") && Catch::Contains("k >= 2"));
  CHECK_THAT(one_error(parse({{"GENCOLL_ALLGATHER_KNOMIAL_KVAL", "three"}})), Catch::Contains("=three"));
  // One limit for every binding and file: 2^30.
  CHECK_THAT(one_error(parse({{"GENCOLL_ALLGATHER_KNOMIAL_KVAL", "1073741825"}})),
             Catch::Contains("=1073741825") && Catch::Contains("<= 1073741824"));
  CHECK(parse({{"GENCOLL_ALLGATHER_KNOMIAL_KVAL", "1073741824"}}).errors.empty());
  CHECK_THAT(one_error(parse({{"GENCOLL_ALLGATHER_KNOMIAL_KVAL", "4x"}})), Catch::Contains("=4x"));
  CHECK_THAT(one_error(parse({{"GENCOLL_ALLGATHER_KNOMIAL_KVAL", "-3"}})), Catch::Contains("=-3"));
  CHECK_THAT(one_error(parse({{"GENCOLL_ALLREDUCE_ALGORITHM", "ring"}})),
             Catch::Contains("GENCOLL_ALLREDUCE_ALGORITHM is not a gencoll variable"));
  CHECK_THAT(one_error(parse({{"GENCOLL_ALLREDUCE_RING_KVAL", "4"}})), Catch::Contains("fixed radix"));
  CHECK_THAT(one_error(parse({{"GENCOLL_WAIT_POLICY", "spin"}})), Catch::Contains("block, yield"));
  // The build and test scripts' own variables are inherited by test ranks.
  CHECK(parse({{"GENCOLL_CACHE", "/tmp/c"}, {"GENCOLL_MATRIX_FLAGS", "--quick"}}).errors.empty());
  // The MPICH module's trace directory and the test sweeps' knobs do not stop the library.
  CHECK(parse({{"GENCOLL_TRACE", "/tmp/t"}, {"GENCOLL_TEST_THREADS", "2"}, {"GENCOLL_SUITE_KS", "2 5"}}).errors.empty());
}

TEST_CASE("fingerprints differ exactly when the selections differ", "[config]") {
  const Config a = parse({{"GENCOLL_ALLREDUCE_INTRA_ALGORITHM", "knomial"}});
  const Config b = parse({{"GENCOLL_ALLREDUCE_INTRA_ALGORITHM", "knomial"}, {"GENCOLL_ALLREDUCE_KNOMIAL_KVAL", "3"}});
  const Config c = parse({{"GENCOLL_ALLREDUCE_INTRA_ALGORITHM", "knomial"}, {"GENCOLL_ALLREDUCE_KNOMIAL_KVAL", "2"}});
  CHECK(a.fingerprint() != b.fingerprint());
  CHECK(a.fingerprint() == c.fingerprint());
}

TEST_CASE("GENCOLL_GPU_STAGING and GENCOLL_CUDA_LIBRARY", "[config]") {
  const Config d = parse({});
  CHECK(d.gpu_staging == GpuStaging::auto_detect);
  CHECK(d.cuda_library.empty());
  CHECK(parse({{"GENCOLL_GPU_STAGING", "auto"}}).gpu_staging == GpuStaging::auto_detect);
  CHECK(parse({{"GENCOLL_GPU_STAGING", "always"}}).gpu_staging == GpuStaging::always);
  CHECK(parse({{"GENCOLL_GPU_STAGING", "never"}}).gpu_staging == GpuStaging::never);
  const Config lib = parse({{"GENCOLL_CUDA_LIBRARY", "/opt/gencoll/lib/libgencoll-cuda.so.0"}});
  CHECK(lib.errors.empty());
  CHECK(lib.cuda_library == "/opt/gencoll/lib/libgencoll-cuda.so.0");
  const Config bad = parse({{"GENCOLL_GPU_STAGING", "pinned"}});
  REQUIRE(bad.errors.size() == 1);
  CHECK_THAT(bad.errors[0], Catch::Contains("GENCOLL_GPU_STAGING=pinned") && Catch::Contains("auto, always, never"));
  // Unknown names list the new variables among the known ones.
  const Config typo = parse({{"GENCOLL_GPU_STAGE", "always"}});
  REQUIRE(typo.errors.size() == 1);
  CHECK_THAT(typo.errors[0], Catch::Contains("GENCOLL_GPU_STAGING") && Catch::Contains("GENCOLL_CUDA_LIBRARY"));
}

TEST_CASE("GENCOLL_GPU_SCRATCH_KEEP takes a byte count with an optional binary suffix", "[config]") {
  CHECK(parse({}).gpu_scratch_keep == std::size_t{64} << 20);
  CHECK(parse({{"GENCOLL_GPU_SCRATCH_KEEP", "0"}}).gpu_scratch_keep == 0);
  CHECK(parse({{"GENCOLL_GPU_SCRATCH_KEEP", "4096"}}).gpu_scratch_keep == 4096);
  CHECK(parse({{"GENCOLL_GPU_SCRATCH_KEEP", "3K"}}).gpu_scratch_keep == 3072);
  CHECK(parse({{"GENCOLL_GPU_SCRATCH_KEEP", "256M"}}).gpu_scratch_keep == std::size_t{256} << 20);
  CHECK(parse({{"GENCOLL_GPU_SCRATCH_KEEP", "2g"}}).gpu_scratch_keep == std::size_t{2} << 30);
  CHECK(parse({{"GENCOLL_GPU_SCRATCH_KEEP", "1048576G"}}).gpu_scratch_keep == std::size_t{1} << 50);
  // Above 2^50 bytes, however written; 2^34 G would wrap to 0 in 64 bits.
  CHECK(parse({{"GENCOLL_GPU_SCRATCH_KEEP", "64MiB"}}).gpu_scratch_keep == std::size_t{64} << 20);
  for (const char* bad : {"-1", "64MX", "M", "1.5G", " 64", "1048577G", "17179869184G", "1125899906842625"}) {
    const Config c = parse({{"GENCOLL_GPU_SCRATCH_KEEP", bad}});
    INFO(bad);
    REQUIRE(c.errors.size() == 1);
    CHECK_THAT(c.errors[0], Catch::Contains(std::string("GENCOLL_GPU_SCRATCH_KEEP=") + bad) &&
                                Catch::Contains("256M"));
    CHECK(c.gpu_scratch_keep == std::size_t{64} << 20);
  }
}

TEST_CASE("GENCOLL_COUNT_LIMIT takes an element count from 2 to 2^31 - 1", "[config]") {
  CHECK(parse({}).count_limit == 2147483647u);
  CHECK(parse({{"GENCOLL_COUNT_LIMIT", "3"}}).count_limit == 3u);
  CHECK(parse({{"GENCOLL_COUNT_LIMIT", "2147483647"}}).count_limit == 2147483647u);
  CHECK(parse({{"GENCOLL_COUNT_LIMIT", "2"}}).count_limit == 2u);
  // 1 would never shrink a message's description (runs of 1 element).
  for (const char* bad : {"0", "1", "-1", "2147483648", "1K", "x", " 3"}) {
    const Config c = parse({{"GENCOLL_COUNT_LIMIT", bad}});
    INFO(bad);
    REQUIRE(c.errors.size() == 1);
    CHECK_THAT(c.errors[0], Catch::Contains(std::string("GENCOLL_COUNT_LIMIT=") + bad) &&
                                Catch::Contains("an integer from 2 to 2147483647"));
    CHECK(c.count_limit == 2147483647u);
  }
}

TEST_CASE("one byte-count parser: digits, an optional binary multiple, at most 2^50", "[config]") {
  CHECK(parse_byte_count("0") == 0u);
  CHECK(parse_byte_count("4096") == 4096u);
  CHECK(parse_byte_count("4096B") == 4096u);
  CHECK(parse_byte_count("64k") == 65536u);
  CHECK(parse_byte_count("64KiB") == 65536u);
  CHECK(parse_byte_count("2MB") == 2u << 20);
  CHECK(parse_byte_count("1G") == 1u << 30);
  CHECK(parse_byte_count("1048576G") == kMaxBytes);
  for (const char* bad : {"", "-5", "+5", "5 ", " 5", "5x", "5KB B", "5KiBB", "1.5K", "K", "1048577G", "17179869184G",
                          "18446744073709551611", "99999999999999999999999"})
    CHECK_FALSE(parse_byte_count(bad).has_value());
}
