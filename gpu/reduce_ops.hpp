// The element arithmetic of the reduction kernels, compiled both by the host
// compiler (the CPU reference, gpu/reduce_reference.cpp) and by nvcc (the
// kernels, gpu/reduce_kernel.cu), so the two cannot drift apart.
//
// apply(left, right) is MPI_Reduce_local(in = left, inout = right): the value
// written into `right`. The forms mirror MPICH's and Open MPI's own loops
// (`inout = inout + in`, `inout = inout < in ? inout : in`, MINLOC keeps
// inout's value on ties), so the bits match the host path wherever the
// arithmetic is IEEE-exact: nvcc must not contract products into FMAs
// (libgencoll-cuda is built with -fmad=false), and half precision is computed
// in float and rounded once per operation, which equals the correctly rounded
// half operation (float's 24 bits >= 2 x 11 + 2, so double rounding is
// innocuous for +, -, x).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "gpu/reduce.hpp"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#define GENCOLL_HD __host__ __device__ __forceinline__
#else
#define GENCOLL_HD inline
#endif

namespace gencoll::gpu {

struct Half {
  std::uint16_t bits;
};
struct BFloat16 {
  std::uint16_t bits;
};
template <typename R>
struct Complex {
  R re, im;
};
template <typename V, typename I>
struct Pair {  // the layout of C's struct { V value; I index; }
  V v;
  I i;
};

GENCOLL_HD std::uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}
GENCOLL_HD float bits_float(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}

GENCOLL_HD float half_to_float(Half h) {
#if defined(__CUDA_ARCH__)
  return __half2float(__ushort_as_half(h.bits));
#else
  const std::uint32_t sign = static_cast<std::uint32_t>(h.bits & 0x8000u) << 16;
  const std::uint32_t exp = (h.bits >> 10) & 0x1fu, mant = h.bits & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: mant x 2^-24, exact in float
    const float mag = static_cast<float>(mant) * (1.0f / 16777216.0f);
    return bits_float(float_bits(mag) | sign);
  }
  if (exp == 31) return bits_float(sign | 0x7f800000u | (mant << 13));
  return bits_float(sign | ((exp + 112) << 23) | (mant << 13));
#endif
}

// Round to nearest even, as the device's cvt.rn.f16.f32.
GENCOLL_HD Half float_to_half(float f) {
#if defined(__CUDA_ARCH__)
  return Half{__half_as_ushort(__float2half_rn(f))};
#else
  const std::uint32_t x = float_bits(f);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u)  // inf, or NaN kept quiet with its top payload bits
    return Half{static_cast<std::uint16_t>(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u | ((ax >> 13) & 0x3ffu) : 0u))};
  if (ax >= 0x477ff000u) return Half{static_cast<std::uint16_t>(sign | 0x7c00u)};  // >= 65520 rounds to inf
  if (ax <= 0x33000000u) return Half{sign};                                        // <= 2^-25 rounds to 0
  std::uint32_t r, rem, halfway;
  if (ax < 0x38800000u) {  // half subnormal: round(m x 2^(e - 126)), shift 14..24
    const std::uint32_t e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u, shift = 126 - e;
    r = m >> shift;
    rem = m & ((1u << shift) - 1);
    halfway = 1u << (shift - 1);
  } else {
    r = (((ax >> 23) - 112) << 10) | ((ax & 0x7fffffu) >> 13);
    rem = ax & 0x1fffu;
    halfway = 0x1000u;
  }
  if (rem > halfway || (rem == halfway && (r & 1u))) ++r;  // a carry into the exponent is the right result
  return Half{static_cast<std::uint16_t>(sign | r)};
#endif
}

GENCOLL_HD float bf16_to_float(BFloat16 h) { return bits_float(static_cast<std::uint32_t>(h.bits) << 16); }

GENCOLL_HD BFloat16 float_to_bf16(float f) {
#if defined(__CUDA_ARCH__)
  return BFloat16{__bfloat16_as_ushort(__float2bfloat16_rn(f))};
#else
  const std::uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return BFloat16{static_cast<std::uint16_t>((x >> 16) | 0x40u)};
  return BFloat16{static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16)};
#endif
}

// Real types compute in `Calc` and are stored back with one rounding.
template <typename T>
struct Real {
  using Calc = T;
  static GENCOLL_HD Calc up(T x) { return x; }
  static GENCOLL_HD T down(Calc x) { return x; }
};
template <>
struct Real<Half> {
  using Calc = float;
  static GENCOLL_HD float up(Half x) { return half_to_float(x); }
  static GENCOLL_HD Half down(float x) { return float_to_half(x); }
};
template <>
struct Real<BFloat16> {
  using Calc = float;
  static GENCOLL_HD float up(BFloat16 x) { return bf16_to_float(x); }
  static GENCOLL_HD BFloat16 down(float x) { return float_to_bf16(x); }
};

template <typename T>
constexpr bool is_integer = std::is_integral_v<T>;
template <typename T>
constexpr bool is_real = std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <typename T>
constexpr bool is_complex = std::is_same_v<T, Complex<float>> || std::is_same_v<T, Complex<double>>;
template <typename T>
struct IsPair : std::false_type {};
template <typename V, typename I>
struct IsPair<Pair<V, I>> : std::true_type {};
template <typename T>
constexpr bool is_pair = IsPair<T>::value;

// Integer arithmetic wraps, as every MPI's does in practice, without the
// undefined behaviour of signed overflow (or of unsigned short promoted to int).
template <typename T>
using Wide = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
template <typename T>
GENCOLL_HD T wrap_add(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<Wide<T>>(static_cast<U>(a)) + static_cast<Wide<T>>(static_cast<U>(b)));
}
template <typename T>
GENCOLL_HD T wrap_mul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<Wide<T>>(static_cast<U>(a)) * static_cast<Wide<T>>(static_cast<U>(b)));
}

template <typename T>
GENCOLL_HD bool truth(T x) {
  if constexpr (is_real<T>) return Real<T>::up(x) != 0;
  else return x != 0;
}
template <typename T>
GENCOLL_HD T from_truth(bool b) {
  if constexpr (is_real<T>) return Real<T>::down(b ? 1 : 0);
  else return static_cast<T>(b ? 1 : 0);
}

// One struct per op: `valid<T>` says which element types it is compiled for
// (the run-time table is supported() in reduce_reference.cpp).
struct OpSum {
  template <typename T>
  static constexpr bool valid = is_integer<T> || is_real<T> || is_complex<T>;
  template <typename T>
  static GENCOLL_HD T apply(T l, T r) {
    if constexpr (is_integer<T>) return wrap_add(r, l);
    else if constexpr (is_complex<T>) return T{r.re + l.re, r.im + l.im};
    else return Real<T>::down(Real<T>::up(r) + Real<T>::up(l));
  }
};
struct OpProd {
  template <typename T>
  static constexpr bool valid = OpSum::valid<T>;
  template <typename T>
  static GENCOLL_HD T apply(T l, T r) {
    if constexpr (is_integer<T>) return wrap_mul(r, l);
    else if constexpr (is_complex<T>) return T{r.re * l.re - r.im * l.im, r.re * l.im + r.im * l.re};
    else return Real<T>::down(Real<T>::up(r) * Real<T>::up(l));
  }
};
struct OpMin {
  template <typename T>
  static constexpr bool valid = is_integer<T> || is_real<T>;
  template <typename T>
  static GENCOLL_HD T apply(T l, T r) {
    if constexpr (is_integer<T>) return r < l ? r : l;
    else return Real<T>::up(r) < Real<T>::up(l) ? r : l;
  }
};
struct OpMax {
  template <typename T>
  static constexpr bool valid = OpMin::valid<T>;
  template <typename T>
  static GENCOLL_HD T apply(T l, T r) {
    if constexpr (is_integer<T>) return r > l ? r : l;
    else return Real<T>::up(r) > Real<T>::up(l) ? r : l;
  }
};
struct OpLand {
  template <typename T>
  static constexpr bool valid = is_integer<T> || is_real<T>;
  template <typename T>
  static GENCOLL_HD T apply(T l, T r) { return from_truth<T>(truth(r) && truth(l)); }
};
struct OpLor {
  template <typename T>
  static constexpr bool valid = OpLand::valid<T>;
  template <typename T>
  static GENCOLL_HD T apply(T l, T r) { return from_truth<T>(truth(r) || truth(l)); }
};
struct OpLxor {
  template <typename T>
  static constexpr bool valid = OpLand::valid<T>;
  template <typename T>
  static GENCOLL_HD T apply(T l, T r) { return from_truth<T>(truth(r) != truth(l)); }
};
struct OpBand {
  template <typename T>
  static constexpr bool valid = is_integer<T>;
  template <typename T>
  static GENCOLL_HD T apply(T l, T r) { return static_cast<T>(r & l); }
};
struct OpBor {
  template <typename T>
  static constexpr bool valid = is_integer<T>;
  template <typename T>
  static GENCOLL_HD T apply(T l, T r) { return static_cast<T>(r | l); }
};
struct OpBxor {
  template <typename T>
  static constexpr bool valid = is_integer<T>;
  template <typename T>
  static GENCOLL_HD T apply(T l, T r) { return static_cast<T>(r ^ l); }
};
// MINLOC/MAXLOC: the MPI standard's definition; a tie keeps the smaller index
// and inout's value (the two differ only for -0 == +0).
struct OpMinloc {
  template <typename T>
  static constexpr bool valid = is_pair<T>;
  template <typename T>
  static GENCOLL_HD T apply(T l, T r) {
    if (l.v < r.v) return l;
    if (l.v == r.v && l.i < r.i) r.i = l.i;
    return r;
  }
};
struct OpMaxloc {
  template <typename T>
  static constexpr bool valid = is_pair<T>;
  template <typename T>
  static GENCOLL_HD T apply(T l, T r) {
    if (l.v > r.v) return l;
    if (l.v == r.v && l.i < r.i) r.i = l.i;
    return r;
  }
};

template <typename T>
struct Tag {
  using type = T;
};

// Calls f(Tag<C++ type>{}) for the storage type of t (nothing for a value
// outside the enum: callers check supported() first).
template <typename F>
void with_elem_type(ElemType t, F&& f) {
  switch (t) {
    case ElemType::int8: return f(Tag<std::int8_t>{});
    case ElemType::uint8: return f(Tag<std::uint8_t>{});
    case ElemType::int16: return f(Tag<std::int16_t>{});
    case ElemType::uint16: return f(Tag<std::uint16_t>{});
    case ElemType::int32: return f(Tag<std::int32_t>{});
    case ElemType::uint32: return f(Tag<std::uint32_t>{});
    case ElemType::int64: return f(Tag<std::int64_t>{});
    case ElemType::uint64: return f(Tag<std::uint64_t>{});
    case ElemType::boolean: return f(Tag<std::uint8_t>{});
    case ElemType::float16: return f(Tag<Half>{});
    case ElemType::bfloat16: return f(Tag<BFloat16>{});
    case ElemType::float32: return f(Tag<float>{});
    case ElemType::float64: return f(Tag<double>{});
    case ElemType::complex32: return f(Tag<Complex<float>>{});
    case ElemType::complex64: return f(Tag<Complex<double>>{});
    case ElemType::float_int: return f(Tag<Pair<float, int>>{});
    case ElemType::double_int: return f(Tag<Pair<double, int>>{});
    case ElemType::long_int: return f(Tag<Pair<long, int>>{});
    case ElemType::int_int: return f(Tag<Pair<int, int>>{});
    case ElemType::short_int: return f(Tag<Pair<short, int>>{});
    case ElemType::float_float: return f(Tag<Pair<float, float>>{});
    case ElemType::double_double: return f(Tag<Pair<double, double>>{});
  }
}

// Calls f(Tag<Op struct>{}).
template <typename F>
void with_reduce_op(ReduceOp op, F&& f) {
  switch (op) {
    case ReduceOp::sum: return f(Tag<OpSum>{});
    case ReduceOp::prod: return f(Tag<OpProd>{});
    case ReduceOp::min: return f(Tag<OpMin>{});
    case ReduceOp::max: return f(Tag<OpMax>{});
    case ReduceOp::land: return f(Tag<OpLand>{});
    case ReduceOp::lor: return f(Tag<OpLor>{});
    case ReduceOp::lxor: return f(Tag<OpLxor>{});
    case ReduceOp::band: return f(Tag<OpBand>{});
    case ReduceOp::bor: return f(Tag<OpBor>{});
    case ReduceOp::bxor: return f(Tag<OpBxor>{});
    case ReduceOp::minloc: return f(Tag<OpMinloc>{});
    case ReduceOp::maxloc: return f(Tag<OpMaxloc>{});
  }
}

}  // namespace gencoll::gpu
