/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * numaplace recorder test program: pthread barrier, spinlock, trylock,
 * recursive mutex, reader-writer lock, pthread_exit, and an exit status
 * chosen by the first argument.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 3

static pthread_barrier_t barrier;
static pthread_spinlock_t spin;
static pthread_mutex_t plain = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t recursive;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static long counter, spun, tried;

static void *worker(void *arg)
{
   long id = (long)arg;
   for (int round = 0; round < 3; round++) {
      pthread_spin_lock(&spin);
      spun++;
      pthread_spin_unlock(&spin);
      pthread_barrier_wait(&barrier);
   }
   while (pthread_mutex_trylock(&plain) != 0)
      ;
   tried++;
   pthread_mutex_unlock(&plain);
   pthread_mutex_lock(&recursive);
   pthread_mutex_lock(&recursive);
   counter += id;
   pthread_mutex_unlock(&recursive);
   pthread_mutex_unlock(&recursive);
   pthread_rwlock_rdlock(&rw);
   pthread_rwlock_unlock(&rw);
   if (id == 1)
      pthread_exit((void *)id);
   return (void *)id;
}

int main(int argc, char **argv)
{
   pthread_t t[THREADS];
   pthread_mutexattr_t a;
   long sum = 0;
   int status = argc > 1 ? atoi(argv[1]) : 0;
   pthread_mutexattr_init(&a);
   pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
   pthread_mutex_init(&recursive, &a);
   pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
   pthread_barrier_init(&barrier, NULL, THREADS);
   for (long i = 0; i < THREADS; i++)
      pthread_create(&t[i], NULL, worker, (void *)i);
   for (int i = 0; i < THREADS; i++) {
      void *r;
      pthread_join(t[i], &r);
      sum += (long)r;
   }
   printf("pthread_features: counter=%ld spun=%ld tried=%ld sum=%ld\n",
          counter, spun, tried, sum);
   return status;
}
