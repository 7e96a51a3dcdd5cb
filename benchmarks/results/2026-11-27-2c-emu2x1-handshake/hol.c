#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* 2 ranks exchange BYTES; rank 0 posts its side DELAY us after rank 1.
   mode pre: both receives posted at the start; send: the late rank posts send then recv;
   recv: the late rank posts recv then send. Rank 1 always posts its send and recv at start. */
static void spin(double us){ double t=MPI_Wtime(); int f; while((MPI_Wtime()-t)*1e6<us) MPI_Iprobe(MPI_ANY_SOURCE,99,MPI_COMM_WORLD,&f,MPI_STATUS_IGNORE); }
int main(int argc,char**argv){
  MPI_Init(&argc,&argv); int r; MPI_Comm_rank(MPI_COMM_WORLD,&r);
  long n=atol(argv[1]); double delay=atof(argv[2]); const char*mode=argv[3]; int reps=atoi(argv[4]);
  char*s=malloc(n),*d=malloc(n); memset(s,1,n);
  double best=1e9, tot=0; double ts[64];
  for(int i=0;i<reps;i++){
    MPI_Request q[2]; int peer=1-r;
    MPI_Barrier(MPI_COMM_WORLD); double t0=MPI_Wtime();
    if(r==1 || strcmp(mode,"pre")==0) MPI_Irecv(d,n,MPI_BYTE,peer,0,MPI_COMM_WORLD,&q[0]);
    if(r==0) spin(delay);
    if(r==0 && strcmp(mode,"recv")==0) MPI_Irecv(d,n,MPI_BYTE,peer,0,MPI_COMM_WORLD,&q[0]);
    MPI_Isend(s,n,MPI_BYTE,peer,0,MPI_COMM_WORLD,&q[1]);
    if(r==0 && strcmp(mode,"send")==0) MPI_Irecv(d,n,MPI_BYTE,peer,0,MPI_COMM_WORLD,&q[0]);
    MPI_Waitall(2,q,MPI_STATUSES_IGNORE);
    double t=MPI_Wtime()-t0, m; MPI_Allreduce(&t,&m,1,MPI_DOUBLE,MPI_MAX,MPI_COMM_WORLD);
    ts[i<64?i:63]=m*1e6;
  }
  /* median */
  int k=reps<64?reps:64; for(int i=0;i<k;i++)for(int j=i+1;j<k;j++)if(ts[j]<ts[i]){double x=ts[i];ts[i]=ts[j];ts[j]=x;}
  if(r==0) printf("%s bytes %ld delay %.0f us: median %.0f us\n",mode,n,delay,ts[k/2]);
  MPI_Finalize(); return 0;
}
