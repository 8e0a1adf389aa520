// Turns the output of the official conformance suite into interop check lines.
//
//   node conformance_report.mjs SUITE OUTPUT_FILE RESULTS_DIR EXIT_STATUS [--total N] [--require NAME]...
//
// OUTPUT_FILE is what `conformance server --suite SUITE -o RESULTS_DIR` printed, EXIT_STATUS its
// exit status. Prints "ok - conformance SUITE: SCENARIO (N checks)" per passing scenario and
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
for (let i = 0; i < rest.length; i++) {
  if (rest[i] === '--total') expectTotal = Number(rest[++i]);
  else if (rest[i] === '--require') required.push(rest[++i]);
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
  if (!existsSync(resultsDir)) return found;
  for (const dir of readdirSync(resultsDir)) {
    // Named "<side>-<scenario>-<timestamp>", e.g. server-tools-call-simple-text-2026-11-29T21-09-20-063Z.
    if (!new RegExp(`^[a-z]+-${scenario.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-\\d{4}-`).test(dir)) continue;
    const file = join(resultsDir, dir, 'checks.json');
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

const scenarios = new Map();
const summaryAt = lines.indexOf('=== SUMMARY ===');
for (const line of summaryAt < 0 ? [] : lines.slice(summaryAt + 1)) {
  const m = /^([✓✗])\s+(\S+): (\d+) passed, (\d+) failed$/.exec(line);
  if (!m) continue;
  const [, mark, name, p, f] = m;
  const checks = { passed: Number(p), failed: Number(f) };
  scenarios.set(name, checks);
  if (checks.failed > 0 || mark === '✗') {
    const why = failures(name);
    notOk(name, `${checks.passed} passed, ${checks.failed} failed${why.length ? ` — ${why.join('; ')}` : ''}`);
  } else if (checks.passed === 0) {
    console.log(`# conformance ${suite}: ${name} reports no check (0 passed, 0 failed)`);
  } else {
    const req = required.includes(name) ? ', required' : '';
    ok(`${name} (${checks.passed} check${checks.passed === 1 ? '' : 's'}${req})`);
  }
}

const total = lines.map((l) => /^Total: (\d+) passed, (\d+) failed$/.exec(l)).find(Boolean);
if (!total) {
  notOk('Total line', 'no "Total: N passed, M failed" line; the last lines were:');
  for (const l of lines.filter((x) => x.trim() !== '').slice(-15)) console.log(`#   ${l}`);
} else {
  const [p, f] = [Number(total[1]), Number(total[2])];
  const want = expectTotal === undefined ? `${p}` : `${expectTotal}`;
  if (f === 0 && (expectTotal === undefined || p === expectTotal)) ok(`Total: ${p} passed, ${f} failed`);
  else notOk('Total', `"Total: ${p} passed, ${f} failed", wanted "Total: ${want} passed, 0 failed"`);
}

for (const name of required) {
  const s = scenarios.get(name);
  if (!s) notOk(`${name} (required)`, 'not in the summary');
  else if (s.passed === 0 && s.failed === 0) notOk(`${name} (required)`, 'reported no check');
}

// The suite exits 1 on any failure: a non-zero status with everything above passing is odd too.
if (exitStatus !== 0 && failed === 0) notOk('exit status', `the suite exited ${exitStatus}`);

console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed === 0 ? 0 : 1;
