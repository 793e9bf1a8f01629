/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * numaplace recorder: a Valgrind tool that writes the data references,
 * instruction counts and synchronisation events of a multi-threaded
 * program as a raw binary stream (see recorder/RAW.md).
 *
 * Copyright (C) the numaplace authors.
 *
 * This program is free software; you can redistribute it and/or modify
 * it under the terms of the GNU General Public License as published by
 * the Free Software Foundation; either version 2 of the License, or (at
 * your option) any later version.  It is distributed WITHOUT ANY
 * WARRANTY; see the GNU General Public License for more details.
 *
 * Outline
 *  - Every guest load and store calls a small helper that folds it into
 *    the running thread's open RUN (same fold page, same direction).
 *  - Guest instructions are counted into one global counter by the
 *    instrumented code (see "Instruction counting" below); the counter is
 *    attributed to the running thread whenever the running thread or its
 *    recording state changes.
 *  - The preload library (recorder/preload/wrap.c) reports threads,
 *    locks, barriers and OpenMP regions through client requests, and
 *    switches recording off around every wrapped call.
 *  - Valgrind runs one thread at a time, so all of this state is plain
 *    global data without locking, and the order in which events are
 *    handled is the real order.
 */

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_machine.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_hashtable.h"
#include "pub_tool_vki.h"
#include "pub_tool_clreq.h"

#include "np_requests.h"

/* Two functions of the core that the tool headers do not declare: they
   move the output descriptor out of the client's range of descriptors, so
   that the program can neither see nor close it. */
extern Int VG_(safe_fd)(Int oldfd);
extern Int VG_(fcntl)(Int fd, Int cmd, Addr arg);

/* ------------------------------------------------------------------ */
/* Options                                                            */
/* ------------------------------------------------------------------ */

static Long clo_out_fd = -1;
static Long clo_page_size = 4096;

static Bool np_process_cmd_line_option(const HChar *arg)
{
   /* Descriptors 0 to 2 are the program's own: the tool takes the
      descriptor away from the program at start-up. */
   if VG_BINT_CLO(arg, "--out-fd", clo_out_fd, 3, 1048576) {
   } else if VG_BINT_CLO(arg, "--page-size", clo_page_size, 64, 1073741824) {
      if ((clo_page_size & (clo_page_size - 1)) != 0)
         VG_(fmsg_bad_option)(arg, "--page-size must be a power of two "
                              "from 64 to 1073741824\n");
   } else {
      return False;
   }
   return True;
}

static void np_print_usage(void)
{
   VG_(printf)(
"    --out-fd=N                write the raw event stream to inherited file\n"
"                              descriptor N, 3 or more (required)\n"
"    --page-size=BYTES         fold page size, a power of two from 64 to\n"
"                              1073741824 [4096]\n");
}

static void np_print_debug_usage(void)
{
   VG_(printf)("    (none)\n");
}

/* ------------------------------------------------------------------ */
/* Output                                                             */
/* ------------------------------------------------------------------ */

enum {
   K_END = 0, K_RUN = 1, K_CREATE = 2, K_START = 3, K_EXIT = 4, K_JOIN = 5,
   K_ACQUIRE = 6, K_RELEASE = 7, K_BARRIER = 8, K_FORK = 9, K_ENTER = 10,
   K_LEAVE = 11, K_NOTE = 12
};

typedef struct {
   UChar kind;
   UChar flags;
   UShort zero;
   UInt thread;
   ULong a;
   ULong b;
   ULong instr;
} Rec;

STATIC_ASSERT(sizeof(Rec) == 32);

#define OUT_BUF_BYTES (1024 * 1024)

static Int out_fd = -1;
static UChar *out_buf;
static UInt out_used;
static ULong out_records;

static void out_flush(void)
{
   UInt done = 0;
   if (out_fd < 0) {
      out_used = 0;
      return;
   }
   while (done < out_used) {
      Int n = VG_(write)(out_fd, out_buf + done, (Int)(out_used - done));
      if (n == -VKI_EINTR)
         continue;
      if (n == -VKI_EAGAIN) {
         struct vki_pollfd p;
         p.fd = out_fd;
         p.events = 0x0004; /* POLLOUT */
         p.revents = 0;
         VG_(poll)(&p, 1, -1);
         continue;
      }
      if (n <= 0) {
         VG_(umsg)("numaplace: cannot write the event stream (error %d); "
                   "stopping\n", -n);
         out_fd = -1;
         VG_(exit)(1);
      }
      done += (UInt)n;
   }
   out_used = 0;
}

static void out_bytes(const void *p, UInt n)
{
   if (out_used + n > OUT_BUF_BYTES)
      out_flush();
   VG_(memcpy)(out_buf + out_used, p, n);
   out_used += n;
}

static inline void out_rec(UChar kind, UChar flags, UInt thread, ULong a,
                           ULong b, ULong instr)
{
   Rec *r;
   if (UNLIKELY(out_used + sizeof(Rec) > OUT_BUF_BYTES))
      out_flush();
   /* Records are written in place (the buffer is 16-byte aligned and
      the header and every record are 32 bytes long). */
   r = (Rec *)(out_buf + out_used);
   r->kind = kind;
   r->flags = flags;
   r->zero = 0;
   r->thread = thread;
   r->a = a;
   r->b = b;
   r->instr = instr;
   out_used += sizeof(Rec);
   out_records++;
}

/* ------------------------------------------------------------------ */
/* Threads                                                            */
/* ------------------------------------------------------------------ */

#define NO_RUN (~(UWord)0)
#define MAX_RUN_COUNT 0xFFFFFFFFu

typedef struct {
   UInt num;         /* our thread number: 0, 1, 2... never reused */
   Int depth;        /* records while > 0 */
   Bool exited;
   ULong icount;     /* instructions executed while recording (up to the
                        last attribution of the global counter) */
   ULong rec_mark;   /* icount at the start of the thread's previous record */
   /* the open run */
   UWord run_key;    /* ((addr >> shift) << 1) | write, or NO_RUN */
   Addr run_lo;      /* lowest byte referenced */
   Addr run_hi;      /* one past the highest byte referenced (clipped) */
   Addr run_pend;    /* end of the run's page */
   UInt run_count;
   ULong run_instr;  /* the run record's instr field */
   /* OpenMP */
   UInt nested;      /* nested (unmodelled) regions the thread forked */
   Bool in_region;
   ULong region;
   UInt team;
   UInt index;
   /* threads */
   UInt last_child;
} TS;

static UInt page_shift;

static TS **ts_by_tid;     /* indexed by Valgrind ThreadId (slots reused) */
static TS **ts_all;        /* indexed by our thread number */
static UInt ts_count, ts_cap;

static TS ts_idle;         /* "current" when no client thread runs */

/* The running thread, and whether it records.  Kept in globals so that
   the memory helpers' fast path is a handful of loads and compares. */
static TS *cur = &ts_idle;
static Bool g_rec;

/* Instruction counting.
 *
 * The instrumented code adds the number of guest instructions it has
 * executed to the global g_icount: the count of IMarks since the previous
 * addition is passed as an argument to the next memory helper call (which
 * adds it), or, where no unconditional helper call follows, added by
 * three inline IR statements (load, add, store) placed before each side
 * exit and at the end of the superblock.  So at every point where the
 * tool looks at it (a helper, a client request, a thread switch, a
 * syscall: all of them happen between or at the end of superblocks, or in
 * a helper placed after the instruction's IMark) g_icount is exact.
 *
 * g_icount runs whether or not the thread records; the difference since
 * g_mark is attributed to the running thread (if it records) whenever the
 * running thread changes or its recording state changes (fold()).  This
 * keeps the per-access cost at one add and avoids per-thread pointer
 * chasing in generated code.
 */
static ULong g_icount, g_mark;

static void fold(void)
{
   if (g_rec)
      cur->icount += g_icount - g_mark;
   g_mark = g_icount;
}

static ULong thread_icount(TS *t)
{
   if (t == cur)
      fold();
   return t->icount;
}

static void set_cur(TS *t)
{
   if (t == cur)
      return;
   fold();
   cur = t;
   g_rec = t->depth > 0;
}

static void set_depth(TS *t, Int d)
{
   if (t == cur)
      fold();
   t->depth = d;
   if (t == cur)
      g_rec = d > 0;
}

static TS *new_ts(void)
{
   TS *t = VG_(calloc)("np.ts", 1, sizeof(TS));
   t->num = ts_count;
   t->run_key = NO_RUN;
   if (ts_count == ts_cap) {
      ts_cap = ts_cap ? 2 * ts_cap : 64;
      ts_all = VG_(realloc)("np.tsall", ts_all, ts_cap * sizeof(TS *));
   }
   ts_all[ts_count++] = t;
   return t;
}

static TS *ts_of(ThreadId tid)
{
   TS *t;
   tl_assert(tid > 0 && tid < VG_N_THREADS);
   t = ts_by_tid[tid];
   if (t == NULL) {
      /* A thread we were not told about (should not happen): give it a
         number so that its events are not lost. */
      t = new_ts();
      ts_by_tid[tid] = t;
   }
   return t;
}

/* Close the thread's open run, writing its RUN record. */
static void close_run(TS *t)
{
   if (t->run_key == NO_RUN)
      return;
   out_rec(K_RUN, (UChar)(t->run_key & 1), t->num, t->run_lo,
           (ULong)t->run_count | ((ULong)(t->run_hi - t->run_lo) << 32),
           t->run_instr);
   t->run_key = NO_RUN;
}

/* Write a marker record (anything but RUN) in the thread's stream. */
static void marker(TS *t, UChar kind, ULong a, ULong b)
{
   ULong now;
   close_run(t);
   now = thread_icount(t);
   out_rec(kind, 0, t->num, a, b, now - t->rec_mark);
   t->rec_mark = now;
}

static Bool noted[8];

static void note(TS *t, UInt code)
{
   if (code < 8 && !noted[code]) {
      noted[code] = True;
      marker(t, K_NOTE, code, 0);
   }
}

/* ------------------------------------------------------------------ */
/* Memory helpers                                                     */
/* ------------------------------------------------------------------ */

static void __attribute__((noinline)) ref_slow(TS *t, Addr a, UWord sz,
                                               UWord w)
{
   UWord key = ((a >> page_shift) << 1) | w;
   Addr pend = ((a >> page_shift) + 1) << page_shift;
   Addr e = a + sz;
   ULong now;
   close_run(t);
   now = thread_icount(t);
   t->run_instr = now - t->rec_mark;
   t->rec_mark = now;
   t->run_key = key;
   t->run_lo = a;
   t->run_pend = pend;
   t->run_hi = (e > pend || e < a) ? pend : e;
   t->run_count = 1;
}

static inline void ref(Addr a, UWord sz, UWord w)
{
   TS *t = cur;
   UWord key = ((a >> page_shift) << 1) | w;
   if (LIKELY(key == t->run_key && t->run_count != MAX_RUN_COUNT)) {
      Addr e = a + sz;
      t->run_count++;
      if (a < t->run_lo)
         t->run_lo = a;
      if (e > t->run_hi)
         t->run_hi = e > t->run_pend ? t->run_pend : e;
      return;
   }
   ref_slow(t, a, sz, w);
}

#ifdef NP_CHECK_TID
/* Debugging aid: the running thread must be the one set by
   start_client_code. */
static ULong tid_mismatches;
static ThreadId cur_tid;
#define CHECK_TID() \
   do { if (g_rec && VG_(get_running_tid)() != cur_tid) tid_mismatches++; } while (0)
#else
#define CHECK_TID() do { } while (0)
#endif

static VG_REGPARM(3) void h_read(Addr a, UWord sz, UWord n)
{
   CHECK_TID();
   g_icount += n;
   if (g_rec)
      ref(a, sz, 0);
}

static VG_REGPARM(3) void h_write(Addr a, UWord sz, UWord n)
{
   g_icount += n;
   if (g_rec)
      ref(a, sz, 1);
}

/* A read and a write of the same bytes by one instruction. */
static VG_REGPARM(3) void h_modify(Addr a, UWord sz, UWord n)
{
   g_icount += n;
   if (g_rec) {
      ref(a, sz, 0);
      ref(a, sz, 1);
   }
}

/* ------------------------------------------------------------------ */
/* Instrumentation                                                    */
/* ------------------------------------------------------------------ */

/* The preload library's own code is never instrumented: its instructions
   and references (argument blocks of client requests, calls through
   function pointers) belong to the wrappers, not to the program.  Its
   text range is found through the debug info the core reads for every
   mapped object. */
static Addr lib_lo, lib_hi, lib_lo2, lib_hi2;
static Bool lib_found;
static Addr seen_lo = 1, seen_hi = 0; /* last object looked at */

static Bool in_preload(Addr a)
{
   if (!lib_found && !(a >= seen_lo && a < seen_hi)) {
      DebugInfo *di = VG_(find_DebugInfo)(VG_(current_DiEpoch)(), a);
      if (di != NULL) {
         const HChar *f = VG_(DebugInfo_get_filename)(di);
         Addr lo = VG_(DebugInfo_get_text_avma)(di);
         SizeT sz = VG_(DebugInfo_get_text_size)(di);
         if (f != NULL && VG_(strstr)(f, "vgpreload_numaplace-") != NULL) {
            lib_lo = lo;
            lib_hi = lo + sz;
            lib_lo2 = VG_(DebugInfo_get_plt_avma)(di);
            lib_hi2 = lib_lo2 + VG_(DebugInfo_get_plt_size)(di);
            lib_found = True;
         } else if (a >= lo && a < lo + sz) {
            seen_lo = lo;
            seen_hi = lo + sz;
         }
      }
   }
   return (a >= lib_lo && a < lib_hi) || (a >= lib_lo2 && a < lib_hi2);
}

typedef enum { EV_R = 0, EV_W = 1, EV_M = 2 } EvKind;

typedef struct {
   EvKind kind;
   IRExpr *addr;
   IRExpr *guard; /* NULL: unconditional */
   Int size;
} Ev;

#define MAX_EVS 16

static Ev evs[MAX_EVS];
static Int n_evs;
static ULong pending; /* IMarks not yet added to g_icount */

static void add_icount_inline(IRSB *sb, ULong n)
{
   IRTemp t1 = newIRTemp(sb->tyenv, Ity_I64);
   IRTemp t2 = newIRTemp(sb->tyenv, Ity_I64);
   IRExpr *where = mkIRExpr_HWord((HWord)&g_icount);
   addStmtToIRSB(sb, IRStmt_WrTmp(t1, IRExpr_Load(Iend_LE, Ity_I64, where)));
   addStmtToIRSB(sb, IRStmt_WrTmp(t2, IRExpr_Binop(Iop_Add64,
                                                   IRExpr_RdTmp(t1),
                                                   IRExpr_Const(IRConst_U64(n)))));
   addStmtToIRSB(sb, IRStmt_Store(Iend_LE, mkIRExpr_HWord((HWord)&g_icount),
                                  IRExpr_RdTmp(t2)));
}

/* The memory events of one instruction are queued and emitted as helper
   calls at the end of that instruction (at the next IMark, before a side
   exit, at the end of the superblock).  The addresses are IR temporaries
   or constants, which stay valid to the end of the superblock; a read and
   a write of the same bytes by one instruction share a call; and the
   instruction count passed along always includes the instruction that
   makes the reference.  An access that faults never reaches its call.

   Emit the queued memory events as helper calls, carrying the pending
   instruction count in the first unconditional one. */
static void flush_events(IRSB *sb)
{
   Int i;
   for (i = 0; i < n_evs; i++) {
      Ev *e = &evs[i];
      const HChar *name;
      void *fn;
      ULong n = 0;
      IRDirty *di;
      switch (e->kind) {
      case EV_R: name = "np_read"; fn = h_read; break;
      case EV_W: name = "np_write"; fn = h_write; break;
      default: name = "np_modify"; fn = h_modify; break;
      }
      if (e->guard == NULL) {
         n = pending;
         pending = 0;
      } else if (pending > 0) {
         add_icount_inline(sb, pending);
         pending = 0;
      }
      di = unsafeIRDirty_0_N(3, name, VG_(fnptr_to_fnentry)(fn),
                             mkIRExprVec_3(e->addr,
                                           mkIRExpr_HWord((HWord)e->size),
                                           mkIRExpr_HWord((HWord)n)));
      if (e->guard != NULL)
         di->guard = e->guard;
      addStmtToIRSB(sb, IRStmt_Dirty(di));
   }
   n_evs = 0;
}

static void flush_all(IRSB *sb)
{
   flush_events(sb);
   if (pending > 0) {
      add_icount_inline(sb, pending);
      pending = 0;
   }
}

static void add_event(IRSB *sb, EvKind kind, IRExpr *addr, Int size,
                      IRExpr *guard)
{
   tl_assert(isIRAtom(addr));
   tl_assert(size >= 1);
   if (guard != NULL && guard->tag == Iex_Const
       && guard->Iex.Const.con->tag == Ico_U1
       && guard->Iex.Const.con->Ico.U1 == True)
      guard = NULL;
   /* A write of exactly the bytes the same instruction has just read
      becomes one "modify" helper call (it still counts as one read and
      one write). */
   if (kind == EV_W && n_evs > 0) {
      Ev *last = &evs[n_evs - 1];
      if (last->kind == EV_R && last->size == size && last->guard == NULL
          && guard == NULL && eqIRAtom(last->addr, addr)) {
         last->kind = EV_M;
         return;
      }
   }
   if (n_evs == MAX_EVS)
      flush_events(sb);
   evs[n_evs].kind = kind;
   evs[n_evs].addr = addr;
   evs[n_evs].guard = guard;
   evs[n_evs].size = size;
   n_evs++;
}

#ifdef NP_TRACE_IMARKS
/* Debugging aid: print the address of every instruction counted, to
   compare instruction by instruction with another tool's trace. */
static void trace_imark(Addr a)
{
   VG_(printf)("I %08lx\n", a);
}
#endif
static IRSB *np_instrument(VgCallbackClosure *closure, IRSB *sbIn,
                           const VexGuestLayout *layout,
                           const VexGuestExtents *vge,
                           const VexArchInfo *archinfo_host,
                           IRType gWordTy, IRType hWordTy)
{
   IRSB *sb;
   Int i;
   Bool skip = False; /* current instruction belongs to the preload lib */
   IRTypeEnv *tyenv = sbIn->tyenv;

   if (gWordTy != hWordTy)
      VG_(tool_panic)("host/guest word size mismatch");

   sb = deepCopyIRSBExceptStmts(sbIn);
   n_evs = 0;
   pending = 0;

   /* Copy the preamble before the first IMark unchanged. */
   i = 0;
   while (i < sbIn->stmts_used && sbIn->stmts[i]->tag != Ist_IMark) {
      addStmtToIRSB(sb, sbIn->stmts[i]);
      i++;
   }

   for (; i < sbIn->stmts_used; i++) {
      IRStmt *st = sbIn->stmts[i];
      if (st == NULL || st->tag == Ist_NoOp)
         continue;

      switch (st->tag) {
      case Ist_IMark:
         flush_events(sb);
         skip = in_preload((Addr)st->Ist.IMark.addr);
         if (!skip)
            pending++;
         addStmtToIRSB(sb, st);
#ifdef NP_TRACE_IMARKS
         if (!skip)
            addStmtToIRSB(sb, IRStmt_Dirty(unsafeIRDirty_0_N(
               1, "trace_imark", VG_(fnptr_to_fnentry)(trace_imark),
               mkIRExprVec_1(mkIRExpr_HWord((HWord)st->Ist.IMark.addr)))));
#endif
         break;

      case Ist_WrTmp: {
         IRExpr *e = st->Ist.WrTmp.data;
         addStmtToIRSB(sb, st);
         if (!skip && e->tag == Iex_Load)
            add_event(sb, EV_R, e->Iex.Load.addr,
                      sizeofIRType(e->Iex.Load.ty), NULL);
         break;
      }

      case Ist_Store: {
         IRExpr *data = st->Ist.Store.data;
         addStmtToIRSB(sb, st);
         if (!skip)
            add_event(sb, EV_W, st->Ist.Store.addr,
                      sizeofIRType(typeOfIRExpr(tyenv, data)), NULL);
         break;
      }

      case Ist_LoadG: {
         IRLoadG *lg = st->Ist.LoadG.details;
         IRType tres = Ity_INVALID, targ = Ity_INVALID;
         typeOfIRLoadGOp(lg->cvt, &tres, &targ);
         addStmtToIRSB(sb, st);
         if (!skip)
            add_event(sb, EV_R, lg->addr, sizeofIRType(targ), lg->guard);
         break;
      }

      case Ist_StoreG: {
         IRStoreG *sg = st->Ist.StoreG.details;
         addStmtToIRSB(sb, st);
         if (!skip)
            add_event(sb, EV_W, sg->addr,
                      sizeofIRType(typeOfIRExpr(tyenv, sg->data)), sg->guard);
         break;
      }

      case Ist_CAS: {
         IRCAS *cas = st->Ist.CAS.details;
         Int size = sizeofIRType(typeOfIRExpr(tyenv, cas->dataLo));
         if (cas->dataHi != NULL)
            size *= 2;
         addStmtToIRSB(sb, st);
         if (!skip) {
            add_event(sb, EV_R, cas->addr, size, NULL);
            add_event(sb, EV_W, cas->addr, size, NULL);
         }
         break;
      }

      case Ist_LLSC: {
         addStmtToIRSB(sb, st);
         if (!skip) {
            if (st->Ist.LLSC.storedata == NULL)
               add_event(sb, EV_R, st->Ist.LLSC.addr,
                         sizeofIRType(typeOfIRTemp(tyenv,
                                                   st->Ist.LLSC.result)),
                         NULL);
            else
               add_event(sb, EV_W, st->Ist.LLSC.addr,
                         sizeofIRType(typeOfIRExpr(tyenv,
                                                   st->Ist.LLSC.storedata)),
                         NULL);
         }
         break;
      }

      case Ist_Dirty: {
         IRDirty *d = st->Ist.Dirty.details;
         addStmtToIRSB(sb, st);
         if (!skip && d->mFx != Ifx_None && d->mSize > 0) {
            IRExpr *g = d->guard;
            if (d->mFx == Ifx_Read || d->mFx == Ifx_Modify)
               add_event(sb, EV_R, d->mAddr, d->mSize, g);
            if (d->mFx == Ifx_Write || d->mFx == Ifx_Modify)
               add_event(sb, EV_W, d->mAddr, d->mSize, g);
         }
         break;
      }

      case Ist_Exit:
         flush_all(sb);
         addStmtToIRSB(sb, st);
         break;

      default:
         addStmtToIRSB(sb, st);
         break;
      }
   }

   flush_all(sb);
   return sb;
}

/* ------------------------------------------------------------------ */
/* Sync objects, pthread_t map, regions                               */
/* ------------------------------------------------------------------ */

typedef struct {
   VgHashNode *next;
   UWord key;
   ULong acquisitions; /* ACQUIRE records written */
   ULong releases;     /* RELEASE records written */
   ULong arrivals;     /* BARRIER records written */
   UInt parties;       /* from pthread_barrier_init, 0 unknown */
   UInt owner;         /* thread number + 1, 0 = free */
   UInt owner_depth;   /* recursive holds */
} SyncObj;

typedef struct {
   VgHashNode *next;
   UWord key;          /* pthread_t */
   UInt num;
} PtMap;

typedef struct {
   UInt master;        /* thread number of the forking thread */
   UInt team;          /* team size written in FORK (0 = not yet known) */
   Bool fork_written;
} Region;

static VgHashTable *sync_objs;
static VgHashTable *pt_map;
static Region *regions;
static ULong n_regions, cap_regions;

static SyncObj *sync_obj(UWord key)
{
   SyncObj *s = VG_(HT_lookup)(sync_objs, key);
   if (s == NULL) {
      s = VG_(calloc)("np.sync", 1, sizeof(SyncObj));
      s->key = key;
      VG_(HT_add_node)(sync_objs, s);
   }
   return s;
}

static void map_pthread(UWord pt, UInt num)
{
   PtMap *m = VG_(HT_lookup)(pt_map, pt);
   if (m == NULL) {
      m = VG_(calloc)("np.ptmap", 1, sizeof(PtMap));
      m->key = pt;
      VG_(HT_add_node)(pt_map, m);
   }
   m->num = num;
}

static void write_fork(Region *r, ULong region, UInt team)
{
   if (r->fork_written)
      return;
   r->team = team;
   r->fork_written = True;
   marker(ts_all[r->master], K_FORK, region, team);
}

/* ------------------------------------------------------------------ */
/* Client requests                                                    */
/* ------------------------------------------------------------------ */

static void do_acquired(TS *t, UWord key, Bool ok)
{
   SyncObj *s;
   set_depth(t, t->depth + 1);
   if (!ok)
      return;
   s = sync_obj(key);
   if (s->owner == t->num + 1) {
      /* A recursive mutex taken again by its holder: no new acquisition. */
      s->owner_depth++;
      if (t->depth > 0)
         note(t, NP_NOTE_RELOCKED);
      return;
   }
   s->owner = t->num + 1;
   s->owner_depth = 1;
   if (t->depth > 0)
      marker(t, K_ACQUIRE, key, s->acquisitions++);
}

static void do_release(TS *t, UWord key)
{
   SyncObj *s = sync_obj(key);
   if (s->owner == t->num + 1 && s->owner_depth > 1) {
      s->owner_depth--;
   } else if (s->owner != 0 && s->owner != t->num + 1) {
      /* Unlocking a lock another thread holds: an error the library will
         report; nothing is released. */
      if (t->depth > 0)
         note(t, NP_NOTE_RELOCKED);
   } else {
      s->owner = 0;
      s->owner_depth = 0;
      if (t->depth > 0)
         marker(t, K_RELEASE, key, ++s->releases);
   }
   set_depth(t, t->depth - 1);
}

static void do_barrier(TS *t, UWord key, UInt parties)
{
   SyncObj *s = sync_obj(key);
   if (t->depth > 0) {
      ULong n = s->arrivals++;
      marker(t, K_BARRIER, key,
             (n & 0xFFFFFFFFull) | ((ULong)parties << 32));
   }
}

static Bool np_handle_client_request(ThreadId tid, UWord *args, UWord *ret)
{
   TS *t;
   if (!VG_IS_TOOL_USERREQ('N', 'P', args[0]))
      return False;
   t = ts_of(tid);
   set_cur(t);
   *ret = 0;

   switch (args[0]) {
   case NP_REQ_OFF:
      set_depth(t, t->depth - 1);
      break;
   case NP_REQ_ON:
      set_depth(t, t->depth + 1);
      break;
   case NP_REQ_ACQUIRED:
      do_acquired(t, args[1], args[2] != 0);
      break;
   case NP_REQ_RELEASE:
      do_release(t, args[1]);
      break;
   case NP_REQ_BARRIER_INIT:
      set_depth(t, t->depth + 1);
      if (args[3] != 0)
         sync_obj(args[1])->parties = (UInt)args[2];
      break;
   case NP_REQ_BARRIER:
      if (args[1] == 0) {
         /* The team barrier of the thread's region; none for a barrier of
            a nested (unmodelled) team or outside any region. */
         if (t->in_region && t->nested == 0)
            do_barrier(t, NP_KEY_TEAM_BARRIER | t->region, t->team);
      } else {
         do_barrier(t, args[1], sync_obj(args[1])->parties);
      }
      set_depth(t, t->depth - 1);
      break;
   case NP_REQ_CREATED:
      set_depth(t, t->depth + 1);
      if (args[2] != 0 && t->last_child != 0)
         map_pthread(args[1], t->last_child);
      break;
   case NP_REQ_THREAD_BEGIN:
      map_pthread(args[1], t->num);
      set_depth(t, t->depth + 1);
      break;
   case NP_REQ_THREAD_END:
      set_depth(t, t->depth - 1);
      break;
   case NP_REQ_JOINED: {
      set_depth(t, t->depth + 1);
      if (args[2] != 0 && t->depth > 0) {
         PtMap *m = VG_(HT_lookup)(pt_map, args[1]);
         if (m != NULL)
            marker(t, K_JOIN, m->num, 0);
      }
      break;
   }
   case NP_REQ_FORK: {
      Region *r;
      if (t->in_region) {
         note(t, NP_NOTE_NESTED);
         t->nested++;
         *ret = NP_NESTED;
         break;
      }
      if (n_regions == cap_regions) {
         cap_regions = cap_regions ? 2 * cap_regions : 256;
         regions = VG_(realloc)("np.regions", regions,
                                cap_regions * sizeof(Region));
      }
      r = &regions[n_regions];
      r->master = t->num;
      r->team = 0;
      r->fork_written = False;
      if (args[1] != 0)
         write_fork(r, n_regions, (UInt)args[1]);
      *ret = n_regions++;
      break;
   }
   case NP_REQ_ENTER: {
      ULong region = args[1];
      if (region < n_regions)
         write_fork(&regions[region], region, (UInt)args[2]);
      t->in_region = True;
      t->region = region;
      t->team = (UInt)args[2];
      t->index = (UInt)args[3];
      marker(t, K_ENTER, region,
             (ULong)t->team | ((ULong)t->index << 32));
      set_depth(t, t->depth + 1);
      break;
   }
   case NP_REQ_LEAVE:
      set_depth(t, t->depth - 1);
      if (t->in_region) {
         SyncObj *s = sync_obj(NP_KEY_TEAM_BARRIER | t->region);
         ULong n = s->arrivals++;
         marker(t, K_BARRIER, NP_KEY_TEAM_BARRIER | t->region,
                (n & 0xFFFFFFFFull) | ((ULong)t->team << 32));
         marker(t, K_LEAVE, t->region, 0);
         t->in_region = False;
      }
      break;
   case NP_REQ_FORK_END:
      if (t->nested > 0)
         t->nested--;
      set_depth(t, t->depth + 1);
      break;
   case NP_REQ_NOTE:
      if (t->depth > 0)
         note(t, (UInt)args[1]);
      set_depth(t, t->depth - 1);
      break;
   default:
      return False;
   }
   return True;
}

/* ------------------------------------------------------------------ */
/* Thread tracking                                                    */
/* ------------------------------------------------------------------ */

static void np_start_client_code(ThreadId tid, ULong blocks)
{
#ifdef NP_CHECK_TID
   cur_tid = tid;
#endif
   TS *t = NULL;
   if (tid > 0 && tid < VG_N_THREADS)
      t = ts_by_tid[tid];
   /* A thread past its ll_exit records nothing. */
   set_cur(t != NULL ? t : &ts_idle);
}

static void np_stop_client_code(ThreadId tid, ULong blocks)
{
   fold();
}

static TS *initial_thread(void)
{
   if (ts_count == 0) {
      TS *t0 = new_ts();
      t0->depth = 1; /* records from its first instruction */
   }
   return ts_all[0];
}

static Bool initial_seen;

static void np_thread_create(ThreadId parent, ThreadId child)
{
   TS *c;
   TS *p = NULL;
   tl_assert(child > 0 && child < VG_N_THREADS);
   if (parent == VG_INVALID_THREADID && !initial_seen) {
      /* The core announces the initial thread too. */
      initial_seen = True;
      ts_by_tid[child] = initial_thread();
      return;
   }
   c = new_ts();
   ts_by_tid[child] = c;
   if (parent > 0 && parent < VG_N_THREADS)
      p = ts_of(parent);
   if (p != NULL) {
      marker(p, K_CREATE, c->num, 0);
      p->last_child = c->num;
   }
   marker(c, K_START, p != NULL ? p->num : 0, 0);
}

static void exit_thread(TS *t)
{
   if (t->exited)
      return;
   close_run(t);
   marker(t, K_EXIT, 0, 0);
   t->exited = True;
}

static void np_thread_exit(ThreadId tid)
{
   TS *t;
   if (tid == 0 || tid >= VG_N_THREADS || ts_by_tid[tid] == NULL)
      return;
   t = ts_by_tid[tid];
   exit_thread(t);
   ts_by_tid[tid] = NULL;
   if (t == cur) {
      fold();
      cur = &ts_idle;
      g_rec = False;
   }
}

/* A forked child process must not write into the parent's stream. */
static void np_atfork_pre(ThreadId tid)
{
   out_flush();
}

static void np_atfork_child(ThreadId tid)
{
   if (out_fd >= 0)
      VG_(close)(out_fd);
   out_fd = -1;
}

/* ------------------------------------------------------------------ */
/* Start and end                                                      */
/* ------------------------------------------------------------------ */

static void np_post_clo_init(void)
{
   ULong hdr[4];
   TS *t0;

   if (clo_out_fd < 0) {
      VG_(fmsg)("numaplace: --out-fd=N is required (an inherited file "
                "descriptor to write the event stream to)\n");
      VG_(exit)(1);
   }
   if (VG_(fcntl)((Int)clo_out_fd, VKI_F_GETFD, 0) < 0) {
      VG_(fmsg)("numaplace: --out-fd=%lld is not an open file descriptor\n",
                clo_out_fd);
      VG_(exit)(1);
   }
   out_fd = VG_(safe_fd)((Int)clo_out_fd);
   if (out_fd < 0) {
      VG_(fmsg)("numaplace: cannot move --out-fd=%lld out of the program's "
                "way\n", clo_out_fd);
      VG_(exit)(1);
   }

   page_shift = 0;
   while ((1LL << page_shift) < clo_page_size)
      page_shift++;

   out_buf = VG_(malloc)("np.outbuf", OUT_BUF_BYTES);
   ts_by_tid = VG_(calloc)("np.tstid", VG_N_THREADS, sizeof(TS *));
   sync_objs = VG_(HT_construct)("np.sync");
   pt_map = VG_(HT_construct)("np.ptmap");

   VG_(memcpy)(&hdr[0], "NPRAW001", 8);
   hdr[1] = (ULong)clo_page_size;
   hdr[2] = 0;
   hdr[3] = 0;
   out_bytes(hdr, sizeof hdr);

   /* The initial thread is ThreadId 1 and records from its first
      instruction. */
   t0 = initial_thread();
   ts_by_tid[1] = t0;
   set_cur(t0);

   VG_(atfork)(np_atfork_pre, NULL, np_atfork_child);
}

static void np_fini(Int exitcode)
{
   UInt i;
   fold();
   for (i = 0; i < ts_count; i++)
      exit_thread(ts_all[i]);
#ifdef NP_CHECK_TID
   VG_(umsg)("numaplace: %llu helper calls on a thread other than the "
             "current one\n", tid_mismatches);
#endif
   out_rec(K_END, 0, 0, out_records, 0, 0);
   out_flush();
   if (out_fd >= 0)
      VG_(close)(out_fd);
   out_fd = -1;
}

static void np_pre_clo_init(void)
{
   VG_(details_name)("numaplace");
   VG_(details_version)("0.1");
   VG_(details_description)("a memory reference recorder for numaplace");
   VG_(details_copyright_author)("Copyright (C) the numaplace authors.");
   VG_(details_bug_reports_to)("the numaplace project");
   VG_(details_avg_translation_sizeB)(300);

   VG_(basic_tool_funcs)(np_post_clo_init, np_instrument, np_fini);
   VG_(needs_command_line_options)(np_process_cmd_line_option,
                                   np_print_usage, np_print_debug_usage);
   VG_(needs_client_requests)(np_handle_client_request);

   VG_(track_start_client_code)(np_start_client_code);
   VG_(track_stop_client_code)(np_stop_client_code);
   VG_(track_pre_thread_ll_create)(np_thread_create);
   VG_(track_pre_thread_ll_exit)(np_thread_exit);
}

VG_DETERMINE_INTERFACE_VERSION(np_pre_clo_init)
