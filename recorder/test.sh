#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# Tests of the recorder: builds it (scripts/setup-recorder), records the test programs into
# raw streams, validates each stream with check.py, compares the reference count of `count`
# with Valgrind's lackey tool, and prints each program's slowdown (recorded wall time over
# native wall time). Ends with "N passed, N failed"; exits 1 if anything failed.
# Sizes can be changed through STENCIL_ARGS, PRODCONS_ARGS and COUNT_ARGS (the checked runs)
# and SLOW_STENCIL_ARGS, SLOW_PRODCONS_ARGS, SLOW_COUNT_ARGS (the timed runs).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-recorder >/dev/null

rec=target/recorder
lib=$rec/lib
bin=$rec/bin
check=recorder/check.py
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

STENCIL_ARGS=${STENCIL_ARGS:-"256 10"}
PRODCONS_ARGS=${PRODCONS_ARGS:-"2 2 20000 16"}
COUNT_ARGS=${COUNT_ARGS:-"5000 20"}
SLOW_STENCIL_ARGS=${SLOW_STENCIL_ARGS:-"1024 40"}
SLOW_PRODCONS_ARGS=${SLOW_PRODCONS_ARGS:-"2 2 200000 16"}
SLOW_COUNT_ARGS=${SLOW_COUNT_ARGS:-"100000 200"}

passed=0
failed=0
ok() {
  echo "ok: $*"
  passed=$((passed + 1))
}
fail() {
  echo "FAILED: $*"
  failed=$((failed + 1))
}

# record NAME ARGS...: records into $work/NAME.raw, program output into $work/NAME.out;
# sets rc to valgrind's exit status. The runtime directory is $lib, or $record_lib when set.
record() {
  local name=$1
  shift
  set +e
  VALGRIND_LIB=${record_lib:-$lib} valgrind -q --tool=numaplace --out-fd=3 "$@" \
    3>"$work/$name.raw" >"$work/$name.out" 2>"$work/$name.err"
  rc=$?
  set -e
}

# Wall time of a command in seconds (stdout and stderr discarded): the best of three runs,
# since other work on the machine makes single runs noisy.
wall() {
  local t0 t1 best=""
  for _ in 1 2 3; do
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || true
    t1=$(date +%s.%N)
    best=$(echo "$t0 $t1 $best" | awk '{d = $2 - $1; if ($3 != "" && $3 < d) d = $3; printf "%.3f", d}')
  done
  echo "$best"
}

checked() { # name: validates the stream, keeps check.py's report
  if python3 "$check" "$work/$1.raw" >"$work/$1.check"; then
    ok "$1: stream valid ($(grep -c 'thread [0-9]*:' "$work/$1.check") threads, $(sed -n 's/.*page size [0-9]*, \([0-9]*\) records.*/\1/p' "$work/$1.check") records)"
  else
    fail "$1: stream invalid"
    sed 's/^/    /' "$work/$1.check" | tail -20
  fi
}

total_of() { # name field -> the total line's value
  sed -n "s/.*total:.* $2=\([0-9]*\).*/\1/p" "$work/$1.check"
}

# --- count: single-threaded, against lackey ------------------------------------------------
# Both runs must hand the program the same environment, laid out the same way: the loader and
# libc scan the environment strings with vector loads whose number depends on each string's
# alignment, so a string moved by a few bytes changes the reference count by a few loads.
# Valgrind appends LD_PRELOAD (its core's preload library and the tool's) to the environment,
# so passing our preload library to lackey through LD_PRELOAD would put it elsewhere. Instead
# both runs use `--tool=numaplace` with a runtime directory of the same path length: `rec`
# links our tool, `lak` links lackey under our tool's name. Each also links our preload
# library, so the program and the loader do the same work in both (the library has no
# constructors, and count calls nothing it wraps); the environments differ in one letter.
for d in rec lak; do
  mkdir "$work/$d"
  ln -s "$(cd "$lib" && pwd)"/* "$work/$d/"
done
ln -sf "$(cd "$lib" && pwd)/lackey-amd64-linux" "$work/lak/numaplace-amd64-linux"
# (record_lib is set as a shell variable, not as a prefix to the call: a prefix would export
# it into the program's environment.)
record_lib=$work/rec
# shellcheck disable=SC2086
record count "$bin/count" $COUNT_ARGS
unset record_lib
[ "$rc" = 0 ] && ok "count: exit status 0" || fail "count: exit status $rc"
checked count
set +e
# shellcheck disable=SC2086
VALGRIND_LIB=$work/lak valgrind -q --tool=numaplace --trace-mem=yes --log-file="$work/lackey.txt" \
  "$bin/count" $COUNT_ARGS >"$work/count-lackey.out" 2>&1
set -e
lk=$(awk '/^ L/{l++} /^ S/{s++} /^ M/{m++} END{printf "%d %d %d", l+m, s+m, l+s+2*m}' "$work/lackey.txt")
read -r lk_reads lk_writes lk_refs <<<"$lk"
our_reads=$(total_of count reads)
our_writes=$(total_of count writes)
our_refs=$(total_of count references)
echo "  count: recorder reads=$our_reads writes=$our_writes references=$our_refs;" \
  "lackey reads=$lk_reads writes=$lk_writes references=$lk_refs"
if [ "$our_refs" = "$lk_refs" ] && [ "$our_reads" = "$lk_reads" ]; then
  ok "count: references equal lackey's ($our_refs)"
else
  fail "count: references $our_refs differ from lackey's $lk_refs"
fi
if cmp -s "$work/count.out" <("$bin/count" $COUNT_ARGS); then
  ok "count: program output unchanged"
else
  fail "count: program output differs"
fi

# --- stencil: OpenMP -------------------------------------------------------------------------
export OMP_NUM_THREADS=4
# shellcheck disable=SC2086
record stencil "$bin/stencil" $STENCIL_ARGS
[ "$rc" = 0 ] && ok "stencil: exit status 0" || fail "stencil: exit status $rc"
checked stencil
# shellcheck disable=SC2086
if cmp -s "$work/stencil.out" <("$bin/stencil" $STENCIL_ARGS); then
  ok "stencil: program output unchanged ($(cat "$work/stencil.out"))"
else
  fail "stencil: program output differs"
fi
if [ "$(grep -c 'thread [0-9]*:.*ENTER=' "$work/stencil.check")" = 4 ]; then
  ok "stencil: four team threads enter regions"
else
  fail "stencil: expected four team threads"
fi
# libgomp's idle threads spin when OMP_WAIT_POLICY=active: none of it may be recorded.
# shellcheck disable=SC2086
OMP_WAIT_POLICY=passive record stencil-passive "$bin/stencil" $STENCIL_ARGS
# shellcheck disable=SC2086
OMP_WAIT_POLICY=active record stencil-active "$bin/stencil" $STENCIL_ARGS
python3 "$check" "$work/stencil-passive.raw" >"$work/stencil-passive.check" || true
python3 "$check" "$work/stencil-active.raw" >"$work/stencil-active.check" || true
pas=$(total_of stencil-passive references)
act=$(total_of stencil-active references)
echo "  stencil: references passive=$pas active=$act"
if [ -n "$pas" ] && [ -n "$act" ] && awk -v p="$pas" -v a="$act" 'BEGIN{exit !(a <= p * 1.01 && a >= p * 0.99)}'; then
  ok "stencil: spinning not recorded (active within 1% of passive)"
else
  fail "stencil: active wait policy changes the references ($act vs $pas)"
fi

# --- prodcons: pthreads ------------------------------------------------------------------
# shellcheck disable=SC2086
record prodcons "$bin/prodcons" $PRODCONS_ARGS
[ "$rc" = 0 ] && ok "prodcons: exit status 0" || fail "prodcons: exit status $rc"
checked prodcons
# shellcheck disable=SC2086
if cmp -s "$work/prodcons.out" <("$bin/prodcons" $PRODCONS_ARGS); then
  ok "prodcons: program output unchanged ($(cat "$work/prodcons.out"))"
else
  fail "prodcons: program output differs"
fi
if grep -q 'thread 0:.*JOIN=4' "$work/prodcons.check" \
  && [ "$(grep -c 'thread [0-9]*:.*START=1' "$work/prodcons.check")" = 4 ]; then
  ok "prodcons: four threads started and joined"
else
  fail "prodcons: threads or joins missing"
fi

# --- features and failures -------------------------------------------------------------------
record omp "$bin/omp_features"
checked omp
if grep -q 'notes \[\]' "$work/omp.check"; then ok "omp_features: no notes"; else fail "omp_features: unexpected notes"; fi
record omp-unsupported "$bin/omp_features" unsupported
checked omp-unsupported
if grep -q 'notes \[1, 2\]' "$work/omp-unsupported.check"; then
  ok "omp_features unsupported: notes for a task and a nested region"
else
  fail "omp_features unsupported: notes $(grep -o 'notes \[.*\]' "$work/omp-unsupported.check")"
fi
record pthreads "$bin/pthread_features" 7
[ "$rc" = 7 ] && ok "pthread_features: the program's exit status 7 comes through" \
  || fail "pthread_features: exit status $rc, expected 7"
checked pthreads
if grep -q 'notes \[5, 4\]' "$work/pthreads.check"; then
  ok "pthread_features: notes for a relocked recursive mutex and a rwlock"
else
  fail "pthread_features: notes $(grep -o 'notes \[.*\]' "$work/pthreads.check")"
fi
for bad in "--page-size=100" "--page-size=32" "--out-fd=abc" "--out-fd=1"; do
  if VALGRIND_LIB=$lib valgrind -q --tool=numaplace --out-fd=3 "$bad" "$bin/count" 1 1 \
    3>/dev/null >/dev/null 2>"$work/bad.err"; then
    fail "option $bad accepted"
  else
    ok "option $bad refused: $(grep -v 'Use --help' "$work/bad.err" | tail -1)"
  fi
done
if VALGRIND_LIB=$lib valgrind -q --tool=numaplace "$bin/count" 1 1 >/dev/null 2>&1; then
  fail "missing --out-fd accepted"
else
  ok "missing --out-fd refused"
fi

# --- slowdowns ---------------------------------------------------------------------------
echo "slowdowns (best of three wall times, recorded with the stream to /dev/null, over native):"
slowdown() { # label command...
  local label=$1
  shift
  local native recorded
  native=$(wall "$@")
  recorded=$(wall env VALGRIND_LIB="$lib" valgrind -q --tool=numaplace --out-fd=3 "$@" 3>/dev/null)
  echo "$label|$native|$recorded" | awk -F'|' '{n = $2 < 0.001 ? 0.001 : $2; printf "  %-34s native %6.3f s  recorded %7.3f s  slowdown %6.1fx\n", $1, $2, $3, $3 / n}'
}
# shellcheck disable=SC2086
slowdown "stencil $SLOW_STENCIL_ARGS (4 threads)" "$bin/stencil" $SLOW_STENCIL_ARGS
# shellcheck disable=SC2086
slowdown "prodcons $SLOW_PRODCONS_ARGS" "$bin/prodcons" $SLOW_PRODCONS_ARGS
# shellcheck disable=SC2086
slowdown "count $SLOW_COUNT_ARGS" "$bin/count" $SLOW_COUNT_ARGS

echo "recorder: $passed passed, $failed failed"
[ "$failed" = 0 ]
