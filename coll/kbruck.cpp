// Bruck's allgather with radix k (Bruck et al., IEEE TPDS 8(11), 1997, the
// concatenation algorithm, generalized from 2 to k ports):
//
// Rank r works in its recv buffer as W, W[i] meant to hold the block of rank
// (r + i) mod p. W[0] is its own block. In round i (distance d = k^i) it sends
// W[0, n_j) to rank r - j d and receives W[j d, j d + n_j) from rank r + j d,
// for j = 1..k-1 while j d < p, with n_j = min(d, p - j d) blocks. After
// ceil(log_k p) rounds W holds every block, rotated by r; one in-place
// rotation (a unit permutation, so the GPU kernel serves it on device
// buffers) puts block x at x.
//
//   rounds: ceil(log_k p); messages per rank: sum over rounds of the j with
//   j d < p, so (k - 1) per full round; every rank sends p - 1 blocks in all,
//   whatever p (no folding of extra ranks, unlike recursive multiplying).
//
// The rotation is the cost of contiguity: each message is one range of W.
// MPI_IN_PLACE: the own block starts at W[r], which a receive of a later round
// overwrites, so every receive waits for the copy of it to W[0].
#include <algorithm>

#include "coll/generators.hpp"

namespace gencoll {

Schedule allgather_kbruck(const CollParams& prm) {
  const int p = prm.p, r = prm.rank, k = prm.k;
  const std::uint64_t c = prm.count;
  ScheduleBuilder b(r, p);
  const auto w = [&](std::uint64_t first, std::uint64_t n) { return Range{Buf::recv, first * c, n * c}; };
  const Handle own = b.copy(Range{Buf::send, 0, c}, w(0, 1));
  if (c == 0) return std::move(b).finish();

  std::vector<Handle> arrived{own};  // everything W[0, d) depends on
  std::vector<Handle> done = arrived;  // and every send, before the rotation
  for (std::uint64_t d = 1; d < static_cast<std::uint64_t>(p); d *= static_cast<std::uint64_t>(k)) {
    std::vector<Handle> round;
    for (std::uint64_t j = 1; j < static_cast<std::uint64_t>(k) && j * d < static_cast<std::uint64_t>(p); ++j) {
      const std::uint64_t n = std::min<std::uint64_t>(d, p - j * d);
      const int to = static_cast<int>((r + p - static_cast<int>(j * d % p)) % p);
      const int from = static_cast<int>((r + j * d) % p);
      done.push_back(b.send(to, w(0, n), arrived));
      round.push_back(b.recv(from, w(j * d, n), {own}));
    }
    arrived.insert(arrived.end(), round.begin(), round.end());
    done.insert(done.end(), round.begin(), round.end());
  }
  if (r != 0)
    b.permute(w(0, p), PermutationSpec::rotation(static_cast<std::uint32_t>(p), static_cast<std::uint32_t>(r), c),
              done);
  return std::move(b).finish();
}

}  // namespace gencoll
