//! Building a run: address spaces laid out one after another, threads on their first
//! processors, pages placed as the policy says, daemons on their processors, the first
//! events queued.

use super::*;

impl Engine {
    /// Lays out the programs' address spaces one after another, assigns threads to
    /// processors, places pages as the policy says, and prepares daemons.
    pub fn new(
        machine: Machine,
        programs: Vec<Launch>,
        mut policy: Box<dyn Policy>,
        mut scheduler: Box<dyn Scheduler>,
        opts: EngineOptions,
    ) -> Result<Engine, SimError> {
        let ps = machine.page_size();
        let mut progs = Vec::new();
        let mut base = 0u64;
        let mut first_thread = 0u32;
        for Launch { program: p, start } in programs {
            let pages = p.layout().pages(ps);
            let threads = p.threads();
            progs.push(ProgRt {
                base_vpn: base as u32,
                first_thread,
                threads,
                start,
                started: false,
                runnable: 0,
                running_ready: 0,
                in_parallel: 0,
                running: vec![true; threads as usize],
                adaptive: p.adapts_threads(),
                ref_bytes: p
                    .ref_bytes()
                    .unwrap_or(machine.config.word_size_bytes)
                    .max(1),
                barrier_waiting: Vec::new(),
                live: threads,
                locks: Vec::new(),
                iter_arrivals: Vec::new(),
                last_refs: Default::default(),
                arrays: if opts.series_by_array && opts.per_page {
                    // A page holding parts of two arrays counts for both.
                    p.layout()
                        .arrays()
                        .iter()
                        .filter(|a| a.span() > 0)
                        .map(|a| {
                            let first = base as u32 + (a.base / ps) as u32;
                            let last = base as u32 + ((a.base + a.span() - 1) / ps) as u32;
                            (a.name.clone(), first, last + 1, RefCounts::default())
                        })
                        .collect()
                } else {
                    Vec::new()
                },
                events: Vec::new(),
                awaiting: Vec::new(),
                prog: p,
            });
            base += pages;
            first_thread += threads;
        }
        let npages = base;
        if npages > u32::MAX as u64 / 2 {
            return Err(
                ConfigError::new("workload", format!("{npages} pages are too many")).into(),
            );
        }
        let frames = machine.total_frames();
        if npages > frames {
            return Err(ConfigError::new(
                "machine.frames_per_node",
                format!(
                    "the workload needs {npages} pages but the machine has only {frames} frames"
                ),
            )
            .into());
        }
        let nthreads = first_thread;
        if nthreads > crate::estimate::MAX_THREADS {
            return Err(ConfigError::new(
                "workload.threads",
                format!(
                    "the programs have {nthreads} threads; a run has at most {}",
                    crate::estimate::MAX_THREADS
                ),
            )
            .into());
        }
        let shapes: Vec<ProgramShape> = progs
            .iter()
            .map(|p| ProgramShape {
                threads: p.threads,
                first_thread: p.first_thread,
                start: p.start,
            })
            .collect();
        let procs = scheduler.start(&machine, &shapes)?;
        let mut used = vec![false; machine.procs()];
        let mut threads = Vec::with_capacity(nthreads as usize);
        for (pi, p) in progs.iter_mut().enumerate() {
            for local in 0..p.threads {
                let g = p.first_thread + local;
                let proc = procs.get(g as usize).copied().flatten();
                if let Some(pr) = proc {
                    used[pr.idx()] = true;
                }
                p.running[local as usize] = proc.is_some();
                threads.push(ThreadRt {
                    prog: pi as u32,
                    local,
                    base_vpn: p.base_vpn,
                    proc,
                    node: proc.map(|pr| machine.node_of(pr)).unwrap_or(NodeId(0)),
                    buf: Vec::new(),
                    pos: 0,
                    status: Status::NotStarted,
                    queued: false,
                    delay: Ns::ZERO,
                    blocked_at: Ns::ZERO,
                    spin_on: None,
                    construct: None,
                    spin_backoff: Backoff::default(),
                    stats: ThreadStats {
                        id: g,
                        program: pi as u32,
                        ..Default::default()
                    },
                });
            }
        }
        // Threads of the programs that start with the run are where they will run from
        // before time 0 (a policy's `init` may read it); the others appear when created.
        let thread_nodes = threads
            .iter()
            .map(|t| {
                let now = progs[t.prog as usize].start == Ns::ZERO;
                t.proc.filter(|_| now).map(|_| t.node)
            })
            .collect();
        let mut mm = MemSystem::new(
            machine,
            npages as usize,
            policy.history(),
            thread_nodes,
            opts.seed,
        );
        if policy.acquires_ptes() {
            mm.mem.track_user_runs();
        }
        mm.faults_by_default = policy.faults_by_default();
        if let Some(spec) = policy.page_counters() {
            let bases: Vec<u32> = progs.iter().map(|p| p.base_vpn).collect();
            let program_of =
                |page: usize| (bases.partition_point(|&b| b as usize <= page) - 1) as u32;
            mm.counters = Some(crate::mm::PageCounters::new(
                &spec,
                npages as usize,
                mm.machine.nodes(),
                program_of,
            ));
        }
        mm.monitors = crate::mm::Monitors::new(
            policy.monitors(),
            mm.machine.config.loaded_latency.as_ref(),
            mm.machine.nodes(),
            npages as usize,
            mm.machine.config.word_size_bytes,
        );
        let cache = &mm.machine.config.cache;
        if cache.enabled {
            mm.caches = Some(crate::cache::Caches::new(
                mm.machine.procs(),
                npages as usize,
                (ps / cache.line_bytes) as u32,
                cache.lines(),
            ));
        }
        let MemSystem { machine, mem, .. } = &mut mm;
        let mut stats = Stats::default();
        // Each program's entry exists from the start, so actions during the run (a
        // migration of one of its pages) count against it and a policy can read its
        // shape (threads and pages, through `Mm::stats`); the rest is filled at the end.
        stats.programs = progs
            .iter()
            .enumerate()
            .map(|(i, p)| crate::stats::ProgramStats {
                threads: p.threads,
                first_thread: p.first_thread,
                first_vpn: p.base_vpn,
                pages: progs.get(i + 1).map_or(npages, |q| u64::from(q.base_vpn))
                    - u64::from(p.base_vpn),
                ..Default::default()
            })
            .collect();
        if opts.per_page {
            stats.pages = (0..npages)
                .map(|v| PageReport {
                    vpn: v as u32,
                    ..Default::default()
                })
                .collect();
        }
        // Initial placement at time 0, free of charge.
        for p in &progs {
            let hints = p.prog.placement_hints();
            let pages = p.prog.layout().pages(ps);
            for local in 0..pages {
                let vpn = Vpn(p.base_vpn + local as u32);
                let hint = hints
                    .get(local as usize)
                    .copied()
                    .flatten()
                    .and_then(|t| procs.get((p.first_thread + t) as usize).copied().flatten())
                    .map(|pr| machine.node_of(pr));
                if let Some(n) = policy.initial_placement(machine, vpn, hint) {
                    if n.idx() >= machine.nodes() {
                        return Err(SimError::Policy {
                            policy: policy.name().into(),
                            message: format!(
                                "placed page {} on node {n}, which does not exist",
                                vpn.0
                            ),
                        });
                    }
                    let target = crate::mm::nearest_with_frame(machine, mem, n).unwrap_or(n);
                    if mem.take_first_frame(target) {
                        mem.place_copy(vpn, target);
                    }
                }
            }
        }
        let specs: Vec<DaemonSpec> = policy.daemons(machine);
        if specs.len() > event::MAX_DAEMONS {
            return Err(SimError::Policy {
                policy: policy.name().into(),
                message: format!(
                    "asked for {} daemons; a run has at most {}",
                    specs.len(),
                    event::MAX_DAEMONS
                ),
            });
        }
        let mut daemons = Vec::new();
        for s in &specs {
            match s.placement {
                DaemonPlacement::OwnProcessor => {
                    let free = used.iter().position(|u| !u).ok_or_else(|| {
                        ConfigError::new(
                            "policy",
                            format!(
                                "daemon `{}` needs a processor of its own, but threads use all {}",
                                s.name,
                                machine.procs()
                            ),
                        )
                    })?;
                    used[free] = true;
                    daemons.push(DaemonRt {
                        node: machine.node_of(ProcId(free as u16)),
                        steal_proc: None,
                    });
                }
                DaemonPlacement::StealOn(n) => {
                    if n.idx() >= machine.nodes() || !machine.has_procs(n) {
                        return Err(ConfigError::new(
                            "policy",
                            format!("daemon `{}` on node {n}, which has no processors", s.name),
                        )
                        .into());
                    }
                    daemons.push(DaemonRt {
                        node: n,
                        steal_proc: Some(ProcId(n.0 * machine.config.procs_per_node)),
                    });
                }
            }
        }
        let nprocs = machine.procs();
        let compute_pct = u64::from(machine.config.compute_time_pct);
        let (variation, ticks) =
            match VariationRt::new(&machine.config.variation, opts.seed, threads.len(), nprocs) {
                Some((v, t)) => (Some(v), t),
                None => (None, None),
            };
        let mut engine = Engine {
            mm,
            stats,
            policy,
            scheduler,
            progs,
            threads,
            proc_busy_until: vec![Ns::ZERO; nprocs],
            daemons,
            queue: EventQueue::default(),
            queued_threads: 0,
            done: 0,
            series_interval: opts.series_interval.filter(|i| i.0 > 0),
            last_point: Default::default(),
            changes: Vec::new(),
            sched_at: None,
            sched_armed: false,
            seed: opts.seed,
            pending_starts: 0,
            now: Ns::ZERO,
            events: 0,
            interval_points: 0,
            monitor: None,
            next_poll: u64::MAX,
            observer: None,
            variation,
            compute_pct,
            stop_at: opts
                .budget
                .map_or(TIME_LIMIT, |b| b.0.saturating_add(1).min(TIME_LIMIT)),
            ticks,
            spin_group: Vec::new(),
            spin_keys: Vec::new(),
            spin_claims: Vec::new(),
            spin_gen: 0,
            turns: Vec::new(),
            rounds_backoff: Backoff::default(),
            interleave_backoff: Backoff::default(),
            bulk: true,
            prefetch: npages as usize > ops::PREFETCH_PAGES,
            bare: false,
        };
        engine.bare = engine.bare_reference_path();
        {
            let (policy, mut ctx) = engine.ctx(Ns::ZERO, NodeId(0));
            policy.init(&mut ctx);
        }
        engine.pending_starts = engine.progs.len() as u32;
        for pi in 0..engine.progs.len() {
            match engine.progs[pi].start {
                Ns::ZERO => engine.create_threads(pi, Ns::ZERO),
                at => engine.queue.push(at, Event::Start(pi as u32)),
            }
        }
        // Scheduler changes due at time 0 apply before any thread starts, so a thread
        // preempted at 0 is not running when the first iteration's chunks are dealt.
        match engine.scheduler.next_event() {
            Some(Ns::ZERO) => engine.sched_event(Ns::ZERO),
            Some(t) => {
                engine.queue.push(t, Event::Sched);
                engine.sched_at = Some(t);
            }
            None => {}
        }
        engine.sched_armed = true;
        for t in 0..nthreads {
            let th = &engine.threads[t as usize];
            if th.proc.is_some() && th.status == Status::Ready {
                let at = engine.start_skew(t);
                engine.queue_thread(t, at);
            }
        }
        for (i, s) in specs.iter().enumerate() {
            let first = match &mut engine.variation {
                Some(v) => v.daemon_first_wake(s.first_wake),
                None => s.first_wake,
            };
            engine.queue.push(first, Event::Daemon(i as u32));
        }
        if let Some(i) = engine.series_interval {
            engine.queue.push(i, Event::Tick);
        }
        Ok(engine)
    }
}
