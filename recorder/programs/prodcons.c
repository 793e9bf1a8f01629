/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * numaplace recorder test program: producers and consumers over a bounded
 * ring buffer guarded by one mutex and two condition variables.
 * Usage: prodcons PRODUCERS CONSUMERS ITEMS_PER_PRODUCER CAPACITY
 * Prints the number of items consumed and their sum, which depend only
 * on the arguments.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long *ring;
static long capacity, head, tail, used;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static long items_per_producer;

static void put(long v)
{
   pthread_mutex_lock(&lock);
   while (used == capacity)
      pthread_cond_wait(&not_full, &lock);
   ring[tail] = v;
   tail = (tail + 1) % capacity;
   used++;
   pthread_cond_signal(&not_empty);
   pthread_mutex_unlock(&lock);
}

static long get(void)
{
   long v;
   pthread_mutex_lock(&lock);
   while (used == 0)
      pthread_cond_wait(&not_empty, &lock);
   v = ring[head];
   head = (head + 1) % capacity;
   used--;
   pthread_cond_signal(&not_full);
   pthread_mutex_unlock(&lock);
   return v;
}

struct result {
   long count;
   long sum;
};

static void *producer(void *arg)
{
   long id = (long)arg;
   for (long i = 0; i < items_per_producer; i++)
      put(id * items_per_producer + i + 1);
   return NULL;
}

static void *consumer(void *arg)
{
   struct result *r = arg;
   for (;;) {
      long v = get();
      if (v < 0)
         break;
      r->count++;
      r->sum += v;
   }
   return NULL;
}

int main(int argc, char **argv)
{
   long np = argc > 1 ? atol(argv[1]) : 2;
   long nc = argc > 2 ? atol(argv[2]) : 2;
   long count = 0, sum = 0;
   items_per_producer = argc > 3 ? atol(argv[3]) : 10000;
   capacity = argc > 4 ? atol(argv[4]) : 16;
   if (np < 1 || nc < 1 || capacity < 1 || items_per_producer < 0)
      return 2;
   ring = calloc((size_t)capacity, sizeof(long));
   pthread_t *pt = calloc((size_t)np, sizeof(pthread_t));
   pthread_t *ct = calloc((size_t)nc, sizeof(pthread_t));
   struct result *res = calloc((size_t)nc, sizeof(struct result));
   if (ring == NULL || pt == NULL || ct == NULL || res == NULL)
      return 1;

   for (long i = 0; i < nc; i++)
      if (pthread_create(&ct[i], NULL, consumer, &res[i]) != 0)
         return 1;
   for (long i = 0; i < np; i++)
      if (pthread_create(&pt[i], NULL, producer, (void *)i) != 0)
         return 1;
   for (long i = 0; i < np; i++)
      pthread_join(pt[i], NULL);
   for (long i = 0; i < nc; i++)
      put(-1); /* one end marker per consumer */
   for (long i = 0; i < nc; i++) {
      pthread_join(ct[i], NULL);
      count += res[i].count;
      sum += res[i].sum;
   }
   printf("prodcons: producers=%ld consumers=%ld items=%ld checksum=%ld\n",
          np, nc, count, sum);
   return 0;
}
