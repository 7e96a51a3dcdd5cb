// libgencoll-pmpi: intercepts MPI_Allgather, MPI_Allreduce, MPI_Bcast and MPI_Reduce of unmodified
// programs (LD_PRELOAD) and runs the gencoll algorithm the GENCOLL_* environment
// selects; everything else, and every call it cannot serve, goes to the MPI's own
// implementation through PMPI.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <memory>

#include "../../coll/algorithms.hpp"
#include "../config.hpp"
#include "pmpi_transport.hpp"

namespace gencoll {
namespace {

Config g_config;
int g_keyval = MPI_KEYVAL_INVALID;

// Collectives run on a private duplicate of the caller's communicator so their
// messages can never match the application's point-to-point traffic. The
// duplicate and a few recently used schedules live in an attribute of the
// caller's communicator and are freed with it.
struct CommState {
  MPI_Comm dup = MPI_COMM_NULL;
  // Applications repeat the same call shapes; generating a schedule costs more
  // than a small message's transfer, so keep the last few.
  std::deque<std::pair<CollParams, std::shared_ptr<const Schedule>>> recent;

  std::shared_ptr<const Schedule> schedule(const CollParams& prm) {
    for (const auto& [key, sched] : recent)
      if (key == prm) return sched;
    auto sched = std::make_shared<const Schedule>(generate(prm));
    recent.emplace_front(prm, sched);
    if (recent.size() > kRecent) recent.pop_back();
    return sched;
  }
  static constexpr std::size_t kRecent = 16;
};

int delete_state(MPI_Comm, int, void* attr, void*) {
  std::unique_ptr<CommState> state(static_cast<CommState*>(attr));
  int finalized = 0;
  PMPI_Finalized(&finalized);
  if (!finalized) PMPI_Comm_free(&state->dup);
  return MPI_SUCCESS;
}

CommState& comm_state(MPI_Comm comm) {
  void* attr = nullptr;
  int found = 0;
  if (g_keyval == MPI_KEYVAL_INVALID)
    if (int rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_state, &g_keyval, nullptr); rc != MPI_SUCCESS)
      throw MpiError(rc);
  PMPI_Comm_get_attr(comm, g_keyval, &attr, &found);
  if (found) return *static_cast<CommState*>(attr);
  auto state = std::make_unique<CommState>();
  if (int rc = PMPI_Comm_dup(comm, &state->dup); rc != MPI_SUCCESS) throw MpiError(rc);
  if (int rc = PMPI_Comm_set_attr(comm, g_keyval, state.get()); rc != MPI_SUCCESS) {
    PMPI_Comm_free(&state->dup);
    throw MpiError(rc);
  }
  return *state.release();  // owned by the attribute from here on; see delete_state
}

void load_config() {
  g_config = config_from_environment();
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (const std::string& e : g_config.errors) std::fprintf(stderr, "gencoll (rank %d): %s\n", rank, e.c_str());
  if (!g_config.errors.empty()) PMPI_Abort(MPI_COMM_WORLD, 1);
  // Ranks that disagree would run mismatched schedules and hang: compare a hash
  // of the settings once, here, and stop with a message instead.
  unsigned long h = std::hash<std::string>{}(g_config.fingerprint());
  unsigned long lo = 0, hi = 0;
  PMPI_Allreduce(&h, &lo, 1, MPI_UNSIGNED_LONG, MPI_MIN, MPI_COMM_WORLD);
  PMPI_Allreduce(&h, &hi, 1, MPI_UNSIGNED_LONG, MPI_MAX, MPI_COMM_WORLD);
  if (lo != hi) {
    if (h != lo || rank == 0)
      std::fprintf(stderr, "gencoll (rank %d): GENCOLL_* settings differ between ranks; this rank has %s\n", rank,
                   g_config.fingerprint().c_str());
    PMPI_Abort(MPI_COMM_WORLD, 1);
  }
}

// Whether gencoll serves this call; logs why not when GENCOLL_DEBUG=1.
bool usable(Collective c, MPI_Comm comm, MPI_Op op, bool* commutative) {
  const Selection& sel = g_config[c];
  if (!sel.alg) return false;
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter) return false;
  *commutative = true;
  if (c == Collective::allreduce || c == Collective::reduce) {
    int commute = 1;
    PMPI_Op_commutative(op, &commute);
    *commutative = commute != 0;
    if (!commute && requires_commutative(c, *sel.alg)) {
      if (g_config.debug)
        std::fprintf(stderr, "gencoll: %s %s needs a commutative op; using the MPI's own algorithm\n", to_string(c),
                     to_string(*sel.alg));
      return false;
    }
  }
  return true;
}

int run(Collective c, MPI_Comm comm, std::uint64_t count, bool commutative, PmpiBuffers bufs, int root = 0) {
  const Selection& sel = g_config[c];
  CommState& state = comm_state(comm);
  MPI_Comm pc = state.dup;
  CollParams prm;
  prm.coll = c;
  prm.alg = *sel.alg;
  PMPI_Comm_size(pc, &prm.p);
  PMPI_Comm_rank(pc, &prm.rank);
  prm.k = sel.k;
  prm.count = count;
  prm.commutative = commutative;
  prm.root = root;
  if (g_config.debug && prm.rank == 0) {
    int size = 0;
    PMPI_Type_size(bufs.type, &size);
    std::fprintf(stderr, "gencoll: %s count=%llu bytes=%llu p=%d root=%d algorithm=%s k=%d\n", to_string(c),
                 static_cast<unsigned long long>(count), static_cast<unsigned long long>(count) * size, prm.p, root,
                 to_string(prm.alg), effective_radix(prm.alg, prm.p, prm.k));
  }
  PmpiTransport t(pc, bufs, g_config.wait);
  execute(*state.schedule(prm), t);
  return MPI_SUCCESS;
}

template <typename F>
int guarded(F&& f) {
  try {
    return f();
  } catch (const MpiError& e) {
    return e.code;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gencoll: internal error: %s\n", e.what());
    return MPI_ERR_INTERN;
  }
}

}  // namespace
}  // namespace gencoll

using namespace gencoll;

extern "C" {

int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) load_config();
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) load_config();
  return rc;
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  bool commutative = true;
  if (count <= 0 || !usable(Collective::allreduce, comm, op, &commutative))
    return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
  return guarded([&] {
    PmpiBuffers b;
    b.send = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    b.send_count = count;
    b.send_type = type;
    b.recv = recvbuf;
    b.type = type;
    b.op = op;
    return run(Collective::allreduce, comm, static_cast<std::uint64_t>(count), commutative, b);
  });
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
  bool commutative = true;
  if (recvcount <= 0 || !usable(Collective::allgather, comm, MPI_OP_NULL, &commutative))
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return guarded([&] {
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    MPI_Aint lb = 0, extent = 0;
    PMPI_Type_get_extent(recvtype, &lb, &extent);
    PmpiBuffers b;
    if (sendbuf == MPI_IN_PLACE) {
      b.send = static_cast<char*>(recvbuf) + static_cast<MPI_Aint>(rank) * recvcount * extent;
      b.send_count = recvcount;
      b.send_type = recvtype;
    } else {
      b.send = sendbuf;
      b.send_count = sendcount;
      b.send_type = sendtype;
    }
    b.recv = recvbuf;
    b.type = recvtype;
    return run(Collective::allgather, comm, static_cast<std::uint64_t>(recvcount), true, b);
  });
}

int MPI_Bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  bool commutative = true;
  if (count <= 0 || !usable(Collective::bcast, comm, MPI_OP_NULL, &commutative))
    return PMPI_Bcast(buffer, count, type, root, comm);
  return guarded([&] {
    PmpiBuffers b;
    b.send = buffer;
    b.send_count = count;
    b.send_type = type;
    b.recv = buffer;
    b.type = type;
    return run(Collective::bcast, comm, static_cast<std::uint64_t>(count), true, b, root);
  });
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
  bool commutative = true;
  if (count <= 0 || !usable(Collective::reduce, comm, op, &commutative))
    return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
  return guarded([&] {
    PmpiBuffers b;
    b.send = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;  // MPI_IN_PLACE is only valid at the root
    b.send_count = count;
    b.send_type = type;
    b.recv = recvbuf;  // significant at the root only; the schedule never touches it elsewhere
    b.type = type;
    b.op = op;
    return run(Collective::reduce, comm, static_cast<std::uint64_t>(count), commutative, b, root);
  });
}

}  // extern "C"
