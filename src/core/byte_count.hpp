// Byte counts as users write them, read one way by every tool and variable:
// decimal digits, then optionally K, M or G (binary multiples, either case,
// optionally followed by B or iB), or a plain B. Nothing else: no sign, no
// spaces, no fractions.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gencoll {

// The largest count accepted (1 PiB): far beyond any buffer, and a limit that
// holds after the multiple, so no suffix can wrap a count around.
constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 50;

// nullopt for text that is not a byte count or is above kMaxBytes.
std::optional<std::uint64_t> parse_byte_count(std::string_view text);

// What parse_byte_count accepts, for messages.
constexpr const char* kByteCountForm = "digits with an optional K, M or G (e.g. 4096, 64K, 2M), at most 1P";

}  // namespace gencoll
