// Turns the output of the official conformance suite into interop check lines.
//
//   node conformance_report.mjs SUITE OUTPUT_FILE RESULTS_DIR EXIT_STATUS [--total N] [--require NAME]...
//     [--unscored-failure NAME]... [--known-failure NAME]...
//
// OUTPUT_FILE is what `conformance server --suite SUITE -o RESULTS_DIR` (or `conformance client
// ... -o RESULTS_DIR`: its "=== SUITE SUMMARY ===", warnings counted in its lines and "Total",
// results of `auth/NAME` in RESULTS_DIR/auth/; or `conformance server --scenario NAME -o
// RESULTS_DIR`, several such runs one after another) printed, EXIT_STATUS its exit status. A
// --unscored-failure NAME is a scenario the suite runs but does not score (listed under "Not
// scored for ...") that is known to fail: its failure is a comment, and its failed checks do
// not count against "Total"; failing while scored, it fails. A --known-failure NAME is a scored
// scenario known to fail for a reason the caller states (scripts/test-redis-nginx.sh: what the
// instances behind a load balancer do not share yet): its failure is a comment and its failed
// checks do not count against "Total" (nor does the suite's exit status 1); passing, it fails,
// so that the list is shortened when the reason is gone.
// Prints "ok - conformance SUITE: SCENARIO (N checks)" per passing scenario and
// "not ok - conformance SUITE: SCENARIO: ..." with each failed check's message (read from
// RESULTS_DIR/*/checks.json) per failing one; then a check of the "Total: N passed, M failed" line
// (M must be 0 and, with --total, N must be exactly that), one per --require'd scenario that must
// have passed checks (a failure only), and of the exit status (a failure only). Scenarios that report no check at all are
// listed as comments. Ends with "N passed, M failed"; exits 1 when any check failed.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const [suite, outputFile, resultsDir, exitStatusArg, ...rest] = process.argv.slice(2);
let expectTotal;
const required = [];
const knownUnscored = [];
const knownScored = [];
for (let i = 0; i < rest.length; i++) {
  if (rest[i] === '--total') expectTotal = Number(rest[++i]);
  else if (rest[i] === '--require') required.push(rest[++i]);
  else if (rest[i] === '--unscored-failure') knownUnscored.push(rest[++i]);
  else if (rest[i] === '--known-failure') knownScored.push(rest[++i]);
}
const exitStatus = Number(exitStatusArg);

let passed = 0;
let failed = 0;
const ok = (name) => {
  passed += 1;
  console.log(`ok - conformance ${suite}: ${name}`);
};
const notOk = (name, reason) => {
  failed += 1;
  console.log(`not ok - conformance ${suite}: ${name}: ${String(reason).replace(/\s*\n\s*/g, ' ')}`);
};

// eslint-disable-next-line no-control-regex
const text = existsSync(outputFile) ? readFileSync(outputFile, 'utf8').replace(/\x1b\[[0-9;]*m/g, '') : '';
const lines = text.split('\n').map((l) => l.trimEnd());

/** The failed checks of one scenario, from the results directory the suite wrote. */
function failures(scenario) {
  const found = [];
  // Named "<side>-<scenario>-<timestamp>", e.g. server-tools-call-simple-text-2026-11-29T21-09-20-063Z,
  // or (client scenarios) "<scenario>-<timestamp>", auth/NAME's in auth/.
  const slash = scenario.lastIndexOf('/');
  const parent = join(resultsDir, scenario.slice(0, slash + 1));
  const name = scenario.slice(slash + 1).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  if (!existsSync(parent)) return found;
  for (const dir of readdirSync(parent)) {
    if (!new RegExp(`^(?:[a-z]+-)?${name}-\\d{4}-`).test(dir)) continue;
    const file = join(parent, dir, 'checks.json');
    if (!existsSync(file)) continue;
    try {
      for (const c of JSON.parse(readFileSync(file, 'utf8'))) {
        if (c.status === 'FAILURE') found.push(`${c.name}: ${c.errorMessage ?? c.description ?? ''}`);
      }
    } catch (err) {
      found.push(`unreadable ${file}: ${err.message}`);
    }
  }
  return found;
}

// The scenarios run but not scored ("Not scored for REV: ..." then "  ✓ NAME (why)" lines).
const unscored = new Map();
const unscoredAt = lines.findIndex((l) => l.startsWith('Not scored for '));
for (const line of unscoredAt < 0 ? [] : lines.slice(unscoredAt + 1)) {
  const m = /^\s+[✓✗]\s+(\S+) \((.+)\)$/.exec(line);
  if (m) unscored.set(m[1], m[2]);
}

// Runs of single scenarios (`conformance server --scenario NAME`, one after another in
// OUTPUT_FILE) print no summary: each starts with "Running client scenario 'NAME' …" and ends
// with "Passed: P/N, F failed, W warnings". They are read as the summary and "Total" lines a
// suite run prints.
const singleRuns = [];
let running;
for (const line of lines) {
  const start = /^Running client scenario '([^']+)'/.exec(line);
  if (start) running = start[1];
  const end = /^Passed: (\d+)\/\d+, (\d+) failed, (\d+) warnings?$/.exec(line);
  if (end && running) {
    const [p, f, w] = end.slice(1).map(Number);
    singleRuns.push({ line: `${f === 0 ? '✓' : '✗'} ${running}: ${p} passed, ${f} failed, ${w} warnings`, p, f });
    running = undefined;
  }
}

const scenarios = new Map();
let knownFailed = 0;
let knownScoredFailed = 0;
const summaryAt = lines.findIndex((l) => l === '=== SUMMARY ===' || l === '=== SUITE SUMMARY ===');
const summary = summaryAt < 0 ? singleRuns.map((r) => r.line) : lines.slice(summaryAt + 1);
if (summaryAt < 0 && singleRuns.length > 0 && !lines.some((l) => l.startsWith('Total: '))) {
  const sum = (key) => singleRuns.reduce((n, r) => n + r[key], 0);
  lines.push(`Total: ${sum('p')} passed, ${sum('f')} failed`);
}
for (const line of summary) {
  const m = /^([✓✗])\s+(\S+): (\d+) passed, (\d+) failed(?:, (\d+) warnings?)?$/.exec(line);
  if (!m) continue;
  const [, mark, name, p, f, w] = m;
  const checks = { passed: Number(p), failed: Number(f), warnings: Number(w ?? 0) };
  scenarios.set(name, checks);
  if ((checks.failed > 0 || mark === '✗') && knownUnscored.includes(name) && unscored.has(name)) {
    knownFailed += checks.failed;
    console.log(
      `# conformance ${suite}: ${name} (not scored: ${unscored.get(name)}) fails, as known: ` +
        `${checks.passed} passed, ${checks.failed} failed — ${failures(name).join('; ').replace(/\s*\n\s*/g, ' ')}`,
    );
  } else if ((checks.failed > 0 || mark === '✗') && knownScored.includes(name)) {
    knownFailed += checks.failed;
    knownScoredFailed += 1;
    console.log(
      `# conformance ${suite}: ${name} fails, as known: ${checks.passed} passed, ${checks.failed} failed — ` +
        `${failures(name).join('; ').replace(/\s*\n\s*/g, ' ')}`,
    );
  } else if (checks.failed > 0 || mark === '✗') {
    const why = failures(name);
    const warned = checks.warnings ? `, ${checks.warnings} warnings` : '';
    notOk(name, `${checks.passed} passed, ${checks.failed} failed${warned}${why.length ? ` — ${why.join('; ')}` : ''}`);
  } else if (checks.passed === 0) {
    console.log(`# conformance ${suite}: ${name} reports no check (0 passed, 0 failed)`);
  } else {
    const req = required.includes(name) ? ', required' : '';
    ok(`${name} (${checks.passed} check${checks.passed === 1 ? '' : 's'}${req})`);
  }
}

const total = lines.map((l) => /^Total: (\d+) passed, (\d+) failed(?:, \d+ warnings?)?$/.exec(l)).find(Boolean);
if (!total) {
  notOk('Total line', 'no "Total: N passed, M failed" line; the last lines were:');
  for (const l of lines.filter((x) => x.trim() !== '').slice(-15)) console.log(`#   ${l}`);
} else {
  const [p, all] = [Number(total[1]), Number(total[2])];
  // The failed checks of known failures do not count.
  const f = all - knownFailed;
  const known = knownFailed ? ` (and ${knownFailed} of known failures)` : '';
  const want = expectTotal === undefined ? `${p}` : `${expectTotal}`;
  if (f === 0 && (expectTotal === undefined || p === expectTotal)) ok(`Total: ${p} passed, ${f} failed${known}`);
  else notOk('Total', `"Total: ${p} passed, ${all} failed"${known}, wanted "Total: ${want} passed, 0 failed"`);
}

for (const name of knownUnscored) {
  if (scenarios.has(name) && !unscored.has(name)) notOk(`${name} (known failure)`, 'is scored: it must pass');
}

for (const name of knownScored) {
  const s = scenarios.get(name);
  if (s && s.failed === 0 && s.passed > 0) notOk(`${name} (known failure)`, 'passes now: drop it from the known failures');
}

for (const name of required) {
  const s = scenarios.get(name);
  if (!s) notOk(`${name} (required)`, 'not in the summary');
  else if (s.passed === 0 && s.failed === 0) notOk(`${name} (required)`, 'reported no check');
}

// The suite exits 1 on any failure: a non-zero status with everything above passing is odd too.
if (exitStatus !== 0 && failed === 0 && knownScoredFailed === 0) notOk('exit status', `the suite exited ${exitStatus}`);

console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed === 0 ? 0 : 1;
