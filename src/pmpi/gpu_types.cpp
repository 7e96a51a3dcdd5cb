#include "src/pmpi/gpu_types.hpp"

#include <initializer_list>
#include <utility>

namespace gencoll {

namespace {

using gpu::ElemType;

bool one_of(MPI_Datatype t, std::initializer_list<MPI_Datatype> list) {
  for (MPI_Datatype x : list)
    if (x != MPI_DATATYPE_NULL && t == x) return true;  // a Fortran-less MPI has null Fortran handles
  return false;
}

std::optional<ElemType> by_size(int size, std::initializer_list<std::pair<int, ElemType>> table) {
  for (const auto& [bytes, elem] : table)
    if (size == bytes) return elem;
  return std::nullopt;
}

}  // namespace

std::optional<ElemType> device_elem_type(MPI_Datatype type) {
  if (type == MPI_DATATYPE_NULL) return std::nullopt;
  // The pairs of MINLOC/MAXLOC, laid out as gpu/reduce.hpp's structs.
  if (type == MPI_FLOAT_INT) return ElemType::float_int;
  if (type == MPI_DOUBLE_INT) return ElemType::double_int;
  if (type == MPI_LONG_INT) return ElemType::long_int;
  if (type == MPI_2INT) return ElemType::int_int;
  if (type == MPI_SHORT_INT) return ElemType::short_int;
  if (one_of(type, {MPI_2REAL})) return ElemType::float_float;
  if (one_of(type, {MPI_2DOUBLE_PRECISION})) return ElemType::double_double;
  if (type == MPI_C_BOOL) return ElemType::boolean;
#ifdef MPIX_C_FLOAT16
  if (type == MPIX_C_FLOAT16) return ElemType::float16;
#endif
  int size = 0;
  if (PMPI_Type_size(type, &size) != MPI_SUCCESS) return std::nullopt;
  if (one_of(type, {MPI_SIGNED_CHAR, MPI_SHORT, MPI_INT, MPI_LONG, MPI_LONG_LONG_INT, MPI_LONG_LONG, MPI_INT8_T,
                    MPI_INT16_T, MPI_INT32_T, MPI_INT64_T, MPI_INTEGER}))
    return by_size(size, {{1, ElemType::int8}, {2, ElemType::int16}, {4, ElemType::int32}, {8, ElemType::int64}});
  if (one_of(type, {MPI_UNSIGNED_CHAR, MPI_UNSIGNED_SHORT, MPI_UNSIGNED, MPI_UNSIGNED_LONG, MPI_UNSIGNED_LONG_LONG,
                    MPI_UINT8_T, MPI_UINT16_T, MPI_UINT32_T, MPI_UINT64_T, MPI_BYTE}))
    return by_size(size, {{1, ElemType::uint8}, {2, ElemType::uint16}, {4, ElemType::uint32}, {8, ElemType::uint64}});
  if (one_of(type, {MPI_FLOAT, MPI_DOUBLE, MPI_REAL, MPI_DOUBLE_PRECISION}))
    return by_size(size, {{4, ElemType::float32}, {8, ElemType::float64}});  // long double stays on the host
  if (one_of(type, {MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX, MPI_COMPLEX, MPI_DOUBLE_COMPLEX}))
    return by_size(size, {{8, ElemType::complex32}, {16, ElemType::complex64}});
  return std::nullopt;
}

std::optional<gpu::ReduceOp> device_reduce_op(MPI_Op op) {
  using gpu::ReduceOp;
  const std::pair<MPI_Op, ReduceOp> table[] = {
      {MPI_SUM, ReduceOp::sum},   {MPI_PROD, ReduceOp::prod}, {MPI_MIN, ReduceOp::min},
      {MPI_MAX, ReduceOp::max},   {MPI_LAND, ReduceOp::land}, {MPI_LOR, ReduceOp::lor},
      {MPI_LXOR, ReduceOp::lxor}, {MPI_BAND, ReduceOp::band}, {MPI_BOR, ReduceOp::bor},
      {MPI_BXOR, ReduceOp::bxor}, {MPI_MINLOC, ReduceOp::minloc}, {MPI_MAXLOC, ReduceOp::maxloc}};
  for (const auto& [mpi, dev] : table)
    if (op == mpi) return dev;
  return std::nullopt;
}

bool mpi_defines(MPI_Datatype type, gpu::ReduceOp op) {
  // MPI_BYTE is reduced with the bitwise ops only (MPI-4.0 section 6.9.2);
  // anything else is left to the MPI, which reports the error. The other
  // types' rules are the kernels' own (gpu::supported).
  if (type == MPI_BYTE) return op == gpu::ReduceOp::band || op == gpu::ReduceOp::bor || op == gpu::ReduceOp::bxor;
  return true;
}

}  // namespace gencoll
