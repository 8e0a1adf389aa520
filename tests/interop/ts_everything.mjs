// Interop test: the official MCP TypeScript SDK client against the `everything` example (the
// conformance fixture) over stdio and Streamable HTTP, and against a stateless `quickstart`
// deployment (several instances behind a load balancer).
//
//   node ts_everything.mjs TARGET...
//
// TARGET is one of
//   stdio:/path/to/everything          spawn the server (StdioClientTransport)
//   http:http://127.0.0.1:PORT/mcp      a running `everything --http ...` (StreamableHTTPClientTransport)
//   stateless:http://127.0.0.1:PORT/mcp a stateless `quickstart --http ... --stateless` (or a proxy to several)
//
// Prints one line per check ("ok - name" / "not ok - name: reason"), then a final line
// "N passed, M failed". Exits 1 when any check failed.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LATEST_PROTOCOL_VERSION,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { assert, check, fail, pass, short, summary, tally, textOf, watchdog } from './checks.mjs';

const targets = process.argv.slice(2);
if (targets.length === 0) {
  console.error('usage: node ts_everything.mjs stdio:BIN | http:URL | stateless:URL ...');
  process.exit(2);
}

const warnings = new Set();
console.warn = (...args) => {
  warnings.add(args.map(String).join(' '));
};

/** Rejects after `ms` so a request that gets no answer fails its check instead of the run. */
function within(ms, promise, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms / 1000} s`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

watchdog(150_000);

for (const target of targets) {
  const colon = target.indexOf(':');
  const kind = target.slice(0, colon);
  const where = target.slice(colon + 1);
  if (kind === 'stdio') {
    await everything('stdio', () => {
      const binary = resolve(where);
      assert(existsSync(binary), `no server binary at ${binary}`);
      return new StdioClientTransport({ command: binary, args: [], stderr: 'pipe' });
    });
  } else if (kind === 'http') {
    await everything(`http ${where}`, () => new StreamableHTTPClientTransport(new URL(where)));
  } else if (kind === 'stateless') {
    await statelessNotes(where);
  } else {
    fail(`target ${target}`, 'unknown kind (stdio:, http:, stateless:)');
  }
}

for (const w of warnings) console.log(`# warning from the SDK: ${w}`);
console.log(summary());
process.exitCode = tally.failed === 0 ? 0 : 1;

// ---------------------------------------------------------------------------------------------

/** Every check against the conformance fixture, through one connection. */
async function everything(label, makeTransport) {
  const p = `everything ${label}:`;
  const client = new Client(
    { name: 'mcp-tools-interop-everything', version: '0.0.0' },
    { capabilities: { sampling: {}, elicitation: {} } },
  );
  const wire = [];
  const logs = [];
  const samplingRequests = [];
  const elicitRequests = [];
  const SAMPLED = 'Four, from the interop sampling handler';
  const ELICITED = 'interop elicitation answer';
  const sdkErrors = [];
  client.onerror = (error) => sdkErrors.push(error);

  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    logs.push(n.params);
  });
  client.setRequestHandler(CreateMessageRequestSchema, (request) => {
    samplingRequests.push(request.params);
    return { model: 'interop-model', role: 'assistant', content: { type: 'text', text: SAMPLED }, stopReason: 'endTurn' };
  });
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    elicitRequests.push(request.params);
    return { action: 'accept', content: { response: ELICITED } };
  });

  let transport;
  let stderr = '';
  try {
    const connected = await check(`${p} connect (initialize handshake)`, async () => {
      transport = makeTransport();
      transport.stderr?.on('data', (chunk) => {
        stderr += chunk.toString();
      });
      transport.onmessage = (message) => wire.push(message);
      await within(20_000, client.connect(transport), 'connect');
      return true;
    });
    if (!connected) return;

    await check(`${p} negotiated protocol ${LATEST_PROTOCOL_VERSION}, serverInfo mcp-conformance-test-server`, () => {
      const init = wire.find((m) => m.id !== undefined && m.result?.protocolVersion !== undefined);
      assert(init, 'no initialize result on the wire');
      assert(init.result.protocolVersion === LATEST_PROTOCOL_VERSION, `protocolVersion ${short(init.result.protocolVersion)}`);
      const info = client.getServerVersion();
      assert(info?.name === 'mcp-conformance-test-server', `serverInfo ${short(info)}`);
      const caps = client.getServerCapabilities();
      for (const cap of ['tools', 'resources', 'prompts', 'logging']) {
        assert(caps?.[cap], `no ${cap} capability in ${short(caps)}`);
      }
    });

    if (label.startsWith('http')) {
      await check(`${p} session id issued (Mcp-Session-Id)`, () => {
        assert(typeof transport.sessionId === 'string' && transport.sessionId.length > 0, `sessionId ${short(transport.sessionId)}`);
      });
    }

    await check(`${p} tools/list accepted by the SDK (zod) with the fixture's tools`, async () => {
      const { tools } = await within(20_000, client.listTools(), 'tools/list');
      const names = new Set(tools.map((t) => t.name));
      for (const name of ['test_simple_text', 'test_tool_with_logging', 'test_tool_with_progress', 'test_sampling', 'test_elicitation']) {
        assert(names.has(name), `${name} missing from ${short([...names])}`);
      }
    });

    await check(`${p} call test_simple_text`, async () => {
      const result = await within(20_000, client.callTool({ name: 'test_simple_text', arguments: {} }), 'tools/call');
      assert(!result.isError, `isError: ${textOf(result)}`);
      assert(textOf(result) === 'This is a simple text response for testing.', `text ${short(textOf(result))}`);
    });

    await check(`${p} progress: onprogress gets 0, 50, 100 of 100 from test_tool_with_progress`, async () => {
      const progress = [];
      sdkErrors.length = 0;
      const first = wire.length;
      const result = await within(
        20_000,
        client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, {
          onprogress: (p) => progress.push(p),
        }),
        'tools/call',
      );
      assert(!result.isError, `isError: ${textOf(result)}`);
      // What the server sent: three notifications/progress on the call's token, before the result.
      const mine = wire.slice(first);
      const call = mine.findIndex((m) => m.id !== undefined && m.result?.content !== undefined);
      const onWire = mine.slice(0, call).filter((m) => m.method === 'notifications/progress');
      assert(
        short(onWire.map((m) => [m.params.progress, m.params.total])) === short([[0, 100], [50, 100], [100, 100]]),
        `progress on the wire before the result: ${short(onWire.map((m) => m.params))}`,
      );
      const got = short(progress.map((x) => [x.progress, x.total]));
      if (got === short([[0, 100], [50, 100], [100, 100]])) return;
      // TypeScript SDK 1.32.2 dispatches a notification in a microtask but a response at once:
      // a last progress notification that shares a stdio read with the result is reported as
      // "unknown token" instead of reaching onprogress (typescript-sdk issue #2580).
      const raced = sdkErrors.some((e) => /progress notification for an unknown token/.test(e.message) && /"progress":100/.test(e.message));
      assert(
        label === 'stdio' && got === short([[0, 100], [50, 100]]) && raced,
        `onprogress got ${short(progress)}; SDK errors: ${short(sdkErrors.map((e) => e.message))}`,
      );
      console.log(`# ${p} the SDK dropped progress 100 (it arrived in the result's stdio read: typescript-sdk#2580); it was on the wire before the result`);
    });

    await check(`${p} logging: setLoggingLevel, 3 notifications/message from test_tool_with_logging`, async () => {
      await within(20_000, client.setLoggingLevel('debug'), 'logging/setLevel');
      logs.length = 0;
      const result = await within(20_000, client.callTool({ name: 'test_tool_with_logging', arguments: {} }), 'tools/call');
      assert(!result.isError, `isError: ${textOf(result)}`);
      assert(logs.length === 3, `${logs.length} log messages: ${short(logs)}`);
      const data = logs.map((l) => (typeof l.data === 'string' ? l.data : JSON.stringify(l.data)));
      assert(data[0].includes('started') && data[2].includes('completed'), `messages ${short(data)}`);
      assert(logs.every((l) => l.level === 'info'), `levels ${short(logs.map((l) => l.level))}`);
    });

    await check(`${p} sampling: test_sampling answers "LLM response: <the handler's text>"`, async () => {
      const prompt = 'What is 2 + 2?';
      const result = await within(20_000, client.callTool({ name: 'test_sampling', arguments: { prompt } }), 'tools/call');
      assert(!result.isError, `isError: ${textOf(result)}`);
      assert(textOf(result) === `LLM response: ${SAMPLED}`, `text ${short(textOf(result))}`);
      assert(samplingRequests.length === 1, `${samplingRequests.length} sampling/createMessage requests`);
      const sent = samplingRequests[0].messages?.[0]?.content;
      assert(sent?.type === 'text' && sent.text === prompt, `the request carried ${short(samplingRequests[0])}`);
      assert(samplingRequests[0].maxTokens > 0, `maxTokens ${short(samplingRequests[0].maxTokens)}`);
    });

    await check(`${p} elicitation: test_elicitation gets the handler's accepted content`, async () => {
      const message = 'Please type an answer';
      const result = await within(20_000, client.callTool({ name: 'test_elicitation', arguments: { message } }), 'tools/call');
      assert(!result.isError, `isError: ${textOf(result)}`);
      const text = textOf(result);
      assert(text.includes(ELICITED) && text.includes('action=accept'), `text ${short(text)}`);
      assert(elicitRequests.length === 1, `${elicitRequests.length} elicitation/create requests`);
      assert(elicitRequests[0].message === message, `the request carried ${short(elicitRequests[0])}`);
      assert(elicitRequests[0].requestedSchema?.properties?.response, `requestedSchema ${short(elicitRequests[0].requestedSchema)}`);
    });

    await check(`${p} resources/read test://static-text`, async () => {
      const { contents } = await within(20_000, client.readResource({ uri: 'test://static-text' }), 'resources/read');
      assert(contents?.length === 1, `contents ${short(contents)}`);
      assert(contents[0].text === 'This is the content of the static text resource.', `contents ${short(contents)}`);
      assert(contents[0].mimeType === 'text/plain', `mimeType ${short(contents[0].mimeType)}`);
    });

    await check(`${p} prompts/get test_prompt_with_arguments`, async () => {
      const result = await within(
        20_000,
        client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'first', arg2: 'second' } }),
        'prompts/get',
      );
      const text = result.messages?.[0]?.content?.text ?? '';
      assert(result.messages?.[0]?.role === 'user', `messages ${short(result.messages)}`);
      assert(text.includes('first') && text.includes('second'), `text ${short(text)}`);
    });

    if (label.startsWith('http')) {
      await check(`${p} DELETE ends the session (terminateSession)`, async () => {
        await within(20_000, transport.terminateSession(), 'DELETE');
        assert(transport.sessionId === undefined, `sessionId still ${short(transport.sessionId)}`);
      });
    }
  } finally {
    await client.close().catch(() => {});
    if (tally.failed > 0 && stderr.trim() !== '') {
      console.log(`# server stderr (${label}):`);
      for (const line of stderr.trimEnd().split('\n').slice(-15)) console.log(`#   ${line}`);
    }
  }
}

/** A stateless quickstart (directly or through a load balancer): no session, fresh state per request. */
async function statelessNotes(url) {
  const p = `stateless notes ${url}:`;
  const client = new Client({ name: 'mcp-tools-interop-stateless', version: '0.0.0' });
  // Behind an authenticating proxy (scripts/interop.sh), the token it expects.
  const token = process.env.MCP_BEARER_TOKEN;
  const options = token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : undefined;
  const transport = new StreamableHTTPClientTransport(new URL(url), options);
  try {
    const connected = await check(`${p} connect (initialize without a session)`, async () => {
      await within(20_000, client.connect(transport), 'connect');
      assert(client.getServerVersion()?.name === 'notes', `serverInfo ${short(client.getServerVersion())}`);
      return true;
    });
    if (!connected) return;
    await check(`${p} no session id issued`, () => {
      assert(transport.sessionId === undefined, `sessionId ${short(transport.sessionId)}`);
    });
    for (let i = 1; i <= 2; i++) {
      await check(`${p} tools/list #${i}`, async () => {
        const { tools } = await within(20_000, client.listTools(), 'tools/list');
        assert(tools.some((t) => t.name === 'search_notes'), `tools ${short(tools.map((t) => t.name))}`);
      });
      await check(`${p} call create_note #${i} (structuredContent passes Ajv)`, async () => {
        const result = await within(
          20_000,
          client.callTool({ name: 'create_note', arguments: { title: `lb ${i}`, body: 'through the proxy' } }),
          'tools/call',
        );
        assert(!result.isError, `isError: ${textOf(result)}`);
        assert(result.structuredContent?.title === `lb ${i}`, `structuredContent ${short(result.structuredContent)}`);
      });
    }
  } finally {
    await client.close().catch(() => {});
  }
}
