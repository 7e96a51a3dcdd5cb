#include "selection/profiles.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace gencoll::sim {

namespace fs = std::filesystem;

namespace {

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

}  // namespace

std::string find_profile(const std::string& arg, const std::vector<std::string>& dirs) {
  std::error_code ec;
  if (arg.empty() || arg.find('/') != std::string::npos || fs::exists(arg, ec)) return arg;
  for (const std::string& dir : dirs) {
    for (const std::string& name : {arg, arg + ".json"}) {
      const fs::path p = fs::path(dir) / name;
      if (is_file(p)) return p.string();
    }
  }
  return arg;
}

std::vector<std::string> shipped_profiles(const std::vector<std::string>& dirs) {
  std::vector<std::string> names;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".json" && is_file(it->path())) names.push_back(it->path().stem().string());
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

const std::vector<std::string>& profile_dirs() {
  static const std::vector<std::string> dirs = [] {
    std::vector<std::string> out;
#ifdef GENCOLL_PROFILE_DIRS
    const std::string all = GENCOLL_PROFILE_DIRS;
    for (std::size_t b = 0; b <= all.size();) {
      const std::size_t e = std::min(all.find(':', b), all.size());
      if (e > b) out.push_back(all.substr(b, e - b));
      b = e + 1;
    }
#endif
    return out;
  }();
  return dirs;
}

}  // namespace gencoll::sim
