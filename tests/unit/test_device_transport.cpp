// The device transport on a fake device (tests/unit/fake_device.hpp): every
// rank is a thread with its own "GPU", messages go through an in-memory wire
// that refuses device pointers unless it plays a GPU-aware MPI, and the
// results must equal, bit for bit, those of the same schedules run on host
// memory with the host path's reduction (`inout = in op inout`, as
// MPI_Reduce_local).
#include <catch2/catch.hpp>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

#include "coll/algorithms.hpp"
#include "tests/unit/fake_device.hpp"
#include "tests/unit/loopback.hpp"
#include "src/exec/device_transport.hpp"

using namespace gencoll;
using gencoll::test::FakeDevice;
using gencoll::test::Mailbox;

namespace {

// Delivers eagerly; a receive completes when its message is there. As a
// GPU-unaware MPI it throws on device pointers, and it counts what it saw.
class MailboxWire final : public Wire {
 public:
  MailboxWire(Mailbox& mb, int rank, std::size_t elem_bytes, const gpu::DeviceOps* dev, bool gpu_aware)
      : mb_(mb), rank_(rank), elem_(elem_bytes), dev_(dev), gpu_aware_(gpu_aware) {}

  Request isend(int peer, std::uint32_t tag, const void* buf, std::uint64_t count) override {
    note(buf);
    const char* p = static_cast<const char*>(buf);
    std::vector<char> bytes(p, p + count * elem_);
    {
      std::lock_guard<std::mutex> g(mb_.m);
      if (!mb_.msgs.emplace(std::make_tuple(rank_, peer, tag), std::move(bytes)).second)
        throw std::logic_error("two messages with one tag in flight");
    }
    mb_.cv.notify_all();
    pending_.push_back({true, 0, 0, nullptr, 0});
    return pending_.size() - 1;
  }
  Request irecv(int peer, std::uint32_t tag, void* buf, std::uint64_t count) override {
    note(buf);
    pending_.push_back({false, peer, tag, static_cast<char*>(buf), count * elem_});
    return pending_.size() - 1;
  }
  void wait_some(std::vector<Request>& done) override {
    std::unique_lock<std::mutex> g(mb_.m);
    for (;;) {
      for (std::size_t i = 0; i < pending_.size(); ++i) {
        Pending& p = pending_[i];
        if (p.finished) continue;
        if (!p.is_send) {
          auto it = mb_.msgs.find(std::make_tuple(p.peer, rank_, p.tag));
          if (it == mb_.msgs.end()) continue;
          if (it->second.size() != p.bytes) throw std::logic_error("message size mismatch");
          std::memcpy(p.buf, it->second.data(), p.bytes);
          mb_.msgs.erase(it);
        }
        p.finished = true;
        done.push_back(i);
      }
      if (!done.empty()) return;
      mb_.cv.wait(g);
    }
  }

  int device_pointers = 0, pinned_pointers = 0, host_pointers = 0;

 private:
  void note(const void* buf) {
    const gpu::MemoryKind k = dev_ ? dev_->memory_kind(buf) : gpu::MemoryKind::host;
    if (k == gpu::MemoryKind::device) {
      if (!gpu_aware_) throw std::logic_error("a device pointer reached an MPI that is not GPU-aware");
      ++device_pointers;
    } else if (k == gpu::MemoryKind::pinned) {
      ++pinned_pointers;
    } else {
      ++host_pointers;
    }
  }
  struct Pending {
    bool is_send;
    int peer;
    std::uint32_t tag;
    char* buf;
    std::size_t bytes;
    bool finished = false;
  };
  Mailbox& mb_;
  int rank_;
  std::size_t elem_;
  const gpu::DeviceOps* dev_;
  bool gpu_aware_;
  std::vector<Pending> pending_;
};

// The host path in miniature: host buffers, host scratch, reductions as
// MPI_Reduce_local computes them.
template <typename T>
class HostTransport final : public Transport {
 public:
  using Op = T (*)(T in, T inout);
  HostTransport(Wire& wire, T* send, T* recv, Op op) : wire_(wire), send_(send), recv_(recv), op_(op) {}
  void prepare(const Schedule& s) override { tmp_.assign(s.tmp_count, T{}); }
  Request isend(int peer, std::uint32_t tag, const Range& src) override {
    return wire_.isend(peer, tag, at(src), src.count);
  }
  Request irecv(int peer, std::uint32_t tag, const Range& dst) override {
    return wire_.irecv(peer, tag, at(dst), dst.count);
  }
  void wait_some(std::vector<Request>& done) override { wire_.wait_some(done); }
  void reduce(const Range& in, const Range& inout) override { test::reduce_elements(at(in), at(inout), in.count, op_); }
  void copy(const Range& src, const Range& dst) override { test::copy_elements(at(src), at(dst), dst.count); }
  void permute(const Range& region, const PermutationSpec& spec) override {
    test::permute_units(at(region), region.count, spec);
  }

 private:
  T* at(const Range& r) { return (r.buf == Buf::send ? send_ : r.buf == Buf::recv ? recv_ : tmp_.data()) + r.offset; }
  Wire& wire_;
  T* send_;
  T* recv_;
  Op op_;
  std::vector<T> tmp_;
};

// One collective on every rank. send[r], recv[r]: each rank's buffers (recv[r]
// empty where the call has no result there). in_place: the input is read from
// recv, as MPI_IN_PLACE resolves it.
template <typename T>
struct Case {
  CollParams prm;
  std::vector<std::vector<T>> send, recv;
  bool in_place = false;
};

struct DeviceMode {
  bool stage;
  bool gpu_aware;  // what the wire accepts
};

template <typename T>
void run_ranks(int p, const std::function<void(int, Mailbox&)>& body) {
  Mailbox mb;
  std::vector<std::exception_ptr> errors(p);
  std::vector<std::thread> threads;
  for (int r = 0; r < p; ++r)
    threads.emplace_back([&, r] {
      try {
        body(r, mb);
      } catch (...) {
        errors[r] = std::current_exception();
        mb.cv.notify_all();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  REQUIRE(mb.msgs.empty());
}

template <typename T>
std::vector<std::vector<T>> run_host(Case<T> c, typename HostTransport<T>::Op op) {
  run_ranks<T>(c.prm.p, [&](int r, Mailbox& mb) {
    CollParams mine = c.prm;
    mine.rank = r;
    MailboxWire wire(mb, r, sizeof(T), nullptr, false);
    T* recv = c.recv[r].empty() ? nullptr : c.recv[r].data();
    HostTransport<T> t(wire, c.in_place ? recv : c.send[r].data(), recv, op);
    execute(generate(mine), t);
  });
  return c.recv;
}

struct RankStats {
  FakeDevice::Counts counts;
  int device_pointers = 0, pinned_pointers = 0, host_pointers = 0;
};

template <typename T>
std::vector<std::vector<T>> run_device(Case<T> c, std::optional<DeviceReduction> red, DeviceMode mode,
                                       std::vector<RankStats>* stats = nullptr) {
  if (stats) stats->assign(c.prm.p, {});
  run_ranks<T>(c.prm.p, [&](int r, Mailbox& mb) {
    CollParams mine = c.prm;
    mine.rank = r;
    FakeDevice dev;
    // The user's buffers, uploaded to this rank's "GPU".
    const auto upload = [&](std::vector<T>& host) {
      gpu::DeviceMemory m(dev, gpu::DeviceMemory::Kind::device, host.size() * sizeof(T));
      if (!host.empty()) dev.copy(m.get(), host.data(), host.size() * sizeof(T));
      return m;
    };
    gpu::DeviceMemory send = upload(c.send[r]), recv = upload(c.recv[r]);
    {
      DeviceScratch scratch(dev);
      MailboxWire wire(mb, r, sizeof(T), &dev, mode.gpu_aware);
      DeviceBuffers b{c.in_place ? recv.get() : send.get(), recv.get(), sizeof(T), red};
      DeviceTransport t(wire, scratch, b, mode.stage);
      execute(generate(mine), t);
      if (stats) (*stats)[r] = {dev.counts, wire.device_pointers, wire.pinned_pointers, wire.host_pointers};
    }
    if (!c.recv[r].empty()) dev.copy(c.recv[r].data(), recv.get(), c.recv[r].size() * sizeof(T));
  });
  return c.recv;
}

std::vector<int> radices_for(int p) {
  std::vector<int> ks{2, 3, 4, p, p + 1};
  std::sort(ks.begin(), ks.end());
  ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
  ks.erase(std::remove_if(ks.begin(), ks.end(), [](int k) { return k < 2; }), ks.end());
  return ks;
}

const DeviceMode kModes[] = {{true, false}, {false, true}};  // staging=always; never (GPU-aware MPI)

double add(double in, double inout) { return inout + in; }
std::int32_t max32(std::int32_t in, std::int32_t inout) { return inout < in ? in : inout; }
std::int64_t none(std::int64_t, std::int64_t inout) { return inout; }

}  // namespace

TEST_CASE("device allreduce equals the host path bit for bit", "[device]") {
  for (Algorithm alg : algorithms_for(Collective::allreduce))
    for (int p : {1, 2, 3, 5, 6, 8})
      for (int k : radices_for(p))
        for (bool in_place : {false, true})
          for (const DeviceMode& mode : kModes) {
            const std::uint64_t n = 3 * p + 2;
            Case<double> c{{Collective::allreduce, alg, p, 0, k, n, 0, true, false, {}, 0}, {}, {}, in_place};
            for (int r = 0; r < p; ++r) {
              std::vector<double> v(n);
              for (std::uint64_t i = 0; i < n; ++i) v[i] = 1.0 / (3.0 + r * 7.0 + i) * (r % 2 ? 1e8 : 1e-3);
              c.send.push_back(in_place ? std::vector<double>() : v);
              c.recv.push_back(in_place ? v : std::vector<double>(n, -1.0));
            }
            INFO(to_string(alg) << " p=" << p << " k=" << k << " in_place=" << in_place << " stage=" << mode.stage);
            const auto host = run_host(c, add);
            // The staged runs fold each round in one kernel, as the interposition
            // library does on device buffers: the same bits as the host's chain.
            Case<double> dc = c;
            dc.prm.fold_rounds = mode.stage;
            const auto dev = run_device(dc, DeviceReduction{gpu::ElemType::float64, gpu::ReduceOp::sum}, mode);
            for (int r = 0; r < p; ++r) REQUIRE(std::memcmp(dev[r].data(), host[r].data(), n * sizeof(double)) == 0);
          }
}

TEST_CASE("device reduce_scatter_block equals the host path bit for bit", "[device]") {
  for (Algorithm alg : algorithms_for(Collective::reduce_scatter_block))
    for (int p : {1, 2, 3, 5, 6})
      for (int k : radices_for(p))
        for (bool in_place : {false, true})
          for (const DeviceMode& mode : kModes) {
            const std::uint64_t n = 3;  // per block
            const std::uint64_t total = n * static_cast<std::uint64_t>(p);
            Case<double> c{{Collective::reduce_scatter_block, alg, p, 0, k, n, 0, true, false, {}, 0}, {}, {}, in_place};
            for (int r = 0; r < p; ++r) {
              std::vector<double> v(total);
              for (std::uint64_t i = 0; i < total; ++i) v[i] = 1.0 / (3.0 + r * 7.0 + i) * (r % 2 ? 1e8 : 1e-3);
              c.send.push_back(in_place ? std::vector<double>() : v);
              c.recv.push_back(in_place ? v : std::vector<double>(n, -1.0));  // in place: all p blocks
            }
            INFO(to_string(alg) << " p=" << p << " k=" << k << " in_place=" << in_place << " stage=" << mode.stage);
            const auto host = run_host(c, add);
            Case<double> dc = c;
            dc.prm.fold_rounds = mode.stage;
            const auto dev = run_device(dc, DeviceReduction{gpu::ElemType::float64, gpu::ReduceOp::sum}, mode);
            for (int r = 0; r < p; ++r) REQUIRE(std::memcmp(dev[r].data(), host[r].data(), n * sizeof(double)) == 0);
          }
}

TEST_CASE("device reduce equals the host path at every root", "[device]") {
  for (Algorithm alg : algorithms_for(Collective::reduce))
    for (int p : {1, 2, 3, 5, 7})
      for (int k : radices_for(p))
        for (int root = 0; root < p; ++root)
          for (const DeviceMode& mode : kModes) {
            const std::uint64_t n = p + 4;
            Case<std::int32_t> c{{Collective::reduce, alg, p, 0, k, n, root, true, false, {}, 0}, {}, {}, false};
            for (int r = 0; r < p; ++r) {
              std::vector<std::int32_t> v(n);
              for (std::uint64_t i = 0; i < n; ++i) v[i] = static_cast<std::int32_t>((r * 37 + i * 11) % 53) - 20;
              c.send.push_back(v);
              c.recv.push_back(r == root ? std::vector<std::int32_t>(n, 0) : std::vector<std::int32_t>());
            }
            INFO(to_string(alg) << " p=" << p << " k=" << k << " root=" << root << " stage=" << mode.stage);
            const auto host = run_host(c, max32);
            Case<std::int32_t> dc = c;
            dc.prm.fold_rounds = mode.stage;  // as in the allreduce test
            const auto dev = run_device(dc, DeviceReduction{gpu::ElemType::int32, gpu::ReduceOp::max}, mode);
            REQUIRE(dev[root] == host[root]);
          }
}

TEST_CASE("device allgather and bcast equal the host path", "[device]") {
  for (Collective coll : {Collective::allgather, Collective::bcast})
    for (Algorithm alg : algorithms_for(coll))
      for (int p : {1, 2, 3, 4, 5, 7, 9})
        for (int k : radices_for(p))
          for (const DeviceMode& mode : kModes) {
            const std::uint64_t n = coll == Collective::allgather ? 3 : std::uint64_t(2 * p + 1);
            const int root = p / 2;
            Case<std::int64_t> c{{coll, alg, p, 0, k, n, coll == Collective::bcast ? root : 0, true, false, {}, 0}, {}, {}, false};
            for (int r = 0; r < p; ++r) {
              std::vector<std::int64_t> v(n);
              for (std::uint64_t i = 0; i < n; ++i) v[i] = r * 1000 + std::int64_t(i);
              if (coll == Collective::allgather) {
                c.send.push_back(v);
                c.recv.push_back(std::vector<std::int64_t>(n * p, -1));
              } else {  // one buffer: the root's data, the others' result
                c.recv.push_back(r == root ? v : std::vector<std::int64_t>(n, -1));
              }
            }
            c.in_place = coll == Collective::bcast;
            if (c.in_place) c.send.assign(p, {});
            INFO(to_string(coll) << " " << to_string(alg) << " p=" << p << " k=" << k << " stage=" << mode.stage);
            const auto host = run_host(c, none);
            const auto dev = run_device(c, std::nullopt, mode);
            for (int r = 0; r < p; ++r) REQUIRE(dev[r] == host[r]);
          }
}

TEST_CASE("staging decides which pointers the MPI sees", "[device]") {
  const int p = 6;
  const std::uint64_t n = 12;
  Case<double> c{{Collective::allreduce, Algorithm::permuted_recursive_multiplying, p, 0, 3, n, 0, true, false, {}, 0}, {}, {}, false};
  for (int r = 0; r < p; ++r) {
    c.send.push_back(std::vector<double>(n, r + 1.0));
    c.recv.push_back(std::vector<double>(n, 0.0));
  }
  const DeviceReduction sum{gpu::ElemType::float64, gpu::ReduceOp::sum};
  std::vector<RankStats> staged, direct;
  run_device(c, sum, {true, false}, &staged);  // the wire throws on any device pointer
  run_device(c, sum, {false, true}, &direct);
  for (int r = 0; r < p; ++r) {
    INFO("rank " << r);
    CHECK(staged[r].device_pointers == 0);
    CHECK(staged[r].pinned_pointers > 0);
    CHECK(staged[r].host_pointers == 0);
    CHECK(direct[r].pinned_pointers == 0);
    CHECK(direct[r].device_pointers == staged[r].pinned_pointers);
    CHECK(direct[r].host_pointers == 0);
    // Scratch on the device, local steps there; one pinned arena per call.
    CHECK(staged[r].counts.pinned_allocs == 1);
    CHECK(direct[r].counts.pinned_allocs == 0);
    CHECK(direct[r].counts.reduces > 0);
  }
  // Permuted recursive multiplying allgather ends in one permutation, on the device.
  Case<double> g{make_params(Collective::allgather, Algorithm::permuted_recursive_multiplying, p, 3, 2), {}, {}, false};
  for (int r = 0; r < p; ++r) {
    g.send.push_back(std::vector<double>(2, r));
    g.recv.push_back(std::vector<double>(2 * p, -1));
  }
  run_device(g, std::nullopt, {false, true}, &direct);
  for (int r = 0; r < p; ++r) CHECK(direct[r].counts.permutes == 1);
  CHECK(stage_messages(GpuStaging::auto_detect, false));
  CHECK_FALSE(stage_messages(GpuStaging::auto_detect, true));
  CHECK(stage_messages(GpuStaging::always, true));
  CHECK_FALSE(stage_messages(GpuStaging::never, false));
}

TEST_CASE("device scratch is kept between calls and private to one call at a time", "[device]") {
  FakeDevice dev;
  DeviceScratch shared(dev);
  {
    DeviceScratch::Use a(shared);
    void* first = (*a).device(1024);
    CHECK((*a).device(512) == first);  // large enough: no new allocation
    CHECK(dev.memory_kind((*a).pinned(100)) == gpu::MemoryKind::pinned);
    DeviceScratch::Use b(shared);  // another thread's call meanwhile
    CHECK(&*b != &shared);
    CHECK((*b).device(64) != first);
  }
  CHECK(dev.counts.device_allocs == 2);
  DeviceScratch::Use c(shared);
  CHECK(&*c == &shared);
  (*c).device(4096);
  CHECK(dev.counts.device_allocs == 3);
  CHECK(dev.memory_kind((*c).device(4096)) == gpu::MemoryKind::device);
}

TEST_CASE("device scratch kept from a call on another GPU is not used on this one", "[device]") {
  FakeDevice dev;
  DeviceScratch shared(dev);
  {
    DeviceScratch::Use u(shared);
    (*u).device(1024);
  }
  dev.current_gpu = 1;  // the rank moved to its second GPU
  DeviceScratch::Use u(shared);
  void* second = (*u).device(512);
  CHECK(dev.counts.device_allocs == 2);  // a new allocation, on this GPU
  CHECK(dev.memory_kind(second) == gpu::MemoryKind::device);
}

TEST_CASE("device scratch beyond the keep limit goes back when its call ends", "[device]") {
  FakeDevice dev;
  DeviceScratch scratch(dev, 1000);
  {
    DeviceScratch::Use u(scratch);
    (*u).device(800);
    (*u).pinned(900);
  }
  CHECK(scratch.kept_bytes() == 1700);  // within the limit: kept
  {
    DeviceScratch::Use u(scratch);
    CHECK(dev.memory_kind((*u).device(4096)) == gpu::MemoryKind::device);
    (*u).pinned(500);
    CHECK(scratch.kept_bytes() == 4096 + 900);  // held for the whole call
  }
  CHECK(scratch.kept_bytes() == 900);  // the large device buffer went back, the pinned one stays
  CHECK(dev.counts.device_allocs == 2);
  CHECK(dev.counts.pinned_allocs == 1);
  scratch.release();
  CHECK(scratch.kept_bytes() == 0);
}

TEST_CASE("a folded round is one reduction kernel on the device", "[device]") {
  for (bool fold : {false, true})
    for (auto [p, k, per_rank] : {std::tuple{9, 3, fold ? 2 : 4}, std::tuple{8, 4, fold ? 2 : 4},
                                  std::tuple{16, 16, fold ? 1 : 15}}) {
      const std::uint64_t n = 5;
      Case<double> c{{Collective::allreduce, Algorithm::recursive_multiplying, p, 0, k, n, 0, true, false, {}, 0}, {}, {}, false};
      c.prm.fold_rounds = fold;
      for (int r = 0; r < p; ++r) {
        c.send.push_back(std::vector<double>(n, 1.0 + r));
        c.recv.push_back(std::vector<double>(n, -1.0));
      }
      std::vector<RankStats> stats;
      const auto dev = run_device(c, DeviceReduction{gpu::ElemType::float64, gpu::ReduceOp::sum}, kModes[0], &stats);
      INFO("p=" << p << " k=" << k << " fold=" << fold);
      for (int r = 0; r < p; ++r) {
        CHECK(stats[r].counts.reduces == per_rank);
        CHECK(dev[r] == std::vector<double>(n, p * (p + 1) / 2.0));
      }
    }
}

TEST_CASE("a k-nomial level's children are folded in one kernel at their parent", "[device]") {
  for (bool fold : {false, true}) {
    const int p = 9;
    const std::uint64_t n = 4;
    Case<double> c{{Collective::reduce, Algorithm::knomial, p, 0, p, n, 0, true, false, {}, 0}, {}, {}, false};
    c.prm.fold_rounds = fold;
    for (int r = 0; r < p; ++r) {
      c.send.push_back(std::vector<double>(n, 1.0 + r));
      c.recv.push_back(r == 0 ? std::vector<double>(n, -1.0) : std::vector<double>());
    }
    std::vector<RankStats> stats;
    const auto dev = run_device(c, DeviceReduction{gpu::ElemType::float64, gpu::ReduceOp::sum}, kModes[0], &stats);
    INFO("fold=" << fold);
    CHECK(stats[0].counts.reduces == (fold ? 1 : p - 1));  // the root's eight children, one level
    for (int r = 1; r < p; ++r) CHECK(stats[r].counts.reduces == 0);
    CHECK(dev[0] == std::vector<double>(n, p * (p + 1) / 2.0));
  }
}
