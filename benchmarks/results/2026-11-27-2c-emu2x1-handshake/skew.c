#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
/* Allreduce of BYTES (doubles) with rank 0 entering DELAY us late (spinning outside MPI). */
int main(int argc,char**argv){
  MPI_Init(&argc,&argv); int r; MPI_Comm_rank(MPI_COMM_WORLD,&r);
  long n=atol(argv[1])/8; double delay=atof(argv[2]); int reps=atoi(argv[3]);
  double*s=malloc(n*8),*d=malloc(n*8); for(long i=0;i<n;i++) s[i]=1;
  double ts[64]; int k=reps<64?reps:64;
  for(int i=0;i<k;i++){
    MPI_Barrier(MPI_COMM_WORLD); double t0=MPI_Wtime();
    if(r==0){ int f; while((MPI_Wtime()-t0)*1e6<delay) if(getenv("INMPI")) MPI_Iprobe(MPI_ANY_SOURCE,99,MPI_COMM_WORLD,&f,MPI_STATUS_IGNORE); }
    MPI_Allreduce(s,d,n,MPI_DOUBLE,MPI_SUM,MPI_COMM_WORLD);
    double t=MPI_Wtime()-t0,m; MPI_Allreduce(&t,&m,1,MPI_DOUBLE,MPI_MAX,MPI_COMM_WORLD); ts[i]=m*1e6;
    if(d[0]!=2) { printf("wrong\n"); MPI_Abort(MPI_COMM_WORLD,1);} 
  }
  for(int i=0;i<k;i++)for(int j=i+1;j<k;j++)if(ts[j]<ts[i]){double x=ts[i];ts[i]=ts[j];ts[j]=x;}
  if(r==0) printf("%s bytes %ld delay %.0f: median %.0f us\n",getenv("ALG"),n*8,delay,ts[k/2]);
  MPI_Finalize(); return 0;
}
