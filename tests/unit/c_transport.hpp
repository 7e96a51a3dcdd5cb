// A C++ Transport seen through the C table of src/cabi/gencoll_mpich.h, as an
// MPI's glue hands its callbacks to gencoll_mpich_run: what the tests of the C
// entry point (test_executor, test_failures, tests/threads) run it on.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "src/cabi/gencoll_mpich.h"
#include "src/exec/transport.hpp"

namespace gencoll::test {

// Forwards every callback to `t`; holds back completions beyond the caller's
// room for the next wait.
struct CTable {
  Transport& t;
  std::vector<Transport::Request> backlog;

  static Range range(int buf, std::uint64_t off, std::uint64_t count) {
    const Buf b = buf == GENCOLL_BUF_SEND ? Buf::send : buf == GENCOLL_BUF_RECV ? Buf::recv : Buf::tmp;
    return Range{b, off, count};
  }
  static CTable& self(void* ctx) { return *static_cast<CTable*>(ctx); }
  gencoll_transport table() {
    gencoll_transport g{};
    g.ctx = this;
    g.alloc_tmp = [](void* c, std::uint64_t n) {
      Schedule s;
      s.tmp_count = n;
      self(c).t.prepare(s);
      return 0;
    };
    g.isend = [](void* c, int peer, int tag, int buf, std::uint64_t off, std::uint64_t n, std::size_t* id) {
      *id = self(c).t.isend(peer, static_cast<std::uint32_t>(tag), range(buf, off, n));
      return 0;
    };
    g.irecv = [](void* c, int peer, int tag, int buf, std::uint64_t off, std::uint64_t n, std::size_t* id) {
      *id = self(c).t.irecv(peer, static_cast<std::uint32_t>(tag), range(buf, off, n));
      return 0;
    };
    g.wait_some = [](void* c, std::size_t* ids, std::size_t cap, std::size_t* n) {
      CTable& a = self(c);
      if (a.backlog.empty()) a.t.wait_some(a.backlog);
      *n = std::min(cap, a.backlog.size());
      std::copy_n(a.backlog.begin(), *n, ids);
      a.backlog.erase(a.backlog.begin(), a.backlog.begin() + static_cast<std::ptrdiff_t>(*n));
      return 0;
    };
    g.reduce = [](void* c, int ib, std::uint64_t io, int ob, std::uint64_t oo, std::uint64_t n) {
      self(c).t.reduce(range(ib, io, n), range(ob, oo, n));
      return 0;
    };
    g.copy = [](void* c, int sb, std::uint64_t so, int db, std::uint64_t d, std::uint64_t n) {
      self(c).t.copy(range(sb, so, n), range(db, d, n));
      return 0;
    };
    return g;
  }
};

// The C ABI's number of a collective it serves.
inline int abi_collective(Collective c) {
  switch (c) {
    case Collective::allgather: return GENCOLL_ALLGATHER;
    case Collective::allreduce: return GENCOLL_ALLREDUCE;
    case Collective::bcast: return GENCOLL_BCAST;
    case Collective::reduce: return GENCOLL_REDUCE;
    case Collective::reduce_scatter_block: return GENCOLL_REDUCE_SCATTER_BLOCK;
    case Collective::reduce_scatter: return GENCOLL_REDUCE_SCATTER;
  }
  return -1;
}

}  // namespace gencoll::test
