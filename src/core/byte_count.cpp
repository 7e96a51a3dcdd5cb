#include "src/core/byte_count.hpp"

namespace gencoll {

std::optional<std::uint64_t> parse_byte_count(std::string_view text) {
  std::size_t i = 0;
  std::uint64_t x = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    x = x * 10 + static_cast<std::uint64_t>(text[i] - '0');
    if (x > kMaxBytes) return std::nullopt;
  }
  if (i == 0) return std::nullopt;
  std::string_view suffix = text.substr(i);
  int shift = 0;
  if (!suffix.empty()) {
    switch (suffix.front()) {
      case 'K': case 'k': shift = 10; break;
      case 'M': case 'm': shift = 20; break;
      case 'G': case 'g': shift = 30; break;
      case 'B': break;
      default: return std::nullopt;
    }
    if (suffix.front() != 'B') suffix.remove_prefix(1);
    if (!suffix.empty() && suffix != "B" && suffix != "iB") return std::nullopt;
  }
  if (x > (kMaxBytes >> shift)) return std::nullopt;
  return x << shift;
}

}  // namespace gencoll
