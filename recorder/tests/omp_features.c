/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * numaplace recorder test program: the OpenMP constructs the recorder
 * knows (critical, named critical, atomic through GOMP_atomic_start,
 * OpenMP locks, barrier, single, dynamic loop) and, with the argument "unsupported",
 * the ones it only notes (a task, a nested region).
 */
#include <omp.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
   long total = 0, named = 0, dyn = 0, singles = 0;
   long double ld = 0; /* no native atomic: GOMP_atomic_start/end */
   int unsupported = argc > 1 && strcmp(argv[1], "unsupported") == 0;
   omp_lock_t lock;
   long locked = 0;
   omp_init_lock(&lock);

#pragma omp parallel
   {
      int id = omp_get_thread_num();
#pragma omp critical
      total += id + 1;
#pragma omp critical(other)
      named += 1;
#pragma omp atomic
      ld += 1.0L;
      omp_set_lock(&lock);
      locked++;
      omp_unset_lock(&lock);
      while (!omp_test_lock(&lock))
         ;
      locked++;
      omp_unset_lock(&lock);
#pragma omp barrier
#pragma omp single
      singles++;
#pragma omp for schedule(dynamic, 4) reduction(+ : dyn)
      for (int i = 0; i < 1000; i++)
         dyn += i;
   }

   if (unsupported) {
#pragma omp parallel
      {
#pragma omp single
         {
#pragma omp task
            total += 1000;
         }
#pragma omp parallel num_threads(2)
         {
#pragma omp barrier
#pragma omp atomic
            named += 1;
         }
      }
   }
   omp_destroy_lock(&lock);
   printf("omp_features: total=%ld named=%ld ld=%.0Lf singles=%ld dyn=%ld "
          "locked=%ld\n", total, named, ld, singles, dyn, locked);
   return 0;
}
