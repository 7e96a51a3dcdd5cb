#include "gpu/permute_plan.hpp"

#include <cstring>

namespace gencoll::gpu {

std::size_t word_bytes(const void* base, std::size_t unit_bytes) {
  const auto addr = reinterpret_cast<std::uintptr_t>(base);
  for (std::size_t w : {16u, 8u, 4u, 2u})
    if (unit_bytes % w == 0 && addr % w == 0) return w;
  return 1;
}

namespace {

template <std::size_t W>
void walk(char* base, std::size_t unit_bytes, const PermutePlan& plan) {
  struct Word {
    unsigned char b[W];
  };
  const std::size_t words = unit_bytes / W;
  const auto at = [&](std::size_t unit, std::size_t w) { return base + unit * unit_bytes + w * W; };
  // One iteration of this double loop is one device thread.
  for (std::uint32_t leader : plan.leaders)
    for (std::size_t w = 0; w < words; ++w) {
      Word carry;
      std::memcpy(&carry, at(leader, w), W);
      std::size_t cur = leader;
      for (;;) {
        const std::size_t from = plan.src_of[cur];
        if (from == leader) {
          std::memcpy(at(cur, w), &carry, W);
          break;
        }
        std::memcpy(at(cur, w), at(from, w), W);
        cur = from;
      }
    }
}

}  // namespace

void permute_reference(void* base, std::size_t unit_bytes, const PermutePlan& plan) {
  if (unit_bytes == 0 || plan.leaders.empty()) return;
  char* b = static_cast<char*>(base);
  switch (word_bytes(base, unit_bytes)) {
    case 16: walk<16>(b, unit_bytes, plan); break;
    case 8: walk<8>(b, unit_bytes, plan); break;
    case 4: walk<4>(b, unit_bytes, plan); break;
    case 2: walk<2>(b, unit_bytes, plan); break;
    default: walk<1>(b, unit_bytes, plan); break;
  }
}

}  // namespace gencoll::gpu
