/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * numaplace recorder: the preload library.
 *
 * The Valgrind core preloads vgpreload_numaplace-amd64-linux.so into the
 * recorded program because it sits beside the numaplace tool.  It
 * interposes, by symbol, the pthread and libgomp (GCC OpenMP) entry points
 * whose behaviour the simulator re-times itself, calls the real function
 * through dlsym(RTLD_NEXT) and tells the tool what happened with client
 * requests (see recorder/include/np_requests.h).  Around every wrapped
 * call recording is switched off, so the library's own work (spinning,
 * futexes, bookkeeping) is neither recorded nor counted.  The tool never
 * instruments this library's own code either.
 *
 * Outside Valgrind the client requests do nothing and every wrapper is a
 * plain pass-through.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <valgrind/valgrind.h>

#include "np_requests.h"

typedef unsigned long ul;

#define REQ0(code) \
   ((void)VALGRIND_DO_CLIENT_REQUEST_EXPR(0, (code), 0, 0, 0, 0, 0))
#define REQ1(code, a1) \
   ((void)VALGRIND_DO_CLIENT_REQUEST_EXPR(0, (code), (ul)(a1), 0, 0, 0, 0))
#define REQ2(code, a1, a2) \
   ((void)VALGRIND_DO_CLIENT_REQUEST_EXPR(0, (code), (ul)(a1), (ul)(a2), \
                                          0, 0, 0))
#define REQ3(code, a1, a2, a3) \
   ((void)VALGRIND_DO_CLIENT_REQUEST_EXPR(0, (code), (ul)(a1), (ul)(a2), \
                                          (ul)(a3), 0, 0))
#define REQ_RET1(code, a1) \
   ((ul)VALGRIND_DO_CLIENT_REQUEST_EXPR(0, (code), (ul)(a1), 0, 0, 0, 0))

/* Find the next definition of a symbol (the real one). */
static void *resolve(const char *name)
{
   void *p = dlsym(RTLD_NEXT, name);
   if (p == NULL) {
      fprintf(stderr, "numaplace preload: cannot find %s\n", name);
      abort();
   }
   return p;
}

#define REAL(ret, name, params)                                   \
   static ret(*real_##name) params;                               \
   if (real_##name == NULL)                                       \
      real_##name = (ret(*) params)resolve(#name)

/* ------------------------------------------------------------------ */
/* pthreads                                                           */
/* ------------------------------------------------------------------ */

struct thread_start {
   void *(*fn)(void *);
   void *arg;
};

/* Start routine of every thread the program creates itself: records the
   body only. */
static void *thread_trampoline(void *p)
{
   struct thread_start s = *(struct thread_start *)p;
   void *r;
   free(p);
   REQ1(NP_REQ_THREAD_BEGIN, pthread_self());
   r = s.fn(s.arg);
   REQ0(NP_REQ_THREAD_END);
   return r;
}

static int called_from_libgomp(void *ra)
{
   Dl_info info;
   if (dladdr(ra, &info) == 0 || info.dli_fname == NULL)
      return 0;
   return strstr(info.dli_fname, "libgomp") != NULL;
}

int pthread_create(pthread_t *th, const pthread_attr_t *attr,
                   void *(*fn)(void *), void *arg)
{
   void *ra = __builtin_return_address(0);
   int r;
   REQ0(NP_REQ_OFF);
   REAL(int, pthread_create, (pthread_t *, const pthread_attr_t *,
                              void *(*)(void *), void *));
   if (called_from_libgomp(ra)) {
      /* A libgomp pool thread: it records only inside region bodies,
         through the region trampoline. */
      r = real_pthread_create(th, attr, fn, arg);
   } else {
      struct thread_start *s = malloc(sizeof *s);
      if (s == NULL) {
         r = EAGAIN;
      } else {
         s->fn = fn;
         s->arg = arg;
         r = real_pthread_create(th, attr, thread_trampoline, s);
         if (r != 0)
            free(s);
      }
   }
   REQ2(NP_REQ_CREATED, r == 0 ? *th : 0, r == 0);
   return r;
}

int pthread_join(pthread_t th, void **ret)
{
   int r;
   REQ0(NP_REQ_OFF);
   REAL(int, pthread_join, (pthread_t, void **));
   r = real_pthread_join(th, ret);
   REQ2(NP_REQ_JOINED, th, r == 0);
   return r;
}

void pthread_exit(void *ret)
{
   REQ0(NP_REQ_OFF);
   REAL(void, pthread_exit, (void *));
   real_pthread_exit(ret);
   __builtin_unreachable();
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
   int r;
   REQ0(NP_REQ_OFF);
   REAL(int, pthread_mutex_lock, (pthread_mutex_t *));
   r = real_pthread_mutex_lock(m);
   REQ2(NP_REQ_ACQUIRED, m, r == 0);
   return r;
}

int pthread_mutex_trylock(pthread_mutex_t *m)
{
   int r;
   REQ0(NP_REQ_OFF);
   REAL(int, pthread_mutex_trylock, (pthread_mutex_t *));
   r = real_pthread_mutex_trylock(m);
   REQ2(NP_REQ_ACQUIRED, m, r == 0);
   return r;
}

int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *t)
{
   int r;
   REQ0(NP_REQ_OFF);
   REAL(int, pthread_mutex_timedlock,
        (pthread_mutex_t *, const struct timespec *));
   r = real_pthread_mutex_timedlock(m, t);
   REQ2(NP_REQ_ACQUIRED, m, r == 0);
   return r;
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
   int r;
   REQ1(NP_REQ_RELEASE, m);
   REAL(int, pthread_mutex_unlock, (pthread_mutex_t *));
   r = real_pthread_mutex_unlock(m);
   REQ0(NP_REQ_ON);
   return r;
}

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
   int r;
   REQ1(NP_REQ_RELEASE, m);
   REAL(int, pthread_cond_wait, (pthread_cond_t *, pthread_mutex_t *));
   r = real_pthread_cond_wait(c, m);
   REQ2(NP_REQ_ACQUIRED, m, 1);
   return r;
}

int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
                           const struct timespec *t)
{
   int r;
   REQ1(NP_REQ_RELEASE, m);
   REAL(int, pthread_cond_timedwait,
        (pthread_cond_t *, pthread_mutex_t *, const struct timespec *));
   r = real_pthread_cond_timedwait(c, m, t);
   /* The mutex is held again on success and on time-out alike. */
   REQ2(NP_REQ_ACQUIRED, m, 1);
   return r;
}

int pthread_cond_signal(pthread_cond_t *c)
{
   int r;
   REQ0(NP_REQ_OFF);
   REAL(int, pthread_cond_signal, (pthread_cond_t *));
   r = real_pthread_cond_signal(c);
   REQ0(NP_REQ_ON);
   return r;
}

int pthread_cond_broadcast(pthread_cond_t *c)
{
   int r;
   REQ0(NP_REQ_OFF);
   REAL(int, pthread_cond_broadcast, (pthread_cond_t *));
   r = real_pthread_cond_broadcast(c);
   REQ0(NP_REQ_ON);
   return r;
}

int pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *a,
                         unsigned count)
{
   int r;
   REQ0(NP_REQ_OFF);
   REAL(int, pthread_barrier_init,
        (pthread_barrier_t *, const pthread_barrierattr_t *, unsigned));
   r = real_pthread_barrier_init(b, a, count);
   REQ3(NP_REQ_BARRIER_INIT, b, count, r == 0);
   return r;
}

int pthread_barrier_wait(pthread_barrier_t *b)
{
   int r;
   REQ1(NP_REQ_BARRIER, b);
   REAL(int, pthread_barrier_wait, (pthread_barrier_t *));
   r = real_pthread_barrier_wait(b);
   REQ0(NP_REQ_ON);
   return r;
}

int pthread_spin_lock(pthread_spinlock_t *s)
{
   int r;
   REQ0(NP_REQ_OFF);
   REAL(int, pthread_spin_lock, (pthread_spinlock_t *));
   r = real_pthread_spin_lock(s);
   REQ2(NP_REQ_ACQUIRED, s, r == 0);
   return r;
}

int pthread_spin_trylock(pthread_spinlock_t *s)
{
   int r;
   REQ0(NP_REQ_OFF);
   REAL(int, pthread_spin_trylock, (pthread_spinlock_t *));
   r = real_pthread_spin_trylock(s);
   REQ2(NP_REQ_ACQUIRED, s, r == 0);
   return r;
}

int pthread_spin_unlock(pthread_spinlock_t *s)
{
   int r;
   REQ1(NP_REQ_RELEASE, s);
   REAL(int, pthread_spin_unlock, (pthread_spinlock_t *));
   r = real_pthread_spin_unlock(s);
   REQ0(NP_REQ_ON);
   return r;
}

/* Reader-writer locks are not modelled: a NOTE, and the call is not
   recorded. */
#define RWLOCK_WRAP(name, params, args)               \
   int name params                                    \
   {                                                  \
      int r;                                          \
      REQ1(NP_REQ_NOTE, NP_NOTE_RWLOCK);              \
      REAL(int, name, params);                        \
      r = real_##name args;                           \
      REQ0(NP_REQ_ON);                                \
      return r;                                       \
   }

RWLOCK_WRAP(pthread_rwlock_rdlock, (pthread_rwlock_t *l), (l))
RWLOCK_WRAP(pthread_rwlock_wrlock, (pthread_rwlock_t *l), (l))
RWLOCK_WRAP(pthread_rwlock_tryrdlock, (pthread_rwlock_t *l), (l))
RWLOCK_WRAP(pthread_rwlock_trywrlock, (pthread_rwlock_t *l), (l))
RWLOCK_WRAP(pthread_rwlock_unlock, (pthread_rwlock_t *l), (l))
RWLOCK_WRAP(pthread_rwlock_timedrdlock,
            (pthread_rwlock_t *l, const struct timespec *t), (l, t))
RWLOCK_WRAP(pthread_rwlock_timedwrlock,
            (pthread_rwlock_t *l, const struct timespec *t), (l, t))

/* ------------------------------------------------------------------ */
/* libgomp: parallel regions                                          */
/* ------------------------------------------------------------------ */

struct region_ctx {
   void (*fn)(void *);
   void *data;
   ul region;
   pthread_t owner; /* the forking thread (nested regions) */
};

static int (*p_omp_get_num_threads)(void);
static int (*p_omp_get_thread_num)(void);
static int (*p_omp_get_max_threads)(void);
static int (*p_omp_get_dynamic)(void);
static int (*p_omp_get_thread_limit)(void);
static int (*p_omp_get_max_active_levels)(void);

static void resolve_omp(void)
{
   if (p_omp_get_num_threads != NULL)
      return;
   p_omp_get_thread_num = (int (*)(void))resolve("omp_get_thread_num");
   p_omp_get_max_threads = (int (*)(void))resolve("omp_get_max_threads");
   p_omp_get_dynamic = (int (*)(void))resolve("omp_get_dynamic");
   p_omp_get_thread_limit = (int (*)(void))resolve("omp_get_thread_limit");
   p_omp_get_max_active_levels =
      (int (*)(void))resolve("omp_get_max_active_levels");
   p_omp_get_num_threads = (int (*)(void))resolve("omp_get_num_threads");
}

/* Run by every thread of the team, the master included. */
static void region_trampoline(void *p)
{
   struct region_ctx *c = p;
   unsigned n = (unsigned)p_omp_get_num_threads();
   unsigned i = (unsigned)p_omp_get_thread_num();
   REQ3(NP_REQ_ENTER, c->region, n, i);
   c->fn(c->data);
   REQ1(NP_REQ_LEAVE, c->region);
}

/* A region inside a region (not modelled): only the forking thread's
   share of the body is recorded, as part of its enclosing region. */
static void nested_trampoline(void *p)
{
   struct region_ctx *c = p;
   if (pthread_equal(pthread_self(), c->owner)) {
      REQ0(NP_REQ_ON);
      c->fn(c->data);
      REQ0(NP_REQ_OFF);
   } else {
      c->fn(c->data);
   }
}

/* The team size libgomp will use, when it can be told in advance (the
   same rules as libgomp's, for the common case); 0 when it cannot. */
static unsigned expected_team(unsigned specified, unsigned count)
{
   unsigned n;
   if (specified == 1)
      return 1;
   if (p_omp_get_dynamic() || p_omp_get_thread_limit() != INT_MAX
       || p_omp_get_max_active_levels() < 1)
      return 0;
   n = specified != 0 ? specified : (unsigned)p_omp_get_max_threads();
   if (count != 0 && count < n)
      n = count;
   return n;
}

/* Prologue of every GOMP_parallel* wrapper: returns the start routine to
   hand to libgomp, with *c filled in. */
static void (*fork_begin(struct region_ctx *c, void (*fn)(void *), void *data,
                         unsigned num_threads, unsigned count))(void *)
{
   REQ0(NP_REQ_OFF);
   resolve_omp();
   c->fn = fn;
   c->data = data;
   c->owner = pthread_self();
   c->region = REQ_RET1(NP_REQ_FORK, expected_team(num_threads, count));
   return c->region == NP_NESTED ? nested_trampoline : region_trampoline;
}

#define FORK_END() REQ0(NP_REQ_FORK_END)

void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads,
                   unsigned flags)
{
   struct region_ctx c;
   void (*t)(void *) = fork_begin(&c, fn, data, num_threads, 0);
   REAL(void, GOMP_parallel, (void (*)(void *), void *, unsigned, unsigned));
   real_GOMP_parallel(t, &c, num_threads, flags);
   FORK_END();
}

unsigned GOMP_parallel_reductions(void (*fn)(void *), void *data,
                                  unsigned num_threads, unsigned flags)
{
   struct region_ctx c;
   unsigned r;
   void (*t)(void *) = fork_begin(&c, fn, data, num_threads, 0);
   REAL(unsigned, GOMP_parallel_reductions,
        (void (*)(void *), void *, unsigned, unsigned));
   r = real_GOMP_parallel_reductions(t, &c, num_threads, flags);
   FORK_END();
   return r;
}

void GOMP_parallel_sections(void (*fn)(void *), void *data,
                            unsigned num_threads, unsigned count,
                            unsigned flags)
{
   struct region_ctx c;
   void (*t)(void *) = fork_begin(&c, fn, data, num_threads, count);
   REAL(void, GOMP_parallel_sections,
        (void (*)(void *), void *, unsigned, unsigned, unsigned));
   real_GOMP_parallel_sections(t, &c, num_threads, count, flags);
   FORK_END();
}

/* Combined parallel + loop, with a chunk size. */
#define PARALLEL_LOOP_CHUNK(name)                                          \
   void name(void (*fn)(void *), void *data, unsigned num_threads,          \
             long start, long end, long incr, long chunk, unsigned flags)   \
   {                                                                        \
      struct region_ctx c;                                                  \
      void (*t)(void *) = fork_begin(&c, fn, data, num_threads, 0);         \
      REAL(void, name, (void (*)(void *), void *, unsigned, long, long,     \
                        long, long, unsigned));                             \
      real_##name(t, &c, num_threads, start, end, incr, chunk, flags);      \
      FORK_END();                                                           \
   }

/* Combined parallel + loop, schedule(runtime): no chunk size. */
#define PARALLEL_LOOP_RUNTIME(name)                                         \
   void name(void (*fn)(void *), void *data, unsigned num_threads,          \
             long start, long end, long incr, unsigned flags)               \
   {                                                                        \
      struct region_ctx c;                                                  \
      void (*t)(void *) = fork_begin(&c, fn, data, num_threads, 0);         \
      REAL(void, name, (void (*)(void *), void *, unsigned, long, long,     \
                        long, unsigned));                                   \
      real_##name(t, &c, num_threads, start, end, incr, flags);             \
      FORK_END();                                                           \
   }

PARALLEL_LOOP_CHUNK(GOMP_parallel_loop_static)
PARALLEL_LOOP_CHUNK(GOMP_parallel_loop_dynamic)
PARALLEL_LOOP_CHUNK(GOMP_parallel_loop_guided)
PARALLEL_LOOP_CHUNK(GOMP_parallel_loop_nonmonotonic_dynamic)
PARALLEL_LOOP_CHUNK(GOMP_parallel_loop_nonmonotonic_guided)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_runtime)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_nonmonotonic_runtime)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_maybe_nonmonotonic_runtime)

/* ------------------------------------------------------------------ */
/* libgomp: everything else                                           */
/* ------------------------------------------------------------------ */

/* All of these take and return integer-class values only (pointers,
   integers, bool) and at most twelve of them, so one forwarding shape
   fits all: surplus arguments are read from the caller's registers and
   stack and ignored by the real function, and the whole return register
   is passed back. */
typedef long (*fwd_fn)(long, long, long, long, long, long, long, long, long,
                       long, long, long);

#define FWD_PARAMS                                                        \
   long a1, long a2, long a3, long a4, long a5, long a6, long a7, long a8, \
      long a9, long a10, long a11, long a12
#define FWD_ARGS a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12

/* Not recorded inside. */
#define OMP_OFF(name)                                   \
   long name(FWD_PARAMS);                               \
   long name(FWD_PARAMS)                                \
   {                                                    \
      static fwd_fn real;                               \
      long r;                                           \
      REQ0(NP_REQ_OFF);                                 \
      if (real == NULL)                                 \
         real = (fwd_fn)resolve(#name);                 \
      r = real(FWD_ARGS);                               \
      REQ0(NP_REQ_ON);                                  \
      return r;                                         \
   }

/* A barrier of the current team: a BARRIER record, not recorded inside. */
#define OMP_BARRIER(name)                               \
   long name(FWD_PARAMS);                               \
   long name(FWD_PARAMS)                                \
   {                                                    \
      static fwd_fn real;                               \
      long r;                                           \
      REQ1(NP_REQ_BARRIER, 0);                          \
      if (real == NULL)                                 \
         real = (fwd_fn)resolve(#name);                 \
      r = real(FWD_ARGS);                               \
      REQ0(NP_REQ_ON);                                  \
      return r;                                         \
   }

/* Unsupported: a NOTE (once per code), not recorded inside. */
#define OMP_NOTE(name, code)                            \
   long name(FWD_PARAMS);                               \
   long name(FWD_PARAMS)                                \
   {                                                    \
      static fwd_fn real;                               \
      long r;                                           \
      REQ1(NP_REQ_NOTE, code);                          \
      if (real == NULL)                                 \
         real = (fwd_fn)resolve(#name);                 \
      r = real(FWD_ARGS);                               \
      REQ0(NP_REQ_ON);                                  \
      return r;                                         \
   }

OMP_BARRIER(GOMP_barrier)
OMP_BARRIER(GOMP_barrier_cancel)
OMP_BARRIER(GOMP_loop_end)
OMP_BARRIER(GOMP_loop_end_cancel)
OMP_BARRIER(GOMP_sections_end)
OMP_BARRIER(GOMP_sections_end_cancel)

void GOMP_critical_start(void)
{
   REQ0(NP_REQ_OFF);
   REAL(void, GOMP_critical_start, (void));
   real_GOMP_critical_start();
   REQ2(NP_REQ_ACQUIRED, NP_KEY_CRITICAL, 1);
}

void GOMP_critical_end(void)
{
   REQ1(NP_REQ_RELEASE, NP_KEY_CRITICAL);
   REAL(void, GOMP_critical_end, (void));
   real_GOMP_critical_end();
   REQ0(NP_REQ_ON);
}

void GOMP_critical_name_start(void **pptr)
{
   REQ0(NP_REQ_OFF);
   REAL(void, GOMP_critical_name_start, (void **));
   real_GOMP_critical_name_start(pptr);
   REQ2(NP_REQ_ACQUIRED, pptr, 1);
}

void GOMP_critical_name_end(void **pptr)
{
   REQ1(NP_REQ_RELEASE, pptr);
   REAL(void, GOMP_critical_name_end, (void **));
   real_GOMP_critical_name_end(pptr);
   REQ0(NP_REQ_ON);
}

void GOMP_atomic_start(void)
{
   REQ0(NP_REQ_OFF);
   REAL(void, GOMP_atomic_start, (void));
   real_GOMP_atomic_start();
   REQ2(NP_REQ_ACQUIRED, NP_KEY_ATOMIC, 1);
}

void GOMP_atomic_end(void)
{
   REQ1(NP_REQ_RELEASE, NP_KEY_ATOMIC);
   REAL(void, GOMP_atomic_end, (void));
   real_GOMP_atomic_end();
   REQ0(NP_REQ_ON);
}

/* The OpenMP lock API: a lock, keyed by its address; omp_test_*lock
   acquires when it succeeds (nonzero).  A nest lock taken again by its
   owner writes no ACQUIRE (NOTE 5). */
#define OMP_LOCK(set, unset, test)                                  \
   void set(void *l)                                                \
   {                                                                \
      REQ0(NP_REQ_OFF);                                             \
      REAL(void, set, (void *));                                    \
      real_##set(l);                                                \
      REQ2(NP_REQ_ACQUIRED, l, 1);                                  \
   }                                                                \
   void unset(void *l)                                              \
   {                                                                \
      REQ1(NP_REQ_RELEASE, l);                                      \
      REAL(void, unset, (void *));                                  \
      real_##unset(l);                                              \
      REQ0(NP_REQ_ON);                                              \
   }                                                                \
   int test(void *l)                                                \
   {                                                                \
      int r;                                                        \
      REQ0(NP_REQ_OFF);                                             \
      REAL(int, test, (void *));                                    \
      r = real_##test(l);                                           \
      REQ2(NP_REQ_ACQUIRED, l, r != 0);                             \
      return r;                                                     \
   }

OMP_LOCK(omp_set_lock, omp_unset_lock, omp_test_lock)
OMP_LOCK(omp_set_nest_lock, omp_unset_nest_lock, omp_test_nest_lock)

OMP_OFF(GOMP_single_start)
OMP_OFF(GOMP_single_copy_start)
OMP_OFF(GOMP_single_copy_end)
OMP_OFF(GOMP_ordered_start)
OMP_OFF(GOMP_ordered_end)
OMP_OFF(GOMP_doacross_post)
OMP_OFF(GOMP_doacross_wait)
OMP_OFF(GOMP_doacross_ull_post)
OMP_OFF(GOMP_doacross_ull_wait)
OMP_OFF(GOMP_sections_start)
OMP_OFF(GOMP_sections2_start)
OMP_OFF(GOMP_sections_next)
OMP_OFF(GOMP_sections_end_nowait)
OMP_OFF(GOMP_cancel)
OMP_OFF(GOMP_cancellation_point)
OMP_OFF(GOMP_loop_end_nowait)

OMP_OFF(GOMP_loop_static_start)
OMP_OFF(GOMP_loop_dynamic_start)
OMP_OFF(GOMP_loop_guided_start)
OMP_OFF(GOMP_loop_runtime_start)
OMP_OFF(GOMP_loop_nonmonotonic_dynamic_start)
OMP_OFF(GOMP_loop_nonmonotonic_guided_start)
OMP_OFF(GOMP_loop_nonmonotonic_runtime_start)
OMP_OFF(GOMP_loop_maybe_nonmonotonic_runtime_start)
OMP_OFF(GOMP_loop_ordered_static_start)
OMP_OFF(GOMP_loop_ordered_dynamic_start)
OMP_OFF(GOMP_loop_ordered_guided_start)
OMP_OFF(GOMP_loop_ordered_runtime_start)
OMP_OFF(GOMP_loop_doacross_static_start)
OMP_OFF(GOMP_loop_doacross_dynamic_start)
OMP_OFF(GOMP_loop_doacross_guided_start)
OMP_OFF(GOMP_loop_doacross_runtime_start)
OMP_OFF(GOMP_loop_start)
OMP_OFF(GOMP_loop_ordered_start)
OMP_OFF(GOMP_loop_doacross_start)
OMP_OFF(GOMP_loop_static_next)
OMP_OFF(GOMP_loop_dynamic_next)
OMP_OFF(GOMP_loop_guided_next)
OMP_OFF(GOMP_loop_runtime_next)
OMP_OFF(GOMP_loop_nonmonotonic_dynamic_next)
OMP_OFF(GOMP_loop_nonmonotonic_guided_next)
OMP_OFF(GOMP_loop_nonmonotonic_runtime_next)
OMP_OFF(GOMP_loop_maybe_nonmonotonic_runtime_next)
OMP_OFF(GOMP_loop_ordered_static_next)
OMP_OFF(GOMP_loop_ordered_dynamic_next)
OMP_OFF(GOMP_loop_ordered_guided_next)
OMP_OFF(GOMP_loop_ordered_runtime_next)

OMP_OFF(GOMP_loop_ull_static_start)
OMP_OFF(GOMP_loop_ull_dynamic_start)
OMP_OFF(GOMP_loop_ull_guided_start)
OMP_OFF(GOMP_loop_ull_runtime_start)
OMP_OFF(GOMP_loop_ull_nonmonotonic_dynamic_start)
OMP_OFF(GOMP_loop_ull_nonmonotonic_guided_start)
OMP_OFF(GOMP_loop_ull_nonmonotonic_runtime_start)
OMP_OFF(GOMP_loop_ull_maybe_nonmonotonic_runtime_start)
OMP_OFF(GOMP_loop_ull_ordered_static_start)
OMP_OFF(GOMP_loop_ull_ordered_dynamic_start)
OMP_OFF(GOMP_loop_ull_ordered_guided_start)
OMP_OFF(GOMP_loop_ull_ordered_runtime_start)
OMP_OFF(GOMP_loop_ull_doacross_static_start)
OMP_OFF(GOMP_loop_ull_doacross_dynamic_start)
OMP_OFF(GOMP_loop_ull_doacross_guided_start)
OMP_OFF(GOMP_loop_ull_doacross_runtime_start)
OMP_OFF(GOMP_loop_ull_start)
OMP_OFF(GOMP_loop_ull_ordered_start)
OMP_OFF(GOMP_loop_ull_doacross_start)
OMP_OFF(GOMP_loop_ull_static_next)
OMP_OFF(GOMP_loop_ull_dynamic_next)
OMP_OFF(GOMP_loop_ull_guided_next)
OMP_OFF(GOMP_loop_ull_runtime_next)
OMP_OFF(GOMP_loop_ull_nonmonotonic_dynamic_next)
OMP_OFF(GOMP_loop_ull_nonmonotonic_guided_next)
OMP_OFF(GOMP_loop_ull_nonmonotonic_runtime_next)
OMP_OFF(GOMP_loop_ull_maybe_nonmonotonic_runtime_next)
OMP_OFF(GOMP_loop_ull_ordered_static_next)
OMP_OFF(GOMP_loop_ull_ordered_dynamic_next)
OMP_OFF(GOMP_loop_ull_ordered_guided_next)
OMP_OFF(GOMP_loop_ull_ordered_runtime_next)

OMP_NOTE(GOMP_task, NP_NOTE_TASKS)
OMP_NOTE(GOMP_taskloop, NP_NOTE_TASKS)
OMP_NOTE(GOMP_taskloop_ull, NP_NOTE_TASKS)
OMP_NOTE(GOMP_taskwait, NP_NOTE_TASKS)
OMP_NOTE(GOMP_taskwait_depend, NP_NOTE_TASKS)
OMP_NOTE(GOMP_taskyield, NP_NOTE_TASKS)
OMP_NOTE(GOMP_taskgroup_start, NP_NOTE_TASKS)
OMP_NOTE(GOMP_taskgroup_end, NP_NOTE_TASKS)

OMP_NOTE(GOMP_parallel_start, NP_NOTE_OLD_ABI)
OMP_NOTE(GOMP_parallel_loop_static_start, NP_NOTE_OLD_ABI)
OMP_NOTE(GOMP_parallel_loop_dynamic_start, NP_NOTE_OLD_ABI)
OMP_NOTE(GOMP_parallel_loop_guided_start, NP_NOTE_OLD_ABI)
OMP_NOTE(GOMP_parallel_loop_runtime_start, NP_NOTE_OLD_ABI)
OMP_NOTE(GOMP_parallel_sections_start, NP_NOTE_OLD_ABI)
OMP_OFF(GOMP_parallel_end)
