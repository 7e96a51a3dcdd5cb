// Transport over the MPI profiling interface: the thin layer between the
// executor and an unmodified MPICH or Open MPI.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "src/runtime/config.hpp"
#include "src/exec/device_transport.hpp"
#include "src/exec/transport.hpp"

namespace gencoll {

// Carries an MPI error code out of the executor to the C entry point.
struct MpiError : std::runtime_error {
  int code;
  explicit MpiError(int c) : std::runtime_error("MPI error"), code(c) {}
};

// The limit a transport works with: at least 2 (so a description of runs
// always shrinks), at most the int counts of the MPI-3 calls.
inline std::uint64_t usable_count_limit(std::uint64_t limit) { return std::clamp<std::uint64_t>(limit, 2, kIntCountLimit); }

// An array of `count` elements laid out like a user's buffer (element i at
// i * extent, the extent possibly negative): the bytes it spans and where its
// element 0 lies from the start of an allocation of them. Throws
// MpiError(MPI_ERR_NO_MEM) for a span no address space holds. The layout of
// gencoll_array_span (src/cabi/gencoll_mpich.h), the glues' scratch too.
struct ArraySpan {
  std::size_t bytes = 0;
  MPI_Aint shift = 0;
};
ArraySpan array_span(std::uint64_t count, MPI_Aint extent, MPI_Aint true_lb, MPI_Aint true_extent);

struct PmpiBuffers {
  const void* send = nullptr;          // already resolved for MPI_IN_PLACE
  std::uint64_t send_count = 0;        // in send_type elements; the schedule's send
  MPI_Datatype send_type = MPI_DATATYPE_NULL;  // range is in `type` elements
  void* recv = nullptr;
  MPI_Datatype type = MPI_DATATYPE_NULL;  // layout of recv and scratch
  MPI_Op op = MPI_OP_NULL;
};

// Where a datatype's elements lie, as the transport addresses them: three
// queries of the MPI, which a caller may keep for a predefined type (a
// derived type's handle, once freed, may come back as another type).
struct TypeLayout {
  MPI_Aint extent = 0, true_lb = 0, true_extent = 0;
  MPI_Count size = 0;  // bytes of data per element (MPI_Type_size's int says MPI_UNDEFINED from 2 GiB)
  bool dense = false;  // gap-free: copies may use memcpy
  static TypeLayout of(MPI_Datatype type);
};

// What a transport works in from call to call, kept by the thread with its
// runner (interpose.cpp), so that a call on a cached program of a gap-free
// type, waiting by the MPI's blocking calls, allocates nothing: allocating
// these afresh was 6-7 malloc/free pairs, some 800 instructions of a
// 7,400-instruction 8-byte allreduce (callgrind, 2026-11-30). The requests
// and ids are empty between calls; the scratch keeps its memory up to
// kKeptScratchBytes (a larger one is the call's own, freed with it).
struct CallArrays {
  std::vector<MPI_Request> reqs;
  std::vector<Transport::Request> ids;
  std::vector<int> indices;
  std::unique_ptr<char[]> scratch;
  std::size_t scratch_bytes = 0;
  bool in_use = false;  // by a transport of a call still running
};
inline constexpr std::size_t kKeptScratchBytes = 64 * 1024;

// The requests of one call in flight, kept compact: a wait looks only at
// those, so completion handling is linear in the call's messages (it was
// quadratic for k-ring when every request ever posted was waited on). Ids are
// 0, 1, 2, ... in posting order, as the executor's dense table expects. What
// an error leaves in flight is cancelled and completed on destruction, before
// the buffers it points into go away.
class RequestSet {
 public:
  RequestSet() : a_(own_) {}
  // In `kept`'s arrays (empty, and left empty), keeping their capacity; one
  // set at a time (a second throws std::logic_error).
  explicit RequestSet(CallArrays& kept);
  ~RequestSet();
  RequestSet(const RequestSet&) = delete;
  RequestSet& operator=(const RequestSet&) = delete;
  Transport::Request add(MPI_Request r);
  void wait_some(WaitPolicy wait, std::vector<Transport::Request>& done);

 private:
  CallArrays own_;
  CallArrays& a_;
  Transport::Request next_ = 0;
};

class PmpiTransport final : public Transport {
 public:
  // Messages and local operations of more than `count_limit` elements (the
  // int counts of the MPI-3 calls) are described by derived datatypes or
  // split, so every count works; tests lower the limit to reach those paths.
  PmpiTransport(MPI_Comm comm, PmpiBuffers bufs, WaitPolicy wait, std::uint64_t count_limit = kIntCountLimit)
      : PmpiTransport(comm, bufs, TypeLayout::of(bufs.type), wait, count_limit) {}
  // `layout`: TypeLayout::of(bufs.type), kept by the caller; `kept`: the
  // arrays of the thread's calls (CallArrays), or none (its own, freed with
  // it), for a transport whose thread may already be running one.
  PmpiTransport(MPI_Comm comm, PmpiBuffers bufs, const TypeLayout& layout, WaitPolicy wait,
                std::uint64_t count_limit = kIntCountLimit, CallArrays* kept = nullptr);

  void prepare(const Schedule& s) override;
  void scratch(std::uint64_t count) override;
  Request isend(int peer, std::uint32_t tag, const Range& src) override;
  Request irecv(int peer, std::uint32_t tag, const Range& dst) override;
  void send(int peer, std::uint32_t tag, const Range& src) override;
  void recv(int peer, std::uint32_t tag, const Range& dst) override;
  void wait_some(std::vector<Request>& done) override;
  void reduce(const Range& in, const Range& inout) override;
  void copy(const Range& src, const Range& dst) override;
  void permute(const Range& region, const PermutationSpec& spec) override;

 private:
  template <typename Post>
  void describe_send(const Range& src, Post&& post);
  char* address(const Range& r) const;
  void copy_units(const void* from, MPI_Datatype from_type, std::uint64_t from_count, void* to, MPI_Datatype to_type,
                  std::uint64_t to_count);

  MPI_Comm comm_;
  PmpiBuffers b_;
  WaitPolicy wait_;
  std::uint64_t limit_;
  MPI_Aint extent_ = 0, true_lb_ = 0, true_extent_ = 0;
  bool dense_ = false;  // type is gap-free: copies may use memcpy
  CallArrays* kept_;
  std::unique_ptr<char[]> tmp_;
  char* tmp_base_ = nullptr;
  std::vector<char> stage_;
  RequestSet reqs_;  // last: destroyed first, while scratch and staging still exist
};

// Messages of device-buffer collectives (see DeviceTransport): contiguous
// elements of the call's type, at addresses the MPI may or may not know to be
// device memory.
class PmpiWire final : public Wire {
 public:
  PmpiWire(MPI_Comm comm, MPI_Datatype type, WaitPolicy wait, std::uint64_t count_limit = kIntCountLimit)
      : comm_(comm), type_(type), wait_(wait), limit_(usable_count_limit(count_limit)) {}
  Request isend(int peer, std::uint32_t tag, const void* buf, std::uint64_t count) override;
  Request irecv(int peer, std::uint32_t tag, void* buf, std::uint64_t count) override;
  void wait_some(std::vector<Request>& done) override;

 private:
  MPI_Comm comm_;
  MPI_Datatype type_;
  WaitPolicy wait_;
  std::uint64_t limit_;
  RequestSet reqs_;
};

}  // namespace gencoll
