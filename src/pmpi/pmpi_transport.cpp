#include "src/pmpi/pmpi_transport.hpp"

#include "src/core/permutation.hpp"

#include <sched.h>

#include <climits>
#include <cstring>

namespace gencoll {

namespace {
void check(int rc) {
  if (rc != MPI_SUCCESS) throw MpiError(rc);
}
int as_int(std::uint64_t n) {
  if (n > static_cast<std::uint64_t>(INT_MAX)) throw MpiError(MPI_ERR_COUNT);
  return static_cast<int>(n);
}

}  // namespace

Transport::Request RequestSet::add(MPI_Request r) {
  reqs_.push_back(r);
  ids_.push_back(next_);
  return next_++;
}

void RequestSet::wait_some(WaitPolicy wait, std::vector<Transport::Request>& done) {
  indices_.resize(reqs_.size());
  int n = MPI_UNDEFINED;
  if (wait == WaitPolicy::block) {
    check(PMPI_Waitsome(static_cast<int>(reqs_.size()), reqs_.data(), &n, indices_.data(), MPI_STATUSES_IGNORE));
  } else {
    // Oversubscribed runs: give the core to the peer we are waiting for.
    for (;;) {
      check(PMPI_Testsome(static_cast<int>(reqs_.size()), reqs_.data(), &n, indices_.data(), MPI_STATUSES_IGNORE));
      if (n != 0) break;
      sched_yield();
    }
  }
  if (n == MPI_UNDEFINED) throw std::logic_error("gencoll: waiting with no request in flight");
  for (int i = 0; i < n; ++i) done.push_back(ids_[static_cast<std::size_t>(indices_[i])]);
  // Finished requests are MPI_REQUEST_NULL now: keep the others, in order.
  std::size_t kept = 0;
  for (std::size_t i = 0; i < reqs_.size(); ++i)
    if (reqs_[i] != MPI_REQUEST_NULL) {
      reqs_[kept] = reqs_[i];
      ids_[kept++] = ids_[i];
    }
  reqs_.resize(kept);
  ids_.resize(kept);
}

// A cancelled receive cannot write any more and a peer that failed never
// sends, so everything is cancelled first and then completed: no hang, no
// late write.
RequestSet::~RequestSet() {
  if (reqs_.empty()) return;
  // A wait that failed left finished entries as MPI_REQUEST_NULL, which
  // MPI_Cancel refuses.
  for (MPI_Request& r : reqs_)
    if (r != MPI_REQUEST_NULL) PMPI_Cancel(&r);
  PMPI_Waitall(static_cast<int>(reqs_.size()), reqs_.data(), MPI_STATUSES_IGNORE);
}

PmpiTransport::PmpiTransport(MPI_Comm comm, PmpiBuffers bufs, WaitPolicy wait) : comm_(comm), b_(bufs), wait_(wait) {
  MPI_Aint lb = 0;
  check(PMPI_Type_get_extent(b_.type, &lb, &extent_));
  check(PMPI_Type_get_true_extent(b_.type, &true_lb_, &true_extent_));
  int size = 0;
  check(PMPI_Type_size(b_.type, &size));
  dense_ = size == extent_ && true_lb_ == 0 && true_extent_ == extent_;
}

void PmpiTransport::prepare(const Schedule& s) {
  if (s.tmp_count == 0) return;
  // Scratch laid out like the user's buffer: element i at i * extent, shifted so
  // the type's true lower bound lands on the allocation.
  const std::size_t bytes = static_cast<std::size_t>((s.tmp_count - 1) * extent_ + true_extent_);
  tmp_ = std::make_unique<char[]>(bytes);
  tmp_base_ = tmp_.get() - true_lb_;
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

Transport::Request PmpiTransport::isend(int peer, std::uint32_t tag, const Range& src) {
  MPI_Request r;
  if (src.buf == Buf::send && b_.send_type != b_.type) {
    // Generators only ever send the whole input; it is described by the caller's type.
    check(PMPI_Isend(b_.send, b_.send_count, b_.send_type, peer, wire_tag(tag), comm_, &r));
  } else {
    check(PMPI_Isend(address(src), as_int(src.count), b_.type, peer, wire_tag(tag), comm_, &r));
  }
  return reqs_.add(r);
}

Transport::Request PmpiTransport::irecv(int peer, std::uint32_t tag, const Range& dst) {
  MPI_Request r;
  check(PMPI_Irecv(address(dst), as_int(dst.count), b_.type, peer, wire_tag(tag), comm_, &r));
  return reqs_.add(r);
}

void PmpiTransport::wait_some(std::vector<Request>& done) { reqs_.wait_some(wait_, done); }

void PmpiTransport::reduce(const Range& in, const Range& inout) {
  if (in.count == 0) return;
  check(PMPI_Reduce_local(address(in), address(inout), as_int(in.count), b_.type, b_.op));
}

void PmpiTransport::copy_units(const void* from, MPI_Datatype from_type, int from_count, void* to,
                               MPI_Datatype to_type, int to_count) {
  // Through a packed staging buffer: honours gaps in derived types (the user's
  // bytes between elements stay untouched) and differing send/receive types.
  int bytes = 0;
  check(PMPI_Pack_size(from_count, from_type, comm_, &bytes));
  stage_.resize(static_cast<std::size_t>(bytes));
  int pos = 0;
  check(PMPI_Pack(from, from_count, from_type, stage_.data(), bytes, &pos, comm_));
  int upos = 0;
  check(PMPI_Unpack(stage_.data(), pos, &upos, to, to_count, to_type, comm_));
}

void PmpiTransport::copy(const Range& src, const Range& dst) {
  if (dst.count == 0) return;
  char* to = address(dst);
  if (src.buf == Buf::send && b_.send_type != b_.type) {
    copy_units(b_.send, b_.send_type, b_.send_count, to, b_.type, as_int(dst.count));
    return;
  }
  const char* from = address(src);
  if (from == to) return;  // MPI_IN_PLACE: the input already sits in the result
  if (dense_) std::memcpy(to, from, static_cast<std::size_t>(dst.count) * static_cast<std::size_t>(extent_));
  else copy_units(from, b_.type, as_int(src.count), to, b_.type, as_int(dst.count));
}

void PmpiTransport::permute(const Range& region, const PermutationSpec& spec) {
  const int unit = as_int(spec.unit_count);
  if (unit == 0) return;
  const MPI_Aint unit_span = static_cast<MPI_Aint>(spec.unit_count) * extent_;
  char* base = address(region);
  // The spare unit is kept packed, so gaps in derived types stay untouched.
  int packed = 0;
  check(PMPI_Pack_size(unit, b_.type, comm_, &packed));
  std::vector<char> spare(static_cast<std::size_t>(packed));
  permute_by_cycles(unit_destinations(spec), [&](std::int64_t from, std::int64_t to) {
    int pos = 0;
    if (to == kSpare) {
      check(PMPI_Pack(base + from * unit_span, unit, b_.type, spare.data(), packed, &pos, comm_));
    } else if (from == kSpare) {
      check(PMPI_Unpack(spare.data(), packed, &pos, base + to * unit_span, unit, b_.type, comm_));
    } else if (dense_) {
      std::memcpy(base + to * unit_span, base + from * unit_span, static_cast<std::size_t>(unit_span));
    } else {
      copy_units(base + from * unit_span, b_.type, unit, base + to * unit_span, b_.type, unit);
    }
  });
}

Wire::Request PmpiWire::isend(int peer, std::uint32_t tag, const void* buf, std::uint64_t count) {
  MPI_Request r;
  check(PMPI_Isend(buf, as_int(count), type_, peer, wire_tag(tag), comm_, &r));
  return reqs_.add(r);
}

Wire::Request PmpiWire::irecv(int peer, std::uint32_t tag, void* buf, std::uint64_t count) {
  MPI_Request r;
  check(PMPI_Irecv(buf, as_int(count), type_, peer, wire_tag(tag), comm_, &r));
  return reqs_.add(r);
}

void PmpiWire::wait_some(std::vector<Request>& done) { reqs_.wait_some(wait_, done); }

}  // namespace gencoll
