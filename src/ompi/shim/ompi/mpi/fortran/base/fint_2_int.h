/*
 * Debian's libopenmpi-dev ships ompi/op/op.h but not this header it includes.
 * op.h uses one of its macros, to hand a C int to a Fortran user op as a
 * Fortran INTEGER; a cast is what Open MPI's own definition amounts to.
 */
#ifndef GENCOLL_OMPI_FINT_2_INT_SHIM_H
#define GENCOLL_OMPI_FINT_2_INT_SHIM_H

#define OMPI_INT_2_FINT(a) ((MPI_Fint) (a))

#endif
