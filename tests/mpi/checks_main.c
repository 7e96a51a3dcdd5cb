/* The integration matrix's three programs (coll_check, root_check, rsb_check)
 * in one launch. Starting an MPI job costs a second or more of the two cores
 * the tests share, about half of the matrices' time when each program had its
 * own mpiexec. Each program is compiled unchanged with its main renamed and
 * its MPI_Init/MPI_Finalize turned into the no-ops below, so its file-static
 * state stays its own; this main initializes MPI once and runs them in order.
 *
 * Usage: checks [--only NAME[,NAME...]] [-q] [--skip-native-inplace-bug] [-F] [-c COLL]
 *   --only  the programs to run (default: all three, in this order)
 *   -q goes to every program, --skip-native-inplace-bug to root_check, -F and
 *   -c COLL to coll_check.
 * Each program prints its own summary line; the exit status is the first
 * nonzero one of theirs. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int coll_check_main(int argc, char** argv);
int root_check_main(int argc, char** argv);
int rsb_check_main(int argc, char** argv);

int checks_init(int* argc, char*** argv) {
  (void)argc, (void)argv;
  return MPI_SUCCESS;
}
int checks_finalize(void) { return MPI_SUCCESS; }

static int listed(const char* list, const char* name) {
  if (!list) return 1;
  const size_t n = strlen(name);
  for (const char* p = list; (p = strstr(p, name)) != NULL; p += n)
    if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return 1;
  return 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const char* only = NULL;
  char* coll_args[6] = {argv[0]};
  int ncoll = 1, quiet = 0, skip_bug = 0, bad = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!strcmp(argv[i], "-q")) quiet = 1;
    else if (!strcmp(argv[i], "--skip-native-inplace-bug")) skip_bug = 1;
    else if (!strcmp(argv[i], "-F") && ncoll < 4) coll_args[ncoll++] = argv[i];
    else if (!strcmp(argv[i], "-c") && i + 1 < argc && ncoll < 3) {
      coll_args[ncoll++] = argv[i];
      coll_args[ncoll++] = argv[++i];
    } else bad = 1;
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (bad) {
    if (rank == 0)
      fprintf(stderr, "usage: %s [--only coll_check,root_check,rsb_check] [-q] [--skip-native-inplace-bug] [-F] [-c COLL]\n",
              argv[0]);
    MPI_Finalize();
    return 2;
  }
  char* common[3] = {argv[0]}, *root_args[4] = {argv[0]};
  int ncommon = 1, nroot = 1;
  if (quiet) common[ncommon++] = root_args[nroot++] = coll_args[ncoll++] = "-q";
  if (skip_bug) root_args[nroot++] = "--skip-native-inplace-bug";
  int rc = 0, r;
  if (listed(only, "coll_check") && (r = coll_check_main(ncoll, coll_args)) != 0 && rc == 0) rc = r;
  if (listed(only, "root_check") && (r = root_check_main(nroot, root_args)) != 0 && rc == 0) rc = r;
  if (listed(only, "rsb_check") && (r = rsb_check_main(ncommon, common)) != 0 && rc == 0) rc = r;
  MPI_Finalize();
  return rc;
}
