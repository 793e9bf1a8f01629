//! The `trace` workload: recorded programs replayed, on traces written here with the
//! trace writer (the recorder's own end-to-end test is in the CLI's tests).

use numaplace_harness::trace::format::{Event, Header};
use numaplace_harness::trace::TraceWriter;
use numaplace_harness::{resolve, run_to_json, Overrides, RunConfig, RunOutput, UserError};
use std::path::{Path, PathBuf};

/// One thread's events, each with the instructions before it.
type Stream = Vec<(u64, Event)>;

fn header(page_size: u64) -> Header {
    Header {
        program: "./synthetic".into(),
        args: vec![],
        page_size,
        recorder: "the tests".into(),
        environment: vec![],
    }
}

fn write_trace(dir: &Path, name: &str, page_size: u64, threads: &[Stream]) -> PathBuf {
    let path = dir.join(name);
    let mut w = TraceWriter::create(&path, &header(page_size)).unwrap();
    for (t, s) in threads.iter().enumerate() {
        for &(i, e) in s {
            w.push(t as u32, i, e).unwrap();
        }
    }
    w.finish(vec![]).unwrap();
    path
}

/// The configuration replaying `path` on `machine` (the preset's policy when `None`).
fn config(
    machine: &str,
    path: &Path,
    policy: Option<&str>,
    sets: &[&str],
) -> Result<RunConfig, UserError> {
    let mut all = vec![format!("workload.path={:?}", path.display().to_string())];
    all.extend(sets.iter().map(|s| s.to_string()));
    resolve(
        None,
        &Overrides {
            machine: Some(machine.into()),
            workload: Some("trace".into()),
            policy: policy.map(Into::into),
            seed: Some(1),
            sets: all,
        },
    )
}

/// `path` replayed on `epyc-2s` under `policy`, without run-to-run variation.
fn run(path: &Path, policy: &str, sets: &[&str]) -> RunOutput {
    let mut all = vec!["machine.variation.enabled=false"];
    all.extend(sets);
    run_to_json(&config("epyc-2s", path, Some(policy), &all).unwrap()).unwrap()
}

/// The error building a replay of `path` on `machine`, as text.
fn refusal(machine: &str, path: &Path) -> String {
    config(machine, path, None, &[])
        .map(|cfg| run_to_json(&cfg).map(|_| ()).map_err(|e| e.to_string()))
        .map_or_else(
            |e| e.to_string(),
            |r| r.expect_err("the replay was refused"),
        )
}

fn read(address: u64, count: u32) -> Event {
    Event::Run {
        write: false,
        address,
        count,
        span: 8 * count,
    }
}

fn write(address: u64, count: u32) -> Event {
    Event::Run {
        write: true,
        address,
        count,
        span: 8 * count,
    }
}

/// The initial thread creates thread 1 first, and both end with their exits.
fn two_threads(main: Stream, child: Stream) -> Vec<Stream> {
    let mut m = vec![(0, Event::Create { child: 1 })];
    m.extend(main);
    m.push((0, Event::Exit));
    let mut c = vec![(0, Event::Start { parent: 0 })];
    c.extend(child);
    c.push((0, Event::Exit));
    vec![m, c]
}

const HEAP: u64 = 0x5555_0000_0000;

#[test]
fn a_barrier_waits_in_simulated_time_for_the_slowest_thread() {
    let dir = tempfile::tempdir().unwrap();
    let barrier = |arrival| Event::Barrier {
        key: 0x1000,
        arrival,
        parties: 2,
    };
    // Thread 0 computes 2.45 million instructions (1 ms at 2450 MHz) before the
    // barrier; thread 1 arrives at once and reads after it.
    let path = write_trace(
        dir.path(),
        "b.trace",
        4096,
        &two_threads(
            vec![(2_450_000, barrier(1))],
            vec![(10, barrier(0)), (0, read(HEAP, 4))],
        ),
    );
    let out = run(&path, "static", &[]);
    let t1 = &out.stats.threads[1];
    assert!(
        t1.sync_wait_ns >= 990_000,
        "thread 1 waited {} ns",
        t1.sync_wait_ns
    );
    assert!(out.stats.makespan_ns >= 1_000_000);
}

#[test]
fn a_lock_is_handed_over_in_the_recorded_order() {
    let dir = tempfile::tempdir().unwrap();
    // In the recording thread 0 took the lock first (acquisition 0), after 1 ms of work;
    // thread 1 took it second, though it reaches it at once in the replay.
    let key = 0x2000;
    let path = write_trace(
        dir.path(),
        "l.trace",
        4096,
        &two_threads(
            vec![
                (2_450_000, Event::Acquire { key, number: 0 }),
                (0, write(HEAP, 1)),
                (0, Event::Release { key, number: 1 }),
            ],
            vec![
                (0, Event::Acquire { key, number: 1 }),
                (0, write(HEAP, 1)),
                (0, Event::Release { key, number: 2 }),
            ],
        ),
    );
    let out = run(&path, "static", &[]);
    assert!(out.stats.threads[1].sync_wait_ns >= 990_000);
    // Thread 0 wrote first: first touch put the page on its node.
    assert_eq!(
        out.stats.pages[0].home as u32,
        out.stats.threads[0].node as u32
    );
}

#[test]
fn a_created_thread_starts_only_when_its_creator_creates_it() {
    let dir = tempfile::tempdir().unwrap();
    let main = vec![
        (2_450_000, Event::Create { child: 1 }),
        (0, Event::Join { thread: 1 }),
        (0, Event::Exit),
    ];
    let child = vec![
        (0, Event::Start { parent: 0 }),
        (0, read(HEAP, 1)),
        (0, Event::Exit),
    ];
    let path = write_trace(dir.path(), "c.trace", 4096, &[main, child]);
    let out = run(&path, "static", &[]);
    assert!(out.stats.threads[1].sync_wait_ns >= 990_000);
    // The creator waits for the child at the join.
    assert!(out.stats.threads[0].sync_wait_ns > 0);
}

#[test]
fn a_folded_trace_replays_exactly_as_one_with_a_row_per_reference() {
    let dir = tempfile::tempdir().unwrap();
    // Thread 0: 8 reads of one page with 3 instructions between them, 4 writes of the
    // next page, then 5 reads of the first page again.
    let mut unfolded = Vec::new();
    let mut folded = Vec::new();
    for i in 0..8 {
        unfolded.push((3, read(HEAP + 8 * i, 1)));
    }
    folded.push((3, read(HEAP, 8)));
    for i in 0..4 {
        unfolded.push((3, write(HEAP + 4096 + 8 * i, 1)));
    }
    // Folded: the run's instructions inside it come with the next event.
    folded.push((3 + 7 * 3, write(HEAP + 4096, 4)));
    for i in 0..5 {
        unfolded.push((3, read(HEAP + 8 * i, 1)));
    }
    folded.push((3 + 3 * 3, read(HEAP, 5)));
    unfolded.push((0, Event::Exit));
    folded.push((4 * 3, Event::Exit));
    let a = write_trace(dir.path(), "a.trace", 4096, &[unfolded]);
    let b = write_trace(dir.path(), "b.trace", 4096, &[folded]);
    for policy in ["static", "platinum"] {
        let (x, y) = (run(&a, policy, &[]), run(&b, policy, &[]));
        assert_eq!(x.stats.makespan_ns, y.stats.makespan_ns, "{policy}");
        assert_eq!(x.stats.refs, y.stats.refs, "{policy}");
        assert_eq!(
            serde_json::to_string(&x.stats.pages).unwrap(),
            serde_json::to_string(&y.stats.pages).unwrap()
        );
    }
}

#[test]
fn runs_on_the_pages_of_one_machine_page_become_one_run_at_a_larger_page_size() {
    let dir = tempfile::tempdir().unwrap();
    // Four 4 KB pages in a row: one 16 KB page on origin2000.
    let s: Stream = (0..4)
        .map(|i| (0, read(HEAP + 4096 * i, 2)))
        .chain([(0, Event::Exit)])
        .collect();
    let path = write_trace(dir.path(), "p.trace", 4096, &[s]);
    let cfg = config("origin2000", &path, Some("static"), &[]).unwrap();
    let out = run_to_json(&cfg).unwrap();
    assert_eq!(out.stats.pages.len(), 1);
    assert_eq!(out.stats.events.faults, 1);
}

#[test]
fn program_placement_puts_each_page_where_the_recording_touched_it_first() {
    let dir = tempfile::tempdir().unwrap();
    // Three threads on origin2000 (two processors a node): thread 2 runs on node 1. It
    // touched page B first in the recording, thread 0 page A; in the replay thread 0
    // reads B first (thread 2 waits 1 ms), so first touch would put B on node 0.
    let main = [
        (0, Event::Create { child: 1 }),
        (0, Event::Create { child: 2 }),
        (0, read(HEAP, 1)),
        (0, read(HEAP + 16384, 1)),
        (0, Event::Exit),
    ];
    let idle = [(0, Event::Start { parent: 0 }), (0, Event::Exit)];
    let late = [
        (0, Event::Start { parent: 0 }),
        (250_000, read(HEAP + 16384, 1)),
        (0, Event::Exit),
    ];
    // The writer takes events in the recording's order: thread 2's read of B came
    // before thread 0's.
    let path = dir.path().join("s.trace");
    let mut w = TraceWriter::create(&path, &header(4096)).unwrap();
    for (t, i, e) in [
        (2, late[0].0, late[0].1),
        (2, late[1].0, late[1].1),
        (0, main[0].0, main[0].1),
        (0, main[1].0, main[1].1),
        (0, main[2].0, main[2].1),
        (0, main[3].0, main[3].1),
    ] {
        w.push(t, i, e).unwrap();
    }
    for (t, s) in [(0, &main[4..]), (1, &idle[..]), (2, &late[2..])] {
        for &(i, e) in s {
            w.push(t, i, e).unwrap();
        }
    }
    w.finish(vec![]).unwrap();
    let cfg = |placement: &str| {
        let set = format!("policy.placement={placement:?}");
        config("origin2000", &path, Some("static"), &[&set]).unwrap()
    };
    let program = run_to_json(&cfg("program")).unwrap();
    let first_touch = run_to_json(&cfg("first-touch")).unwrap();
    let node = |o: &RunOutput, t: usize| o.stats.threads[t].node as u32;
    assert_eq!(node(&program, 0), 0);
    assert_eq!(node(&program, 2), 1);
    let home_of_b = |o: &RunOutput| o.stats.pages[1].home as u32;
    // Replayed first touches: thread 0 reads B before thread 2 does.
    assert_eq!(home_of_b(&first_touch), 0);
    // Recorded first touches: B belongs to thread 2.
    assert_eq!(home_of_b(&program), 1);
}

#[test]
fn instructions_are_timed_at_the_clock_and_cpi() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_trace(
        dir.path(),
        "i.trace",
        4096,
        &[vec![(2_450_000, Event::Exit)]],
    );
    let one = run(&path, "static", &[]).stats.makespan_ns;
    let two = run(&path, "static", &["workload.cpi=2"]).stats.makespan_ns;
    assert!((one as i64 - 1_000_000).abs() < 1_000, "{one}");
    assert!((two as i64 - 2_000_000).abs() < 2_000, "{two}");
}

#[test]
fn a_machine_without_a_clock_asks_for_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_trace(dir.path(), "k.trace", 4096, &[vec![(10, Event::Exit)]]);
    let e = refusal("butterfly-plus", &path);
    assert!(e.contains("workload.clock_mhz"), "{e}");
}

#[test]
fn a_trace_folded_at_pages_larger_than_the_machines_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_trace(dir.path(), "f.trace", 65536, &[vec![(10, Event::Exit)]]);
    let e = refusal("epyc-2s", &path);
    assert!(e.contains("--page-size 4096"), "{e}");
}

#[test]
fn a_stream_cut_before_its_exit_is_refused_at_build() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_trace(dir.path(), "x.trace", 4096, &[vec![(10, read(HEAP, 1))]]);
    let msg = refusal("epyc-2s", &path);
    assert!(msg.contains("does not end with its exit"), "{msg}");
}

#[test]
fn the_replay_counts_the_parallel_regions_the_masters_fork() {
    let dir = tempfile::tempdir().unwrap();
    // Thread 0 forks two regions of two threads (itself and thread 1); thread 1 enters
    // both as member 1.
    let region = |r: u32| {
        vec![
            (0, Event::Fork { region: r, team: 2 }),
            (
                0,
                Event::Enter {
                    region: r,
                    team: 2,
                    index: 0,
                },
            ),
            (5, read(HEAP, 2)),
            (0, Event::Leave { region: r }),
        ]
    };
    let member = |r: u32| {
        vec![
            (
                0,
                Event::Enter {
                    region: r,
                    team: 2,
                    index: 1,
                },
            ),
            (5, read(HEAP + 4096, 2)),
            (0, Event::Leave { region: r }),
        ]
    };
    let path = write_trace(
        dir.path(),
        "r.trace",
        4096,
        &two_threads(
            [region(0), region(1)].concat(),
            [member(0), member(1)].concat(),
        ),
    );
    let out = run(&path, "static", &[]);
    assert_eq!(out.json["trace_regions"], 2, "{}", out.json);
}

/// The committed recording of the repository's stencil (4 threads).
fn stencil_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../recorder/fixtures/stencil-4.trace")
}

#[test]
fn a_recorded_programs_threads_interleaved_in_bulk_replay_as_one_by_one() {
    // Four threads whose clocks stay a few nanoseconds apart: the engine makes their
    // steps without the queue (`interleave.rs`), which must change nothing, with
    // run-to-run variation (start skews, clock interrupts) and with contention at the
    // memory modules and switch ports (the Butterfly's 1 KB-page preset).
    // (The Butterfly declares no clock: its processor's 16 MHz, as the other tests.)
    for (machine, policy, sets) in [
        ("epyc-2s", "static", &[][..]),
        ("epyc-2s", "linux-numa-balancing", &[]),
        ("butterfly-plus-sat", "platinum", &["workload.clock_mhz=16"]),
    ] {
        let cfg = config(machine, &stencil_fixture(), Some(policy), sets).unwrap();
        let run = |bulk: bool| {
            let mut e = cfg.engine().expect("the replay builds");
            e.set_bulk(bulk);
            e.run().expect("the replay completes")
        };
        let (bulk, one_by_one) = (run(true), run(false));
        assert!(bulk.ops > 0, "{machine}");
        assert_eq!(bulk, one_by_one, "{machine} {policy}");
    }
}
