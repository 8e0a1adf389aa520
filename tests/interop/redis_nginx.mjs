// Tasks and events across three `everything --redis URL` instances behind a round-robin nginx
// (scripts/test-redis-nginx.sh), by hand with fetch: every request goes through nginx, which
// names the instance that answered in an X-Upstream header; a check passes only when the request
// it is about landed on another instance than the one holding the state.
//
//   node redis_nginx.mjs http://127.0.0.1:PORT/mcp HOST:PORT,HOST:PORT,HOST:PORT
//
// 2026-07-28 requests carry the envelope (`_meta`: protocol version, client capabilities with
// the tasks extension `io.modelcontextprotocol/tasks`, client info) and the headers the
// revision requires (MCP-Protocol-Version, Mcp-Method, Mcp-Name).
// Prints "ok - ..."/"not ok - ..." lines, then "N passed, M failed"; exits 1 when any failed.

const [url, upstreamList] = process.argv.slice(2);
const upstreams = (upstreamList || '').split(',').filter(Boolean);
const REV = '2026-07-28';
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

let passed = 0;
let failed = 0;
const ok = (name) => {
  passed += 1;
  console.log(`ok - ${name}`);
};
const notOk = (name, why) => {
  failed += 1;
  console.log(`not ok - ${name}: ${String(why).replace(/\s*\n\s*/g, ' ').slice(0, 600)}`);
};
const check = (name, cond, why) => (cond ? ok(name) : notOk(name, why));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const short = (addr) => (addr || '?').replace(/^127\.0\.0\.1:/, ':');

/** Reads JSON-RPC messages from an SSE (or JSON) response body as they arrive. */
class Messages {
  constructor(response) {
    this.response = response;
    this.upstream = response.headers.get('x-upstream');
    this.queue = [];
    this.waiters = [];
    this.done = false;
    this.pump();
  }
  async pump() {
    const decoder = new TextDecoder();
    let buffer = '';
    const json = !(this.response.headers.get('content-type') || '').includes('text/event-stream');
    try {
      for await (const chunk of this.response.body) {
        buffer += decoder.decode(chunk, { stream: true });
        if (json) continue;
        let end;
        while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
          const data = event
            .split(/\r?\n/)
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).replace(/^ /, ''))
            .join('\n');
          if (data.trim()) this.push(JSON.parse(data));
        }
      }
      if (json && buffer.trim()) this.push(JSON.parse(buffer));
    } catch (err) {
      if (err.name !== 'AbortError') this.error = err;
    }
    this.done = true;
    for (const w of this.waiters.splice(0)) w();
  }
  push(message) {
    this.queue.push(message);
    for (const w of this.waiters.splice(0)) w();
  }
  /** The first message (now or later) for which `pred` holds, or null after `ms`. */
  async find(pred, ms) {
    const deadline = Date.now() + ms;
    for (;;) {
      const i = this.queue.findIndex(pred);
      if (i >= 0) return this.queue.splice(i, 1)[0];
      if (this.done || Date.now() >= deadline) return null;
      await Promise.race([new Promise((r) => this.waiters.push(r)), sleep(deadline - Date.now())]);
    }
  }
}

let nextId = 1;
const streams = [];

/** POSTs one JSON-RPC message through nginx; `extra` headers are added. */
async function post(message, extra = {}, signal) {
  return fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      ...extra,
    },
    body: JSON.stringify(message),
    signal,
  });
}

/** A 2026-07-28 request (envelope and headers); resolves to { upstream, status, result, error }. */
async function rpc(method, params = {}, { name, capabilities = TASKS } = {}) {
  const id = nextId++;
  const headers = { 'MCP-Protocol-Version': REV, 'Mcp-Method': method };
  if (name !== undefined) headers['Mcp-Name'] = name;
  const body = {
    jsonrpc: '2.0',
    id,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': REV,
        'io.modelcontextprotocol/clientCapabilities': capabilities,
        'io.modelcontextprotocol/clientInfo': { name: 'redis_nginx.mjs', version: '1.0.0' },
      },
    },
  };
  const response = await post(body, headers);
  const messages = new Messages(response);
  const answer = await messages.find((m) => m.id === id, 30_000);
  return { upstream: messages.upstream, status: response.status, result: answer?.result, error: answer?.error ?? (answer ? undefined : 'no answer') };
}

/** Opens a 2026-07-28 listen stream through nginx; resolves once acknowledged. */
async function listen(notifications) {
  const id = nextId++;
  const controller = new AbortController();
  const response = await post(
    {
      jsonrpc: '2.0',
      id,
      method: 'subscriptions/listen',
      params: {
        notifications,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': REV,
          'io.modelcontextprotocol/clientCapabilities': TASKS,
          'io.modelcontextprotocol/clientInfo': { name: 'redis_nginx.mjs', version: '1.0.0' },
        },
      },
    },
    { 'MCP-Protocol-Version': REV, 'Mcp-Method': 'subscriptions/listen' },
    controller.signal,
  );
  const stream = new Messages(response);
  stream.close = () => controller.abort();
  streams.push(stream);
  stream.ack = await stream.find((m) => m.method === 'notifications/subscriptions/acknowledged', 10_000);
  return stream;
}

/** Polls tasks/get through nginx until `until(status)`; returns the last answer and the instances that answered. */
async function poll(taskId, until, ms) {
  const seen = new Map();
  const deadline = Date.now() + ms;
  let last;
  while (Date.now() < deadline) {
    last = await rpc('tasks/get', { taskId }, { name: taskId });
    seen.set(last.upstream, last.result?.status ?? JSON.stringify(last.error));
    if (last.result && until(last.result.status)) break;
    await sleep(150);
  }
  return { last, seen };
}

async function main() {
  // --- server/discover: the extension is offered through the proxy ---------------------------
  const discovered = await rpc('server/discover', {});
  check(
    'server/discover through nginx offers the tasks extension',
    discovered.result?.capabilities?.extensions?.['io.modelcontextprotocol/tasks'] !== undefined,
    JSON.stringify(discovered),
  );

  // --- a task started on one instance, polled to its result through the others ---------------
  const t0 = Date.now();
  const started = await rpc('tools/call', { name: 'slow_compute', arguments: { seconds: 2, label: 'nginx' } }, { name: 'slow_compute' });
  const task = started.result;
  if (task?.resultType !== 'task' || !task.taskId) {
    notOk('slow_compute with the tasks extension becomes a task', JSON.stringify(started));
  } else {
    ok(`slow_compute (2 s) with the tasks extension becomes a task on ${short(started.upstream)} (status ${task.status})`);
    const { last, seen } = await poll(task.taskId, (s) => ['completed', 'failed', 'cancelled'].includes(s), 20_000);
    const others = [...seen.keys()].filter((u) => u !== started.upstream);
    const seenText = [...seen].map(([u, s]) => `${short(u)} ${s}`).join(', ');
    check(
      `tasks/get through nginx reached the other instances (${others.length} of ${upstreams.length - 1}: ${seenText})`,
      others.length === upstreams.length - 1 && others.every((u) => seen.get(u) !== undefined && !/error|code/i.test(seen.get(u))),
      seenText,
    );
    const text = last?.result?.result?.content?.[0]?.text;
    check(
      `the task completed and its result was read through ${short(last?.upstream)} after ${((Date.now() - t0) / 1000).toFixed(1)} s`,
      last?.result?.status === 'completed' && text === 'slow_compute(nginx) done after 2s',
      JSON.stringify(last),
    );
  }

  // --- a long task cancelled through another instance ---------------------------------------
  const long = await rpc('tools/call', { name: 'slow_compute', arguments: { seconds: 60, label: 'long' } }, { name: 'slow_compute' });
  if (long.result?.resultType !== 'task') {
    notOk('slow_compute (60 s) becomes a task', JSON.stringify(long));
  } else {
    const id = long.result.taskId;
    await sleep(300);
    const c0 = Date.now();
    const cancel = await rpc('tasks/cancel', { taskId: id }, { name: id });
    check(
      `tasks/cancel through nginx landed on another instance (${short(cancel.upstream)}, task on ${short(long.upstream)}) and was accepted`,
      cancel.upstream !== long.upstream && !cancel.error,
      JSON.stringify(cancel),
    );
    const { last, seen } = await poll(id, (s) => s !== 'working', 10_000);
    const seenText = [...seen].map(([u, s]) => `${short(u)} ${s}`).join(', ');
    check(
      `the 60 s task reads cancelled through every instance within ${((Date.now() - c0) / 1000).toFixed(1)} s (${seenText})`,
      last?.result?.status === 'cancelled',
      JSON.stringify(last),
    );
    // Later reads, from all three, still say cancelled (the running instance stopped it, not
    // completing it afterwards).
    await sleep(500);
    const later = [];
    for (let i = 0; i < upstreams.length; i++) later.push(await rpc('tasks/get', { taskId: id }, { name: id }));
    check(
      'still cancelled on every instance half a second later',
      later.every((r) => r.result?.status === 'cancelled') && new Set(later.map((r) => r.upstream)).size === upstreams.length,
      JSON.stringify(later.map((r) => [r.upstream, r.result?.status])),
    );
  }

  // --- a task's status on a listen stream held by another instance ---------------------------
  const watched = await rpc('tools/call', { name: 'slow_compute', arguments: { seconds: 1.5, label: 'heard' } }, { name: 'slow_compute' });
  if (watched.result?.resultType !== 'task') {
    notOk('slow_compute (1.5 s) becomes a task', JSON.stringify(watched));
  } else {
    const stream = await listen({ taskIds: [watched.result.taskId] });
    const heard = stream.ack
      ? await stream.find((m) => m.method === 'notifications/tasks' && m.params?.status === 'completed', 15_000)
      : null;
    check(
      `notifications/tasks (completed, with the result) reached a listen stream on ${short(stream.upstream)} for a task on ${short(watched.upstream)}`,
      stream.ack && heard && stream.upstream !== watched.upstream && heard.params.result?.content?.[0]?.text === 'slow_compute(heard) done after 1.5s',
      JSON.stringify({ ack: stream.ack, heard, error: stream.error?.message }),
    );
    stream.close();
  }

  // --- a run-time tool change reaching a listener on another instance (2026-07-28) -----------
  {
    const stream = await listen({ toolsListChanged: true });
    const trigger = await rpc('tools/call', { name: 'test_trigger_tool_change', arguments: {} }, { name: 'test_trigger_tool_change' });
    const heard = stream.ack ? await stream.find((m) => m.method === 'notifications/tools/list_changed', 10_000) : null;
    check(
      `notifications/tools/list_changed reached a listen stream on ${short(stream.upstream)} after a tool was added on ${short(trigger.upstream)}`,
      stream.ack && heard && trigger.result && !trigger.result.isError && stream.upstream !== trigger.upstream,
      JSON.stringify({ ack: stream.ack, heard, trigger }),
    );
    // Once, not once per instance: the two others did not change their catalogs.
    const again = await stream.find((m) => m.method === 'notifications/tools/list_changed', 1_000);
    check('the listener heard that change once', !again, JSON.stringify(again));
    stream.close();
  }

  // --- the same through a 2025-11-25 session: its GET stream on one instance -----------------
  {
    const init = await post(
      { jsonrpc: '2.0', id: nextId++, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'redis_nginx.mjs', version: '1.0.0' } } },
    );
    const session = init.headers.get('mcp-session-id');
    const initAnswer = await new Messages(init).find((m) => m.result || m.error, 10_000);
    if (!session || !initAnswer?.result) {
      notOk('2025-11-25: initialize through nginx issues a session', JSON.stringify({ status: init.status, initAnswer }));
    } else {
      const h = { 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-11-25' };
      const initialized = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, h);
      await initialized.text();
      const controller = new AbortController();
      const get = await fetch(url, { method: 'GET', headers: { ...h, Accept: 'text/event-stream' }, signal: controller.signal });
      const stream = new Messages(get);
      stream.close = () => controller.abort();
      streams.push(stream);
      await sleep(300); // the stream is registered once its headers are sent
      const id = nextId++;
      const trigger = await post({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'test_trigger_tool_change', arguments: {} } }, h);
      const triggerAnswer = await new Messages(trigger).find((m) => m.id === id, 10_000);
      const heard = await stream.find((m) => m.method === 'notifications/tools/list_changed', 10_000);
      const where = new Set([init.headers.get('x-upstream'), initialized.headers.get('x-upstream'), get.headers.get('x-upstream'), trigger.headers.get('x-upstream')]);
      check(
        `2025-11-25: a session initialized on ${short(init.headers.get('x-upstream'))} hears on its GET stream (${short(get.headers.get('x-upstream'))}) a tool added by its call on ${short(trigger.headers.get('x-upstream'))}`,
        get.status === 200 && heard && triggerAnswer?.result && !triggerAnswer.result.isError && get.headers.get('x-upstream') !== trigger.headers.get('x-upstream') && where.size === 3,
        JSON.stringify({ get: get.status, heard, triggerAnswer, where: [...where] }),
      );
      stream.close();
      const del = await fetch(url, { method: 'DELETE', headers: h });
      const after = await post({ jsonrpc: '2.0', id: nextId++, method: 'ping' }, h);
      await after.text();
      check(
        `2025-11-25: DELETE through ${short(del.headers.get('x-upstream'))} ends the session on ${short(after.headers.get('x-upstream'))} too (404)`,
        del.status < 300 && after.status === 404 && del.headers.get('x-upstream') !== after.headers.get('x-upstream'),
        `DELETE ${del.status}, then ping ${after.status}`,
      );
    }
  }
}

try {
  await main();
} catch (err) {
  notOk('redis_nginx.mjs ran to the end', err.stack || err);
}
for (const s of streams) s.close?.();
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
