// The executor with real data: all ranks of a schedule run as threads over an
// in-memory transport, with a non-commutative op (2x2 matrix product mod a prime)
// and with floating-point sums whose bits must agree on every rank.
#include <catch2/catch.hpp>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

#include "coll/algorithms.hpp"
#include "tests/unit/c_transport.hpp"
#include "tests/unit/loopback.hpp"
#include "src/cabi/gencoll_mpich.h"
#include "src/exec/program.hpp"
#include "src/exec/transport.hpp"

using namespace gencoll;
using gencoll::test::Mailbox;

namespace {

constexpr std::int64_t kPrime = 65521;

struct Mat {
  std::int64_t a, b, c, d;
  bool operator==(const Mat& o) const { return a == o.a && b == o.b && c == o.c && d == o.d; }
};
Mat mul(const Mat& x, const Mat& y) {
  return {(x.a * y.a + x.b * y.c) % kPrime, (x.a * y.b + x.b * y.d) % kPrime, (x.c * y.a + x.d * y.c) % kPrime,
          (x.c * y.b + x.d * y.d) % kPrime};
}

// Messages go through the shared mailbox. An `immediate` transport reports
// operations that finished while being posted as Transport::kCompleted, as
// MPICH's glue does.

template <typename T>
class LoopbackTransport final : public Transport {
 public:
  using Op = T (*)(const T&, const T&);
  LoopbackTransport(Mailbox& mb, int rank, std::vector<T>& send, std::vector<T>& recv, Op op, bool immediate = false)
      : mb_(mb), rank_(rank), send_(send), recv_(recv), op_(op), immediate_(immediate) {}

  void prepare(const Schedule& s) override { tmp_.assign(s.tmp_count, T{}); }
  Request isend(int peer, std::uint32_t tag, const Range& src) override {
    const T* p = at(src);
    std::vector<char> bytes(reinterpret_cast<const char*>(p), reinterpret_cast<const char*>(p + src.count));
    {
      std::lock_guard<std::mutex> g(mb_.m);
      REQUIRE(mb_.msgs.emplace(std::make_tuple(rank_, peer, tag), std::move(bytes)).second);
    }
    mb_.cv.notify_all();
    if (immediate_) return kCompleted;
    pending_.push_back({true, 0, 0, {}});
    return pending_.size() - 1;
  }
  Request irecv(int peer, std::uint32_t tag, const Range& dst) override {
    if (immediate_) {
      std::lock_guard<std::mutex> g(mb_.m);
      if (take(peer, tag, dst)) return kCompleted;
    }
    pending_.push_back({false, peer, tag, dst});
    return pending_.size() - 1;
  }
  void wait_some(std::vector<Request>& done) override {
    std::unique_lock<std::mutex> g(mb_.m);
    for (;;) {
      for (std::size_t i = 0; i < pending_.size(); ++i) {
        Pending& p = pending_[i];
        if (p.finished) continue;
        if (p.is_send) { p.finished = true; done.push_back(i); continue; }
        if (!take(p.peer, p.tag, p.dst)) continue;
        p.finished = true;
        done.push_back(i);
      }
      if (!done.empty()) return;
      mb_.cv.wait(g);
    }
  }
  void reduce(const Range& in, const Range& inout) override { test::reduce_elements(at(in), at(inout), in.count, op_); }
  void copy(const Range& src, const Range& dst) override { test::copy_elements(at(src), at(dst), src.count); }
  void permute(const Range& region, const PermutationSpec& spec) override {
    test::permute_units(at(region), region.count, spec);
  }

 private:
  struct Pending {
    bool is_send;
    int peer;
    std::uint32_t tag;
    Range dst;
    bool finished = false;
  };
  // With the mailbox locked: moves the message into place if it is there.
  bool take(int peer, std::uint32_t tag, const Range& dst) {
    auto it = mb_.msgs.find(std::make_tuple(peer, rank_, tag));
    if (it == mb_.msgs.end()) return false;
    REQUIRE(it->second.size() == dst.count * sizeof(T));
    std::memcpy(at(dst), it->second.data(), it->second.size());
    mb_.msgs.erase(it);
    return true;
  }
  T* at(const Range& r) {
    // Reduce must not write the result buffer of non-roots (it may not exist):
    // those ranks get an empty one.
    if (r.buf == Buf::recv) REQUIRE(r.end() <= recv_.size());
    if (r.buf == Buf::send) REQUIRE(r.end() <= send_.size());
    T* base = r.buf == Buf::send ? send_.data() : r.buf == Buf::recv ? recv_.data() : tmp_.data();
    return base + r.offset;
  }
  Mailbox& mb_;
  int rank_;
  std::vector<T>& send_;
  std::vector<T>& recv_;
  Op op_;
  bool immediate_;
  std::vector<T> tmp_;
  std::vector<Pending> pending_;
};

template <typename T>
std::vector<std::vector<T>> run_all(CollParams prm, std::vector<std::vector<T>> send,
                                    std::vector<std::vector<T>> recv, typename LoopbackTransport<T>::Op op) {
  Mailbox mb;
  std::vector<std::thread> threads;
  for (int r = 0; r < prm.p; ++r) {
    threads.emplace_back([&, r] {
      CollParams mine = prm;
      mine.rank = r;
      // Ranks 1 and 2 mod 4: completions at posting, as in the MPICH module;
      // 0 and 3: every completion through wait_some. Odd ranks run the
      // compiled program, as the bindings do; even ranks the general executor.
      const bool immediate = r % 4 == 1 || r % 4 == 2;
      LoopbackTransport<T> t(mb, r, send[r], recv[r], op, immediate);
      const Schedule s = generate(mine);
      if (r % 2 == 1) {
        ProgramRunner runner;
        runner.run(compile(s), t);
      } else if (immediate) {
        execute(s, plan_execution(s), t);
      } else {
        execute(s, t);
      }
    });
  }
  for (auto& t : threads) t.join();
  REQUIRE(mb.msgs.empty());
  return recv;
}

template <typename T>
std::vector<std::vector<T>> run_all(CollParams prm, std::vector<std::vector<T>> send, std::size_t recv_size,
                                    typename LoopbackTransport<T>::Op op) {
  return run_all<T>(prm, std::move(send), std::vector<std::vector<T>>(prm.p, std::vector<T>(recv_size)), op);
}

std::vector<int> radices_for(int p) {
  std::vector<int> ks{2, 3, 4, p, p + 1};
  std::sort(ks.begin(), ks.end());
  ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
  ks.erase(std::remove_if(ks.begin(), ks.end(), [](int k) { return k < 2; }), ks.end());
  return ks;
}

// Roots 0, 1, the middle and the last: the generators place a root by
// relabelling ranks, and the checker's sweeps ([schedules]) take three
// roots to p = 64; every root of p <= 12 here took a minute of each test run
// (more under the sanitizers) for nothing they did not.
std::vector<int> roots_for(int p) {
  std::vector<int> roots{0, 1, p / 2, p - 1};
  std::sort(roots.begin(), roots.end());
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  roots.erase(std::remove_if(roots.begin(), roots.end(), [p](int r) { return r >= p; }), roots.end());
  return roots;
}

}  // namespace

TEST_CASE("allreduce with a non-commutative op reduces in rank order on every rank", "[executor]") {
  for (Algorithm alg : algorithms_for(Collective::allreduce)) {
    if (requires_commutative(Collective::allreduce, alg)) continue;
    for (int p = 1; p <= 12; ++p)
      for (int k : radices_for(p))
        for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t(p + 1), std::uint64_t{37}}) {
          CollParams prm{Collective::allreduce, alg, p, 0, k, n, 0, false, false, {}};
          prm.fold_rounds = n == 37;  // folded rounds run pairwise on a host transport
          std::vector<std::vector<Mat>> in(p, std::vector<Mat>(n));
          for (int r = 0; r < p; ++r)
            for (std::uint64_t i = 0; i < n; ++i) in[r][i] = Mat{r + 1 + std::int64_t(i), 1, 1, std::int64_t(i % 3)};
          std::vector<Mat> expect = in[0];
          for (int r = 1; r < p; ++r)
            for (std::uint64_t i = 0; i < n; ++i) expect[i] = mul(expect[i], in[r][i]);
          auto out = run_all<Mat>(prm, in, n, mul);
          INFO(to_string(alg) << " p=" << p << " k=" << k << " n=" << n << " fold=" << prm.fold_rounds);
          for (int r = 0; r < p; ++r) REQUIRE(out[r] == expect);
        }
  }
}

TEST_CASE("allreduce of doubles gives the same bits on every rank", "[executor]") {
  for (Algorithm alg : algorithms_for(Collective::allreduce))
    for (int p : {2, 3, 5, 6, 7, 9, 12})
      for (int k : radices_for(p)) {
        const std::uint64_t n = 2 * p + 3;
        CollParams prm{Collective::allreduce, alg, p, 0, k, n, 0, true, false, {}};
        std::vector<std::vector<double>> in(p, std::vector<double>(n));
        for (int r = 0; r < p; ++r)
          for (std::uint64_t i = 0; i < n; ++i) in[r][i] = 1.0 / (3.0 + r * 7.0 + i) * (r % 2 ? 1e8 : 1e-3);
        auto out = run_all<double>(prm, in, n, [](const double& a, const double& b) { return a + b; });
        INFO(to_string(alg) << " p=" << p << " k=" << k);
        for (int r = 1; r < p; ++r) REQUIRE(std::memcmp(out[r].data(), out[0].data(), n * sizeof(double)) == 0);
        for (std::uint64_t i = 0; i < n; ++i) {
          double ref = 0;
          for (int r = 0; r < p; ++r) ref += in[r][i];
          REQUIRE(out[0][i] == Approx(ref).epsilon(1e-12));
        }
      }
}

TEST_CASE("allgather delivers every block to every rank", "[executor]") {
  for (Algorithm alg : algorithms_for(Collective::allgather))
    for (int p = 1; p <= 12; ++p)
      for (int k : radices_for(p))
        for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t{5}}) {
          CollParams prm{Collective::allgather, alg, p, 0, k, n, 0, true, false, {}};
          std::vector<std::vector<std::int64_t>> in(p, std::vector<std::int64_t>(n));
          for (int r = 0; r < p; ++r)
            for (std::uint64_t i = 0; i < n; ++i) in[r][i] = r * 1000 + std::int64_t(i);
          auto out = run_all<std::int64_t>(prm, in, n * p, [](const std::int64_t& a, const std::int64_t&) { return a; });
          INFO(to_string(alg) << " p=" << p << " k=" << k << " n=" << n);
          for (int r = 0; r < p; ++r)
            for (int b = 0; b < p; ++b) REQUIRE(std::equal(in[b].begin(), in[b].end(), out[r].begin() + b * n));
        }
}

TEST_CASE("bcast delivers the root's buffer from the first, middle and last roots", "[executor]") {
  for (Algorithm alg : algorithms_for(Collective::bcast))
    for (int p = 1; p <= 12; ++p)
      for (int k : radices_for(p))
        for (int root : roots_for(p))
          for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t(p - 1), std::uint64_t(3 * p + 2)}) {
            if (n == 0) continue;
            CollParams prm{Collective::bcast, alg, p, 0, k, n, root, true, false, {}};
            std::vector<std::vector<std::int64_t>> buf(p, std::vector<std::int64_t>(n, -1));
            for (std::uint64_t i = 0; i < n; ++i) buf[root][i] = 7 * std::int64_t(i) + root;
            auto out = run_all<std::int64_t>(prm, std::vector<std::vector<std::int64_t>>(p), buf,
                                             [](const std::int64_t& a, const std::int64_t&) { return a; });
            INFO(to_string(alg) << " p=" << p << " k=" << k << " root=" << root << " n=" << n);
            for (int r = 0; r < p; ++r) REQUIRE(out[r] == buf[root]);
          }
}

TEST_CASE("reduce with a non-commutative op gives the rank-ordered product at the first, middle and last roots", "[executor]") {
  for (Algorithm alg : algorithms_for(Collective::reduce))
    for (int p = 1; p <= 12; ++p)
      for (int k : radices_for(p))
        for (int root : roots_for(p))
          for (bool commutative : {false, true}) {
            if (!commutative && requires_commutative(Collective::reduce, alg)) continue;  // the MPI's call
            const std::uint64_t n = p + 2;
            CollParams prm{Collective::reduce, alg, p, 0, k, n, root, commutative, false, {}};
            std::vector<std::vector<Mat>> in(p, std::vector<Mat>(n));
            for (int r = 0; r < p; ++r)
              for (std::uint64_t i = 0; i < n; ++i)  // diagonal matrices commute
                in[r][i] = commutative ? Mat{r + 2 + std::int64_t(i), 0, 0, r + 1} : Mat{r + 2 + std::int64_t(i), 1, 1, 0};
            std::vector<Mat> expect = in[0];
            for (int r = 1; r < p; ++r)
              for (std::uint64_t i = 0; i < n; ++i) expect[i] = mul(expect[i], in[r][i]);
            std::vector<std::vector<Mat>> recv(p);
            recv[root].resize(n);
            auto out = run_all<Mat>(prm, in, recv, mul);
            INFO(to_string(alg) << " p=" << p << " k=" << k << " root=" << root << " commutative=" << commutative);
            REQUIRE(out[root] == expect);
          }
}

TEST_CASE("reduce_scatter_block gives each rank its block of the product, in rank order where the op needs it",
          "[executor]") {
  for (Algorithm alg : algorithms_for(Collective::reduce_scatter_block))
    for (int p = 1; p <= 12; ++p)
      for (int k : radices_for(p))
        for (bool commutative : {false, true}) {
          if (!commutative && requires_commutative(Collective::reduce_scatter_block, alg)) continue;
          const std::uint64_t n = 3;  // per block
          const std::uint64_t total = n * static_cast<std::uint64_t>(p);
          CollParams prm{Collective::reduce_scatter_block, alg, p, 0, k, n, 0, commutative, false, {}};
          std::vector<std::vector<Mat>> in(p, std::vector<Mat>(total));
          for (int r = 0; r < p; ++r)
            for (std::uint64_t i = 0; i < total; ++i)  // diagonal matrices commute
              in[r][i] = commutative ? Mat{r + 2 + std::int64_t(i), 0, 0, r + 1} : Mat{r + 2 + std::int64_t(i), 1, 1, 0};
          std::vector<Mat> expect = in[0];
          for (int r = 1; r < p; ++r)
            for (std::uint64_t i = 0; i < total; ++i) expect[i] = mul(expect[i], in[r][i]);
          auto out = run_all<Mat>(prm, in, n, mul);
          INFO(to_string(alg) << " p=" << p << " k=" << k << " commutative=" << commutative);
          for (int r = 0; r < p; ++r)
            REQUIRE(std::equal(out[r].begin(), out[r].end(), expect.begin() + static_cast<std::ptrdiff_t>(r * n)));
        }
}

TEST_CASE("reduce_scatter gives each rank its block of recvcounts[rank] elements, empty blocks included",
          "[executor]") {
  for (Algorithm alg : algorithms_for(Collective::reduce_scatter))
    for (int p = 2; p <= 9; ++p)
      for (int k : radices_for(p))
        for (bool commutative : {false, true}) {
          if (!commutative && requires_commutative(Collective::reduce_scatter, alg)) continue;
          CollParams prm{Collective::reduce_scatter, alg, p, 0, k, 0, 0, commutative, false, {}};
          std::vector<std::uint64_t> first{0};
          for (int r = 0; r < p; ++r) {
            prm.counts.push_back(static_cast<std::uint64_t>((r * 5 + 2) % 4));  // 2, 3, 0, 1, 2, ...
            first.push_back(first.back() + prm.counts.back());
          }
          const std::uint64_t total = first.back();
          std::vector<std::vector<Mat>> in(p, std::vector<Mat>(total)), recv(p);
          for (int r = 0; r < p; ++r) {
            recv[r].resize(prm.counts[r]);
            for (std::uint64_t i = 0; i < total; ++i)
              in[r][i] = commutative ? Mat{r + 2 + std::int64_t(i), 0, 0, r + 1} : Mat{r + 2 + std::int64_t(i), 1, 1, 0};
          }
          std::vector<Mat> expect = in[0];
          for (int r = 1; r < p; ++r)
            for (std::uint64_t i = 0; i < total; ++i) expect[i] = mul(expect[i], in[r][i]);
          auto out = run_all<Mat>(prm, in, recv, mul);
          INFO(to_string(alg) << " p=" << p << " k=" << k << " commutative=" << commutative);
          for (int r = 0; r < p; ++r)
            REQUIRE(std::equal(out[r].begin(), out[r].end(), expect.begin() + static_cast<std::ptrdiff_t>(first[r]),
                               expect.begin() + static_cast<std::ptrdiff_t>(first[r + 1])));
        }
}

// ---- the C ABI that MPICH's glue calls (src/cabi/gencoll_mpich.h) ----------

namespace {

int c_alg(Algorithm a) {
  switch (a) {
    case Algorithm::knomial: return GENCOLL_KNOMIAL;
    case Algorithm::recursive_multiplying: return GENCOLL_RECURSIVE_MULTIPLYING;
    case Algorithm::permuted_recursive_multiplying: return GENCOLL_PERMUTED_RECURSIVE_MULTIPLYING;
    default: return GENCOLL_KRING;
  }
}

template <typename T>
std::vector<std::vector<T>> run_all_c(gencoll_call call, std::vector<std::vector<T>> send,
                                      std::vector<std::vector<T>> recv, typename LoopbackTransport<T>::Op op) {
  Mailbox mb;
  std::vector<std::thread> threads;
  std::vector<int> rc(static_cast<std::size_t>(call.p), -2);
  for (int r = 0; r < call.p; ++r) {
    threads.emplace_back([&, r] {
      gencoll_call mine = call;
      mine.rank = r;
      LoopbackTransport<T> lt(mb, r, send[r], recv[r], op, r % 2 == 1);
      test::CTable a{lt, {}};
      const gencoll_transport t = a.table();
      char err[128] = "";
      rc[static_cast<std::size_t>(r)] = gencoll_mpich_run(&mine, &t, err, sizeof err);
    });
  }
  for (auto& t : threads) t.join();
  REQUIRE(mb.msgs.empty());
  for (int r : rc) REQUIRE(r == 0);
  return recv;
}

}  // namespace

TEST_CASE("the MPICH C ABI runs the same schedules: permuted allgather, rank-ordered allreduce", "[executor][mpich]") {
  for (int p : {1, 2, 5, 8, 9, 12}) {
    for (int k : radices_for(p)) {
      for (Algorithm a : {Algorithm::recursive_multiplying, Algorithm::permuted_recursive_multiplying,
                          Algorithm::kring, Algorithm::knomial}) {
        INFO("p=" << p << " k=" << k << " " << to_string(a));
        const std::uint64_t count = 3;
        std::vector<std::vector<Mat>> send(p, std::vector<Mat>(count));
        for (int r = 0; r < p; ++r)
          for (std::uint64_t e = 0; e < count; ++e) send[r][e] = Mat{r + 1, static_cast<std::int64_t>(e), 1, 2};
        gencoll_call call{GENCOLL_ALLGATHER, c_alg(a), k, p, 0, 0, 1, count, nullptr, 0, 0};
        auto got = run_all_c<Mat>(call, send, std::vector<std::vector<Mat>>(p, std::vector<Mat>(count * p)), mul);
        for (int r = 0; r < p; ++r)
          for (int b = 0; b < p; ++b)
            for (std::uint64_t e = 0; e < count; ++e) REQUIRE(got[r][b * count + e] == send[b][e]);
        if (gencoll_mpich_requires_commutative(GENCOLL_ALLREDUCE, c_alg(a))) continue;
        call = gencoll_call{GENCOLL_ALLREDUCE, c_alg(a), k, p, 0, 0, 0, count, nullptr, 0, 0};
        got = run_all_c<Mat>(call, send, std::vector<std::vector<Mat>>(p, std::vector<Mat>(count)), mul);
        for (std::uint64_t e = 0; e < count; ++e) {
          Mat want = send[0][e];
          for (int r = 1; r < p; ++r) want = mul(want, send[r][e]);
          for (int r = 0; r < p; ++r) REQUIRE(got[r][e] == want);
        }
      }
    }
  }
}

TEST_CASE("the C ABI runs MPI_Reduce_scatter with the caller's recvcounts", "[executor][mpich]") {
  for (int p : {2, 5, 8})
    for (int alg : {GENCOLL_KNOMIAL, GENCOLL_RECURSIVE_MULTIPLYING, GENCOLL_KRING}) {
      INFO("p=" << p << " alg=" << gencoll_mpich_algorithm_name(alg));
      std::vector<std::uint64_t> counts, first{0};
      for (int r = 0; r < p; ++r) {
        counts.push_back(static_cast<std::uint64_t>((r * 3 + 1) % 4));  // 1, 0, 3, 2, ...
        first.push_back(first.back() + counts.back());
      }
      std::vector<std::vector<Mat>> send(p, std::vector<Mat>(first.back())), recv(p);
      for (int r = 0; r < p; ++r) {
        recv[r].resize(counts[r]);
        for (std::uint64_t e = 0; e < first.back(); ++e) send[r][e] = Mat{r + 2 + std::int64_t(e), 0, 0, r + 1};
      }
      // The core copies the counts: the caller's array may change after the call.
      gencoll_call call{GENCOLL_REDUCE_SCATTER, alg, 3, p, 0, 0, 1, 0, counts.data(), 0, 0};
      const auto got = run_all_c<Mat>(call, send, recv, mul);
      for (int r = 0; r < p; ++r)
        for (std::uint64_t e = 0; e < counts[r]; ++e) {
          Mat want = send[0][first[r] + e];
          for (int q = 1; q < p; ++q) want = mul(want, send[q][first[r] + e]);
          REQUIRE(got[r][e] == want);
        }
    }
}

TEST_CASE("the MPICH C ABI rejects bad calls with a message instead of throwing", "[executor][mpich]") {
  gencoll_transport t{};
  char err[128] = "";
  gencoll_call bad_k{GENCOLL_ALLREDUCE, GENCOLL_KNOMIAL, 1, 4, 0, 0, 1, 8, nullptr, 0, 0};
  REQUIRE(gencoll_mpich_run(&bad_k, &t, err, sizeof err) == GENCOLL_MPICH_EINTERNAL);
  REQUIRE(std::string(err).find('k') != std::string::npos);
  gencoll_call no_alg{GENCOLL_REDUCE, GENCOLL_KRING, 2, 4, 0, 0, 1, 8, nullptr, 0, 0};
  REQUIRE(gencoll_mpich_run(&no_alg, &t, err, sizeof err) == GENCOLL_MPICH_EINTERNAL);
  REQUIRE(std::string(err) == "kring has no reduce");
  gencoll_call no_counts{GENCOLL_REDUCE_SCATTER, GENCOLL_KRING, 2, 4, 0, 0, 1, 8, nullptr, 0, 0};
  REQUIRE(gencoll_mpich_run(&no_counts, &t, err, sizeof err) == GENCOLL_MPICH_EINTERNAL);
  REQUIRE(std::string(err) == "reduce_scatter without recvcounts");
  REQUIRE(gencoll_mpich_abi_version() == GENCOLL_MPICH_ABI_VERSION);
}

TEST_CASE("the executor refuses a plan made for another schedule", "[executor]") {
  CollParams a;
  a.coll = Collective::bcast;
  a.alg = Algorithm::knomial;
  a.k = 2;
  a.p = 4;
  a.count = 4;
  CollParams b = a;
  b.coll = Collective::allreduce;
  b.alg = Algorithm::recursive_multiplying;
  const Schedule sa = generate(a), sb = generate(b);
  REQUIRE(sa.steps.size() != sb.steps.size());
  Mailbox mb;
  std::vector<int> send(4), recv(4);
  LoopbackTransport<int> t(mb, 0, send, recv, [](const int& x, const int& y) { return x + y; });
  REQUIRE_THROWS_AS(execute(sb, plan_execution(sa), t), std::logic_error);
}

TEST_CASE("the C ABI reads a selection file and chooses as the interposition library does", "[executor][mpich]") {
  char err[512] = {};
  CHECK(gencoll_selection_load("/nonexistent/file.json", err, sizeof err) == nullptr);
  CHECK(std::string(err).find("/nonexistent/file.json") != std::string::npos);
  const std::string path = std::string(GENCOLL_SOURCE_DIR) + "/tests/data/select-handwritten.json";
  gencoll_selection* s = gencoll_selection_load(path.c_str(), err, sizeof err);
  INFO(err);
  REQUIRE(s != nullptr);
  gencoll_selection_call c{};
  c.coll = GENCOLL_ALLREDUCE;
  c.comm_size = 5;
  c.count = 1;
  c.type_size = 4;
  c.commutative = c.op_built_in = 1;
  c.node_size = 5;
  c.node_count = 1;
  c.node_consecutive = 1;
  int alg = -1, k = -1, node_size = -1;
  const char* leaf = nullptr;
  CHECK(gencoll_selection_choose(s, &c, &alg, &k, &node_size, &leaf) == 1);
  CHECK(node_size == 0);
  CHECK(alg == GENCOLL_RECURSIVE_MULTIPLYING);
  CHECK(k == 4);
  c.count = 1000;  // 4000 bytes: k-nomial without k= (the caller's radix applies)
  CHECK(gencoll_selection_choose(s, &c, &alg, &k, &node_size, &leaf) == 1);
  CHECK(alg == GENCOLL_KNOMIAL);
  CHECK(k == 0);
  c.coll = GENCOLL_BCAST;
  c.count = 100000;
  CHECK(gencoll_selection_choose(s, &c, &alg, &k, &node_size, &leaf) == 1);
  CHECK(alg == GENCOLL_RECURSIVE_MULTIPLYING);
  CHECK(k == 3);
  gencoll_selection_free(s);

  // An smp leaf: the leaders' algorithm from the node_roots tree, the nodes'
  // block size; without blocks, the MPI's own, and the leaf says why.
  gencoll_selection* smp =
      gencoll_selection_load((std::string(GENCOLL_SOURCE_DIR) + "/tests/data/smp-select.json").c_str(), err,
                             sizeof err);
  REQUIRE(smp != nullptr);
  c.coll = GENCOLL_ALLREDUCE;
  c.comm_size = 8;
  c.count = 10;
  c.node_size = 2;
  c.node_count = 4;
  c.node_block = 2;
  CHECK(gencoll_selection_choose(smp, &c, &alg, &k, &node_size, &leaf) == 1);
  CHECK(alg == GENCOLL_KRING);
  CHECK(k == 2);
  CHECK(node_size == 2);
  c.node_block = 0;
  CHECK(gencoll_selection_choose(smp, &c, &alg, &k, &node_size, &leaf) == 0);
  CHECK(std::string(leaf).find("not blocks of consecutive ranks") != std::string::npos);
  gencoll_selection_free(smp);
}

// gencoll_mpich_program's memo (4 entries, the last call's tried first): call
// shapes that alternate, outnumber it, or carry recvcounts each get their own
// program, whatever came before.
TEST_CASE("the C ABI hands out each call's own program through its memo", "[executor][mpich]") {
  std::vector<gencoll_call> calls;
  for (int p : {2, 3, 5})
    for (int coll : {GENCOLL_ALLREDUCE, GENCOLL_BCAST}) calls.push_back({coll, GENCOLL_KNOMIAL, 2, p, 1, 0, 1, 7, nullptr, 0, 0});
  calls.push_back({GENCOLL_ALLREDUCE, GENCOLL_KNOMIAL, 2, 8, 1, 0, 1, 7, nullptr, 2, 0});  // smp over nodes of 2
  const std::vector<std::uint64_t> counts{1, 2, 3};
  calls.push_back({GENCOLL_REDUCE_SCATTER, GENCOLL_KNOMIAL, 2, 3, 1, 0, 1, 0, counts.data(), 0, 0});
  const auto steps = [](const gencoll_call& c) {
    const Collective coll[] = {Collective::allgather, Collective::allreduce, Collective::bcast, Collective::reduce,
                               Collective::reduce_scatter_block, Collective::reduce_scatter};
    CollParams prm = make_params(coll[c.coll], Algorithm::knomial, c.p, c.k, c.count, c.root);
    prm.rank = c.rank;
    prm.node_size = c.node_size;
    if (c.counts) prm.counts.assign(c.counts, c.counts + c.p);
    return generate(prm).steps.size();
  };
  // Every order that matters: repeats, alternation, more shapes than entries.
  const int order[] = {0, 0, 1, 0, 1, 2, 3, 4, 5, 6, 7, 0, 7, 7, 6, 1, 2, 3, 4, 5, 5, 0};
  for (int i : order) {
    const gencoll_call& c = calls[static_cast<std::size_t>(i)];
    const gencoll_program* program = nullptr;
    uint32_t* work = nullptr;
    char err[128] = "";
    REQUIRE(gencoll_mpich_program(&c, &program, &work, err, sizeof err) == 0);
    INFO("call " << i);
    CHECK(program->nops == steps(c));
    CHECK(work != nullptr);
  }
}

// A held program is the caller's until released: calls of other shapes (more
// than the thread's memo and cache keep) leave it as it was.
TEST_CASE("the C ABI's held programs outlive the thread's memo", "[executor][mpich]") {
  const gencoll_call held_call{GENCOLL_ALLREDUCE, GENCOLL_RECURSIVE_MULTIPLYING, 2, 6, 3, 0, 1, 12, nullptr, 0, 0};
  gencoll_program_hold* hold = nullptr;
  const gencoll_program* program = nullptr;
  uint32_t* work = nullptr;
  char err[128] = "";
  REQUIRE(gencoll_mpich_program_hold(&held_call, &hold, &program, &work, err, sizeof err) == 0);
  REQUIRE(hold != nullptr);
  REQUIRE(work != nullptr);
  const gencoll_program before = *program;
  const std::vector<gencoll_op> ops(program->ops, program->ops + program->nops);
  for (int count = 1; count <= 40; ++count) {  // evicts it from the memo (4) and the cache (32)
    const gencoll_call other{GENCOLL_BCAST, GENCOLL_KNOMIAL, 2, 5, 1, 0, 1, static_cast<std::uint64_t>(count), nullptr, 0, 0};
    const gencoll_program* q = nullptr;
    uint32_t* w = nullptr;
    REQUIRE(gencoll_mpich_program(&other, &q, &w, err, sizeof err) == 0);
  }
  CHECK(program->nops == before.nops);
  CHECK(program->ops == before.ops);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    INFO("op " << i);
    CHECK(std::memcmp(&program->ops[i], &ops[i], sizeof(gencoll_op)) == 0);
  }
  work[GENCOLL_WORK_WORDS(program->nops) - 1] = 1;  // its counters are its own, as many as the runner needs
  gencoll_mpich_program_release(hold);
  gencoll_mpich_program_release(nullptr);

  // recvcounts are the caller's to keep: refused, with a message.
  const std::vector<std::uint64_t> counts{1, 2, 3};
  const gencoll_call rs{GENCOLL_REDUCE_SCATTER, GENCOLL_KNOMIAL, 2, 3, 1, 0, 1, 6, counts.data(), 0, 0};
  hold = reinterpret_cast<gencoll_program_hold*>(&hold);
  CHECK(gencoll_mpich_program_hold(&rs, &hold, &program, &work, err, sizeof err) == GENCOLL_MPICH_EINTERNAL);
  CHECK(hold == nullptr);
  CHECK(std::string(err).find("recvcounts") != std::string::npos);
  // A bad call's message, as gencoll_mpich_program's.
  const gencoll_call bad{GENCOLL_ALLREDUCE, 9999, 2, 4, 0, 0, 1, 8, nullptr, 0, 0};
  CHECK(gencoll_mpich_program_hold(&bad, &hold, &program, &work, err, sizeof err) == GENCOLL_MPICH_EINTERNAL);
  CHECK(hold == nullptr);
}
