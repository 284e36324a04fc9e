#!/usr/bin/env python3
"""Compare Tideline's Nexmark query results with Apache Flink's on the same recorded events.

What it does, in one command (`python3 bench/nexmark/compare.py --events 100000 [--only q5]`):

1. Generates the events once with Tideline: a `nexmark` table (seeded, fixed base time) written by
   `INSERT INTO` a `filesystem` sink with 'format' = 'json' into <workdir>/data/<config>/, and checks
   the JSON lines (nested objects for the ROW columns, NULLs for the other two, TIMESTAMP(3) written
   as Flink's JSON format writes it in the default SQL standard: 'yyyy-MM-dd HH:mm:ss[.fraction]').
   Flink has no `nexmark` connector here, so both engines must read this same file.
2. For each query qN of ../shared/nexmark/queries/ (except q6, q12, q13, q14; q10 adapted to print),
   writes one script per engine: the `datagen` table of ddl_gen.sql as a filesystem JSON source over
   that directory (same columns, the computed `dateTime`, the 4 s watermark), the views of
   ddl_views.sql, and the query's INSERT with the sink's 'blackhole' connector changed to 'print'.
   Streaming mode, parallelism 1, 'table.local-time-zone' = 'UTC'.
3. Runs both engines (Tideline: target/release/tideline -f; Flink: ../shared/flink/run-flink.sh),
   reduces each printed changelog (+I/+U add a row, -U/-D remove one copy) to its final multiset of
   rows and compares them. A changelog with +U but no -U (Flink prints q9 as an upsert stream) is
   reduced by the query's key (UPSERT_KEYS). q23 also runs as q23_quoted, `dateTime` quoted. Prints a per-query table and writes <workdir>/report.md and report.json.

Everything (events, scripts, outputs, report) stays under --workdir (/tmp/nexmark-compare).

Flink is a benchmark-time tool only: this script is run by hand to look for differences. It is
never a CI dependency, and nothing in the test suite may call it. Python 3 standard library only.
"""
import argparse
import collections
import datetime
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, '..', '..'))
SHARED = os.path.abspath(os.path.join(REPO, '..', 'shared'))
QUERIES = os.path.join(SHARED, 'nexmark', 'queries')
DEFAULT_TIDELINE = os.path.join(REPO, 'target', 'release', 'tideline')
DEFAULT_FLINK = os.path.join(SHARED, 'flink', 'run-flink.sh')

# Queries not compared, and why.
SKIP = {
    'q6': "Flink 2.3 refuses the query as written (Column 'rownum' not found in any table), as Tideline does",
    'q12': 'processing-time window: nondeterministic',
    'q13': 'legacy lookup/side-input connector',
    'q14': 'Java UDF (count_char)',
}

# The physical columns of ddl_gen.sql (also the generator table and the JSON file's columns).
PHYSICAL_COLUMNS = """
    event_type int,
    person ROW<
        id  BIGINT,
        name  VARCHAR,
        emailAddress  VARCHAR,
        creditCard  VARCHAR,
        city  VARCHAR,
        state  VARCHAR,
        `dateTime` TIMESTAMP(3),
        extra  VARCHAR>,
    auction ROW<
        id  BIGINT,
        itemName  VARCHAR,
        description  VARCHAR,
        initialBid  BIGINT,
        reserve  BIGINT,
        `dateTime`  TIMESTAMP(3),
        expires  TIMESTAMP(3),
        seller  BIGINT,
        category  BIGINT,
        extra  VARCHAR>,
    bid ROW<
        auction  BIGINT,
        bidder  BIGINT,
        price  BIGINT,
        channel  VARCHAR,
        url  VARCHAR,
        `dateTime`  TIMESTAMP(3),
        extra  VARCHAR>"""

# Queries run in an adapted form as well, beside the original.
#   q23_quoted: q23 with `dateTime` quoted (Flink 2.3's parser rejects the unquoted A.dateTime).
VARIANTS = {'q23_quoted': 'q23'}

# Sink columns (0-based; -1 = last) that key an upsert changelog. Flink prints some updating
# results as +U without -U (an upsert stream, keyed by the input's upsert key, e.g. q9's Rank);
# such a changelog is reduced by this key: +I/+U replace the key's row, -U/-D remove it.
UPSERT_KEYS = {'q4': [0], 'q9': [0], 'q15': [0], 'q16': [0, 1], 'q17': [0, 1], 'q18': [0, 1],
               'q19': [0, -1]}

CHANGE_RE = re.compile(r'^(?:\S+> )?([+-][IUD])\[(.*)\]\s*$')


def sql_str(s):
    return "'" + s.replace("'", "''") + "'"


# ---------------------------------------------------------------------------------------------
# 1. events
# ---------------------------------------------------------------------------------------------

def generate_events(args, data_dir, log_dir):
    """Write the Nexmark events as JSON lines with Tideline (once per configuration)."""
    done = os.path.join(data_dir, '.complete')
    if os.path.exists(done) and not args.regen:
        return
    if os.path.exists(data_dir):
        for name in os.listdir(data_dir):
            os.remove(os.path.join(data_dir, name))
    os.makedirs(data_dir, exist_ok=True)
    script = f"""SET 'table.local-time-zone' = 'UTC';
SET 'parallelism.default' = '1';
CREATE TABLE nexmark ({PHYSICAL_COLUMNS}
) WITH (
    'connector' = 'nexmark',
    'events.num' = '{args.events}',
    'first-event.rate' = '{args.rate}',
    'seed' = '{args.seed}',
    'base-time' = {sql_str(args.base_time)}
);
CREATE TABLE events_json ({PHYSICAL_COLUMNS}
) WITH (
    'connector' = 'filesystem',
    'path' = {sql_str(data_dir)},
    'format' = 'json'
);
INSERT INTO events_json SELECT * FROM nexmark;
"""
    path = os.path.join(log_dir, 'generate.sql')
    with open(path, 'w') as f:
        f.write(script)
    print(f'generating {args.events} events into {data_dir} ...', flush=True)
    rc, out, err, secs = run([args.tideline, '-f', path], args.timeout)
    with open(os.path.join(log_dir, 'generate.out'), 'w') as f:
        f.write(out)
    with open(os.path.join(log_dir, 'generate.err'), 'w') as f:
        f.write(err)
    if rc != 0:
        sys.exit(f'event generation failed (rc {rc}):\n{err[-3000:]}')
    with open(done, 'w') as f:
        f.write(f'{args.events} events in {secs:.1f} s\n')


TS_RE = re.compile(r'^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,9})?$')
KEYS = {
    'person': ['id', 'name', 'emailAddress', 'creditCard', 'city', 'state', 'dateTime', 'extra'],
    'auction': ['id', 'itemName', 'description', 'initialBid', 'reserve', 'dateTime', 'expires',
                'seller', 'category', 'extra'],
    'bid': ['auction', 'bidder', 'price', 'channel', 'url', 'dateTime', 'extra'],
}
TYPE_FIELD = {0: 'person', 1: 'auction', 2: 'bid'}


def parse_ts(s):
    base, _, frac = s.partition('.')
    t = datetime.datetime.strptime(base, '%Y-%m-%d %H:%M:%S').replace(tzinfo=datetime.timezone.utc)
    ms = int((frac + '000')[:3]) if frac else 0
    return int(t.timestamp()) * 1000 + ms


def check_events(args, data_dir):
    """Check the JSON lines; return (line count, list of problems, stats)."""
    problems = []
    stats = collections.Counter()

    def problem(msg):
        if len(problems) < 40:
            problems.append(msg)
        stats['problems'] += 1

    files = sorted(f for f in os.listdir(data_dir) if not f.startswith(('.', '_')))
    if not files:
        return 0, ['no data file written'], stats
    base_ms = parse_ts(args.base_time) if not args.base_time.isdigit() else int(args.base_time)
    delay_us = 1_000_000.0 / args.rate
    n = 0
    last_ts = None
    for fname in files:
        with open(os.path.join(data_dir, fname), encoding='utf-8') as f:
            for lineno, line in enumerate(f, 1):
                where = f'{fname}:{lineno}'
                n += 1
                try:
                    obj = json.loads(line)
                except ValueError as e:
                    problem(f'{where}: not JSON ({e})')
                    continue
                if list(obj) != ['event_type', 'person', 'auction', 'bid']:
                    problem(f'{where}: top-level keys {list(obj)}')
                et = obj.get('event_type')
                if et not in TYPE_FIELD:
                    problem(f'{where}: event_type {et!r}')
                    continue
                stats[f'type{et}'] += 1
                kind = TYPE_FIELD[et]
                for other in ('person', 'auction', 'bid'):
                    v = obj.get(other)
                    if other == kind:
                        if not isinstance(v, dict):
                            problem(f'{where}: {other} is {type(v).__name__}, want an object')
                        elif list(v) != KEYS[other]:
                            problem(f'{where}: {other} keys {list(v)}')
                    elif v is not None:
                        problem(f'{where}: {other} should be null for event_type {et}')
                ev = obj.get(kind) or {}
                for k, val in ev.items():
                    if val is None:
                        stats[f'null {kind}.{k}'] += 1
                    if k in ('dateTime', 'expires'):
                        if not isinstance(val, str) or not TS_RE.match(val):
                            problem(f'{where}: {kind}.{k} = {val!r} is not SQL-format TIMESTAMP(3)')
                        elif '.' in val and val.endswith('0'):
                            # Flink's SQL_TIMESTAMP_FORMAT prints the fraction without trailing zeros
                            problem(f'{where}: {kind}.{k} = {val!r} has trailing zeros in its fraction')
                    elif k in ('id', 'initialBid', 'reserve', 'seller', 'category', 'auction',
                               'bidder', 'price'):
                        if not isinstance(val, int):
                            problem(f'{where}: {kind}.{k} = {val!r} is not an integer')
                    elif val is not None and not isinstance(val, str):
                        problem(f'{where}: {kind}.{k} = {val!r} is not a string')
                ts = ev.get('dateTime')
                if isinstance(ts, str) and TS_RE.match(ts):
                    ms = parse_ts(ts)
                    # event number n (firstEventNumber = 1): base + floor((long)(n * delay_us) / 1000)
                    want = base_ms + int(n * delay_us) // 1000
                    if ms != want:
                        stats['timestamp off'] += 1
                        if stats['timestamp off'] <= 3:
                            problem(f'{where}: dateTime {ts} is {ms - base_ms} ms after base, '
                                    f'expected {want - base_ms}')
                    if last_ts is not None and ms < last_ts:
                        problem(f'{where}: dateTime goes backwards')
                    last_ts = ms
                    if kind == 'auction' and isinstance(ev.get('expires'), str):
                        if parse_ts(ev['expires']) <= ms:
                            problem(f'{where}: expires {ev["expires"]} not after dateTime {ts}')
                # event id = n + 1 (firstEventId = 1); type from id mod 50 with proportions 1/3/46
                eid = n + 1
                r = eid % 50
                want_type = 0 if r < 1 else 1 if r < 4 else 2
                if et != want_type:
                    stats['type off'] += 1
                    if stats['type off'] <= 3:
                        problem(f'{where}: event_type {et}, expected {want_type} for event id {eid}')
    if n != args.events:
        problem(f'{n} lines, expected {args.events}')
    return n, problems, stats


# ---------------------------------------------------------------------------------------------
# 2. scripts
# ---------------------------------------------------------------------------------------------

def strip_comments(sql):
    return '\n'.join(l for l in sql.splitlines() if not l.strip().startswith('--'))


def source_ddl(data_dir):
    ddl = open(os.path.join(QUERIES, 'ddl_gen.sql')).read()
    i = ddl.rindex(') WITH (')
    return ddl[:i] + f""") WITH (
    'connector' = 'filesystem',
    'path' = {sql_str(data_dir)},
    'format' = 'json'
);"""


def query_sql(name, sink='print'):
    """The query's statements with its sink's connector set to `sink` ('print' to compare rows,
    'blackhole' to measure cost: bench/nexmark/cpu.py)."""
    q = strip_comments(open(os.path.join(QUERIES, VARIANTS.get(name, name) + '.sql')).read()).strip()
    if name == 'q23_quoted':
        q = re.sub(r'\b([A-Za-z]+)\.dateTime\b', r'\1.`dateTime`', q)
    if name == 'q10':
        # partitioned filesystem sink -> `sink`, same columns
        q = re.sub(r"\)\s*PARTITIONED BY \(dt, hm\) WITH \(.*?\);",
                   f") WITH (\n  'connector' = '{sink}'\n);", q, flags=re.S)
    else:
        q, k = re.subn(r"'connector'\s*=\s*'blackhole'", f"'connector' = '{sink}'", q)
        if k != 1:
            raise ValueError(f'{name}: expected one blackhole sink, found {k}')
    if f"'{sink}'" not in q:
        raise ValueError(f'{name}: no {sink} sink after rewriting')
    if not q.endswith(';'):
        q += ';'
    return q


def build_script(name, data_dir, engine, sink='print'):
    views = open(os.path.join(QUERIES, 'ddl_views.sql')).read().replace('${NEXMARK_TABLE}', 'datagen')
    return f"""-- {name} for {engine}, written by bench/nexmark/compare.py
SET 'table.local-time-zone' = 'UTC';
SET 'parallelism.default' = '1';
SET 'execution.runtime-mode' = 'streaming';

{source_ddl(data_dir)}

{views.strip()}

{query_sql(name, sink)}
"""


# ---------------------------------------------------------------------------------------------
# 3. running and comparing
# ---------------------------------------------------------------------------------------------

def wait_for_binary(path):
    for attempt in range(30):
        if os.path.exists(path):
            break
        time.sleep(20)  # the binary may be briefly missing during a rebuild


def run(cmd, timeout):
    t0 = time.time()
    wait_for_binary(cmd[0])
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                           text=True, errors='replace')
        return p.returncode, p.stdout, p.stderr, time.time() - t0
    except subprocess.TimeoutExpired as e:
        def s(x):
            return x.decode(errors='replace') if isinstance(x, bytes) else (x or '')
        return 'timeout', s(e.stdout), s(e.stderr) + f'\n[timeout after {timeout} s]', time.time() - t0


def reduce_changelog(text, key_cols=None):
    """Final multiset of rows; also counts of each kind, retractions of absent rows and the mode.

    A changelog with +U but no -U is an upsert stream: reduced by key_cols (the row's fields are
    split on ', ', which is safe for Nexmark's values: no field holds a comma)."""
    changes = [m.groups() for m in map(CHANGE_RE.match, text.splitlines()) if m]
    kinds = collections.Counter(op for op, _ in changes)
    absent = []
    if kinds['+U'] and not kinds['-U']:
        if not key_cols:
            return collections.Counter(), kinds, ['upsert changelog (+U without -U) but no key known'], 'upsert?'
        state = {}
        for op, row in changes:
            fields = row.split(', ')
            key = tuple(fields[i] for i in key_cols)
            if op in ('+I', '+U'):
                state[key] = row
            elif state.pop(key, None) is None:
                absent.append(f'{op}[{row}]')
        return collections.Counter(state.values()), kinds, absent, 'upsert'
    rows = collections.Counter()
    for op, row in changes:
        if op in ('+I', '+U'):
            rows[row] += 1
        else:
            if rows[row] > 0:
                rows[row] -= 1
                if rows[row] == 0:
                    del rows[row]
            else:
                absent.append(f'{op}[{row}]')
    return rows, kinds, absent, 'retract'


def error_text(rc, out, err):
    lines = [l for l in err.splitlines() if l.strip()]
    errs = [l for l in lines if '[ERROR]' in l or 'Error' in l or 'Exception' in l]
    pick = errs[:3] or lines[-3:] or [l for l in out.splitlines() if 'ERROR' in l][:3]
    return f'rc={rc}: ' + ' | '.join(l.strip()[:400] for l in pick)


def compare_query(name, args, data_dir, work):
    res = {'query': name}
    outs = {}
    for engine in ('tideline', 'flink'):
        script = os.path.join(work, 'scripts', f'{name}.{engine}.sql')
        with open(script, 'w') as f:
            f.write(build_script(name, data_dir, engine))
        cmd = ([args.tideline, '-f', script] if engine == 'tideline'
               else [args.flink, '--parallelism', '1', script])
        print(f'  {name}: running {engine} ...', end='', flush=True)
        rc, out, err, secs = run(cmd, args.timeout)
        print(f' rc={rc} {secs:.1f}s', flush=True)
        base = os.path.join(work, 'out', f'{name}.{engine}')
        with open(base + '.out', 'w') as f:
            f.write(out)
        with open(base + '.err', 'w') as f:
            f.write(err)
        rows, kinds, absent, mode = reduce_changelog(out, UPSERT_KEYS.get(VARIANTS.get(name, name)))
        failed = rc != 0 or '[ERROR]' in err or '[ERROR]' in out
        outs[engine] = rows
        res[engine] = {
            'rc': rc, 'seconds': round(secs, 1), 'changes': dict(kinds), 'mode': mode,
            'final_rows': sum(rows.values()), 'distinct_rows': len(rows),
            'retractions_of_absent_rows': len(absent), 'absent_examples': absent[:5],
            'error': error_text(rc, out, err) if failed else None,
        }
    t, fl = res['tideline'], res['flink']
    if t['error'] or fl['error']:
        res['status'] = 'fails: ' + '+'.join(e for e in ('tideline', 'flink') if res[e]['error'])
    elif outs['tideline'] == outs['flink']:
        res['status'] = 'same'
    else:
        res['status'] = 'differs'
    only_t = outs['tideline'] - outs['flink']
    only_f = outs['flink'] - outs['tideline']
    res['only_tideline'] = sum(only_t.values())
    res['only_flink'] = sum(only_f.values())
    res['only_tideline_examples'] = sorted(only_t.elements())[:args.examples]
    res['only_flink_examples'] = sorted(only_f.elements())[:args.examples]
    if res['status'] == 'same' and (t['final_rows'] == 0):
        res['status'] = 'same (both empty)'
    return res


def fmt_changes(e):
    c = e['changes']
    s = ' '.join(f'{k}:{c[k]}' for k in ('+I', '-U', '+U', '-D') if c.get(k))
    return s + (' upsert' if e.get('mode', 'retract') != 'retract' else '')


def report(results, args, data_dir, nlines, problems, stats, work):
    lines = [f'# Tideline vs Flink on Nexmark ({args.events} events, rate {args.rate}/s, '
             f'seed {args.seed}, base {args.base_time})', '',
             f'events: {data_dir} ({nlines} lines; ' +
             ', '.join(f'{k}={v}' for k, v in sorted(stats.items())) + ')', '']
    if problems:
        lines += ['JSON event file problems:'] + [f'  - {p}' for p in problems] + ['']
    else:
        lines += ['JSON event file: no problems found by the checks', '']
    lines += ['| query | result | Tideline rows (changes) | Flink rows (changes) | only Tideline | only Flink | s T/F |',
              '|---|---|---|---|---|---|---|']
    for r in results:
        if 'skipped' in r:
            lines.append(f"| {r['query']} | skipped: {r['skipped']} | | | | | |")
            continue
        t, f = r['tideline'], r['flink']
        lines.append(f"| {r['query']} | {r['status']} | {t['final_rows']} ({fmt_changes(t)}) | "
                     f"{f['final_rows']} ({fmt_changes(f)}) | {r['only_tideline']} | "
                     f"{r['only_flink']} | {t['seconds']}/{f['seconds']} |")
    lines.append('')
    for r in results:
        if 'skipped' in r or r['status'].startswith('same'):
            continue
        lines.append(f"## {r['query']}: {r['status']}")
        for e in ('tideline', 'flink'):
            if r[e]['error']:
                lines.append(f"{e} error: {r[e]['error']}")
            if r[e]['retractions_of_absent_rows']:
                lines.append(f"{e}: {r[e]['retractions_of_absent_rows']} retractions of rows not present, "
                             f"e.g. {r[e]['absent_examples'][:3]}")
        if r['only_tideline_examples']:
            lines.append(f"only in Tideline ({r['only_tideline']}):")
            lines += [f'    {x}' for x in r['only_tideline_examples']]
        if r['only_flink_examples']:
            lines.append(f"only in Flink ({r['only_flink']}):")
            lines += [f'    {x}' for x in r['only_flink_examples']]
        lines.append('')
    text = '\n'.join(lines) + '\n'
    with open(os.path.join(work, 'report.md'), 'w') as f:
        f.write(text)
    with open(os.path.join(work, 'report.json'), 'w') as f:
        json.dump({'events': args.events, 'rate': args.rate, 'seed': args.seed,
                   'json_problems': problems, 'json_stats': dict(stats), 'results': results}, f, indent=1)
    return text


def qorder(name):
    num, _, rest = name[1:].partition('_')
    return int(num), rest


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--events', type=int, default=100000)
    ap.add_argument('--rate', type=int, default=10000, help="'first-event.rate' (events/s of event time)")
    ap.add_argument('--seed', type=int, default=7)
    ap.add_argument('--base-time', default='2024-01-01 00:00:00')
    ap.add_argument('--only', action='append', default=[],
                    help='run only these queries (repeatable, or comma-separated: q5,q7)')
    ap.add_argument('--workdir', default='/tmp/nexmark-compare')
    ap.add_argument('--tideline', default=DEFAULT_TIDELINE)
    ap.add_argument('--flink', default=DEFAULT_FLINK)
    ap.add_argument('--timeout', type=int, default=1800, help='seconds per engine run')
    ap.add_argument('--examples', type=int, default=5, help='example rows per side in the report')
    ap.add_argument('--regen', action='store_true', help='generate the events again')
    args = ap.parse_args()

    config = f'events{args.events}-rate{args.rate}-seed{args.seed}'
    data_dir = os.path.join(args.workdir, 'data', config)
    work = os.path.join(args.workdir, config)
    for d in (data_dir, os.path.join(work, 'scripts'), os.path.join(work, 'out')):
        os.makedirs(d, exist_ok=True)

    generate_events(args, data_dir, work)
    nlines, problems, stats = check_events(args, data_dir)
    print(f'events: {nlines} JSON lines in {data_dir}; {len(problems)} problem(s)', flush=True)
    for p in problems[:10]:
        print('  ', p)

    names = sorted([f[:-4] for f in os.listdir(QUERIES) if re.fullmatch(r'q\d+\.sql', f)] + list(VARIANTS),
                   key=qorder)
    only = {q.strip() for o in args.only for q in o.split(',') if q.strip()}
    if only:
        names = [n for n in names if n in only]
    results = []
    for name in names:
        if name in SKIP:
            results.append({'query': name, 'skipped': SKIP[name]})
            continue
        r = compare_query(name, args, data_dir, work)
        print(f"  {name}: {r['status']} (Tideline {r['tideline']['final_rows']} rows, "
              f"Flink {r['flink']['final_rows']} rows)", flush=True)
        results.append(r)
    # merge with earlier results of other queries (so --only reruns keep the full report)
    prev_path = os.path.join(work, 'report.json')
    if only and os.path.exists(prev_path):
        prev = {r['query']: r for r in json.load(open(prev_path)).get('results', [])}
        prev.update({r['query']: r for r in results})
        results = sorted(prev.values(), key=lambda r: qorder(r['query']))
    print(report(results, args, data_dir, nlines, problems, stats, work))


if __name__ == '__main__':
    main()
