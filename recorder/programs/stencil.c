/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * numaplace recorder test program: an OpenMP 2D Jacobi stencil.
 * Usage: stencil N ITERS   (an N x N grid of doubles, ITERS sweeps)
 * Both grids are allocated and first touched in parallel with the same
 * static schedule as the sweeps, so each thread owns a band of rows.
 */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
   long n = argc > 1 ? atol(argv[1]) : 256;
   long iters = argc > 2 ? atol(argv[2]) : 10;
   double *a, *b;
   double sum = 0.0;
   if (n < 3)
      n = 3;
   a = malloc((size_t)(n * n) * sizeof(double));
   b = malloc((size_t)(n * n) * sizeof(double));
   if (a == NULL || b == NULL)
      return 1;

#pragma omp parallel for schedule(static)
   for (long i = 0; i < n; i++)
      for (long j = 0; j < n; j++) {
         int edge = i == 0 || j == 0 || i == n - 1 || j == n - 1;
         a[i * n + j] = edge ? 1.0 : 0.0;
         b[i * n + j] = a[i * n + j];
      }

   for (long it = 0; it < iters; it++) {
#pragma omp parallel for schedule(static)
      for (long i = 1; i < n - 1; i++)
         for (long j = 1; j < n - 1; j++)
            b[i * n + j] = 0.25 * (a[(i - 1) * n + j] + a[(i + 1) * n + j]
                                   + a[i * n + j - 1] + a[i * n + j + 1]);
      double *t = a;
      a = b;
      b = t;
   }

   for (long i = 0; i < n * n; i++)
      sum += a[i];
   printf("stencil: n=%ld iters=%ld checksum=%.6f\n", n, iters, sum);
   free(a);
   free(b);
   return 0;
}
