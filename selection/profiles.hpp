// The shipped machine profiles (selection/profiles/*.json, installed in
// $(pkgdatadir)/profiles), found by name so that `gencoll-tune --profile
// delta` works wherever gencoll is installed.
#pragma once

#include <string>
#include <vector>

namespace gencoll::sim {

// `arg` itself where it names anything that exists or holds a '/'; otherwise
// the first shipped profile called `arg` or `arg`.json in `dirs` (searched in
// order); otherwise `arg` unchanged, for the loader to report.
std::string find_profile(const std::string& arg, const std::vector<std::string>& dirs);

// The names (file stems) of the profiles in `dirs`, sorted, each once.
std::vector<std::string> shipped_profiles(const std::vector<std::string>& dirs);

// The directories this build searches: the installed copies, then the
// source tree's (GENCOLL_PROFILE_DIRS, colon-separated, set by the build).
const std::vector<std::string>& profile_dirs();

}  // namespace gencoll::sim
