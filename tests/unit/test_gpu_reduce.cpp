// The CPU reference of the device reduction kernel (gpu/reduce.hpp) against
// the host path it must reproduce bit for bit: k - 1 MPI_Reduce_local calls,
// the running partial always the left operand (coll/recursive_multiplying.cpp),
// each written here as MPICH and Open MPI write their loops, on the compiler's
// own types (_Float16, std::complex) rather than on gpu/reduce_ops.hpp's.
#include <catch2/catch.hpp>

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "gpu/reduce.hpp"

using namespace gencoll::gpu;

namespace {

// bfloat16 has no arithmetic type here: the nearest of the two neighbours
// (ties to even), chosen in double, not by gpu/'s bit trick.
struct BF16 {
  std::uint16_t bits;
};
float bf16_value(BF16 b) {
  const std::uint32_t u = static_cast<std::uint32_t>(b.bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
BF16 bf16_round(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isinf(f)) return BF16{static_cast<std::uint16_t>(u >> 16)};
  const BF16 lo{static_cast<std::uint16_t>(u >> 16)}, hi{static_cast<std::uint16_t>((u >> 16) + 1)};
  if ((u & 0xffffu) == 0) return lo;
  const double dl = std::fabs(static_cast<double>(f) - bf16_value(lo));
  // Past the largest finite value, infinity rounds as 2^128 would.
  const double hv = std::isinf(bf16_value(hi)) ? std::copysign(std::ldexp(1.0, 128), f) : bf16_value(hi);
  const double dh = std::fabs(static_cast<double>(f) - hv);
  if (dl != dh) return dl < dh ? lo : hi;
  return (lo.bits & 1u) ? hi : lo;
}

// _Float16 arithmetic may be carried in float between statements; going
// through memory forces the rounding of every operation.
using F16 = _Float16;
F16 f16_store(float f) {
  volatile F16 h = static_cast<F16>(f);
  return h;
}

struct FloatInt { float v; int i; };
struct DoubleInt { double v; int i; };
struct LongInt { long v; int i; };
struct IntInt { int v; int i; };
struct ShortInt { short v; int i; };
struct FloatFloat { float v; float i; };
struct DoubleDouble { double v; double i; };

template <typename T> constexpr bool kPair = false;
template <> constexpr bool kPair<FloatInt> = true;
template <> constexpr bool kPair<DoubleInt> = true;
template <> constexpr bool kPair<LongInt> = true;
template <> constexpr bool kPair<IntInt> = true;
template <> constexpr bool kPair<ShortInt> = true;
template <> constexpr bool kPair<FloatFloat> = true;
template <> constexpr bool kPair<DoubleDouble> = true;

template <typename T> constexpr bool kComplex = false;
template <> constexpr bool kComplex<std::complex<float>> = true;
template <> constexpr bool kComplex<std::complex<double>> = true;

// MPI_Reduce_local(in, inout): inout[i] = in[i] op inout[i].
template <typename T>
void reduce_local(ReduceOp op, const T& in, T& a) {
  if constexpr (kPair<T>) {
    const bool take = op == ReduceOp::minloc ? a.v > in.v : a.v < in.v;
    if (take) a = in;
    else if (a.v == in.v) a.i = std::min(a.i, in.i);
  } else if constexpr (kComplex<T>) {
    a = op == ReduceOp::sum ? a + in : a * in;
  } else if constexpr (std::is_same_v<T, BF16>) {
    const float x = bf16_value(a), y = bf16_value(in);
    switch (op) {
      case ReduceOp::sum: a = bf16_round(x + y); break;
      case ReduceOp::prod: a = bf16_round(x * y); break;
      case ReduceOp::min: a = x < y ? a : in; break;
      case ReduceOp::max: a = x > y ? a : in; break;
      case ReduceOp::land: a = bf16_round(x && y); break;
      case ReduceOp::lor: a = bf16_round(x || y); break;
      case ReduceOp::lxor: a = bf16_round(!x != !y); break;
      default: FAIL("op not defined on bfloat16");
    }
  } else if constexpr (std::is_same_v<T, F16>) {
    switch (op) {
      case ReduceOp::sum: a = f16_store(a + in); break;
      case ReduceOp::prod: a = f16_store(a * in); break;
      case ReduceOp::min: a = a < in ? a : in; break;
      case ReduceOp::max: a = a > in ? a : in; break;
      case ReduceOp::land: a = f16_store(a && in); break;
      case ReduceOp::lor: a = f16_store(a || in); break;
      case ReduceOp::lxor: a = f16_store(!a != !in); break;
      default: FAIL("op not defined on float16");
    }
  } else {
    switch (op) {
      case ReduceOp::sum:
        if constexpr (std::is_integral_v<T>) a = static_cast<T>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(in));
        else a = a + in;
        break;
      case ReduceOp::prod:
        if constexpr (std::is_integral_v<T>) a = static_cast<T>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(in));
        else a = a * in;
        break;
      case ReduceOp::min: a = a < in ? a : in; break;
      case ReduceOp::max: a = a > in ? a : in; break;
      case ReduceOp::land: a = static_cast<T>(a && in); break;
      case ReduceOp::lor: a = static_cast<T>(a || in); break;
      case ReduceOp::lxor: a = static_cast<T>(!a != !in); break;
      case ReduceOp::band: if constexpr (std::is_integral_v<T>) a = static_cast<T>(a & in); break;
      case ReduceOp::bor: if constexpr (std::is_integral_v<T>) a = static_cast<T>(a | in); break;
      case ReduceOp::bxor: if constexpr (std::is_integral_v<T>) a = static_cast<T>(a ^ in); break;
      default: FAIL("op not defined");
    }
  }
}

// Bit for bit, except that any NaN equals any NaN: which operand's payload
// and sign a NaN result carries depends on the instruction's operand order,
// which compilers choose freely for commutative operations.
template <typename T>
bool same(const T& a, const T& b) {
  if constexpr (kPair<T>) {
    return std::memcmp(&a.v, &b.v, sizeof a.v) == 0 && std::memcmp(&a.i, &b.i, sizeof a.i) == 0;
  } else if constexpr (kComplex<T>) {
    return same(a.real(), b.real()) && same(a.imag(), b.imag());
  } else if constexpr (std::is_same_v<T, BF16>) {
    return same(bf16_value(a), bf16_value(b));
  } else if constexpr (std::is_same_v<T, F16>) {
    return same(static_cast<float>(a), static_cast<float>(b));
  } else {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(a) && std::isnan(b)) return true;
    return std::memcmp(&a, &b, sizeof(T)) == 0;
  }
}

// Values where the order of operations shows in the bits: mixed magnitudes,
// signed zeros, infinities, ties for MINLOC/MAXLOC (few distinct values).
template <typename T>
T random_value(std::mt19937& rng, ElemType t) {
  std::uniform_int_distribution<int> pick(0, 15);
  const int c = pick(rng);
  const auto real = [&](double scale) -> double {
    if (c == 0) return 0.0;
    if (c == 1) return -0.0;
    if (c == 2) return std::numeric_limits<double>::infinity();
    if (c == 3) return static_cast<double>(pick(rng) % 3);  // small integers: ties
    return std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng), static_cast<int>(rng() % 40) - 20) * scale;
  };
  if constexpr (kPair<T>) {
    T x{};
    x.v = static_cast<decltype(x.v)>(c < 8 ? c % 3 : static_cast<int>(rng() % 200) - 100);
    x.i = static_cast<decltype(x.i)>(rng() % 64);
    return x;
  } else if constexpr (kComplex<T>) {
    // Finite only: C's complex product replaces a NaN from infinite operands
    // (Annex G), MPICH's and the kernel's textbook formula do not.
    using R = typename T::value_type;
    const auto finite = [&] { const double x = real(1); return static_cast<R>(std::isinf(x) ? 1.0 : x); };
    const R re = finite();
    return T(re, finite());
  } else if constexpr (std::is_same_v<T, BF16>) {
    return bf16_round(static_cast<float>(real(1)));
  } else if constexpr (std::is_same_v<T, F16>) {
    return f16_store(static_cast<float>(real(1e-3)));  // keep products in range often
  } else if constexpr (std::is_integral_v<T>) {
    if (t == ElemType::boolean) return static_cast<T>(rng() & 1);
    if (c < 4) return static_cast<T>(c - 1);  // zeros and +-1 for the logical ops
    T x;
    const std::uint64_t bits = (static_cast<std::uint64_t>(rng()) << 32) | rng();
    std::memcpy(&x, &bits, sizeof x);
    return x;
  } else {
    if (c == 4 && t == ElemType::float32) return std::numeric_limits<T>::quiet_NaN();
    return static_cast<T>(real(1));
  }
}

template <typename T>
void check_type(ElemType t, std::mt19937& rng, std::size_t& cases) {
  REQUIRE(elem_size(t) == sizeof(T));
  for (int o = 0; o < kReduceOps; ++o) {
    const auto op = static_cast<ReduceOp>(o);
    if (!supported(t, op)) continue;
    for (std::size_t n = 1; n <= 64; ++n) {
      const std::size_t count = 1 + rng() % 17;
      // Inputs at odd byte offsets: the reference needs no alignment.
      const std::size_t skew = n % 3;
      std::vector<std::vector<unsigned char>> store(n, std::vector<unsigned char>(count * sizeof(T) + skew));
      std::vector<std::vector<T>> blocks(n, std::vector<T>(count));
      std::vector<const void*> in(n);
      for (std::size_t j = 0; j < n; ++j) {
        for (std::size_t i = 0; i < count; ++i) blocks[j][i] = random_value<T>(rng, t);
        std::memcpy(store[j].data() + skew, blocks[j].data(), count * sizeof(T));
        in[j] = store[j].data() + skew;
      }
      // The host path: position t's buffer becomes P_0 op ... op P_t.
      std::vector<std::vector<T>> where = blocks;
      for (std::size_t j = 1; j < n; ++j)
        for (std::size_t i = 0; i < count; ++i) reduce_local(op, where[j - 1][i], where[j][i]);
      const std::vector<T>& expect = where[n - 1];

      std::vector<T> out(count);
      reduce_reference(t, op, in.data(), n, out.data(), count);
      // In place into the last input, where the host path leaves the result.
      reduce_reference(t, op, in.data(), n, const_cast<void*>(in[n - 1]), count);
      for (std::size_t i = 0; i < count; ++i) {
        INFO(to_string(t) << " " << to_string(op) << " n=" << n << " i=" << i);
        REQUIRE(same(out[i], expect[i]));
        T last;
        std::memcpy(&last, static_cast<const unsigned char*>(in[n - 1]) + i * sizeof(T), sizeof(T));
        REQUIRE(same(last, expect[i]));
      }
      ++cases;
    }
  }
}

}  // namespace

TEST_CASE("the reduction kernel's reference equals the host path's chain of reductions", "[gpu][reduce]") {
  std::mt19937 rng(7);
  std::size_t cases = 0;
  check_type<std::int8_t>(ElemType::int8, rng, cases);
  check_type<std::uint8_t>(ElemType::uint8, rng, cases);
  check_type<std::int16_t>(ElemType::int16, rng, cases);
  check_type<std::uint16_t>(ElemType::uint16, rng, cases);
  check_type<std::int32_t>(ElemType::int32, rng, cases);
  check_type<std::uint32_t>(ElemType::uint32, rng, cases);
  check_type<std::int64_t>(ElemType::int64, rng, cases);
  check_type<std::uint64_t>(ElemType::uint64, rng, cases);
  check_type<std::uint8_t>(ElemType::boolean, rng, cases);
  check_type<F16>(ElemType::float16, rng, cases);
  check_type<BF16>(ElemType::bfloat16, rng, cases);
  check_type<float>(ElemType::float32, rng, cases);
  check_type<double>(ElemType::float64, rng, cases);
  check_type<std::complex<float>>(ElemType::complex32, rng, cases);
  check_type<std::complex<double>>(ElemType::complex64, rng, cases);
  check_type<FloatInt>(ElemType::float_int, rng, cases);
  check_type<DoubleInt>(ElemType::double_int, rng, cases);
  check_type<LongInt>(ElemType::long_int, rng, cases);
  check_type<IntInt>(ElemType::int_int, rng, cases);
  check_type<ShortInt>(ElemType::short_int, rng, cases);
  check_type<FloatFloat>(ElemType::float_float, rng, cases);
  check_type<DoubleDouble>(ElemType::double_double, rng, cases);
  // Every MPI-defined combination: 8 integer types x 10 ops, bool x 3,
  // 4 real types x 7, 2 complex x 2, 7 pairs x 2; one case per n <= 64.
  CHECK(cases == 64u * (80 + 3 + 28 + 4 + 14));
}

TEST_CASE("the reduction table follows MPI's op/type groups", "[gpu][reduce]") {
  CHECK(supported(ElemType::float32, ReduceOp::sum));
  CHECK_FALSE(supported(ElemType::float32, ReduceOp::band));
  CHECK_FALSE(supported(ElemType::complex64, ReduceOp::max));
  CHECK_FALSE(supported(ElemType::boolean, ReduceOp::sum));
  CHECK(supported(ElemType::boolean, ReduceOp::lxor));
  CHECK_FALSE(supported(ElemType::int32, ReduceOp::minloc));
  CHECK(supported(ElemType::short_int, ReduceOp::maxloc));
  CHECK_FALSE(supported(ElemType::double_int, ReduceOp::sum));
  CHECK_FALSE(supported(static_cast<ElemType>(kElemTypes), ReduceOp::sum));
  const void* in[1] = {nullptr};
  CHECK_THROWS_AS(reduce_reference(ElemType::float64, ReduceOp::bxor, in, 1, nullptr, 0), std::invalid_argument);
  CHECK_THROWS_AS(reduce_reference(ElemType::float64, ReduceOp::sum, in, 0, nullptr, 0), std::invalid_argument);
}

#include "gpu/reduce_ops.hpp"

TEST_CASE("half and bfloat16 conversions round to nearest even", "[gpu][reduce]") {
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    F16 native;
    const auto bits = static_cast<std::uint16_t>(h);
    std::memcpy(&native, &bits, 2);
    if (!same(half_to_float(Half{bits}), static_cast<float>(native))) FAIL("half bits " << h);
  }
  // Every 4099th float, plus every float within a few ulps of a half's
  // rounding boundary (the subnormal range included).
  std::vector<float> probes;
  for (std::uint64_t u = 0; u < (1ull << 32); u += 4099) {
    const auto w = static_cast<std::uint32_t>(u);
    float f;
    std::memcpy(&f, &w, 4);
    probes.push_back(f);
  }
  for (std::uint32_t h = 0; h < 0x7c00u; ++h) {
    const float lo = half_to_float(Half{static_cast<std::uint16_t>(h)});
    const float hi = half_to_float(Half{static_cast<std::uint16_t>(h + 1)});
    const float mid = lo + (hi - lo) / 2;
    for (float f : {std::nextafter(mid, 0.0f), mid, std::nextafter(mid, 1e9f)}) probes.push_back(f);
  }
  for (float f : probes) {
    if (std::isnan(f)) continue;
    const F16 native = static_cast<F16>(f);
    std::uint16_t bits;
    std::memcpy(&bits, &native, 2);
    // One assertion per mismatch, not per probe: a million probes.
    if (float_to_half(f).bits != bits || float_to_half(-f).bits != (bits ^ 0x8000u))
      FAIL("float " << f << " to half: " << float_to_half(f).bits << ", expected " << bits);
    if (float_to_bf16(f).bits != bf16_round(f).bits)
      FAIL("float " << f << " to bfloat16: " << float_to_bf16(f).bits << ", expected " << bf16_round(f).bits);
  }
}
