// MPI's predefined datatypes and reduction ops in the device kernels' terms
// (gpu/reduce.hpp). Whatever has no entry here (derived types, user ops,
// long double, MPI_REPLACE) is not reduced on the device.
#pragma once

#include <mpi.h>

#include <optional>

#include "gpu/reduce.hpp"

namespace gencoll {

// The element type a predefined datatype holds; integer, floating-point and
// complex types by their size in this MPI (C `long`, Fortran INTEGER, ...).
std::optional<gpu::ElemType> device_elem_type(MPI_Datatype type);
std::optional<gpu::ReduceOp> device_reduce_op(MPI_Op op);
// Whether MPI defines `op` on `type` where the element type alone would allow
// more (MPI_BYTE holds uint8 but takes only the bitwise ops).
bool mpi_defines(MPI_Datatype type, gpu::ReduceOp op);

}  // namespace gencoll
