#include "src/pmpi/pmpi_transport.hpp"

#include "src/cabi/gencoll_mpich.h"  // gencoll_array_span, every glue's scratch layout
#include "src/core/permutation.hpp"

#include <sched.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>

namespace gencoll {

namespace {
void check(int rc) {
  if (rc != MPI_SUCCESS) throw MpiError(rc);
}

// Derived datatypes made for one call, freed when it has been posted (MPI
// keeps what a pending operation needs).
class OwnedTypes {
 public:
  OwnedTypes() = default;
  OwnedTypes(const OwnedTypes&) = delete;
  OwnedTypes& operator=(const OwnedTypes&) = delete;
  ~OwnedTypes() {
    for (MPI_Datatype& t : types_) PMPI_Type_free(&t);
  }
  MPI_Datatype keep(MPI_Datatype t) {
    types_.push_back(t);
    return t;
  }

 private:
  std::vector<MPI_Datatype> types_;
};

// n elements of `type` (laid out at multiples of `extent`) as (count, type)
// with count <= limit (>= 2, so q < n): the type itself while n fits, else q runs of `limit`
// elements as one contiguous type (recursively, should q not fit either)
// followed by the r left over, in one struct. The type signature is n
// elements of `type` either way, so it matches whatever the peer describes.
struct Described {
  int count;
  MPI_Datatype type;
};
Described describe(std::uint64_t n, MPI_Datatype type, MPI_Aint extent, std::uint64_t limit, OwnedTypes& owned) {
  if (n <= limit) return {static_cast<int>(n), type};
  const std::uint64_t q = n / limit, r = n % limit;
  MPI_Datatype run = MPI_DATATYPE_NULL;
  check(PMPI_Type_contiguous(static_cast<int>(limit), type, &run));
  owned.keep(run);
  const MPI_Aint run_extent = extent * static_cast<MPI_Aint>(limit);
  Described runs = describe(q, run, run_extent, limit, owned);
  if (r == 0) {
    check(PMPI_Type_commit(&runs.type));
    return runs;
  }
  int lengths[2] = {runs.count, static_cast<int>(r)};
  MPI_Aint displacements[2] = {0, run_extent * static_cast<MPI_Aint>(q)};
  MPI_Datatype types[2] = {runs.type, type};
  MPI_Datatype whole = MPI_DATATYPE_NULL;
  check(PMPI_Type_create_struct(2, lengths, displacements, types, &whole));
  owned.keep(whole);
  check(PMPI_Type_commit(&whole));
  return {1, whole};
}

MPI_Aint extent_of(MPI_Datatype t) {
  MPI_Aint lb = 0, extent = 0;
  check(PMPI_Type_get_extent(t, &lb, &extent));
  return extent;
}

}  // namespace

RequestSet::RequestSet(CallArrays& kept) : a_(kept) {
  if (kept.in_use) throw std::logic_error("gencoll: a call's arrays are already in use");
  kept.in_use = true;
}

Transport::Request RequestSet::add(MPI_Request r) {
  a_.reqs.push_back(r);
  a_.ids.push_back(next_);
  return next_++;
}

void RequestSet::wait_some(WaitPolicy wait, std::vector<Transport::Request>& done) {
  std::vector<MPI_Request>& reqs = a_.reqs;
  std::vector<Transport::Request>& ids = a_.ids;
  a_.indices.resize(reqs.size());
  int n = MPI_UNDEFINED;
  if (wait == WaitPolicy::block) {
    check(PMPI_Waitsome(static_cast<int>(reqs.size()), reqs.data(), &n, a_.indices.data(), MPI_STATUSES_IGNORE));
  } else {
    // Oversubscribed runs: give the core to the peer we are waiting for.
    for (;;) {
      check(PMPI_Testsome(static_cast<int>(reqs.size()), reqs.data(), &n, a_.indices.data(), MPI_STATUSES_IGNORE));
      if (n != 0) break;
      sched_yield();
    }
  }
  if (n == MPI_UNDEFINED) throw std::logic_error("gencoll: waiting with no request in flight");
  for (int i = 0; i < n; ++i) done.push_back(ids[static_cast<std::size_t>(a_.indices[i])]);
  // Finished requests are MPI_REQUEST_NULL now: keep the others, in order.
  std::size_t kept = 0;
  for (std::size_t i = 0; i < reqs.size(); ++i)
    if (reqs[i] != MPI_REQUEST_NULL) {
      reqs[kept] = reqs[i];
      ids[kept++] = ids[i];
    }
  reqs.resize(kept);
  ids.resize(kept);
}

// A cancelled receive cannot write any more and a peer that failed never
// sends, so everything is cancelled first and then completed: no hang, no
// late write.
RequestSet::~RequestSet() {
  std::vector<MPI_Request>& reqs = a_.reqs;
  if (!reqs.empty()) {
    // A wait that failed left finished entries as MPI_REQUEST_NULL, which
    // MPI_Cancel refuses.
    for (MPI_Request& r : reqs)
      if (r != MPI_REQUEST_NULL) PMPI_Cancel(&r);
    PMPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
    reqs.clear();
    a_.ids.clear();
  }
  a_.in_use = false;
}

TypeLayout TypeLayout::of(MPI_Datatype type) {
  TypeLayout l;
  MPI_Aint lb = 0;
  check(PMPI_Type_get_extent(type, &lb, &l.extent));
  check(PMPI_Type_get_true_extent(type, &l.true_lb, &l.true_extent));
  check(PMPI_Type_size_x(type, &l.size));
  l.dense = l.size == l.extent && l.true_lb == 0 && l.true_extent == l.extent;
  return l;
}

PmpiTransport::PmpiTransport(MPI_Comm comm, PmpiBuffers bufs, const TypeLayout& layout, WaitPolicy wait,
                             std::uint64_t count_limit, CallArrays* kept)
    : comm_(comm),
      b_(bufs),
      wait_(wait),
      limit_(usable_count_limit(count_limit)),
      extent_(layout.extent),
      true_lb_(layout.true_lb),
      true_extent_(layout.true_extent),
      dense_(layout.dense),
      kept_(kept),
      reqs_(kept ? RequestSet(*kept) : RequestSet()) {}

ArraySpan array_span(std::uint64_t count, MPI_Aint extent, MPI_Aint true_lb, MPI_Aint true_extent) {
  std::size_t bytes = 0;
  std::int64_t shift = 0;
  if (gencoll_array_span(count, extent, true_lb, true_extent, &bytes, &shift) != 0) throw MpiError(MPI_ERR_NO_MEM);
  return {bytes, static_cast<MPI_Aint>(shift)};
}

void PmpiTransport::prepare(const Schedule& s) { scratch(s.tmp_count); }

void PmpiTransport::scratch(std::uint64_t count) {
  if (count == 0) return;
  // Scratch laid out like the user's buffer: element i at i * extent. Not
  // zeroed: every element is written before it is read.
  const ArraySpan a = array_span(count, extent_, true_lb_, true_extent_);
  if (kept_ && a.bytes <= kKeptScratchBytes) {
    if (kept_->scratch_bytes < a.bytes) {
      kept_->scratch.reset(new char[kKeptScratchBytes]);  // once per thread
      kept_->scratch_bytes = kKeptScratchBytes;
    }
    tmp_base_ = kept_->scratch.get() + a.shift;
    return;
  }
  tmp_.reset(new char[a.bytes]);
  tmp_base_ = tmp_.get() + a.shift;
}

char* PmpiTransport::address(const Range& r) const {
  const MPI_Aint off = static_cast<MPI_Aint>(r.offset) * extent_;
  switch (r.buf) {
    case Buf::send: return const_cast<char*>(static_cast<const char*>(b_.send)) + off;
    case Buf::recv: return static_cast<char*>(b_.recv) + off;
    case Buf::tmp: return tmp_base_ + off;
  }
  return nullptr;
}

// What a message of `src` is in the MPI's terms, handed to `post(buf, count, type)`.
template <typename Post>
void PmpiTransport::describe_send(const Range& src, Post&& post) {
  OwnedTypes owned;
  if (src.buf == Buf::send && b_.send_type != b_.type) {
    // Generators only ever send the whole input; it is described by the caller's type.
    const Described d = describe(b_.send_count, b_.send_type, extent_of(b_.send_type), limit_, owned);
    post(b_.send, d.count, d.type);
  } else {
    const Described d = describe(src.count, b_.type, extent_, limit_, owned);
    post(address(src), d.count, d.type);
  }
}

Transport::Request PmpiTransport::isend(int peer, std::uint32_t tag, const Range& src) {
  MPI_Request r;
  describe_send(src, [&](const void* buf, int count, MPI_Datatype type) {
    check(PMPI_Isend(buf, count, type, peer, wire_tag(tag), comm_, &r));
  });
  return reqs_.add(r);
}

Transport::Request PmpiTransport::irecv(int peer, std::uint32_t tag, const Range& dst) {
  MPI_Request r;
  OwnedTypes owned;
  const Described d = describe(dst.count, b_.type, extent_, limit_, owned);
  check(PMPI_Irecv(address(dst), d.count, d.type, peer, wire_tag(tag), comm_, &r));
  return reqs_.add(r);
}

// Blocking calls wait as the MPI does, so only where the policy is the MPI's own.
void PmpiTransport::send(int peer, std::uint32_t tag, const Range& src) {
  if (wait_ != WaitPolicy::block) return Transport::send(peer, tag, src);
  describe_send(src, [&](const void* buf, int count, MPI_Datatype type) {
    check(PMPI_Send(buf, count, type, peer, wire_tag(tag), comm_));
  });
}

void PmpiTransport::recv(int peer, std::uint32_t tag, const Range& dst) {
  if (wait_ != WaitPolicy::block) return Transport::recv(peer, tag, dst);
  OwnedTypes owned;
  const Described d = describe(dst.count, b_.type, extent_, limit_, owned);
  check(PMPI_Recv(address(dst), d.count, d.type, peer, wire_tag(tag), comm_, MPI_STATUS_IGNORE));
}

void PmpiTransport::wait_some(std::vector<Request>& done) { reqs_.wait_some(wait_, done); }

void PmpiTransport::reduce(const Range& in, const Range& inout) {
  // MPI_Reduce_local has no derived-type trick (a user op sees its count), so
  // long ranges go in pieces of at most `limit_` elements.
  const char* from = address(in);
  char* to = address(inout);
  for (std::uint64_t done = 0; done < in.count; done += limit_) {
    const std::uint64_t n = std::min(limit_, in.count - done);
    const MPI_Aint off = static_cast<MPI_Aint>(done) * extent_;
    check(PMPI_Reduce_local(from + off, to + off, static_cast<int>(n), b_.type, b_.op));
  }
}

void PmpiTransport::copy_units(const void* from, MPI_Datatype from_type, std::uint64_t from_count, void* to,
                               MPI_Datatype to_type, std::uint64_t to_count) {
  // Through a packed staging buffer: honours gaps in derived types (the user's
  // bytes between elements stay untouched) and differing send/receive types.
  // Pack sizes are ints: beyond them (or beyond the count limit) the MPI
  // copies, as a message to this rank with large-count descriptions.
  MPI_Count type_size = 0;
  check(PMPI_Type_size_x(from_type, &type_size));
  const std::uint64_t bytes = from_count * static_cast<std::uint64_t>(type_size);
  if (from_count <= limit_ && to_count <= limit_ && bytes <= kIntCountLimit) {
    int packed = 0;
    check(PMPI_Pack_size(static_cast<int>(from_count), from_type, comm_, &packed));
    stage_.resize(static_cast<std::size_t>(packed));
    int pos = 0;
    check(PMPI_Pack(from, static_cast<int>(from_count), from_type, stage_.data(), packed, &pos, comm_));
    int upos = 0;
    check(PMPI_Unpack(stage_.data(), pos, &upos, to, static_cast<int>(to_count), to_type, comm_));
    return;
  }
  OwnedTypes owned;
  const Described s = describe(from_count, from_type, extent_of(from_type), limit_, owned);
  const Described d = describe(to_count, to_type, extent_of(to_type), limit_, owned);
  int me = 0;
  check(PMPI_Comm_rank(comm_, &me));
  // Schedules never message their own rank, so tag 0 from this rank matches
  // only this copy.
  check(PMPI_Sendrecv(from, s.count, s.type, me, 0, to, d.count, d.type, me, 0, comm_, MPI_STATUS_IGNORE));
}

void PmpiTransport::copy(const Range& src, const Range& dst) {
  if (dst.count == 0) return;
  char* to = address(dst);
  if (src.buf == Buf::send && b_.send_type != b_.type) {
    copy_units(b_.send, b_.send_type, b_.send_count, to, b_.type, dst.count);
    return;
  }
  const char* from = address(src);
  if (from == to) return;  // MPI_IN_PLACE: the input already sits in the result
  if (dense_) std::memcpy(to, from, static_cast<std::size_t>(dst.count) * static_cast<std::size_t>(extent_));
  else copy_units(from, b_.type, src.count, to, b_.type, dst.count);
}

void PmpiTransport::permute(const Range& region, const PermutationSpec& spec) {
  if (spec.unit_count == 0) return;
  const MPI_Aint unit_span = static_cast<MPI_Aint>(spec.unit_count) * extent_;
  char* base = address(region);
  // The spare unit lives in a buffer laid out like the user's (so gaps in
  // derived types stay untouched, whatever the unit's size); dense types copy
  // with memcpy, the others unit by unit through copy_units.
  std::unique_ptr<char[]> spare_mem;
  char* spare = nullptr;
  const auto unit_at = [&](std::int64_t u) {
    if (u != kSpare) return base + u * unit_span;
    if (!spare) {
      const ArraySpan a = array_span(spec.unit_count, extent_, true_lb_, true_extent_);
      spare_mem.reset(new char[a.bytes]);
      spare = spare_mem.get() + a.shift;
    }
    return spare;
  };
  permute_by_cycles(unit_destinations(spec), [&](std::int64_t from, std::int64_t to) {
    char* src = unit_at(from);
    char* dst = unit_at(to);
    if (dense_) std::memcpy(dst, src, static_cast<std::size_t>(unit_span));
    else copy_units(src, b_.type, spec.unit_count, dst, b_.type, spec.unit_count);
  });
}

Wire::Request PmpiWire::isend(int peer, std::uint32_t tag, const void* buf, std::uint64_t count) {
  MPI_Request r;
  OwnedTypes owned;
  const Described d = describe(count, type_, extent_of(type_), limit_, owned);
  check(PMPI_Isend(buf, d.count, d.type, peer, wire_tag(tag), comm_, &r));
  return reqs_.add(r);
}

Wire::Request PmpiWire::irecv(int peer, std::uint32_t tag, void* buf, std::uint64_t count) {
  MPI_Request r;
  OwnedTypes owned;
  const Described d = describe(count, type_, extent_of(type_), limit_, owned);
  check(PMPI_Irecv(buf, d.count, d.type, peer, wire_tag(tag), comm_, &r));
  return reqs_.add(r);
}

void PmpiWire::wait_some(std::vector<Request>& done) { reqs_.wait_some(wait_, done); }

}  // namespace gencoll
