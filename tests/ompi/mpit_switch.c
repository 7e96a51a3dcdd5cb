/* mpit_switch: the component's parameters changed through MPI_T between two
 * calls of the same shape on the same communicator take effect at the next
 * call (the component keeps each communicator's last call; its key must hold
 * the parameters). Allreduce of 8 ints on MPI_COMM_WORLD, started with
 * coll_gencoll_allreduce_algorithm=kring and its kval 2 (set by the caller):
 * then recursive_multiplying, then kring again with kval 3. Each result is
 * checked; component.sh checks the verbose lines' algorithms and radices.
 * Prints "mpit_switch: 3 calls, N failures". */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int failures;

static int cvar(const char *name, MPI_T_cvar_handle *h) {
  int index = 0, count = 0;
  if (MPI_T_cvar_get_index(name, &index) != MPI_SUCCESS ||
      MPI_T_cvar_handle_alloc(index, NULL, h, &count) != MPI_SUCCESS || count != 1) {
    fprintf(stderr, "mpit_switch: no control variable %s\n", name);
    failures++;
    return 0;
  }
  return 1;
}

/* Writes `value` to an int variable, or the value named `value_name` of an enum one. */
static void set(const char *name, int value, const char *value_name) {
  MPI_T_cvar_handle h;
  if (!cvar(name, &h)) return;
  if (value_name) {
    int index = 0, verbosity, bind, scope, n = 0;
    char vname[256], desc[256];
    int nlen = sizeof vname, dlen = sizeof desc;
    MPI_Datatype type;
    MPI_T_enum e = MPI_T_ENUM_NULL;
    MPI_T_cvar_get_index(name, &index);
    MPI_T_cvar_get_info(index, vname, &nlen, &verbosity, &type, &e, desc, &dlen, &bind, &scope);
    char ename[256];
    int elen = sizeof ename;
    value = -1;
    if (e != MPI_T_ENUM_NULL && MPI_T_enum_get_info(e, &n, ename, &elen) == MPI_SUCCESS)
      for (int i = 0; i < n; i++) {
        int v = 0;
        char item[256];
        int ilen = sizeof item;
        if (MPI_T_enum_get_item(e, i, &v, item, &ilen) == MPI_SUCCESS && !strcmp(item, value_name)) value = v;
      }
    if (value < 0) {
      fprintf(stderr, "mpit_switch: %s has no value %s\n", name, value_name);
      failures++;
    }
  }
  if (value >= 0 && MPI_T_cvar_write(h, &value) != MPI_SUCCESS) {
    fprintf(stderr, "mpit_switch: cannot write %s\n", name);
    failures++;
  }
  MPI_T_cvar_handle_free(&h);
}

static void call(int rank, int p) {
  int in[8], out[8];
  for (int i = 0; i < 8; i++) in[i] = rank * 10 + i;
  MPI_Allreduce(in, out, 8, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < 8; i++)
    if (out[i] != 10 * p * (p - 1) / 2 + p * i) failures++;
}

int main(int argc, char **argv) {
  int provided = 0, rank = 0, p = 0;
  MPI_Init(&argc, &argv);
  MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  call(rank, p);
  set("coll_gencoll_allreduce_algorithm", 0, "recursive_multiplying");
  call(rank, p);
  set("coll_gencoll_allreduce_algorithm", 0, "kring");
  set("coll_gencoll_allreduce_kring_kval", 3, NULL);
  call(rank, p);
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("mpit_switch: 3 calls, %d failures\n", all);
  MPI_T_finalize();
  MPI_Finalize();
  return all != 0 || failures != 0; /* own failures too: the total went through the allreduce under test */
}
