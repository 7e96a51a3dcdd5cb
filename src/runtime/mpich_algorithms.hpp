// The algorithm names MPICH 4.0.2's collective selection files may name
// (algorithm=<name>): its own, as its csel_container.c knows them. The MPICH
// module refuses any other name at MPI_Init; the interposition library and
// the Open MPI component, which read the same files, refuse them too, so
// that a misspelt name is an error in every binding instead of the MPI's own
// algorithm run without a word.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gencoll {

// Whether MPICH 4.0.2 itself has the algorithm `name` (MPIR_<Coll>_<intra|
// inter|allcomm>_<alg>). gencoll's own names (MPIR_Allreduce_intra_kring,
// ...) are not in it: the algorithm table has them.
bool mpich_has_algorithm(std::string_view name);

// The name closest to `name` (edit distance) among MPICH's and `also`, for
// a "did you mean".
std::string nearest_name(std::string_view name, const std::vector<std::string>& also);

}  // namespace gencoll
