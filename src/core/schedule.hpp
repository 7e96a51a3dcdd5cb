// One rank's collective schedule: the data every consumer (executor, simulator,
// checker) reads. Generators in coll/ build it; nothing here touches MPI, and
// the core layer (src/core/) includes nothing of the rest of gencoll.
//
// Units: ranges are counted in *elements* of the collective's datatype (bytes =
// elements x type size). Reductions must never split an element, and derived
// datatypes are addressed by element index and extent, so elements are the
// smallest unit every consumer can honour.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "src/core/permutation.hpp"

namespace gencoll {

// Which buffer a range lives in. `send` is the caller's input (for MPI_IN_PLACE
// the executor aliases it to the caller's block of `recv`), `recv` the caller's
// result buffer, `tmp` scratch owned by the executor, sized by Schedule::tmp_count.
enum class Buf : std::uint8_t { send, recv, tmp };

struct Range {
  Buf buf = Buf::recv;
  std::uint64_t offset = 0;  // elements from the start of the buffer
  std::uint64_t count = 0;   // elements

  std::uint64_t end() const { return offset + count; }
  bool overlaps(const Range& o) const {
    return buf == o.buf && offset < o.end() && o.offset < end();
  }
  friend bool operator==(const Range& a, const Range& b) {
    return a.buf == b.buf && a.offset == b.offset && a.count == b.count;
  }
};

enum class StepKind : std::uint8_t {
  send,     // src -> peer
  recv,     // peer -> dst
  reduce,   // dst = src (op) dst, MPI_Reduce_local's operand order
  copy,     // dst = src
  permute,  // dst region's units reorder in place (see src/core/permutation.hpp)
  fold,     // dst = src (op) m_1 (op) ... (op) m_j (op) dst, the middle operands m_i
            // listed in Schedule::operands; they hold unspecified data afterwards
            // (a host folds pairwise through them; a device reads them all in one pass)
};

const char* to_string(StepKind k);

struct Step {
  StepKind kind = StepKind::copy;
  int peer = -1;            // send/recv partner (communicator rank)
  std::uint32_t tag = 0;    // per-(peer, direction) message sequence number
  Range src;                // send: data sent; reduce/copy: input
  Range dst;                // recv: landing area; reduce: in/out; copy: output;
                            // permute: the permuted region
  std::uint32_t dep_begin = 0;  // into Schedule::deps
  std::uint32_t dep_count = 0;
  std::int32_t perm = -1;   // permute: index into Schedule::perms
  std::uint32_t operand_begin = 0;  // fold: its middle operands, into Schedule::operands
  std::uint32_t operand_count = 0;
};

using Handle = std::uint32_t;  // index of a step in its schedule

struct Schedule {
  int rank = 0;
  int size = 1;
  std::vector<Step> steps;
  std::vector<Handle> deps;  // flattened dependency lists, see Step::dep_*
  std::vector<PermutationSpec> perms;
  std::vector<Range> operands;  // the middle operands of fold steps, see Step::operand_*
  std::uint64_t tmp_count = 0;  // scratch elements the executor must provide

  const Handle* deps_begin(const Step& s) const { return deps.data() + s.dep_begin; }
  const Handle* deps_end(const Step& s) const { return deps.data() + s.dep_begin + s.dep_count; }
  const Range* operands_begin(const Step& s) const { return operands.data() + s.operand_begin; }
  const Range* operands_end(const Step& s) const { return operands.data() + s.operand_begin + s.operand_count; }
  std::size_t messages_sent() const;
  std::string describe() const;  // human-readable listing for debugging
};

// Builds a Schedule. Every add returns a handle that later steps name as a
// dependency; a step starts only after all its dependencies completed. Message
// tags are assigned here, in emission order per peer, so a generator only has to
// emit matching sends and receives in the same order on both sides.
class ScheduleBuilder {
 public:
  using Deps = std::initializer_list<Handle>;

  ScheduleBuilder(int rank, int size);

  Handle send(int peer, Range src, Deps deps = {});
  Handle recv(int peer, Range dst, Deps deps = {});
  Handle reduce(Range src, Range dst, Deps deps = {});
  Handle copy(Range src, Range dst, Deps deps = {});
  Handle permute(Range region, PermutationSpec spec, Deps deps = {});

  // Variants taking a dependency vector built at run time.
  Handle send(int peer, Range src, const std::vector<Handle>& deps);
  Handle recv(int peer, Range dst, const std::vector<Handle>& deps);
  Handle reduce(Range src, Range dst, const std::vector<Handle>& deps);
  Handle copy(Range src, Range dst, const std::vector<Handle>& deps);
  Handle permute(Range region, PermutationSpec spec, const std::vector<Handle>& deps);
  // dst = in[0] (op) in[1] (op) ... (op) dst, in rank order; in[1..] are left
  // with unspecified data. One input is a plain reduce.
  Handle fold(const std::vector<Range>& in, Range dst, const std::vector<Handle>& deps);

  // Where an embedded schedule's send or recv buffer lies in this one.
  struct Place {
    Buf buf;
    std::uint64_t offset;
  };
  // Appends `sub` (a schedule of the same rank and size) as a sub-schedule: its
  // send and recv ranges moved to `send_at` and `recv_at`, its scratch to fresh
  // scratch here, its steps without dependencies made to wait for `deps`.
  // Message tags continue this builder's sequence per peer, so sub-schedules
  // compose like steps written here. Returns its sinks (the steps none of its
  // others wait for): everything it did is finished once they are (`deps`
  // for an empty sub-schedule).
  std::vector<Handle> embed(const Schedule& sub, Place send_at, Place recv_at, const std::vector<Handle>& deps);
  // The same for a schedule of a subset of the ranks (a node's ranks, the
  // nodes' leaders): sub-rank i is rank members[i] here, so sub.size ==
  // members.size() and members[sub.rank] == rank().
  std::vector<Handle> embed(const Schedule& sub, const std::vector<int>& members, Place send_at, Place recv_at,
                            const std::vector<Handle>& deps);

  // Grows the scratch area and returns a fresh range in it.
  Range scratch(std::uint64_t count);

  int rank() const { return sched_.rank; }
  int size() const { return sched_.size; }
  Schedule finish() &&;

 private:
  Handle add(Step s, const Handle* deps, std::size_t ndeps);
  // members: sub-rank -> rank here; nullptr: the same ranks.
  std::vector<Handle> embed_mapped(const Schedule& sub, const int* members, Place send_at, Place recv_at,
                                   const std::vector<Handle>& deps);
  Schedule sched_;
  // Hash maps, not p-sized arrays: a simulator builds 16k schedules.
  std::unordered_map<int, std::uint32_t> send_seq_;
  std::unordered_map<int, std::uint32_t> recv_seq_;
};

}  // namespace gencoll
