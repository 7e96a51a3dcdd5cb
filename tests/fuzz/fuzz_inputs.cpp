// libFuzzer target over every reader of user input: selection files (with
// the calls they then answer), machine profiles, GENCOLL_* variables and byte
// counts. The first byte picks the reader, the rest is its input. A reader
// may refuse its input (errors or an exception derived from std::exception,
// each a message); it must never crash, hang, leak or hit undefined
// behaviour, which AddressSanitizer and UBSan report. tests/fuzz/fuzz.sh runs
// it, seeded with a valid input of each kind.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <string>

#include "selection/machine.hpp"
#include "src/core/byte_count.hpp"
#include "src/runtime/config.hpp"
#include "src/runtime/csel_file.hpp"

namespace {

using namespace gencoll;

std::uint64_t take(const std::string& s, std::size_t& at, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | (at < s.size() ? static_cast<unsigned char>(s[at++]) : 0u);
  return v;
}

// The file's answers to calls made of its own bytes, so that every condition
// of a file the fuzzer grows is asked.
void ask(const SelectionFile& f, const std::string& bytes) {
  std::size_t at = 0;
  for (int n = 0; n < 16 && at < bytes.size(); ++n) {
    SelectionCall c;
    c.coll = static_cast<Collective>(take(bytes, at, 1) % kCollectiveCount);
    const std::uint64_t flags = take(bytes, at, 1);
    c.inter = flags & 1;
    c.commutative = flags & 2;
    c.op_built_in = flags & 4;
    c.sendbuf_inplace = flags & 8;
    c.multi_threaded = flags & 16;
    c.nodes.consecutive = flags & 32;
    c.comm_size = static_cast<int>(take(bytes, at, 2)) + 1;
    c.nodes.node_count = static_cast<int>(take(bytes, at, 1)) % c.comm_size + 1;
    c.nodes.node_size = static_cast<int>(take(bytes, at, 1)) % c.comm_size + 1;
    c.count = take(bytes, at, 5);
    c.type_size = take(bytes, at, 1);
    (void)f.select(c);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0: {
      const SelectionFile::Loaded l = SelectionFile::parse(text, "fuzz");
      if (l.file) ask(*l.file, text);
      break;
    }
    case 1:
      try {
        (void)sim::parse_machine(text, "fuzz");
      } catch (const std::exception&) {  // refused with a message
      }
      break;
    case 2: {
      // NAME=VALUE lines, as the environment would hold them.
      std::map<std::string, std::string> vars;
      std::size_t start = 0;
      while (start <= text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(start, end - start);
        const std::size_t eq = line.find('=');
        if (eq != std::string::npos) vars[line.substr(0, eq)] = line.substr(eq + 1);
        start = end + 1;
      }
      // A file name would make the run read whatever the fuzzer names
      // (/dev/zero...); the selection file's reader has its own case.
      vars.erase("GENCOLL_SELECTION_FILE");
      (void)parse_config(vars);
      break;
    }
    default:
      (void)parse_byte_count(text);
  }
  return 0;
}
