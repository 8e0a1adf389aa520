// The check harness shared by the interop clients: one "ok - name" / "not ok - name: why" line
// per check, and the closing "N passed, M failed" line the interop script sums.

export const tally = { passed: 0, failed: 0 };

export function pass(name) {
  tally.passed += 1;
  console.log(`ok - ${name}`);
}

export function fail(name, reason) {
  tally.failed += 1;
  console.log(`not ok - ${name}: ${String(reason).replace(/\s*\n\s*/g, ' ').slice(0, 600)}`);
}

/** Runs `fn`; it passes unless it throws. Returns fn's value (undefined on failure). */
export async function check(name, fn) {
  try {
    const value = await fn();
    pass(name);
    return value;
  } catch (err) {
    fail(name, err instanceof Error ? `${err.name}: ${err.message}` : err);
    return undefined;
  }
}

export function assert(cond, message) {
  if (!cond) throw new Error(message);
}

/** The closing line. */
export function summary() {
  return `${tally.passed} passed, ${tally.failed} failed`;
}

/** A value as short JSON, for failure messages. */
export function short(value) {
  const s = JSON.stringify(value);
  return s === undefined ? String(value) : s.length > 400 ? `${s.slice(0, 400)}…` : s;
}

/** All the text of a CallToolResult's text blocks, joined. */
export function textOf(result) {
  return (result?.content ?? [])
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
}

/** Fails the run (and ends it) if it is still going after `ms`: a request that got no answer. */
export function watchdog(ms) {
  setTimeout(() => {
    fail('whole run finishes in time', `still running after ${ms / 1000} s (a request got no answer?)`);
    console.log(summary());
    process.exit(1);
  }, ms).unref();
}
