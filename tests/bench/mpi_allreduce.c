/* The baseline of `mpirun -np P hloi bench tests/bench/all_reduce_mpi.hlo`
 * (doc/mpi.md): a plain MPI_Allreduce (sum) loop over the same buffers,
 * f32[N] on each rank, timed as hloi bench times a run (the median of the
 * iterations after a warm-up, each ended by a barrier so that it ends when
 * every rank has). Rank 0 prints the median in seconds.
 *
 *   mpicc -O2 tests/bench/mpi_allreduce.c -o mpi_allreduce
 *   mpirun -np 4 ./mpi_allreduce [N=16777216] [ITERATIONS=10]
 *
 * Target (issue 34): hloi's all-reduce within 1.5x of this median. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	long n = argc > 1 ? atol(argv[1]) : 16777216L;
	int iterations = argc > 2 ? atoi(argv[2]) : 10;
	if (n < 1 || n > 1L << 29 || iterations < 1) {
		if (rank == 0)
			fprintf(stderr, "usage: mpi_allreduce [N (1 to 2^29)] [ITERATIONS]\n");
		MPI_Finalize();
		return 2;
	}
	float *in = malloc((size_t)n * sizeof *in), *out = malloc((size_t)n * sizeof *out);
	double *times = malloc((size_t)iterations * sizeof *times);
	if (!in || !out || !times) {
		fprintf(stderr, "mpi_allreduce: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (long i = 0; i < n; i++)
		in[i] = (float)((i * 7 + rank) % 101) / 8.0f;
	for (int it = -1; it < iterations; it++) {
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = MPI_Wtime();
		MPI_Allreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		MPI_Barrier(MPI_COMM_WORLD);
		if (it >= 0)
			times[it] = MPI_Wtime() - t0;
	}
	qsort(times, (size_t)iterations, sizeof *times, cmp_double);
	double median = iterations % 2 ? times[iterations / 2] : (times[iterations / 2 - 1] + times[iterations / 2]) / 2;
	if (rank == 0)
		printf("MPI_Allreduce f32[%ld] sum: median %.6f s, min %.6f s, max %.6f s (%d iterations)\n", n, median,
		       times[0], times[iterations - 1], iterations);
	free(in);
	free(out);
	free(times);
	MPI_Finalize();
	return 0;
}
