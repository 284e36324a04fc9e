#!/usr/bin/env python3
"""CPU cost of each Nexmark query on Tideline and on Apache Flink, on the same recorded events.

One command (`python3 bench/nexmark/cpu.py --events 1000000 [--only q5] [--repeat 2]`):

1. Writes the events once as JSON lines with Tideline's `nexmark` connector (compare.py's
   generate_events, same seed/rate/base time, shared with compare.py under --workdir), and a
   second, tiny input: the first --small (1000) lines of that file.
2. For each query q0-q22 compare.py supports (its SKIP list, plus q12: see SKIP), writes one
   script per engine with compare.py's build_script: the JSON file as a `filesystem` source,
   the views, the query with its sink left as (q10: changed to) 'blackhole'. Streaming mode,
   parallelism 1, 'pipeline.auto-watermark-interval' left at its default (200 ms) for both.
3. Runs each engine on the full input and on the tiny one, and measures the CPU-seconds
   (user + sys) of the whole process tree: this script makes itself a child subreaper
   (prctl PR_SET_CHILD_SUBREAPER), so processes that outlive their parent (PyFlink's JVM)
   are re-parented to it; after the engine exits every descendant is reaped, and the
   difference of getrusage(RUSAGE_CHILDREN) over the run is the tree's CPU time, all threads.
   Start-up (JVM, PyFlink, planning, job submission, shutdown) is removed by subtraction:
       events/CPU-s = (events - small) / (cpu(full input) - cpu(tiny input)).
   With --repeat N each run is repeated; a measurement is the median of its runs during which
   other processes were quiet (the least, if none was); --only q5 --pool adds runs to a query's
   earlier ones.
4. Prints and writes the table (events/CPU-s per engine, ratio Tideline/Flink, geometric mean
   of the ratios) to --results (bench/RESULTS.md; notes below its KEEP_MARK line are kept) and
   every run's figures to <workdir>/cpu-<config>.json (--report rewrites the table from them).

Before each run it waits (up to --quiet-wait s) until the machine is quiet (other processes
use < --quiet of its CPUs), and records how much CPU other processes used during the run.

Flink is a benchmark-time tool only: never a CI dependency. Python 3 standard library only.
"""
import argparse
import ctypes
import datetime
import json
import math
import os
import platform
import re
import resource
import shlex
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402

# Not measured beyond compare.SKIP: q12's processing-time window makes its work depend on
# wall-clock time, not on the input.
# q23 is not in the measured set (q0-q22; Flink 2.3 also rejects its unquoted A.dateTime).
SKIP = dict(compare.SKIP, q12='processing-time window (work depends on wall time)',
            q23='outside q0-q22 (and Flink 2.3 rejects its unquoted A.dateTime)')
ENGINES = ('flink', 'tideline')
PR_SET_CHILD_SUBREAPER = 36


def become_subreaper():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit(f'prctl(PR_SET_CHILD_SUBREAPER): errno {ctypes.get_errno()}')


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime, r.ru_stime


def my_children():
    me, kids = os.getpid(), []
    for pid in os.listdir('/proc'):
        if pid.isdigit():
            try:
                with open(f'/proc/{pid}/stat') as f:
                    stat = f.read()
            except OSError:
                continue
            if int(stat[stat.rindex(')') + 2:].split()[1]) == me:
                kids.append(int(pid))
    return kids


def reap_all(grace):
    """Reap every descendant left (re-parented to us); SIGKILL what is still alive after grace s."""
    deadline = time.time() + grace
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid:
            continue
        if time.time() > deadline:
            for kid in my_children():
                print(f'    killing leftover process {kid}', flush=True)
                try:
                    os.kill(kid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            deadline = time.time() + 60
        time.sleep(0.05)


def cpu_busy():
    """(busy, total) jiffies of the whole machine, from /proc/stat."""
    with open('/proc/stat') as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]
    total = sum(v[:8])
    return total - idle, total


def wait_until_quiet(threshold, max_wait):
    """Wait until other processes use < threshold of the machine's CPUs (sampled over 2 s)."""
    t0 = time.time()
    while True:
        b0, t0_ = cpu_busy()
        time.sleep(2)
        b1, t1_ = cpu_busy()
        busy = (b1 - b0) / max(1, t1_ - t0_)
        if busy < threshold or time.time() - t0 > max_wait:
            if time.time() - t0 > 2.5:
                print(f' (waited {time.time() - t0:.0f} s for a quiet machine)', end='', flush=True)
            return busy
        time.sleep(3)


def measure(cmd, out_base, args):
    """Run cmd; CPU-seconds (user, sys) of its whole process tree, wall time, other load."""
    compare.wait_for_binary(cmd[0])
    busy_before = wait_until_quiet(args.quiet, args.quiet_wait)
    hz = os.sysconf('SC_CLK_TCK')
    u0, s0 = children_cpu()
    b0, _ = cpu_busy()
    w0 = time.time()
    with open(out_base + '.out', 'w') as out, open(out_base + '.err', 'w') as err:
        p = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                             start_new_session=True)
        try:
            rc = p.wait(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)  # the session this run started
            p.wait()
            rc = 'timeout'
    reap_all(grace=120)
    wall = time.time() - w0
    u1, s1 = children_cpu()
    b1, _ = cpu_busy()
    user, sys_ = u1 - u0, s1 - s0
    other = max(0.0, (b1 - b0) / hz - user - sys_)
    text = open(out_base + '.out', errors='replace').read() + open(out_base + '.err', errors='replace').read()
    error = None
    if rc != 0 or '[ERROR]' in text:
        error = compare.error_text(rc, open(out_base + '.out', errors='replace').read(),
                                   open(out_base + '.err', errors='replace').read())
    return {'cpu': user + sys_, 'user': user, 'sys': sys_, 'wall': wall, 'rc': rc,
            'other_cpu': other, 'busy_before': busy_before, 'error': error}


def write_head(src_dir, dst_dir, n):
    """The first n JSON lines of src_dir's files into dst_dir (once)."""
    done = os.path.join(dst_dir, '.complete')
    if os.path.exists(done):
        return
    os.makedirs(dst_dir, exist_ok=True)
    left = n
    with open(os.path.join(dst_dir, 'part-head.json'), 'w') as out:
        for name in sorted(f for f in os.listdir(src_dir) if not f.startswith(('.', '_'))):
            with open(os.path.join(src_dir, name)) as f:
                for line in f:
                    if left == 0:
                        break
                    out.write(line)
                    left -= 1
    if left:
        sys.exit(f'{src_dir} has fewer than {n} lines')
    open(done, 'w').write(f'first {n} lines of {src_dir}\n')


GIT_HEAD = '?'
# In --results, what follows this line (notes written by hand) is kept when the table is rewritten.
KEEP_MARK = '<!-- cpu.py writes everything above this line; what follows is kept when it rewrites the file -->'
BINARIES = set()  # the Tideline binaries run (a rebuild during a run would mix versions)


def binary_version(path):
    st = os.stat(path)
    return f'{datetime.datetime.fromtimestamp(st.st_mtime, datetime.timezone.utc):%Y-%m-%d %H:%M:%S} UTC, {st.st_size} bytes'


def git_head():
    try:
        return subprocess.run(['git', '-C', compare.REPO, 'log', '-1', '--format=%h %s'],
                              capture_output=True, text=True).stdout.strip()[:100]
    except OSError:
        return '?'


def engine_cmd(engine, script, args):
    if engine == 'tideline':
        return [args.tideline, '-f', script]
    return [args.flink, '--parallelism', '1', script]


def measure_query(name, args, dirs, work, earlier=None):
    """Measure one query on the engines of --engine; earlier: its previous result, whose runs
    are kept with --pool, and are the figures of an engine not measured again."""
    res = {'query': name}
    for engine in ENGINES:
        if engine not in args.engine:
            res[engine] = dict((earlier or {}).get(engine, {}))
            continue
        if not args.pool:
            earlier = {k: v for k, v in (earlier or {}).items() if k != engine}
        e = res[engine] = {}
        for size, data_dir in dirs.items():
            script = os.path.join(work, 'scripts', f'{name}.{engine}.{size}.sql')
            with open(script, 'w') as f:
                f.write(compare.build_script(name, data_dir, engine, sink='blackhole'))
            runs = list((earlier or {}).get(engine, {}).get(size, []))
            for i in range(len(runs), len(runs) + args.repeat):
                if engine == 'tideline':
                    compare.wait_for_binary(args.tideline)
                    BINARIES.add(binary_version(args.tideline))
                print(f'  {name}: {engine} {size} #{i + 1} ...', end='', flush=True)
                m = measure(engine_cmd(engine, script, args),
                            os.path.join(work, 'out', f'{name}.{engine}.{size}.{i}'), args)
                if engine == 'tideline':
                    m['binary'] = binary_version(args.tideline)
                print(f" rc={m['rc']} cpu {m['cpu']:.2f} s (user {m['user']:.2f}, sys {m['sys']:.2f}),"
                      f" wall {m['wall']:.1f} s, others {m['other_cpu']:.1f} CPU-s", flush=True)
                runs.append(m)
                if m['error']:
                    break
            e[size] = runs
            bad = [r['error'] for r in runs if r['error']]
            if bad:
                e['error'] = f'{size} input: {bad[0]}'
                break
    return summarize(res, args)


def disturbed_run(m):
    """Did other processes use much CPU (> 0.5 CPU-s and > 10% of the run's own) during the run?"""
    return m['other_cpu'] > max(0.5, 0.1 * m['cpu'])


def pick(runs):
    """The CPU-seconds of a measurement: the median of its undisturbed runs, or, when every run
    was disturbed, the least (other load only adds); and whether it is the disturbed case."""
    quiet = [m['cpu'] for m in runs if not disturbed_run(m)]
    if quiet:
        return statistics.median(quiet), False
    return min(m['cpu'] for m in runs), True


def summarize(res, args):
    for engine in ENGINES:
        e = res[engine]
        if 'error' in e:
            continue
        (full, df), (small, ds) = pick(e['full']), pick(e['small'])
        e['cpu_full'], e['cpu_small'] = full, small
        e['cpu_marginal'] = full - small
        e['disturbed'] = df or ds
        e['events_per_cpu_s'] = ((args.events - args.small) / (full - small)
                                 if full > small else None)
    t, f = res['tideline'].get('events_per_cpu_s'), res['flink'].get('events_per_cpu_s')
    res['ratio'] = t / f if t and f else None
    return res


def disturbed(r):
    return any(r[e].get('disturbed') for e in ENGINES)


def runs_text(results):
    counts = sorted({len(r[e][size]) for r in results if 'skipped' not in r
                     for e in ENGINES for size in ('full', 'small') if r[e].get(size)})
    return '–'.join(map(str, counts[::max(1, len(counts) - 1)])) if counts else '0'


def fmt_rate(x):
    return f'{x:,.0f}' if x else '—'


def table(results, args):
    lines = ['| query | Flink events/CPU-s | Tideline events/CPU-s | ratio T/F | '
             'Flink CPU-s full − tiny | Tideline CPU-s full − tiny |',
             '|---|---:|---:|---:|---:|---:|']
    for r in results:
        if 'skipped' in r:
            lines.append(f"| {r['query']} | skipped: {r['skipped']} | | | | |")
            continue
        cells = []
        for engine in ENGINES:
            e = r[engine]
            cells.append(e.get('error') or
                         f"{e['cpu_full']:.2f} − {e['cpu_small']:.2f} = {e['cpu_marginal']:.2f}")
        ratio = f"{r['ratio']:.1f}x" if r['ratio'] else '—'
        mark = ' †' if disturbed(r) else ''
        lines.append(f"| {r['query']}{mark} | {fmt_rate(r['flink'].get('events_per_cpu_s'))} | "
                     f"{fmt_rate(r['tideline'].get('events_per_cpu_s'))} | {ratio} | "
                     f"{cells[0]} | {cells[1]} |")
    ratios = [r['ratio'] for r in results if r.get('ratio')]
    geo = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else None
    return lines, geo, ratios


def results_md(results, args, command):
    lines, geo, ratios = table(results, args)
    model = next((l.split(':', 1)[1].strip() for l in open('/proc/cpuinfo') if l.startswith('model name')),
                 platform.processor())
    head = [
        '# Nexmark: CPU cost, Tideline vs Apache Flink 2.3',
        '',
        f'- Date: {datetime.date.today().isoformat()}',
        f'- Machine: {os.cpu_count()} cores, `{model}` (model name from /proc/cpuinfo), '
        f'Linux {platform.release()}',
        '- Command (from the repository root): ' + '; then '.join(f'`{c}`' for c in command),
        f'- Events: {args.events:,} (Nexmark generator: rate {args.rate}/s of event time, seed '
        f'{args.seed}, base time {args.base_time}); tiny input for start-up: the first {args.small:,}',
        '- Runs per measurement: ' + runs_text(results) + ' (median of the undisturbed runs kept)',
        f'- Tideline: git HEAD when measured `{GIT_HEAD}`; binary target/release/tideline built '
        + ' and '.join(sorted(BINARIES)) + (' (**rebuilt during the run**)' if len(BINARIES) > 1 else ''),
        '',
    ]
    if any(disturbed(r) for r in results if 'skipped' not in r):
        lines += ['', '† every run of one of this query\'s measurements was disturbed: other processes '
                  'used more than 10% as much CPU as the engine (the least CPU time of those runs is kept).']
    body = lines + ['', (f'Geometric mean of the ratios (Tideline/Flink events per CPU-second, '
                         f'{len(ratios)} queries): **{geo:.1f}x**' if geo else 'No ratio measured.'), '']
    method = [
        '## Method',
        '',
        '- Same input for both engines: the events are generated once by Tideline\'s `nexmark` '
        'connector and written as JSON lines; each engine reads that file with the `filesystem` '
        'connector, \'format\' = \'json\' (ddl_gen.sql\'s columns, computed `dateTime`, 4 s watermark) '
        'and the views of ddl_views.sql. Parsing JSON is therefore part of every figure.',
        '- Each query runs unchanged into its own `blackhole` sink (q10\'s partitioned filesystem sink '
        'replaced by `blackhole`); streaming mode, parallelism 1, \'table.local-time-zone\' = \'UTC\', '
        '\'pipeline.auto-watermark-interval\' left at Flink\'s default 200 ms for both.',
        '- Flink runs through ../shared/flink/run-flink.sh (PyFlink 2.3, local MiniCluster in one JVM); '
        'Tideline through target/release/tideline -f.',
        '- CPU = user + sys seconds of the whole process tree (all threads, and the JVM that PyFlink '
        'starts): the harness is a child subreaper, reaps every descendant and takes the difference of '
        'getrusage(RUSAGE_CHILDREN).',
        f'- Start-up removed by subtraction: each query also runs on the first {args.small:,} events, and '
        f'events/CPU-s = ({args.events:,} − {args.small:,}) / (CPU(full) − CPU(tiny)). This removes the '
        'JVM/PyFlink start, planning, job submission and shutdown, which cost Flink several CPU-seconds '
        'per query whatever the input.',
        f'- Before each run the harness waits until other processes use less than {args.quiet:.0%} of the '
        f'CPUs (at most {args.quiet_wait} s), and records their CPU use during the run (raw figures in '
        f'{args.workdir}/cpu-<config>.json).',
        '',
        '## Not in this table: Tideline\'s generator figures',
        '',
        'Tideline\'s own benchmark (`target/release/bench nexmark`, src/bin/bench/nexmark.rs) reads the '
        'built-in `nexmark` generator connector directly (no JSON) and measures only Tideline. Flink has '
        'no `nexmark` connector here, so those figures are not comparable with Flink\'s and are kept '
        'separate from this table.',
        '',
    ]
    skipped = [r for r in results if 'skipped' in r]
    notes = []
    if skipped:
        notes = ['## Skipped', ''] + [f"- {r['query']}: {r['skipped']}" for r in skipped] + ['']
    return '\n'.join(head + body + method + notes) + '\n', geo


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--events', type=int, default=1_000_000)
    ap.add_argument('--small', type=int, default=1000, help='events of the tiny (start-up) input')
    ap.add_argument('--rate', type=int, default=10000, help="'first-event.rate' (events/s of event time)")
    ap.add_argument('--seed', type=int, default=7)
    ap.add_argument('--base-time', default='2024-01-01 00:00:00')
    ap.add_argument('--only', action='append', default=[],
                    help='run only these queries (repeatable, or comma-separated: q5,q7)')
    ap.add_argument('--repeat', type=int, default=1, help='runs per measurement (least CPU kept)')
    ap.add_argument('--workdir', default='/tmp/nexmark-compare')
    ap.add_argument('--results', default=os.path.join(compare.REPO, 'bench', 'RESULTS.md'),
                    help="markdown results ('' to write none)")
    ap.add_argument('--tideline', default=compare.DEFAULT_TIDELINE)
    ap.add_argument('--flink', default=compare.DEFAULT_FLINK)
    ap.add_argument('--timeout', type=int, default=1800, help='seconds per engine run')
    ap.add_argument('--quiet', type=float, default=0.25,
                    help='wait before a run until other processes use less than this share of the CPUs')
    ap.add_argument('--quiet-wait', type=int, default=900, help='seconds to wait for that at most')
    ap.add_argument('--engine', action='append', default=[], choices=ENGINES,
                    help='measure only this engine (repeatable); the other keeps its earlier runs')
    ap.add_argument('--pool', action='store_true',
                    help="with --only: add the new runs to the query's earlier runs (least CPU of all kept)")
    ap.add_argument('--report', action='store_true',
                    help='run nothing: rewrite the table from the runs saved in the workdir')
    ap.add_argument('--regen', action='store_true', help='generate the events again')
    args = ap.parse_args()
    command = 'python3 bench/nexmark/cpu.py ' + ' '.join(map(shlex.quote, sys.argv[1:]))
    become_subreaper()
    global GIT_HEAD
    GIT_HEAD = git_head()

    config = f'events{args.events}-rate{args.rate}-seed{args.seed}'
    dirs = {'full': os.path.join(args.workdir, 'data', config),
            'small': os.path.join(args.workdir, 'data', f'{config}-head{args.small}')}
    work = os.path.join(args.workdir, f'cpu-{config}')
    for d in (dirs['full'], os.path.join(work, 'scripts'), os.path.join(work, 'out')):
        os.makedirs(d, exist_ok=True)
    compare.generate_events(args, dirs['full'], work)
    write_head(dirs['full'], dirs['small'], args.small)

    names = sorted([f[:-4] for f in os.listdir(compare.QUERIES) if re.fullmatch(r'q\d+\.sql', f)],
                   key=compare.qorder)
    only = {q.strip() for o in args.only for q in o.split(',') if q.strip()}
    if only:
        names = [n for n in names if n in only]
    # with --only, the other queries' earlier results are kept (so reruns keep the full table)
    raw = os.path.join(args.workdir, f'cpu-{config}.json')
    prev, commands = {}, [command]
    if args.report:
        names = []
    args.engine = args.engine or list(ENGINES)
    if (only or args.report or len(args.engine) < len(ENGINES)) and os.path.exists(raw):
        old = json.load(open(raw))
        prev = {r['query']: r for r in old.get('results', [])}
        commands = old.get('commands', []) + ([] if args.report else commands)
        if args.report:  # the settings of the runs, not of this command
            GIT_HEAD = old.get('git_head', GIT_HEAD)
            args.quiet = old.get('quiet', args.quiet)
            args.quiet_wait = old.get('quiet_wait', args.quiet_wait)
        if args.pool or args.report or 'tideline' not in args.engine:
            BINARIES.update(old.get('binaries', []))

    def save():
        results = sorted(prev.values(), key=lambda r: compare.qorder(r['query']))
        for r in results:
            if 'skipped' in r:
                r['skipped'] = SKIP.get(r['query'], r['skipped'])
            else:
                summarize(r, args)
        with open(raw, 'w') as f:
            json.dump({'events': args.events, 'small': args.small, 'rate': args.rate, 'seed': args.seed,
                       'commands': commands, 'git_head': GIT_HEAD, 'binaries': sorted(BINARIES),
                       'quiet': args.quiet, 'quiet_wait': args.quiet_wait,
                       'results': results}, f, indent=1)
        text, _ = results_md(results, args, commands)
        if args.results:
            kept = ''
            if os.path.exists(args.results):
                old_text = open(args.results).read()
                if KEEP_MARK in old_text:
                    kept = old_text[old_text.index(KEEP_MARK) + len(KEEP_MARK):]
            with open(args.results, 'w') as f:
                f.write(text + '\n' + KEEP_MARK + kept)
        return text

    for name in names:
        if name in SKIP:
            prev[name] = {'query': name, 'skipped': SKIP[name]}
            continue
        r = measure_query(name, args, dirs, work, prev.get(name))
        rt, rf = r['tideline'].get('events_per_cpu_s'), r['flink'].get('events_per_cpu_s')
        print(f"  {name}: Flink {fmt_rate(rf)} events/CPU-s, Tideline {fmt_rate(rt)} events/CPU-s"
              + (f", ratio {r['ratio']:.1f}x" if r['ratio'] else ''), flush=True)
        prev[name] = r
        save()  # after each query: an interrupted run keeps what it measured
    print(save())

if __name__ == '__main__':
    main()
