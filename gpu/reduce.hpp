// Reductions on device buffers, described without MPI: the element types and
// operations of MPI's predefined reductions, which the interposition layer
// maps MPI_Datatype / MPI_Op onto, and the CPU reference of the kernel.
//
// One call folds n inputs left to right, out = ((in[0] op in[1]) op ...) op
// in[n-1], which is what the host path computes with n - 1 MPI_Reduce_local
// calls in a recursive-multiplying round (coll/recursive_multiplying.cpp: the
// running partial is always the left operand), but reading each input once.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gencoll::gpu {

// The numeric values are part of libgencoll-cuda's C ABI (gpu/gencoll_cuda.h):
// append, never renumber.
enum class ElemType : std::uint8_t {
  int8, uint8, int16, uint16, int32, uint32, int64, uint64,
  boolean,           // C _Bool / C++ bool: one byte, 0 or 1
  float16,           // IEEE binary16 (MPIX_C_FLOAT16, __half)
  bfloat16,          // bfloat16 (__nv_bfloat16)
  float32, float64,
  complex32,         // float _Complex: {float re, im}
  complex64,         // double _Complex
  // MINLOC/MAXLOC pairs, laid out as the C structs MPI defines them by.
  float_int,         // MPI_FLOAT_INT  {float; int}
  double_int,        // MPI_DOUBLE_INT {double; int}
  long_int,          // MPI_LONG_INT   {long; int}
  int_int,           // MPI_2INT       {int; int}
  short_int,         // MPI_SHORT_INT  {short; int}
  float_float,       // MPI_2REAL      {float; float}
  double_double,     // MPI_2DOUBLE_PRECISION {double; double}
};
constexpr int kElemTypes = static_cast<int>(ElemType::double_double) + 1;

enum class ReduceOp : std::uint8_t { sum, prod, min, max, land, lor, lxor, band, bor, bxor, minloc, maxloc };
constexpr int kReduceOps = static_cast<int>(ReduceOp::maxloc) + 1;

const char* to_string(ElemType t);
const char* to_string(ReduceOp op);
std::size_t elem_size(ElemType t);
// The combinations MPI defines for predefined ops (plus the logical ops on
// floating point, an MPICH extension); long double, with or without an int,
// has no device arithmetic and is left to the host path.
bool supported(ElemType t, ReduceOp op);

// out[i] = fold of in[0..n)[i], as the kernel computes it, one element after
// another. `out` may be one of the inputs; otherwise it must not overlap them.
// Throws std::invalid_argument for an unsupported combination or n == 0.
void reduce_reference(ElemType t, ReduceOp op, const void* const* in, std::size_t n, void* out, std::size_t count);

}  // namespace gencoll::gpu
