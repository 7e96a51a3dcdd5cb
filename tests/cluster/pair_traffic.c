/* pair_traffic: rank A sends BYTES to rank B (and B checks them), so that a
 * test can compare what crossed the emulated NICs with what the MPI moved:
 * ranks on different hosts must use the network, ranks on one host must not.
 *
 * usage: pair_traffic A B BYTES   (prints "pair_traffic: A (HOST) -> B (HOST): BYTES bytes, ok") */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, a, b, bad = 0, len;
  long long bytes;
  char name[MPI_MAX_PROCESSOR_NAME], peer[MPI_MAX_PROCESSOR_NAME] = "";
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 4 || (a = atoi(argv[1])) < 0 || (b = atoi(argv[2])) < 0 || a >= size || b >= size || a == b ||
      (bytes = atoll(argv[3])) <= 0 || bytes > (1LL << 30)) {
    if (rank == 0) fprintf(stderr, "usage: pair_traffic A B BYTES (two different ranks below %d, 1 <= BYTES <= 2^30)\n", size);
    MPI_Finalize();
    return 2;
  }
  MPI_Get_processor_name(name, &len);
  unsigned char *buf = malloc((size_t)bytes);
  if (!buf) MPI_Abort(MPI_COMM_WORLD, 1);
  if (rank == a) {
    for (long long i = 0; i < bytes; ++i) buf[i] = (unsigned char)(i * 7 + 1);
    MPI_Send(buf, (int)bytes, MPI_BYTE, b, 0, MPI_COMM_WORLD);
    MPI_Recv(peer, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, b, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&bad, 1, MPI_INT, b, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("pair_traffic: %d (%s) -> %d (%s): %lld bytes, %s\n", a, name, b, peer, bytes, bad ? "WRONG DATA" : "ok");
  } else if (rank == b) {
    memset(buf, 0, (size_t)bytes);
    MPI_Recv(buf, (int)bytes, MPI_BYTE, a, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (long long i = 0; i < bytes; ++i) bad += buf[i] != (unsigned char)(i * 7 + 1);
    MPI_Send(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, a, 1, MPI_COMM_WORLD);
    MPI_Send(&bad, 1, MPI_INT, a, 2, MPI_COMM_WORLD);
  }
  free(buf);
  MPI_Finalize();
  return bad != 0;
}
