// Interop test: the official MCP TypeScript SDK 2.x client (`@modelcontextprotocol/client`) against
// the `everything` example, in both protocol eras.
//
//   node ts_client_2026.mjs EVERYTHING_BIN HTTP_URL
//
// With `versionNegotiation: {mode: 'auto'}` the client probes `server/discover` and must land on
// 2026-07-28: checked on the wire (over stdio a `tee` in front of the server records what the
// client sends; over HTTP a recording `fetch` sees every request and its headers): the probe
// first, no `initialize`, the `_meta` envelope on every request, `MCP-Protocol-Version:
// 2026-07-28` on every POST, and an elicitation answered through an `input_required` result and a
// retry (MRTR). With the default (`legacy`) it speaks 2025-11-25 through `initialize`.
//
// Prints one line per check ("ok - name" / "not ok - name: reason"), then "N passed, M failed".
// Exits 1 when any check failed.

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assert, check, fail, short, summary, tally, textOf, watchdog } from './checks.mjs';

const [everything, url] = process.argv.slice(2);
if (!everything || !url) {
  console.error('usage: node ts_client_2026.mjs EVERYTHING_BIN HTTP_URL');
  process.exit(2);
}
const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';
const ELICITED = 'TypeScript 2.x';
const SAMPLED = 'Four, from the TypeScript 2.x sampling handler';

watchdog(150_000);

/** A client that answers elicitations (every text field: ELICITED) and sampling requests. */
function makeClient(modern, seen) {
  const client = new Client(
    { name: 'mcp-tools-interop-ts2', version: '0.0.0' },
    {
      capabilities: { elicitation: {}, sampling: {} },
      ...(modern ? { versionNegotiation: { mode: 'auto' } } : {}),
    },
  );
  client.setRequestHandler('elicitation/create', async (request) => {
    seen.elicitations.push(request.params);
    const properties = request.params?.requestedSchema?.properties ?? {};
    const content = Object.fromEntries(
      Object.entries(properties).map(([name, schema]) => [name, schema.type === 'boolean' ? true : ELICITED]),
    );
    return { action: 'accept', content };
  });
  client.setRequestHandler('sampling/createMessage', async (request) => {
    seen.sampling.push(request.params);
    return { role: 'assistant', content: { type: 'text', text: SAMPLED }, model: 'interop-model', stopReason: 'endTurn' };
  });
  return client;
}

/** The checks against the conformance fixture, in either era. */
async function fixture(p, client, seen, modern) {
  await check(`${p} negotiated ${modern ? MODERN : LEGACY}`, async () => {
    const version = client.getNegotiatedProtocolVersion();
    assert(version === (modern ? MODERN : LEGACY), `negotiated ${version}`);
    assert(client.getServerVersion()?.name === 'mcp-conformance-test-server', short(client.getServerVersion()));
  });
  await check(`${p} tools/list parsed by the SDK`, async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const name of ['test_simple_text', 'test_input_required_result_elicitation', 'test_sampling']) {
      assert(names.includes(name), `${name} not in ${short(names)}`);
    }
  });
  await check(`${p} call test_simple_text`, async () => {
    const result = await client.callTool({ name: 'test_simple_text', arguments: {} });
    assert(textOf(result) === 'This is a simple text response for testing.', short(result));
  });
  await check(`${p} elicitation round trip: test_input_required_result_elicitation`, async () => {
    seen.elicitations.length = 0;
    const result = await client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} });
    assert(textOf(result) === `Hello, ${ELICITED}!`, short(result));
    assert(seen.elicitations.length === 1, `${seen.elicitations.length} elicitations`);
  });
  await check(`${p} sampling round trip: test_sampling`, async () => {
    seen.sampling.length = 0;
    const result = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'What is 2 + 2?' } });
    assert(textOf(result) === `LLM response: ${SAMPLED}`, short(result));
    assert(seen.sampling.length === 1, `${seen.sampling.length} sampling requests`);
  });
  await check(`${p} resources/read and prompts/get`, async () => {
    const read = await client.readResource({ uri: 'test://static-text' });
    assert(read.contents?.[0]?.text === 'This is the content of the static text resource.', short(read));
    const prompt = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'x1', arg2: 'y2' } });
    const text = prompt.messages?.[0]?.content?.text ?? '';
    assert(text.includes('x1') && text.includes('y2'), short(prompt));
  });
}

/** What a 2026-07-28 client sends: the probe first, no handshake, envelopes, an MRTR retry. */
function checkModernWire(requests) {
  const methods = requests.filter((m) => m.id !== undefined && m.method).map((m) => m.method);
  assert(methods[0] === 'server/discover', `first request ${methods[0]}`);
  assert(!methods.includes('initialize'), `initialize sent: ${short(methods)}`);
  for (const m of requests) {
    if (m.id !== undefined && m.method) {
      const version = m.params?._meta?.['io.modelcontextprotocol/protocolVersion'];
      assert(version === MODERN, `no 2026 envelope on ${m.method}: ${short(m)}`);
    }
  }
  const retried = requests.filter((m) => m.method === 'tools/call' && m.params?.inputResponses);
  assert(retried.length >= 2, `${retried.length} tools/call retried with inputResponses`);
}

// --- stdio, through a tee that records what the client writes ---------------------------------
for (const modern of [true, false]) {
  const p = `ts-sdk-2 stdio (${modern ? 'auto' : 'legacy'}):`;
  const dir = mkdtempSync(join(tmpdir(), 'mcp-ts2-'));
  const log = join(dir, 'sent.jsonl');
  const seen = { elicitations: [], sampling: [] };
  const client = makeClient(modern, seen);
  const quote = (s) => `'${s.replace(/'/g, "'\\''")}'`;
  const transport = new StdioClientTransport({ command: 'bash', args: ['-c', `tee -a ${quote(log)} | ${quote(everything)}`], stderr: 'ignore' });
  const connected = await check(`${p} connect`, () => client.connect(transport).then(() => true));
  if (connected) {
    await fixture(p, client, seen, modern);
    if (modern) {
      await check(`${p} on the wire: server/discover, no initialize, envelopes, MRTR retries`, async () => {
        const sent = readFileSync(log, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
        checkModernWire(sent);
      });
    }
    await client.close();
  }
  rmSync(dir, { recursive: true, force: true });
}

// --- Streamable HTTP, with every request recorded ---------------------------------------------
for (const modern of [true, false]) {
  const p = `ts-sdk-2 http ${url} (${modern ? 'auto' : 'legacy'}):`;
  const sent = [];
  const versions = [];
  const recordingFetch = async (input, init) => {
    if (init?.method === 'POST' && typeof init.body === 'string') {
      const body = JSON.parse(init.body);
      sent.push(body);
      if (body.id !== undefined) versions.push(new Headers(init.headers).get('mcp-protocol-version'));
    }
    return fetch(input, init);
  };
  const seen = { elicitations: [], sampling: [] };
  const client = makeClient(modern, seen);
  const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: recordingFetch });
  const connected = await check(`${p} connect`, () => client.connect(transport).then(() => true));
  if (connected) {
    await fixture(p, client, seen, modern);
    if (modern) {
      await check(`${p} on the wire: server/discover, no initialize, envelopes, headers, MRTR retries`, async () => {
        checkModernWire(sent);
        assert(versions.every((v) => v === MODERN), `MCP-Protocol-Version headers ${short([...new Set(versions)])}`);
      });
    } else {
      await check(`${p} on the wire: initialize first`, async () => {
        const methods = sent.filter((m) => m.id !== undefined).map((m) => m.method);
        assert(methods[0] === 'initialize', short(methods.slice(0, 3)));
      });
    }
    await client.close();
  }
}

console.log(summary());
process.exit(tally.failed === 0 ? 0 : 1);
