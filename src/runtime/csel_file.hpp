// MPICH's collective-selection file (the JSON format of MPICH's
// MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE), read by the interposition library
// so that one file selects, call by call, what MPICH 4.0.2's csel
// (src/mpi/coll/src/csel.c) selects with the gencoll module: the same leaf,
// hence the same gencoll algorithm and k or "the MPI's own".
//
// The file is a JSON object; its keys are conditions tried in file order. A key
// that holds descends into its value (an object), one that does not passes to
// the next sibling. An object whose keys are `algorithm=<name>` (or
// `composition=<name>`) is a leaf; its value holds parameters such as `"k=4": {}`.
// `algorithm=MPIR_<Coll>_intra_<alg>` with Coll in Allgather, Allreduce, Bcast,
// Reduce and alg in knomial, recursive_multiplying,
// permuted_recursive_multiplying, kring selects gencoll; every other name is the
// MPI's own implementation, and so is reaching no leaf at all.
//
// Pure C++ (no MPI): the caller measures the call and the communicator.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "coll/algorithms.hpp"

namespace gencoll {

// MPICH's node awareness of a communicator (its node_comm, node_count and
// internode_table), from which the node conditions are answered as MPICH does:
// an intracommunicator is hierarchy "parent" unless every process is alone on
// its node ("flat"); comm_size=node_comm_size holds when one node holds all of
// it and p > 1; is_node_consecutive asks "parent" communicators only. So
// MPI_COMM_WORLD of a single-node run with p > 1 is parent, node_comm_size and
// consecutive; with p = 1 it is flat and neither. The interposition library
// measures the layout with MPI_COMM_TYPE_SHARED.
struct NodeLayout {
  int node_size = 1;         // processes of the communicator on this rank's node
  int node_count = 1;        // nodes the communicator spans
  bool consecutive = true;   // each node's processes hold consecutive ranks
  // > 0: the nodes are blocks of this many consecutive ranks, the last one
  // possibly smaller (CollParams::node_size); 0: they are not.
  int block_size = 0;
};

// The layout as every binding measures it, from what each process knows of
// its own node (its size and the lowest and highest rank of the
// communicator on it) and two reductions over the communicator: the SUM of
// `sums` (nodes, nodes with a gap) and the MAX of `maxes` (the largest node,
// minus the smallest but the one holding rank p - 1). Blocks: consecutive,
// and every node but the last of the largest size.
struct NodeReductions {
  int sums[2];
  int maxes[2];
};
NodeReductions node_contribution(int p, int rank, int node_size, int lowest, int highest);
NodeLayout node_layout(int node_size, const int sums[2], const int maxes[2]);

// Everything a condition can ask about one call, in MPICH's terms.
struct SelectionCall {
  Collective coll = Collective::allreduce;
  bool inter = false;             // intercommunicator
  int comm_size = 1;              // size of the local group
  std::uint64_t count = 0;        // elements; allgather: recvcount; reduce_scatter: the average block
  // reduce_scatter: the sum of the recvcounts, which MPICH's count and total
  // size conditions read (its average size the average block); 0 elsewhere.
  std::uint64_t vector_count = 0;
  std::uint64_t type_size = 0;    // bytes per element; allgather: of recvtype
  // MPICH 4.0.2 answers the op questions for reductions only and the in-place
  // one for the alltoalls only (it asserts elsewhere); here they are asked
  // everywhere: true where there is no op.
  bool commutative = true;        // of the op
  bool op_built_in = true;        // a predefined op
  bool sendbuf_inplace = false;   // MPI_IN_PLACE, where all ranks pass it alike
  bool multi_threaded = false;    // the MPI runs at MPI_THREAD_MULTIPLE (MPICH's MPIR_IS_THREADED)
  NodeLayout nodes;
  // Asked as MPICH asks on its node_roots communicator (hierarchy
  // "node_roots", one process per node): the leaders of an smp composition.
  bool node_roots = false;
};

struct SelectionChoice {
  std::optional<Algorithm> alg;  // nullopt: the MPI's own implementation (or smp)
  // MPIR_<Coll>_intra_smp of an allreduce, reduce or bcast: MPICH's
  // node-aware composition (coll/smp.cpp runs the same schedule). select()
  // resolves it: alg and k become the leaders' (the file's choice for a
  // node_roots call) and node_size the call's nodes.block_size; a bcast
  // MPICH's smp runs flat at that size is gencoll's ring with node_size 0.
  // Where gencoll cannot run it, alg stays nullopt and `why` says why.
  bool smp = false;
  int node_size = 0;
  std::string why;
  std::optional<int> k;          // the leaf's k=; nullopt: none given (the radix variable applies)
  // The leaf's key as written; empty when no leaf was reached. It views the
  // SelectionFile's own text (a call copies no string): valid while the file lives.
  std::string_view leaf;
};

class SelectionFile {
 public:
  struct Loaded;

  // Reads and checks the file. Every problem (unreadable file, invalid JSON,
  // unknown key, a value that is not an object, a bad k=, a gencoll algorithm
  // the collective does not have) becomes one message in Loaded::errors, each
  // starting with `origin` (default: "selection file <path>") and naming the key.
  static Loaded load(const std::string& path, const std::string& origin = {});
  // The same from text already in memory; `origin` names it in the messages.
  static Loaded parse(const std::string& text, const std::string& origin);

  SelectionChoice select(const SelectionCall& call) const;

  // FNV-1a of the file's bytes: equal on ranks that read equal files.
  std::uint64_t content_hash() const { return hash_; }

  struct Node;  // one JSON object of the tree; defined in the .cpp
  ~SelectionFile();
  SelectionFile(const SelectionFile&) = delete;
  SelectionFile& operator=(const SelectionFile&) = delete;

 private:
  SelectionFile(std::unique_ptr<Node> root, std::uint64_t hash);
  void resolve_smp(const SelectionCall& call, SelectionChoice& ch) const;
  std::unique_ptr<Node> root_;
  std::uint64_t hash_;
};

struct SelectionFile::Loaded {
  std::shared_ptr<const SelectionFile> file;  // null when there are errors
  std::vector<std::string> errors;
};

}  // namespace gencoll
