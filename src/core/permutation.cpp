#include "src/core/permutation.hpp"

#include <algorithm>
#include <stdexcept>

namespace gencoll {

PermutationSpec PermutationSpec::mixed(std::vector<int> radices, int new_rank, std::vector<int> unit_begin,
                                       std::uint64_t unit_count) {
  PermutationSpec s;
  s.radices = std::move(radices);
  s.new_rank = new_rank;
  s.unit_begin = std::move(unit_begin);
  s.unit_count = unit_count;
  return s;
}

PermutationSpec PermutationSpec::rotation(std::uint32_t units, std::uint32_t shift, std::uint64_t unit_count) {
  PermutationSpec s;
  s.form = Form::rotation;
  s.units = units;
  s.shift = units ? shift % units : 0;
  s.unit_count = unit_count;
  return s;
}

PermutationSpec PermutationSpec::table(std::vector<std::uint32_t> dest, std::uint64_t unit_count) {
  PermutationSpec s;
  s.form = Form::table;
  s.dest = std::move(dest);
  s.unit_count = unit_count;
  return s;
}

namespace {

std::vector<std::uint32_t> mixed_radix_destinations(const PermutationSpec& spec) {
  // Position q of the permuted buffer holds the data of new rank
  // rank(q) = sum_j ((r_j + q_j) mod k_j) * S_j, where q_j are q's digits with
  // round 1's radix least significant and S_j is round j's partner stride (far
  // partners first, so S_1 is the largest). r_j are this rank's digits.
  const std::size_t rounds = spec.radices.size();
  std::vector<long> stride(rounds);
  long s = 1;
  for (std::size_t j = rounds; j-- > 0;) {
    stride[j] = s;
    s *= spec.radices[j];
  }
  const long nranks = s;
  std::vector<int> rdigit(rounds);
  for (std::size_t j = 0; j < rounds; ++j) rdigit[j] = (spec.new_rank / stride[j]) % spec.radices[j];

  std::vector<std::uint32_t> dest;
  dest.reserve(static_cast<std::size_t>(spec.unit_begin.back()));
  for (long q = 0; q < nranks; ++q) {
    long rest = q;
    long owner = 0;
    for (std::size_t j = 0; j < rounds; ++j) {
      const long qj = rest % spec.radices[j];
      rest /= spec.radices[j];
      owner += ((rdigit[j] + qj) % spec.radices[j]) * stride[j];
    }
    for (int u = spec.unit_begin[owner]; u < spec.unit_begin[owner + 1]; ++u)
      dest.push_back(static_cast<std::uint32_t>(u));
  }
  return dest;
}

}  // namespace

std::string check(const PermutationSpec& spec) {
  switch (spec.form) {
    case PermutationSpec::Form::mixed_radix: {
      long prod = 1;
      for (int x : spec.radices) {
        if (x < 1 || prod > (1L << 32) / x) return "mixed-radix permutation with a radix below 1 or too many units";
        prod *= x;
      }
      if (spec.unit_begin.size() != static_cast<std::size_t>(prod) + 1 || spec.new_rank < 0 ||
          spec.new_rank >= prod || spec.unit_begin.front() != 0 ||
          !std::is_sorted(spec.unit_begin.begin(), spec.unit_begin.end()))
        return "mixed-radix permutation whose rank or unit table does not match its radices";
      break;
    }
    case PermutationSpec::Form::rotation:
      if (spec.units > 0 && spec.shift >= spec.units) return "rotation by at least its unit count";
      break;
    case PermutationSpec::Form::table: {
      std::vector<char> seen(spec.dest.size(), 0);
      for (std::uint32_t x : spec.dest)
        if (x >= spec.dest.size() || seen[x]++) return "permutation table that is not a permutation";
      break;
    }
  }
  return {};
}

namespace {

std::vector<std::uint32_t> forward_destinations(const PermutationSpec& spec) {
  switch (spec.form) {
    case PermutationSpec::Form::mixed_radix: return mixed_radix_destinations(spec);
    case PermutationSpec::Form::rotation: {
      std::vector<std::uint32_t> dest(spec.units);
      for (std::uint32_t u = 0; u < spec.units; ++u)
        dest[u] = static_cast<std::uint32_t>((std::uint64_t{u} + spec.shift) % spec.units);
      return dest;
    }
    case PermutationSpec::Form::table: return spec.dest;
  }
  return {};
}

}  // namespace

std::vector<std::uint32_t> unit_destinations(const PermutationSpec& spec) {
  std::vector<std::uint32_t> dest = forward_destinations(spec);
  if (!spec.inverse) return dest;
  std::vector<std::uint32_t> back(dest.size());
  for (std::size_t u = 0; u < dest.size(); ++u)
    if (dest[u] < dest.size()) back[dest[u]] = static_cast<std::uint32_t>(u);
  return back;
}

UnitCycles unit_cycles(const std::vector<std::uint32_t>& dest) {
  UnitCycles c;
  c.src_of.assign(dest.size(), 0);
  std::vector<char> seen(dest.size(), 0);
  for (std::size_t u = 0; u < dest.size(); ++u) {
    if (dest[u] >= dest.size() || seen[dest[u]]) throw std::invalid_argument("unit_cycles: not a permutation");
    seen[dest[u]] = 1;
    c.src_of[dest[u]] = static_cast<std::uint32_t>(u);
  }
  std::vector<char> visited(dest.size(), 0);
  for (std::size_t u = 0; u < dest.size(); ++u) {
    if (visited[u]) continue;
    std::size_t len = 0;
    for (std::size_t at = u; !visited[at]; at = c.src_of[at], ++len) visited[at] = 1;
    if (len > 1) c.leaders.push_back(static_cast<std::uint32_t>(u));
  }
  return c;
}

}  // namespace gencoll
