/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * Client-request codes shared by the numaplace preload library (which
 * sends them) and the numaplace Valgrind tool (which handles them).
 *
 * Recording depth: every thread has a signed counter; it records its
 * loads, stores and instructions while the counter is > 0.  Requests
 * marked "pre" act first and then decrement the counter (they are sent
 * just before a wrapped call), requests marked "post" first increment it
 * and then act (sent right after the wrapped call returned).  A record is
 * only written for a synchronisation event when the thread would be
 * recording outside the wrapped call, so calls made by libraries while
 * not recording (libgomp internals, wrapped calls nested in wrapped calls)
 * leave no trace.
 */
#ifndef NP_REQUESTS_H
#define NP_REQUESTS_H

#define NP_REQ_BASE (((unsigned int)'N' << 24) | ((unsigned int)'P' << 16))

enum np_request {
   NP_REQ_OFF = NP_REQ_BASE + 1, /* depth-- */
   NP_REQ_ON,                    /* depth++ */
   NP_REQ_ACQUIRED,              /* post: a1 key, a2 success -> ACQUIRE */
   NP_REQ_RELEASE,               /* pre:  a1 key -> RELEASE */
   NP_REQ_BARRIER_INIT,          /* post: a1 key, a2 parties, a3 success */
   NP_REQ_BARRIER,               /* pre:  a1 key (0: the team barrier of the
                                    thread's current region) -> BARRIER */
   NP_REQ_CREATED,               /* post: a1 pthread_t, a2 success */
   NP_REQ_THREAD_BEGIN,          /* depth++; a1 pthread_self() */
   NP_REQ_THREAD_END,            /* depth-- */
   NP_REQ_JOINED,                /* post: a1 pthread_t, a2 success -> JOIN */
   NP_REQ_FORK,                  /* a1 team size expected (0 unknown);
                                    returns the region number, or
                                    NP_NESTED for a region inside a region */
   NP_REQ_ENTER,                 /* a1 region, a2 team size, a3 index;
                                    ENTER, then depth++ */
   NP_REQ_LEAVE,                 /* a1 region; depth--, then the closing
                                    barrier's BARRIER and LEAVE */
   NP_REQ_NOTE,                  /* pre: a1 note code -> NOTE (once) */
   NP_REQ_FORK_END               /* depth++, after GOMP_parallel* returned
                                    (ends a nested region if it was one) */
};

#define NP_NESTED (~0UL)

/* Sync object keys that are not addresses. */
#define NP_KEY_TEAM_BARRIER 0x8000000000000000ULL /* | region number */
#define NP_KEY_CRITICAL     0x8100000000000000ULL
#define NP_KEY_ATOMIC       0x8200000000000000ULL

/* NOTE codes */
#define NP_NOTE_TASKS     1
#define NP_NOTE_NESTED    2
#define NP_NOTE_OLD_ABI   3
#define NP_NOTE_RWLOCK    4
#define NP_NOTE_RELOCKED  5

#endif
