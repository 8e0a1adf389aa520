// Interop: the TypeScript SDK's clients, 1.x (`@modelcontextprotocol/sdk`, 2025-11-25) or 2.x
// (`@modelcontextprotocol/client`, versionNegotiation auto: 2026-07-28), driving the gateway
// (examples/gateway.rs) in front of real upstreams: an mcp-tools server, a TypeScript SDK server
// and a Python SDK server (see upstreams.json).
//
//   node ts_gateway.mjs --sdk 1|2 --upstreams mt,ts,py[,web] (--stdio GATEWAY CONFIG [--no-defer] | --http URL [--no-defer])
//
// `--no-defer` says the gateway lists every tool (it is passed on to a stdio gateway; an HTTP
// gateway must have been started with it). Checks, per upstream: a natural request finds its tool
// (deferred) or the list has it (listed), a call through `call_tool` (deferred) or by its
// prefixed name (listed) with its structured output, progress forwarded, a resource read and a
// prompt got by their namespaced names. Prints "ok - ..."/"not ok - ..." lines, then
// "N passed, M failed".

import { assert, check, short, summary, tally, textOf, watchdog } from '../checks.mjs';
import { readFileSync } from 'node:fs';

const UPSTREAMS = JSON.parse(readFileSync(new URL('./upstreams.json', import.meta.url), 'utf8'));

/** `a` and `b` are equal as JSON values. */
function sameJson(a, b) {
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return a === b;
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && sameJson(a[k], b[k]));
}

const argv = process.argv.slice(2);
const opt = (name) => {
  const at = argv.indexOf(name);
  return at < 0 ? undefined : argv[at + 1];
};
const sdk = opt('--sdk') ?? '1';
const names = (opt('--upstreams') ?? 'mt,ts,py').split(',');
const listed = argv.includes('--no-defer');
const stdioAt = argv.indexOf('--stdio');
const url = opt('--http');
if ((stdioAt < 0 && !url) || !['1', '2'].includes(sdk)) {
  console.error('usage: node ts_gateway.mjs --sdk 1|2 --upstreams mt,ts,py (--stdio GATEWAY CONFIG | --http URL) [--no-defer]');
  process.exit(2);
}
watchdog(100_000);

const LEGACY = '2025-11-25';
const MODERN = '2026-07-28';
const where = url ? `http` : 'stdio';
const p = `ts-sdk-${sdk} ${where} ${listed ? 'listed' : 'deferred'}:`;

let client;
let transport;
if (sdk === '1') {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  client = new Client({ name: 'gateway-interop-ts1', version: '0.0.0' });
  if (url) {
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    transport = new StreamableHTTPClientTransport(new URL(url));
  }
} else {
  const { Client } = await import('@modelcontextprotocol/client');
  client = new Client({ name: 'gateway-interop-ts2', version: '0.0.0' }, { versionNegotiation: { mode: 'auto' } });
  if (url) {
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
    transport = new StreamableHTTPClientTransport(new URL(url));
  }
}
if (!url) {
  const [gateway, config] = argv.slice(stdioAt + 1, stdioAt + 3);
  const args = [config, ...(listed ? ['--no-defer'] : [])];
  const { StdioClientTransport } =
    sdk === '1' ? await import('@modelcontextprotocol/sdk/client/stdio.js') : await import('@modelcontextprotocol/client/stdio');
  transport = new StdioClientTransport({ command: gateway, args, stderr: 'inherit' });
}

const connected = await check(`${p} connect to the gateway`, async () => {
  await client.connect(transport);
  return true;
});
if (!connected) {
  console.log(summary());
  process.exit(1);
}

await check(`${p} speaks ${sdk === '1' ? LEGACY : MODERN}`, async () => {
  const version = sdk === '1' ? transport.protocolVersion ?? client.getNegotiatedProtocolVersion?.() : client.getNegotiatedProtocolVersion();
  if (sdk === '2') assert(version === MODERN, `negotiated ${version}`);
  assert(client.getServerVersion()?.name === 'mcp-tools-gateway', short(client.getServerVersion()));
});

/** Every tool of the gateway's list, page after page. */
async function allTools() {
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

const tools = await check(`${p} tools/list parsed by the SDK`, async () => {
  const tools = await allTools();
  const names = tools.map((t) => t.name);
  if (listed) {
    assert(!names.includes('search_tools'), `search_tools listed with --no-defer: ${short(names)}`);
  } else {
    for (const meta of ['search_tools', 'describe_tools', 'call_tool']) assert(names.includes(meta), `${meta} not in ${short(names)}`);
    assert(names.length <= 5, `deferred list has ${names.length} tools: ${short(names)}`);
  }
  return tools;
});

/** Calls an upstream's tool: by its name (listed) or through call_tool (deferred). */
async function call(name, args, meta) {
  const params = listed ? { name, arguments: args } : { name: 'call_tool', arguments: { name, arguments: args } };
  return client.callTool(meta ? { ...params, _meta: meta } : params);
}

// Progress is asked for with a token of our own and heard by a notification handler: both SDKs'
// `onprogress` lose notifications (1.x drops the last one when it arrives in the same read as
// the result: its notification handlers run a microtask later, after the response has removed
// the token's handler; 2.x sends no progressToken at all in 2026-07-28).
const progress = new Map();
const onProgress = (n) => {
  const list = progress.get(n.params.progressToken);
  if (list) list.push(n.params.progress);
};
if (sdk === '1') {
  const { ProgressNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
  client.setNotificationHandler(ProgressNotificationSchema, onProgress);
} else {
  client.setNotificationHandler('notifications/progress', onProgress);
}

for (const name of names) {
  const u = UPSTREAMS[name];
  if (listed) {
    await check(`${p} ${name}: ${u.tool} and ${u.progress.tool} listed`, async () => {
      const found = (tools ?? []).map((t) => t.name);
      for (const tool of [u.tool, u.progress.tool]) assert(found.includes(tool), `${tool} not in ${short(found)}`);
      if (u.structured) {
        const def = tools.find((t) => t.name === u.tool);
        assert(def.outputSchema?.type === 'object', `${u.tool} has no outputSchema: ${short(def)}`);
      }
    });
  } else {
    await check(`${p} ${name}: search_tools "${u.search}" finds ${u.tool}`, async () => {
      const result = await client.callTool({ name: 'search_tools', arguments: { query: u.search, limit: 5 } });
      const found = (result.structuredContent?.tools ?? []).map((t) => t.name);
      assert(found.slice(0, 3).includes(u.tool), `top 3: ${short(found)}`);
    });
    await check(`${p} ${name}: describe_tools ${u.tool} gives its input schema`, async () => {
      const result = await client.callTool({ name: 'describe_tools', arguments: { names: [u.tool] } });
      const text = JSON.stringify(result.structuredContent ?? textOf(result));
      assert(!result.isError && text.includes(u.tool) && text.includes('inputSchema'), short(result));
    });
  }
  await check(`${p} ${name}: call ${u.tool}${listed ? '' : ' through call_tool'}${u.structured ? ', structured output preserved' : ''}`, async () => {
    const result = await call(u.tool, u.args);
    assert(!result.isError, short(result));
    // The answer is the gateway's: an upstream's own identity (a 2026-07-28 server names itself
    // in every result's _meta) is not passed on.
    const identity = result._meta?.['io.modelcontextprotocol/serverInfo'];
    assert(identity === undefined, `the upstream's serverInfo passed on: ${short(identity)}`);
    if (u.structured) {
      assert(sameJson(result.structuredContent, u.structured), `structuredContent ${short(result.structuredContent)}`);
      assert(sameJson(JSON.parse(textOf(result)), u.structured), `text ${short(textOf(result))}`);
    } else {
      assert(textOf(result) === u.text, short(result));
    }
  });
  await check(`${p} ${name}: progress of ${u.progress.tool} forwarded (${u.progress.expect.join(', ')})`, async () => {
    const seen = [];
    const token = `progress-${name}-${Date.now()}`;
    progress.set(token, seen);
    const result = await call(u.progress.tool, u.progress.args, { progressToken: token });
    assert(!result.isError, short(result));
    await new Promise((resolve) => setImmediate(resolve)); // the handlers run a microtask later
    assert(sameJson(seen, u.progress.expect), `progress ${short(seen)}`);
  });
  await check(`${p} ${name}: resources/read ${u.resource.uri}`, async () => {
    const result = await client.readResource({ uri: u.resource.uri });
    assert(result.contents?.[0]?.text === u.resource.text, short(result));
    assert(result.contents[0].uri === u.resource.uri, `uri ${result.contents[0].uri}`);
  });
  await check(`${p} ${name}: prompts/get ${u.prompt.name}`, async () => {
    const result = await client.getPrompt({ name: u.prompt.name, arguments: u.prompt.args });
    const text = result.messages.map((m) => m.content?.text ?? '').join('\n');
    assert(text.includes(u.prompt.text), short(result));
  });
}

await check(`${p} resources/list and prompts/list have every upstream's items`, async () => {
  const resources = (await client.listResources()).resources.map((r) => r.uri);
  const prompts = (await client.listPrompts()).prompts.map((x) => x.name);
  for (const name of names) {
    assert(resources.includes(UPSTREAMS[name].resource.uri), `${UPSTREAMS[name].resource.uri} not in ${short(resources)}`);
    assert(prompts.includes(UPSTREAMS[name].prompt.name), `${UPSTREAMS[name].prompt.name} not in ${short(prompts)}`);
  }
});

await check(`${p} an unknown tool is refused`, async () => {
  let result;
  try {
    result = await call('nope_no_such_tool', {});
  } catch (err) {
    return; // -32602
  }
  assert(result.isError, short(result));
});

await client.close();
console.log(summary());
process.exit(tally.failed ? 1 : 0);
