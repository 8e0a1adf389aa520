// Interop: an upstream killed in the middle of a call, through the gateway (examples/gateway.rs),
// driven by the TypeScript SDK 1.x client over stdio.
//
//   node ts_kill.mjs --victim py|ts --other mt --slow-start-file FILE (--stdio GATEWAY CONFIG [--no-defer])
//
// The victim (py_server.py or ts_server.mjs, started by the gateway with
// UPSTREAM_SLOW_START_FILE=FILE) tells its pid (`whoami`); a slow call to it is started and the
// process is killed (SIGKILL) a second later, with FILE written first so that the gateway's
// restart of it takes a few seconds. Checks: the pending call fails promptly (not a hang) with an
// error naming the upstream; while it is down its tools leave the search (deferred) or the list
// (--no-defer), the clients are told the list changed, a call to it fails at once with "...
// is not available ...", the other upstream keeps working; after the back-off it is back (a new
// process), its tools return and a call works. Prints "ok - ..."/"not ok - ..." lines, then
// "N passed, M failed".

import { writeFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { readFileSync } from 'node:fs';
import { assert, check, short, summary, tally, textOf, watchdog } from '../checks.mjs';

const argv = process.argv.slice(2);
const opt = (name) => {
  const at = argv.indexOf(name);
  return at < 0 ? undefined : argv[at + 1];
};
const victim = opt('--victim') ?? 'py';
const other = opt('--other') ?? 'mt';
const slowStartFile = opt('--slow-start-file');
const listed = argv.includes('--no-defer');
const stdioAt = argv.indexOf('--stdio');
if (stdioAt < 0 || !slowStartFile || !['py', 'ts'].includes(victim)) {
  console.error('usage: node ts_kill.mjs --victim py|ts --other mt --slow-start-file FILE --stdio GATEWAY CONFIG [--no-defer]');
  process.exit(2);
}
watchdog(100_000);
const UPSTREAMS = JSON.parse(readFileSync(new URL('./upstreams.json', import.meta.url), 'utf8'));
const SLOW = { py: 'py_slow_report', ts: 'ts_slow_job' }[victim];
const RESTART_DELAY = 4; // seconds the restarted victim waits before serving
const v = UPSTREAMS[victim];
const o = UPSTREAMS[other];
const p = `kill ${victim} (${listed ? 'listed' : 'deferred'}):`;

const [gateway, config] = argv.slice(stdioAt + 1, stdioAt + 3);
const client = new Client({ name: 'gateway-interop-kill', version: '0.0.0' });
const transport = new StdioClientTransport({ command: gateway, args: [config, ...(listed ? ['--no-defer'] : [])], stderr: 'inherit' });
let listChanged = 0;
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
  listChanged += 1;
});
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function call(name, args, options) {
  const params = listed ? { name, arguments: args } : { name: 'call_tool', arguments: { name, arguments: args } };
  return client.callTool(params, undefined, options);
}
/** The error of a call that failed: its isError text, or the JSON-RPC error's message. */
async function failure(promise) {
  try {
    const result = await promise;
    return result.isError ? textOf(result) || short(result) : null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}
/** The victim's tools the gateway offers now: by the list (listed) or by a search (deferred). */
async function offered(upstream) {
  if (listed) {
    const tools = [];
    let cursor;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return tools.map((t) => t.name).filter((n) => n.startsWith(`${upstream}_`));
  }
  const result = await client.callTool({ name: 'search_tools', arguments: { query: UPSTREAMS[upstream].search, limit: 10 } });
  return (result.structuredContent?.tools ?? []).map((t) => t.name).filter((n) => n.startsWith(`${upstream}_`));
}

await client.connect(transport);

const pid = await check(`${p} ${victim}_whoami gives the upstream's pid`, async () => {
  const result = await call(`${victim}_whoami`, {});
  const pid = Number(textOf(result));
  assert(!result.isError && pid > 1, short(result));
  process.kill(pid, 0); // it exists
  return pid;
});
if (!pid) {
  console.log(summary());
  process.exit(1);
}

// The slow call, then the kill.
const started = Date.now();
let settledAt = 0;
const pending = failure(call(SLOW, { seconds: 30 }, { timeout: 60_000 })).then((why) => {
  settledAt = Date.now();
  return why;
});
await sleep(1000);
writeFileSync(slowStartFile, String(RESTART_DELAY));
const killedAt = Date.now();
process.kill(pid, 'SIGKILL');

await check(`${p} the pending ${SLOW} fails promptly with an error naming the upstream`, async () => {
  const why = await Promise.race([pending, sleep(10_000).then(() => 'HANG')]);
  assert(why !== 'HANG', `still pending 10 s after the kill`);
  assert(why !== null, `the call succeeded after its upstream was killed`);
  const after = (settledAt - killedAt) / 1000;
  assert(after < 3, `failed ${after.toFixed(1)} s after the kill`);
  assert(why.includes(victim), `the error does not name \`${victim}\`: ${why}`);
  console.log(`# ${p} the pending call failed ${after.toFixed(2)} s after the kill (${((settledAt - started) / 1000).toFixed(1)} s after it started): ${why.split('\n')[0]}`);
});

await check(`${p} while down: ${victim}'s tools left the ${listed ? 'list' : 'search'} before the failed call was answered`, async () => {
  // The gateway answers a call that failed with its upstream's connection once that upstream's
  // tools have left: the first search (or listing) after it no longer finds them.
  const tools = await offered(victim);
  assert(tools.length === 0, `still offered: ${short(tools)}`);
});
await check(`${p} while down: a call to ${victim} fails at once, "not available"`, async () => {
  const t0 = Date.now();
  const why = await failure(call(v.tool, v.args));
  const took = Date.now() - t0;
  assert(why !== null, 'the call succeeded');
  assert(/upstream `[a-z]+` .*is not available/.test(why), why);
  assert(took < 1000, `took ${took} ms`);
  console.log(`# ${p} ${why}`);
});
await check(`${p} while down: ${other} still works (search and call)`, async () => {
  const tools = await offered(other);
  assert(listed || tools.includes(o.tool), `${o.tool} not offered: ${short(tools)}`);
  const result = await call(o.tool, o.args);
  assert(!result.isError && textOf(result).includes(o.text ?? ''), short(result));
});
await check(`${p} the client was told the tool list changed`, async () => {
  assert(listChanged > 0, 'no notifications/tools/list_changed');
});

// Back after the back-off (0.5 s) and its slow start.
const changesBefore = listChanged;
const back = await check(`${p} ${victim} is back within 15 s: a new process, its tools offered again`, async () => {
  const deadline = Date.now() + 15_000;
  let last = '';
  while (Date.now() < deadline) {
    const result = await call(`${victim}_whoami`, {}).catch((e) => ({ isError: true, content: [{ type: 'text', text: e.message }] }));
    if (!result.isError) {
      const now = Number(textOf(result));
      assert(now !== pid, `the same pid ${pid}`);
      const tools = await offered(victim);
      if (tools.includes(v.tool)) {
        console.log(`# ${p} back after ${((Date.now() - killedAt) / 1000).toFixed(1)} s (pid ${pid} -> ${now})`);
        return true;
      }
      last = `offered ${short(tools)}`;
    } else {
      last = textOf(result);
    }
    await sleep(250);
  }
  throw new Error(`not back: ${last}`);
});
if (back) {
  await check(`${p} after the restart: a call to ${v.tool} works`, async () => {
    const result = await call(v.tool, v.args);
    assert(!result.isError && JSON.stringify(result.structuredContent) === JSON.stringify(v.structured), short(result));
  });
  await check(`${p} after the restart: the client was told the list changed again`, async () => {
    await sleep(100);
    assert(listChanged > changesBefore, 'no notifications/tools/list_changed after the restart');
  });
}

await client.close();
console.log(summary());
process.exit(tally.failed ? 1 : 0);
