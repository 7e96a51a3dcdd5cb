#include "profiler/exchange.hpp"

#include <algorithm>
#include <string>

namespace gencoll::loggp {

namespace {
constexpr int kResultsTag = 7101;
}

std::vector<RankReport> gather_reports(const RankReport& mine, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const std::string text = encode(mine);
  int len = static_cast<int>(text.size());
  std::vector<int> lens(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, comm);
  int total = 0;
  for (std::size_t r = 0; r < lens.size(); ++r) {
    displs[r] = total;
    total += lens[r];
  }
  std::string all(rank == 0 ? static_cast<std::size_t>(total) : 0, '\0');
  MPI_Gatherv(text.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0, comm);
  std::vector<RankReport> out;
  if (rank == 0)
    for (std::size_t r = 0; r < lens.size(); ++r)
      out.push_back(decode_report(all.substr(static_cast<std::size_t>(displs[r]), static_cast<std::size_t>(lens[r]))));
  return out;
}

bool SharedPlan::several_hosts() const {
  return !host_of.empty() && *std::max_element(host_of.begin(), host_of.end()) > 0;
}

SharedPlan share_plan(const LevelPlan& plan, const std::vector<RankReport>& reports, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  SharedPlan s;
  int levels = 0;
  if (rank == 0) {
    levels = static_cast<int>(plan.levels.size());
    for (const PlannedLevel& l : plan.levels) s.pairs.insert(s.pairs.end(), {l.a, l.b});
    std::vector<std::string> hosts;
    for (const RankReport& r : reports) {
      auto it = std::find(hosts.begin(), hosts.end(), r.where.place.host);
      if (it == hosts.end()) it = hosts.insert(hosts.end(), r.where.place.host);
      s.host_of.push_back(static_cast<int>(it - hosts.begin()));
    }
  }
  MPI_Bcast(&levels, 1, MPI_INT, 0, comm);
  s.pairs.resize(static_cast<std::size_t>(2 * levels));
  s.host_of.resize(static_cast<std::size_t>(size));
  MPI_Bcast(s.pairs.data(), 2 * levels, MPI_INT, 0, comm);
  MPI_Bcast(s.host_of.data(), size, MPI_INT, 0, comm);
  return s;
}

void send_results(const std::vector<double>& v, int to, MPI_Comm comm) {
  MPI_Send(v.data(), static_cast<int>(v.size()), MPI_DOUBLE, to, kResultsTag, comm);
}

std::vector<double> recv_results(int from, MPI_Comm comm) {
  MPI_Status st;
  MPI_Probe(from, kResultsTag, comm, &st);
  int n = 0;
  MPI_Get_count(&st, MPI_DOUBLE, &n);
  std::vector<double> v(static_cast<std::size_t>(n));
  MPI_Recv(v.data(), n, MPI_DOUBLE, from, kResultsTag, comm, MPI_STATUS_IGNORE);
  return v;
}

}  // namespace gencoll::loggp
