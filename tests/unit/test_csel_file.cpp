#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "src/runtime/config.hpp"
#include "src/runtime/csel_file.hpp"

using namespace gencoll;

namespace {

// A file on disk for the tests that go through a path; removed afterwards.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& text) {
    char name[] = "/tmp/gencoll-selection-XXXXXX";
    const int fd = mkstemp(name);
    REQUIRE(fd >= 0);
    REQUIRE(write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
    close(fd);
    path = name;
  }
  ~TempFile() { std::remove(path.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
};

std::shared_ptr<const SelectionFile> parse_ok(const std::string& text) {
  SelectionFile::Loaded l = SelectionFile::parse(text, "test file");
  std::string errors;
  for (const std::string& e : l.errors) errors += e + "\n";
  INFO(text << "\n" << errors);
  REQUIRE(l.errors.empty());
  REQUIRE(l.file);
  return l.file;
}

std::vector<std::string> parse_errors(const std::string& text) {
  SelectionFile::Loaded l = SelectionFile::parse(text, "test file");
  CHECK_FALSE(l.file);
  return l.errors;
}

// An intracommunicator call on one node holding all p ranks (MPI_COMM_WORLD of
// a single-node run).
SelectionCall call(Collective c, int p, std::uint64_t count, std::uint64_t type_size = 4) {
  SelectionCall s;
  s.coll = c;
  s.comm_size = p;
  s.count = count;
  s.type_size = type_size;
  s.nodes = NodeLayout{p, 1, true};
  return s;
}

std::string leaf(const std::string& coll, const std::string& alg, int k = 0) {
  return "{\"algorithm=MPIR_" + coll + "_intra_" + alg + "\": {" +
         (k ? "\"k=" + std::to_string(k) + "\": {}" : std::string()) + "}}";
}

// Allreduce picks knomial when `cond` holds, kring when it does not: the
// condition sits right under collective=, where MPICH prunes communicator
// conditions, or (nested) under avg_msg_size=any, where only its search runs.
// An =any condition is met by every call and may have nothing after it.
std::string two_way(const std::string& cond, bool nested = false) {
  const bool any = cond.size() > 4 && cond.compare(cond.size() - 4, 4, "=any") == 0;
  const std::string inner = "{\"" + cond + "\": " + leaf("Allreduce", "knomial") +
                            (any ? std::string() : ", \"total_msg_size=any\": " + leaf("Allreduce", "kring")) + "}";
  return "{\"collective=allreduce\": " + (nested ? "{\"avg_msg_size=any\": " + inner + "}" : inner) + "}";
}

bool holds(const std::string& cond, const SelectionCall& c, bool nested = false) {
  const SelectionChoice ch = parse_ok(two_way(cond, nested))->select(c);
  REQUIRE(ch.alg);
  return *ch.alg == Algorithm::knomial;
}

Config parse_env(const std::map<std::string, std::string>& env) { return parse_config(env); }

bool any_contains(const std::vector<std::string>& v, const std::string& a, const std::string& b = "",
                  const std::string& c = "") {
  for (const std::string& s : v)
    if (s.find(a) != std::string::npos && s.find(b) != std::string::npos && s.find(c) != std::string::npos)
      return true;
  return false;
}

}  // namespace

TEST_CASE("keys are tried in file order: the first that holds wins", "[selection]") {
  const auto small_first = parse_ok(R"({"collective=allreduce": {
      "avg_msg_size<=64": {"algorithm=MPIR_Allreduce_intra_recursive_multiplying": {"k=4": {}}},
      "avg_msg_size<=1024": {"algorithm=MPIR_Allreduce_intra_knomial": {}},
      "avg_msg_size=any": {"algorithm=MPIR_Allreduce_intra_kring": {}}}})");
  const auto large_first = parse_ok(R"({"collective=allreduce": {
      "avg_msg_size<=1024": {"algorithm=MPIR_Allreduce_intra_knomial": {}},
      "avg_msg_size<=64": {"algorithm=MPIR_Allreduce_intra_recursive_multiplying": {"k=4": {}}},
      "avg_msg_size=any": {"algorithm=MPIR_Allreduce_intra_kring": {}}}})");
  const SelectionChoice a = small_first->select(call(Collective::allreduce, 4, 8));
  CHECK(a.alg == Algorithm::recursive_multiplying);
  CHECK(a.k == 4);
  CHECK(a.leaf == "algorithm=MPIR_Allreduce_intra_recursive_multiplying");
  CHECK(large_first->select(call(Collective::allreduce, 4, 8)).alg == Algorithm::knomial);
  CHECK(small_first->select(call(Collective::allreduce, 4, 100)).alg == Algorithm::knomial);
  CHECK(small_first->select(call(Collective::allreduce, 4, 1000)).alg == Algorithm::kring);
  // Keys that sort the other way round (nlohmann::json would reorder them).
  const auto z_first = parse_ok(R"({"collective=bcast": {"total_msg_size<=4096": {"algorithm=MPIR_Bcast_intra_kring": {}},
      "avg_msg_size=any": {"algorithm=MPIR_Bcast_intra_knomial": {}}}})");
  CHECK(z_first->select(call(Collective::bcast, 4, 8)).alg == Algorithm::kring);
}

TEST_CASE("communicator conditions", "[selection]") {
  SECTION("collective= and comm_type=") {
    const auto f = parse_ok(R"({"collective=bcast": {"algorithm=MPIR_Bcast_intra_knomial": {}},
        "collective=allreduce": {"comm_type=inter": {"algorithm=MPIR_Allreduce_inter_reduce_exchange_bcast": {}},
                                 "comm_type=intra": {"algorithm=MPIR_Allreduce_intra_kring": {}}}})");
    CHECK(f->select(call(Collective::bcast, 4, 1)).alg == Algorithm::knomial);
    CHECK(f->select(call(Collective::allreduce, 4, 1)).alg == Algorithm::kring);
    SelectionCall inter = call(Collective::allreduce, 4, 1);
    inter.inter = true;
    const SelectionChoice ch = f->select(inter);
    CHECK_FALSE(ch.alg);
    CHECK(ch.leaf == "algorithm=MPIR_Allreduce_inter_reduce_exchange_bcast");
    const SelectionChoice none = f->select(call(Collective::reduce, 4, 1));  // no collective=reduce
    CHECK_FALSE(none.alg);
    CHECK(none.leaf.empty());
  }
  SECTION("comm_size") {
    CHECK(holds("comm_size<=4", call(Collective::allreduce, 4, 1)));
    CHECK_FALSE(holds("comm_size<=4", call(Collective::allreduce, 5, 1)));
    CHECK(holds("comm_size<4", call(Collective::allreduce, 3, 1)));
    CHECK_FALSE(holds("comm_size<4", call(Collective::allreduce, 4, 1)));
    // MPICH 4.0.2 evaluates comm_size<N as <= N where it is not pruned per
    // communicator (below a message condition).
    CHECK(holds("comm_size<4", call(Collective::allreduce, 4, 1), true));
    CHECK_FALSE(holds("comm_size<4", call(Collective::allreduce, 5, 1), true));
    CHECK(holds("comm_size=pow2", call(Collective::allreduce, 1, 1)));
    CHECK(holds("comm_size=pow2", call(Collective::allreduce, 8, 1)));
    CHECK_FALSE(holds("comm_size=pow2", call(Collective::allreduce, 6, 1)));
    CHECK(holds("comm_size=any", call(Collective::allreduce, 6, 1)));
  }
  SECTION("node layout: node_comm_size, comm_hierarchy, is_node_consecutive, comm_avg_ppn") {
    const SelectionCall one_node = call(Collective::allreduce, 4, 1);  // MPICH: parent with a node_comm of 4
    SelectionCall two_nodes = one_node;
    two_nodes.nodes = NodeLayout{2, 2, true};
    SelectionCall scattered = two_nodes;  // ranks 0,2 on one node, 1,3 on the other
    scattered.nodes.consecutive = false;
    SelectionCall alone = one_node;  // every process on its own node: MPICH keeps it flat
    alone.nodes = NodeLayout{1, 4, true};
    const SelectionCall single = call(Collective::allreduce, 1, 1);
    CHECK(holds("comm_size=node_comm_size", one_node));
    CHECK_FALSE(holds("comm_size=node_comm_size", two_nodes));
    CHECK_FALSE(holds("comm_size=node_comm_size", single));  // MPICH has no node_comm for one process
    CHECK(holds("comm_hierarchy=parent", one_node));
    CHECK(holds("comm_hierarchy=parent", two_nodes));
    CHECK_FALSE(holds("comm_hierarchy=parent", alone));
    CHECK_FALSE(holds("comm_hierarchy=parent", single));
    CHECK(holds("comm_hierarchy=flat", alone));
    CHECK_FALSE(holds("comm_hierarchy=flat", one_node));
    CHECK(holds("comm_hierarchy=any", alone));
    CHECK_FALSE(holds("comm_hierarchy=node", one_node));  // only MPICH's internal subcommunicators
    CHECK_FALSE(holds("comm_hierarchy=node_roots", one_node));
    CHECK(holds("is_node_consecutive=yes", one_node));
    CHECK(holds("is_node_consecutive=yes", two_nodes));
    CHECK(holds("is_node_consecutive=no", scattered));
    CHECK(holds("is_node_consecutive=no", alone));  // MPICH asks only node-aware communicators
    CHECK(holds("comm_avg_ppn<=2", two_nodes));
    CHECK_FALSE(holds("comm_avg_ppn<=2", one_node));
  }
}

TEST_CASE("call conditions", "[selection]") {
  SECTION("message sizes and counts") {
    // avg = count * type size; total = avg * p.
    CHECK(holds("avg_msg_size<=64", call(Collective::allreduce, 4, 16)));
    CHECK_FALSE(holds("avg_msg_size<=64", call(Collective::allreduce, 4, 17)));
    CHECK(holds("avg_msg_size<64", call(Collective::allreduce, 4, 15)));
    CHECK_FALSE(holds("avg_msg_size<64", call(Collective::allreduce, 4, 16)));
    CHECK(holds("avg_msg_size<=64", call(Collective::allreduce, 4, 8, 8)));
    CHECK(holds("avg_msg_size=any", call(Collective::allreduce, 4, 1 << 30)));
    CHECK(holds("total_msg_size<=256", call(Collective::allreduce, 4, 16)));
    CHECK_FALSE(holds("total_msg_size<=256", call(Collective::allreduce, 5, 16)));
    CHECK(holds("total_msg_size<320", call(Collective::allreduce, 4, 16)));
    CHECK_FALSE(holds("total_msg_size<320", call(Collective::allreduce, 5, 16)));
    CHECK(holds("count<=16", call(Collective::allreduce, 4, 16, 8)));
    CHECK_FALSE(holds("count<=16", call(Collective::allreduce, 4, 17, 1)));
    // count<pow2: below the largest power of two <= p.
    CHECK(holds("count<pow2", call(Collective::allreduce, 6, 3)));
    CHECK_FALSE(holds("count<pow2", call(Collective::allreduce, 6, 4)));
    CHECK(holds("count=any", call(Collective::allreduce, 6, 4)));
  }
  SECTION("op, buffers, threads") {
    SelectionCall c = call(Collective::allreduce, 4, 1);
    CHECK(holds("is_commutative=yes", c));
    CHECK(holds("is_op_built_in=yes", c));
    CHECK(holds("is_sendbuf_inplace=no", c));
    CHECK(holds("is_multi_threaded=no", c));
    CHECK(holds("is_block_regular=yes", c));
    CHECK_FALSE(holds("is_block_regular=no", c));
    c.commutative = false;
    c.op_built_in = false;
    c.sendbuf_inplace = true;
    c.multi_threaded = true;
    CHECK(holds("is_commutative=no", c));
    CHECK_FALSE(holds("is_commutative=yes", c));
    CHECK(holds("is_op_built_in=no", c));
    CHECK(holds("is_sendbuf_inplace=yes", c));
    CHECK(holds("is_multi_threaded=yes", c));
  }
  SECTION("spaces in keys are ignored, as MPICH ignores them") {
    CHECK(holds("avg_msg_size <= 64", call(Collective::allreduce, 4, 16)));
    const auto f = parse_ok(R"({"collective = allreduce": {"algorithm = MPIR_Allreduce_intra_kring": {"k = 3": {}}}})");
    CHECK(f->select(call(Collective::allreduce, 4, 1)).k == 3);
  }
}

TEST_CASE("MPICH's per-communicator pruning is reproduced", "[selection]") {
  // Pruned per communicator, comm_size<5 is strictly below 5 (the search
  // would read it as <= 5, see "comm_size" above).
  const auto f = parse_ok(R"({"collective=allreduce": {"comm_size<5": {"algorithm=MPIR_Allreduce_intra_kring": {}},
      "comm_size=any": {"algorithm=MPIR_Allreduce_intra_recursive_doubling": {}}}})");
  CHECK(f->select(call(Collective::allreduce, 4, 1)).alg == Algorithm::kring);
  CHECK_FALSE(f->select(call(Collective::allreduce, 5, 1)).alg);
  // Communicator conditions above collective= (which MPICH's prune would
  // read) are refused: the module merges its built-in collective= keys
  // beside the top level's, and the tree becomes one MPICH asserts on.
  CHECK(any_contains(parse_errors(R"({"comm_size<=4": {"collective=allreduce": {"algorithm=MPIR_Allreduce_intra_kring": {}}},
      "comm_size=any": {"collective=allreduce": {"algorithm=MPIR_Allreduce_intra_knomial": {}}}})"),
                     "key \"comm_size<=4\" at the top level", "only collective= keys"));
  // A top level without collective= (MPICH aborted in its prune): refused too.
  CHECK(any_contains(parse_errors(R"({"avg_msg_size=any": {"algorithm=MPIR_Allreduce_intra_kring": {}}})"),
                     "key \"avg_msg_size=any\" at the top level"));
}

TEST_CASE("leaves: gencoll algorithms, the MPI's own, k=", "[selection]") {
  const auto f = parse_ok(R"({
      "collective=allreduce": {"avg_msg_size<=8": {"algorithm=MPIR_Allreduce_intra_recursive_doubling": {}},
                               "avg_msg_size<=64": {"composition=MPIDI_Allreduce_intra_composition_alpha": {}},
                               "avg_msg_size<=128": {"algorithm=MPIR_Allreduce_intra_permuted_recursive_multiplying":
                                                      {"k=3": {}, "k=5": {}, "chunk_size=4": {}}},
                               "avg_msg_size<=256": {"algorithm=MPIR_Allreduce_intra_knomial": {},
                                                     "algorithm=MPIR_Allreduce_intra_kring": {}},
                               "avg_msg_size=any": {"composition=MPIDI_Allreduce_intra_composition_beta": {}}},
      "collective=allgather": {"algorithm=MPIR_Allgather_intra_ring": {}}})");
  const SelectionChoice own = f->select(call(Collective::allreduce, 4, 2));
  CHECK_FALSE(own.alg);
  CHECK(own.leaf == "algorithm=MPIR_Allreduce_intra_recursive_doubling");
  const SelectionChoice comp = f->select(call(Collective::allreduce, 4, 16));
  CHECK_FALSE(comp.alg);
  CHECK(comp.leaf == "composition=MPIDI_Allreduce_intra_composition_alpha");
  const SelectionChoice prm = f->select(call(Collective::allreduce, 4, 32));
  CHECK(prm.alg == Algorithm::permuted_recursive_multiplying);
  CHECK(prm.k == 5);  // the last k= counts; other parameters are ignored
  CHECK(f->select(call(Collective::allreduce, 4, 64)).alg == Algorithm::kring);  // the last algorithm= counts
  CHECK_FALSE(f->select(call(Collective::allreduce, 4, 1000)).alg);  // MPICH's composition
  CHECK_FALSE(f->select(call(Collective::bcast, 4, 1)).alg);         // no collective=bcast
  const SelectionChoice ring = f->select(call(Collective::allgather, 4, 1));  // MPICH's ring, not gencoll's
  CHECK_FALSE(ring.alg);
  CHECK(ring.leaf == "algorithm=MPIR_Allgather_intra_ring");
}

TEST_CASE("collective= below the top, and of collectives gencoll leaves to the MPI", "[selection]") {
  // Asked again under collective=allreduce (MPICH's search asks it per call);
  // alltoall's sibling is read and never matches a call gencoll sees.
  const auto f = parse_ok(R"({
      "collective=alltoall": {"algorithm=MPIR_Alltoall_intra_brucks": {}},
      "collective=allreduce": {"avg_msg_size<=64": {"collective=bcast": {"algorithm=MPIR_Bcast_intra_kring": {}},
                                                  "collective=allreduce": {"algorithm=MPIR_Allreduce_intra_knomial": {}}},
                               "collective=alltoall": {"algorithm=MPIR_Alltoall_intra_brucks": {}},
                               "avg_msg_size=any": {"algorithm=MPIR_Allreduce_intra_recursive_multiplying": {}}},
      "collective=reduce_scatter_block": {"algorithm=MPIR_Reduce_scatter_block_intra_recursive_multiplying": {}}})");
  CHECK(f->select(call(Collective::allreduce, 4, 2)).alg == Algorithm::knomial);
  const SelectionChoice large = f->select(call(Collective::allreduce, 4, 1000));
  CHECK(large.alg == Algorithm::recursive_multiplying);
  CHECK(large.leaf == "algorithm=MPIR_Allreduce_intra_recursive_multiplying");
  CHECK(f->select(call(Collective::reduce_scatter_block, 4, 1)).alg == Algorithm::recursive_multiplying);
  CHECK_FALSE(f->select(call(Collective::bcast, 4, 1)).alg);
  CHECK(f->select(call(Collective::bcast, 4, 1)).leaf.empty());
}

TEST_CASE("k defaults to GENCOLL_<COLL>_<ALG>_KVAL; a per-collective variable wins over the file", "[selection]") {
  const TempFile file(R"({"collective=allreduce": {"avg_msg_size<=64": {"algorithm=MPIR_Allreduce_intra_knomial": {}},
      "avg_msg_size=any": {"algorithm=MPIR_Allreduce_intra_knomial": {"k=3": {}}}},
      "collective=bcast": {"algorithm=MPIR_Bcast_intra_kring": {}}})");
  const Config with_var = parse_env({{"GENCOLL_SELECTION_FILE", file.path}, {"GENCOLL_ALLREDUCE_KNOMIAL_KVAL", "6"}});
  REQUIRE(with_var.errors.empty());
  REQUIRE(with_var.file_decides(Collective::allreduce));
  CHECK(with_var.select_from_file(call(Collective::allreduce, 8, 1)).k == 6);
  CHECK(with_var.select_from_file(call(Collective::allreduce, 8, 100)).k == 3);
  const Config without = parse_env({{"GENCOLL_SELECTION_FILE", file.path}});
  REQUIRE(without.errors.empty());
  CHECK(without.select_from_file(call(Collective::allreduce, 8, 1)).k == 2);
  CHECK(without.select_from_file(call(Collective::bcast, 8, 1)).k == 2);
  CHECK(with_var.fingerprint() != without.fingerprint());

  const Config pinned = parse_env({{"GENCOLL_SELECTION_FILE", file.path},
                                   {"GENCOLL_ALLREDUCE_INTRA_ALGORITHM", "native"},
                                   {"GENCOLL_BCAST_INTRA_ALGORITHM", "auto"}});
  REQUIRE(pinned.errors.empty());
  CHECK_FALSE(pinned.file_decides(Collective::allreduce));
  CHECK(pinned.file_decides(Collective::bcast));  // auto: the file decides, as in MPICH
  CHECK_FALSE(parse_env({}).file_decides(Collective::allreduce));
  CHECK(pinned.fingerprint() != without.fingerprint());

  const TempFile same(R"({"collective=allreduce": {"avg_msg_size<=64": {"algorithm=MPIR_Allreduce_intra_knomial": {}},
      "avg_msg_size=any": {"algorithm=MPIR_Allreduce_intra_knomial": {"k=3": {}}}},
      "collective=bcast": {"algorithm=MPIR_Bcast_intra_kring": {}}})");
  const TempFile other(R"({"collective=bcast": {"algorithm=MPIR_Bcast_intra_kring": {}}})");
  CHECK(parse_env({{"GENCOLL_SELECTION_FILE", same.path}}).fingerprint() == without.fingerprint());
  CHECK(parse_env({{"GENCOLL_SELECTION_FILE", other.path}}).fingerprint() != without.fingerprint());
  CHECK(parse_env({{"GENCOLL_SELECTION_FILE", ""}}).selection_file == nullptr);  // empty: no file
}

TEST_CASE("bad selection files are reported with the file and the key", "[selection]") {
  SECTION("unreadable file, through GENCOLL_SELECTION_FILE") {
    const Config c = parse_env({{"GENCOLL_SELECTION_FILE", "/nonexistent/select.json"}});
    REQUIRE(c.errors.size() == 1);
    CHECK_THAT(c.errors[0], Catch::Contains("GENCOLL_SELECTION_FILE=/nonexistent/select.json") &&
                                Catch::Contains("cannot be read") && Catch::Contains("No such file"));
    CHECK_FALSE(c.selection_file);
    const SelectionFile::Loaded dir = SelectionFile::load("/tmp");
    REQUIRE(dir.errors.size() == 1);
    CHECK_THAT(dir.errors[0], Catch::Contains("selection file /tmp") && Catch::Contains("is a directory"));
    // Neither read for ever (a device) nor waited on (a FIFO nobody writes).
    const SelectionFile::Loaded zero = SelectionFile::load("/dev/zero");
    REQUIRE(zero.errors.size() == 1);
    CHECK_THAT(zero.errors[0], Catch::Contains("/dev/zero: is not a regular file"));
    const std::string fifo = "/tmp/gencoll-csel-fifo-" + std::to_string(::getpid());
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const SelectionFile::Loaded pipe = SelectionFile::load(fifo);
    std::remove(fifo.c_str());
    REQUIRE(pipe.errors.size() == 1);
    CHECK_THAT(pipe.errors[0], Catch::Contains("is not a regular file"));
  }
  SECTION("invalid JSON, with nlohmann's message") {
    const TempFile f(R"({"collective=allreduce": {"algorithm=MPIR_Allreduce_intra_kring": {}})");
    const Config c = parse_env({{"GENCOLL_SELECTION_FILE", f.path}});
    REQUIRE(c.errors.size() == 1);
    CHECK_THAT(c.errors[0], Catch::Contains("GENCOLL_SELECTION_FILE=" + f.path) &&
                                Catch::Contains("not valid JSON") && Catch::Contains("parse error"));
    CHECK(any_contains(parse_errors("[1, 2]"), "top level must be a JSON object"));
  }
  SECTION("unknown condition keys, named with where they are") {
    const auto errors = parse_errors(R"({"collective=allreduce": {"comm_type=intra": {
        "avg_msg_sise<=64": {"algorithm=MPIR_Allreduce_intra_kring": {}},
        "avg_msg_size<=64k": {"algorithm=MPIR_Allreduce_intra_kring": {}},
        "avg_msg_size=any": {"algorithm=MPIR_Allreduce_intra_kring": {}}}},
      "collective=allreduse": {}, "comm_hierarchy=tree": {}})");
    CHECK(errors.size() == 4);  // every problem, not just the first
    CHECK(any_contains(errors, "test file: key \"avg_msg_sise<=64\"", "unknown key",
                       "(under \"collective=allreduce\" > \"comm_type=intra\")"));
    CHECK(any_contains(errors, "key \"avg_msg_size<=64k\"", "non-negative integer"));
    CHECK(any_contains(errors, "key \"collective=allreduse\"", "unknown collective"));
    CHECK(any_contains(errors, "key \"comm_hierarchy=tree\"", "unknown key"));
  }
  SECTION("shapes MPICH asserted on, and another collective's algorithm: named, as in the module") {
    const auto errors = parse_errors(R"({"collective=allreduce": {"comm_type=intra": {
        "avg_msg_size<=64": {},
        "avg_msg_size=any": {"algorithm=MPIR_Allreduce_intra_kring": {}},
        "count=any": {"algorithm=MPIR_Allreduce_intra_kring": {}}},
        "comm_type=inter": {"comm_size<=8": {"algorithm=MPIR_Allreduce_inter_reduce_exchange_bcast": {}}}},
      "collective=bcast": {"algorithm=MPIR_Allreduce_intra_kring": {}},
      "collective=reduce": {"algorithm=MPIR_Reduce_scatter_intra_recursive_halving": {}}})");
    CHECK(errors.size() == 5);
    CHECK(any_contains(errors, "key \"avg_msg_size<=64\"", "nothing under it"));
    CHECK(any_contains(errors, "key \"count=any\"", "follows \"avg_msg_size=any\"", "never reached"));
    CHECK(any_contains(errors, "key \"comm_size<=8\"", "last of its siblings", "=any"));
    CHECK(any_contains(errors, "key \"algorithm=MPIR_Allreduce_intra_kring\"",
                       "under \"collective=bcast\": an algorithm of another collective"));
    CHECK(any_contains(errors, "MPIR_Reduce_scatter_intra_recursive_halving", "another collective"));
    // MPICH's shared-memory algorithms (its own posix file's) are named
    // MPIDI_POSIX_mpi_<coll>_...
    CHECK(any_contains(parse_errors(R"({"collective=reduce": {"algorithm=MPIDI_POSIX_mpi_bcast_release_gather": {}}})"),
                       "another collective"));
    // Nested past json-c's depth, where MPICH's reader stops: 32 levels of
    // objects are read (collective=, 29 conditions, the leaf and its {}), 33 not.
    const auto nested = [](int conditions) {
      std::string f = R"({"algorithm=MPIR_Allreduce_intra_kring": {}})";
      for (int i = 0; i < conditions; ++i) f = "{\"comm_type=intra\": " + f + "}";
      return "{\"collective=allreduce\": " + f + "}";
    };
    parse_ok(nested(29));
    CHECK(any_contains(parse_errors(nested(30)), "objects nested deeper than 32 levels", "nesting too deep"));
    CHECK(any_contains(parse_errors(nested(1000)), "objects nested deeper than 32 levels"));
  }
  SECTION("a key repeated in one object: one of its values would be dropped unseen") {
    const auto twice = parse_errors(R"({"collective=allreduce": {"comm_type=intra": {
        "avg_msg_size<=64": {"algorithm=MPIR_Allreduce_intra_kring": {}},
        "avg_msg_size<=64": {"algorithm=MPIR_Allreduce_intra_knomial": {}},
        "avg_msg_size=any": {"algorithm=MPIR_Allreduce_intra_kring": {}}}}})");
    REQUIRE(twice.size() == 1);
    CHECK_THAT(twice[0], Catch::Contains("test file: key \"avg_msg_size<=64\" appears twice in one object") &&
                             Catch::Contains("(under \"collective=allreduce\" > \"comm_type=intra\")"));
    // MPICH compares keys without spaces: these are one condition too.
    CHECK(any_contains(parse_errors(R"({"collective=bcast": {"algorithm=MPIR_Bcast_intra_knomial": {},
        "algorithm = MPIR_Bcast_intra_knomial": {}}})"),
                       "key \"algorithm = MPIR_Bcast_intra_knomial\" appears twice", "(under \"collective=bcast\")"));
    CHECK(any_contains(parse_errors(R"({"collective=bcast": {"algorithm=MPIR_Bcast_intra_knomial": {}},
        "collective=bcast": {"algorithm=MPIR_Bcast_intra_knomial": {}}})"),
                       "key \"collective=bcast\" appears twice in one object: JSON readers keep only one"));
    // Keys are compared as decoded: "k\u003d4" is "k=4".
    CHECK(any_contains(parse_errors(R"({"collective=bcast": {"algorithm=MPIR_Bcast_intra_knomial": {"k=4": {},
        "k\u003d4": {}}}})"),
                       "key \"k=4\" appears twice"));
    // The same key in different objects is no repetition.
    parse_ok(R"({"collective=bcast": {"comm_size<=4": {"algorithm=MPIR_Bcast_intra_knomial": {"k=4": {}}},
        "comm_size=any": {"algorithm=MPIR_Bcast_intra_knomial": {"k=4": {}}}}})");
  }
  SECTION("comments, which MPICH's json-c reads, are read") {
    const auto f = parse_ok(R"({/* tuned for 4 nodes */ "collective=allreduce": { // all sizes
        "algorithm=MPIR_Allreduce_intra_kring": {"k=4": {}}}})");
    CHECK(f->select(call(Collective::allreduce, 4, 1024)).alg == Algorithm::kring);
  }
  SECTION("json-c's lenient forms are read as MPICH reads them, and no more") {
    // Single quotes (a double quote inside is a character), a comma before
    // a closing bracket, \v and \f as blanks, a tab inside a key.
    const auto f = parse_ok("{'collective=allreduce': {\v'comm_size<=4': {'algorithm=MPIR_Allreduce_intra_kring':"
                            " {'k=3': {},},}, /* 'quoted' \"in\" comments */ \f\"comm_size=any\":"
                            " {'algorithm=MPIR_Allreduce_intra_knomial': {},},}, // 'a\n"
                            "'collective=bcast': {'algorithm=MPIR_Bcast_intra_knomial': {'k=5': {}, }}, }");
    CHECK(f->select(call(Collective::allreduce, 4, 1024)).alg == Algorithm::kring);
    CHECK(f->select(call(Collective::allreduce, 4, 1024)).k == 3);
    CHECK(f->select(call(Collective::allreduce, 8, 1024)).alg == Algorithm::knomial);
    CHECK(f->select(call(Collective::bcast, 8, 1024)).k == 5);
    // A key with a double quote or a tab in it is no condition MPICH knows:
    // refused by name, not as bad JSON.
    CHECK(any_contains(parse_errors("{'collective=allreduce': {'algorithm=\"x\"': {}}}"),
                       "key \"algorithm=\"x\"\""));
    CHECK(any_contains(parse_errors("{'collective=allreduce': {\"comm\tsize<=4\": {}}}"), "key \"comm\tsize<=4\""));
    // Duplicates are found across the two quotings.
    CHECK(any_contains(parse_errors("{'collective=bcast': {}, \"collective=bcast\": {}}"),
                       "key \"collective=bcast\" appears twice"));
    // What json-c refuses stays refused: an empty member before the comma,
    // two commas, \' as an escape; and what follows the top-level object,
    // which json-c would drop, is refused too.
    for (const char* bad : {"{,}", "{'collective=bcast': {},,}", "{'collective=bcast': {'k\\'s': {}}}",
                            "{'collective=bcast': {'algorithm=MPIR_Bcast_intra_binomial': {}}} ,",
                            "{\"collective=bcast\": {}} {\"collective=allreduce\": {}}", "{'collective=bcast': {}"}) {
      INFO(bad);
      CHECK(any_contains(parse_errors(bad), "not valid JSON"));
    }
  }
  SECTION("values that are not objects") {
    const auto errors = parse_errors(R"({"collective=allreduce": {"avg_msg_size<=64": "knomial",
        "avg_msg_size=any": {"algorithm=MPIR_Allreduce_intra_kring": 4}}})");
    CHECK(errors.size() == 2);
    CHECK(any_contains(errors, "key \"avg_msg_size<=64\"", "must be a JSON object", "string"));
    CHECK(any_contains(errors, "key \"algorithm=MPIR_Allreduce_intra_kring\"", "must be a JSON object", "number"));
  }
  SECTION("bad k") {
    for (const char* k : {"k=1", "k=0", "k=x", "k=", "k=-3", "k=4.5", "k=99999999999", "k=1073741825"}) {
      INFO(k);
      const auto errors = parse_errors(std::string(R"({"collective=bcast": {"algorithm=MPIR_Bcast_intra_knomial": {")") +
                                       k + R"(": {}}}})");
      REQUIRE(errors.size() == 1);
      CHECK_THAT(errors[0], Catch::Contains("test file") &&
                                Catch::Contains(std::string("key \"") + k + "\" of \"algorithm=MPIR_Bcast_intra_knomial\"") &&
                                Catch::Contains("integer >= 2 and <= 1073741824"));
    }
    // The largest radix the MPICH module's CVARs and files take is accepted.
    parse_ok(R"({"collective=bcast": {"algorithm=MPIR_Bcast_intra_knomial": {"k=1073741824": {}}}})");
  }
  SECTION("gencoll algorithms a collective does not have, and names that are no algorithm") {
    const auto errors = parse_errors(R"({
        "collective=reduce": {"algorithm=MPIR_Reduce_intra_kring": {}},
        "collective=bcast": {"algorithm=MPIR_Bcast_intra_permuted_recursive_multiplying": {}},
        "collective=allreduce": {"algorithm=knomial": {}},
        "collective=allgather": {"algorithm=MPIR_Allgather_intra_kring": {}, "avg_msg_size=any": {}}})");
    CHECK(errors.size() == 4);
    CHECK(any_contains(errors, "key \"algorithm=MPIR_Reduce_intra_kring\"", "gencoll has no kring reduce",
                       "can name: knomial"));
    CHECK(any_contains(errors, "key \"algorithm=MPIR_Bcast_intra_permuted_recursive_multiplying\"",
                       "gencoll has no permuted_recursive_multiplying bcast"));
    CHECK(any_contains(errors, "key \"algorithm=knomial\"", "names no MPICH algorithm"));
    CHECK(any_contains(errors, "key \"avg_msg_size=any\"", "may hold nothing else"));
  }
  SECTION("misspelt algorithm names: refused with the nearest name, as the module refuses them") {
    const auto errors = parse_errors(R"({
        "collective=allreduce": {"algorithm=MPIR_Allreduce_intra_knomail": {}},
        "collective=bcast": {"algorithm=MPIR_Bcast_intra_binomal": {}},
        "collective=alltoall": {"algorithm=MPIR_Alltoall_intra_pairwise_sendrecv_replce": {}},
        "collective=allgather": {"algorithm=MPIR_Allgather_inter_ring": {}}})");
    CHECK(errors.size() == 4);
    CHECK(any_contains(errors, "key \"algorithm=MPIR_Allreduce_intra_knomail\"",
                       "names no algorithm of MPICH 4.0.2 or gencoll",
                       "(did you mean algorithm=MPIR_Allreduce_intra_knomial?)"));
    CHECK(any_contains(errors, "did you mean algorithm=MPIR_Bcast_intra_binomial?"));
    CHECK(any_contains(errors, "did you mean algorithm=MPIR_Alltoall_intra_pairwise_sendrecv_replace?"));
    CHECK(any_contains(errors, "key \"algorithm=MPIR_Allgather_inter_ring\"",
                       "did you mean algorithm=MPIR_Allgather_intra_ring?"));
    // Every MPICH name of the collectives gencoll leaves to the MPI, and of
    // the others, is the MPI's own.
    const auto own = parse_ok(R"({
        "collective=allreduce": {"algorithm=MPIR_Allreduce_intra_reduce_scatter_allgather": {}},
        "collective=allgather": {"algorithm=MPIR_Allgather_inter_local_gather_remote_bcast": {}},
        "collective=ialltoallw": {"algorithm=MPIR_Ialltoallw_intra_tsp_blocked": {}}})");
    CHECK_FALSE(own->select(call(Collective::allreduce, 4, 1024)).alg);
  }
}

TEST_CASE("the file of tests/mpich/json_select.sh makes the choices that test expects", "[selection]") {
  // tests/data/select-handwritten.json, shared with json_select.sh (MPICH
  // module) and tests/mpi/selection_file.sh (this library): an allreduce step
  // without k= takes the KVAL variable, 6; 5 ranks, MPI_INT, counts 1, 8, ...,
  // 32768. Two collectives gencoll does not serve stand between, to be
  // skipped over.
  const std::string file = std::string(GENCOLL_SOURCE_DIR) + "/tests/data/select-handwritten.json";
  const Config cfg = parse_env({{"GENCOLL_SELECTION_FILE", file}, {"GENCOLL_ALLREDUCE_KNOMIAL_KVAL", "6"}});
  REQUIRE(cfg.errors.empty());
  const int p = 5;
  // json_select.sh's expected(): algorithm and k as the schedule uses it (clamped to p).
  auto expected = [](Collective c, std::uint64_t b) -> std::pair<Algorithm, int> {
    switch (c) {
      case Collective::allreduce:
        if (b <= 64) return {Algorithm::recursive_multiplying, 4};
        if (b <= 4096) return {Algorithm::knomial, 5};
        return {Algorithm::kring, 3};
      case Collective::allgather:
        if (b <= 256) return {Algorithm::permuted_recursive_multiplying, 3};
        return {Algorithm::kring, 2};
      case Collective::bcast:
        if (b <= 1024) return {Algorithm::knomial, 5};
        return {Algorithm::recursive_multiplying, 3};
      case Collective::reduce: return {Algorithm::knomial, 3};
      case Collective::reduce_scatter_block:
      case Collective::reduce_scatter: break;  // the file has none (the MPICH module serves none)
    }
    return {Algorithm::binomial, 0};
  };
  int calls = 0;
  for (std::uint64_t count = 1; count <= 32768; count *= 8) {
    for (Collective c : {Collective::allgather, Collective::allreduce, Collective::bcast, Collective::reduce}) {
      INFO(to_string(c) << " of " << count * 4 << " bytes");
      REQUIRE(cfg.file_decides(c));
      const SelectionChoice ch = cfg.select_from_file(call(c, p, count));
      REQUIRE(ch.alg);
      REQUIRE(ch.k);
      const auto [alg, k] = expected(c, count * 4);
      CHECK(*ch.alg == alg);
      CHECK(effective_radix(*ch.alg, p, *ch.k) == k);
      ++calls;
    }
  }
  CHECK(calls == 24);
  SelectionCall inter = call(Collective::allreduce, p, 1);
  inter.inter = true;
  CHECK(cfg.select_from_file(inter).leaf == "algorithm=MPIR_Allreduce_inter_reduce_exchange_bcast");
}

TEST_CASE("reduce_scatter_block leaves: gencoll's names select gencoll, MPICH's own stay the MPI's", "[csel]") {
  const auto file = parse_ok(
      "{\"collective=reduce_scatter_block\": {\"avg_msg_size<=64\": " + leaf("Reduce_scatter_block", "kring", 3) +
      ", \"avg_msg_size<=4096\": " + leaf("Reduce_scatter_block", "recursive_multiplying", 4) +
      ", \"avg_msg_size=any\": " + leaf("Reduce_scatter_block", "recursive_halving") + "}}");
  SelectionChoice ch = file->select(call(Collective::reduce_scatter_block, 8, 4));
  REQUIRE(ch.alg);
  CHECK(*ch.alg == Algorithm::kring);
  CHECK(ch.k == 3);
  ch = file->select(call(Collective::reduce_scatter_block, 8, 1000));
  REQUIRE(ch.alg);
  CHECK(*ch.alg == Algorithm::recursive_multiplying);
  CHECK_FALSE(file->select(call(Collective::reduce_scatter_block, 8, 100000)).alg);
  CHECK_FALSE(file->select(call(Collective::allreduce, 8, 4)).alg);
  const std::vector<std::string> errors =
      parse_errors("{\"collective=reduce_scatter_block\": " + leaf("Reduce_scatter_block", "kbruck", 2) + "}");
  REQUIRE(errors.size() == 1);
  CHECK_THAT(errors[0], Catch::Contains("gencoll has no kbruck reduce_scatter_block"));
}

// MPICH's csel reads a reduce_scatter's count and total size from the sum of
// its recvcounts and its average size from the average block
// (csel.c: get_count, get_total_msgsize, get_avg_msgsize).
TEST_CASE("reduce_scatter: count and total size read the vector, average size its average block", "[csel]") {
  SelectionCall c = call(Collective::reduce_scatter, 4, 10);  // blocks 10, 10, 10, 11
  c.vector_count = 41;
  const auto pick = [&](const std::string& cond) {
    const auto file = parse_ok("{\"collective=reduce_scatter\": {\"" + cond + "\": " +
                               leaf("Reduce_scatter", "kring", 3) + ", \"avg_msg_size=any\": " +
                               leaf("Reduce_scatter", "recursive_multiplying", 2) + "}}");
    const SelectionChoice ch = file->select(c);
    REQUIRE(ch.alg);
    return *ch.alg;
  };
  CHECK(pick("count<=41") == Algorithm::kring);
  CHECK(pick("count<=40") == Algorithm::recursive_multiplying);  // 4 x 10 would pass
  CHECK(pick("total_msg_size<=164") == Algorithm::kring);
  CHECK(pick("total_msg_size<=160") == Algorithm::recursive_multiplying);
  CHECK(pick("avg_msg_size<=40") == Algorithm::kring);
  CHECK(pick("avg_msg_size<=39") == Algorithm::recursive_multiplying);
  c.vector_count = 0;  // elsewhere count is the block
  CHECK(pick("count<=10") == Algorithm::kring);
}

// MPICH's smp leaf of the collectives gencoll composes, and the node_roots
// question that picks the leaders' algorithm (tests/data/smp-select.json, the
// file the emulated cluster's test runs with both MPIs).
TEST_CASE("an smp leaf is MPICH's node-aware composition; node_roots calls get the leaders' algorithm",
          "[csel][smp]") {
  const auto f = SelectionFile::load(std::string(GENCOLL_SOURCE_DIR) + "/tests/data/smp-select.json");
  REQUIRE(f.errors.empty());
  SelectionCall ar = call(Collective::allreduce, 8, 1000);
  ar.nodes = NodeLayout{2, 4, true, 2};
  const SelectionChoice top = f.file->select(ar);
  CHECK(top.smp);
  CHECK(top.leaf == "algorithm=MPIR_Allreduce_intra_smp");
  // Resolved: the node_roots tree's k-ring k=2 among the 4 leaders, nodes of 2.
  CHECK(top.alg == Algorithm::kring);
  CHECK(top.k == 2);
  CHECK(top.node_size == 2);
  CHECK(top.why.empty());
  SelectionCall scattered = ar;
  scattered.nodes = NodeLayout{2, 4, false, 0};
  const SelectionChoice no = f.file->select(scattered);
  CHECK(no.smp);
  CHECK_FALSE(no.alg);
  CHECK(no.why == "smp: the nodes are not blocks of consecutive ranks");
  // MPICH's smp bcast of 1 MiB on 8 ranks is flat: scatter + ring allgather.
  SelectionCall big = call(Collective::bcast, 8, 1 << 18);
  big.nodes = NodeLayout{2, 4, true, 2};
  const SelectionChoice flat = f.file->select(big);
  CHECK(flat.alg == Algorithm::ring);
  CHECK(flat.node_size == 0);
  big.count = 100;
  CHECK(f.file->select(big).alg == Algorithm::knomial);
  CHECK(f.file->select(big).node_size == 2);
  ar.commutative = false;
  const SelectionChoice ordered = f.file->select(ar);
  CHECK_FALSE(ordered.smp);
  CHECK(ordered.alg == Algorithm::knomial);
  SelectionCall leaders = call(Collective::allreduce, 4, 1000);
  leaders.nodes = NodeLayout{1, 4, true, 1};
  leaders.node_roots = true;
  const SelectionChoice inner = f.file->select(leaders);
  CHECK_FALSE(inner.smp);
  CHECK(inner.alg == Algorithm::kring);
  CHECK(inner.k == 2);
  // The same communicator asked as a user's, every process alone on its
  // node: no MPICH hierarchy ("flat"), so the file's flat choice.
  leaders.node_roots = false;
  const SelectionChoice alone = f.file->select(leaders);
  CHECK_FALSE(alone.smp);
  CHECK(alone.alg == Algorithm::recursive_multiplying);
  // A file that leaves smp unguarded there: the reader refuses it (MPICH's
  // smp would compute nothing on such a communicator).
  const SelectionFile::Loaded bare = SelectionFile::parse(
      R"({"collective=allreduce": {"algorithm=MPIR_Allreduce_intra_smp": {}}})", "test file");
  REQUIRE(bare.errors.empty());
  const SelectionChoice refused = bare.file->select(leaders);
  CHECK(refused.smp);
  CHECK_FALSE(refused.alg);
  CHECK(refused.why == "smp: every process is alone on its node (MPICH composes nothing there)");
  // MPICH 4.0.2 composes allreduce, bcast and reduce only: another
  // collective's smp is no algorithm, refused as the module refuses it.
  CHECK(any_contains(parse_errors(R"({"collective=allgather": {"algorithm=MPIR_Allgather_intra_smp": {}}})"),
                     "key \"algorithm=MPIR_Allgather_intra_smp\"", "names no algorithm of MPICH 4.0.2 or gencoll"));
  const SelectionFile::Loaded other = SelectionFile::parse(
      R"({"collective=bcast": {"algorithm=MPIR_Bcast_intra_smp": {}}})", "test file");
  REQUIRE(other.errors.empty());
  CHECK(other.file->select(call(Collective::bcast, 8, 1)).smp);
}

// The layout every binding measures: each process's contribution reduced as
// the bindings reduce it (SUM, MAX), for placements given as the node of each rank.
TEST_CASE("the node layout from the bindings' two reductions", "[selection]") {
  const auto layout = [](const std::vector<int>& node_of) {
    const int p = static_cast<int>(node_of.size());
    int sums[2] = {0, 0}, maxes[2] = {INT_MIN, INT_MIN};
    std::vector<NodeLayout> seen;
    for (int r = 0; r < p; ++r) {
      int size = 0, lo = p, hi = -1;
      for (int q = 0; q < p; ++q)
        if (node_of[q] == node_of[r]) size++, lo = std::min(lo, q), hi = std::max(hi, q);
      const NodeReductions c = node_contribution(p, r, size, lo, hi);
      for (int i = 0; i < 2; ++i) sums[i] += c.sums[i], maxes[i] = std::max(maxes[i], c.maxes[i]);
    }
    return node_layout(0, sums, maxes);
  };
  const NodeLayout blocks = layout({0, 0, 0, 1, 1, 1, 2, 2});  // 3, 3, 2: the last shorter
  CHECK(blocks.node_count == 3);
  CHECK(blocks.consecutive);
  CHECK(blocks.block_size == 3);
  const NodeLayout short_first = layout({0, 0, 1, 1, 1, 2, 2, 2});  // 2, 3, 3: not blocks
  CHECK(short_first.consecutive);
  CHECK(short_first.block_size == 0);
  const NodeLayout round_robin = layout({0, 1, 0, 1});
  CHECK(round_robin.node_count == 2);
  CHECK_FALSE(round_robin.consecutive);
  CHECK(round_robin.block_size == 0);
  CHECK(layout({0, 0, 0, 0, 0}).block_size == 5);  // one node
  CHECK(layout({0, 1, 2}).block_size == 1);        // one process per node
  const NodeLayout uneven = layout({0, 0, 1, 2, 2});  // 2, 1, 2
  CHECK(uneven.node_count == 3);
  CHECK(uneven.block_size == 0);
}
