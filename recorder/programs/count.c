/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * numaplace recorder test program: single-threaded, no synchronisation.
 * Usage: count N ITERS
 * The loop makes exactly ITERS * N loads and ITERS * N stores (through a
 * volatile pointer, so the compiler keeps every one of them), so the
 * difference between the references recorded for count N ITERS and for
 * count N 0 is 2 * N * ITERS.
 */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
   long n = argc > 1 ? atol(argv[1]) : 1000;
   long iters = argc > 2 ? atol(argv[2]) : 10;
   long *mem = calloc((size_t)(n > 0 ? n : 1), sizeof(long));
   volatile long *a = mem;
   long sum = 0;
   if (mem == NULL)
      return 1;
   for (long it = 0; it < iters; it++)
      for (long i = 0; i < n; i++)
         a[i] = a[i] + i + it; /* one load, one store */
   for (long i = 0; i < n; i++)
      sum += mem[i];
   printf("count: n=%ld iters=%ld loop_refs=%ld checksum=%ld\n", n, iters,
          2 * n * iters, sum);
   free(mem);
   return 0;
}
