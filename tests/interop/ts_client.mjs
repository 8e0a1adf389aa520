// Interop test: the official MCP TypeScript SDK client against the quickstart example server.
//
//   node ts_client.mjs /path/to/target/debug/examples/quickstart
//
// Spawns the server over stdio with the SDK's StdioClientTransport and runs named checks.
// Prints one line per check ("ok - name" / "not ok - name: reason"), then a final line
// "N passed, M failed". Exits 1 when any check failed.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LATEST_PROTOCOL_VERSION, McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { assert, check, fail, pass, short, summary, tally, textOf, watchdog } from './checks.mjs';

const binaryArg = process.argv[2];
if (!binaryArg) {
  console.error('usage: node ts_client.mjs PATH_TO_QUICKSTART_BINARY');
  process.exit(2);
}
const binary = resolve(binaryArg);

// The SDK's package.json is not in its "exports", so read it from node_modules directly.
const here = dirname(fileURLToPath(import.meta.url));
let sdkVersion = 'unknown';
try {
  sdkVersion = JSON.parse(
    readFileSync(join(here, 'node_modules', '@modelcontextprotocol', 'sdk', 'package.json'), 'utf8'),
  ).version;
} catch {
  // only informational
}

// Ajv (inside the SDK) warns on stderr about formats it does not know, such as schemars'
// "uint64": gather them and print each once as a comment, instead of a dozen stderr lines.
const warnings = new Set();
console.warn = (...args) => {
  warnings.add(args.map(String).join(' '));
};
console.log(`# @modelcontextprotocol/sdk ${sdkVersion} on node ${process.version}`);
console.log(`# server: ${binary}`);

/** Marks `name` failed without running it, when an earlier step it depends on failed. */
function skipAsFailed(name, because) {
  fail(name, `not run: ${because}`);
}

/** A stdio transport spawning the server, with a tap on the raw messages and stderr. */
function makeTransport(label) {
  const transport = new StdioClientTransport({ command: binary, args: [], stderr: 'pipe' });
  const tap = { label, messages: [], errors: [], stderr: '' };
  transport.stderr?.on('data', (chunk) => {
    tap.stderr += chunk.toString();
  });
  // Protocol.connect() chains handlers that are already set, so these see every message.
  transport.onmessage = (message) => {
    tap.messages.push(message);
  };
  transport.onerror = (error) => {
    tap.errors.push(error);
  };
  return { transport, tap };
}

// A server that never answers would leave the SDK waiting 60 s per request: cap the whole run.
watchdog(150_000);

if (!existsSync(binary)) {
  fail('server binary exists', `no file at ${binary}`);
} else {
  await mainConnection();
  await secondConnection();
}

for (const w of warnings) console.log(`# warning from the SDK: ${w}`);
console.log(summary());
process.exitCode = tally.failed === 0 ? 0 : 1;

// ---------------------------------------------------------------------------------------------

async function mainConnection() {
  const { transport, tap } = makeTransport('main');
  const client = new Client({ name: 'mcp-tools-interop', version: '0.0.0' }, { capabilities: {} });
  let child;
  try {
    const connected = await check('connect (initialize handshake)', async () => {
      await client.connect(transport);
      child = transport._process; // private, only used to see how the server exits
      return true;
    });
    if (!connected) {
      for (const name of ['serverInfo', 'tools/list', 'tools/call', 'ping']) {
        skipAsFailed(name, 'connect failed');
      }
      return;
    }

    await check('negotiated protocol version is the SDK latest', () => {
      const init = tap.messages.find((m) => m.id !== undefined && m.result?.protocolVersion !== undefined);
      assert(init, 'no initialize result seen on the wire');
      assert(
        init.result.protocolVersion === LATEST_PROTOCOL_VERSION,
        `server answered protocolVersion ${short(init.result.protocolVersion)}, the SDK asked for ${LATEST_PROTOCOL_VERSION}`,
      );
    });

    await check('serverInfo name is "notes"', () => {
      const info = client.getServerVersion();
      assert(info && info.name === 'notes', `getServerVersion() = ${short(info)}`);
      assert(typeof info.version === 'string' && info.version.length > 0, `no version in ${short(info)}`);
    });

    await check('server capabilities include tools', () => {
      const caps = client.getServerCapabilities();
      assert(caps && typeof caps.tools === 'object' && caps.tools !== null, `getServerCapabilities() = ${short(caps)}`);
    });

    // --- tools/list ---------------------------------------------------------------------------
    const listed = await check('tools/list accepted by the SDK (zod)', async () => {
      const result = await client.listTools();
      assert(Array.isArray(result.tools), `no tools array in ${short(result)}`);
      return result;
    });
    const tools = new Map((listed?.tools ?? []).map((t) => [t.name, t]));

    if (!listed) {
      skipAsFailed('tools/list contents', 'tools/list failed');
    } else {
      await check('tools/list names are exactly create_note, delete_note, search_notes', () => {
        const names = [...tools.keys()].sort();
        assert(
          short(names) === short(['create_note', 'delete_note', 'search_notes']),
          `got ${short(listed.tools.map((t) => t.name))}`,
        );
      });
      await check('every tool has a description and an object inputSchema', () => {
        for (const tool of listed.tools) {
          assert(typeof tool.description === 'string' && tool.description.trim() !== '', `${tool.name}: no description`);
          assert(tool.inputSchema?.type === 'object', `${tool.name}: inputSchema.type = ${short(tool.inputSchema?.type)}`);
        }
      });
      await check('create_note and search_notes have an object outputSchema', () => {
        for (const name of ['create_note', 'search_notes']) {
          const schema = tools.get(name)?.outputSchema;
          assert(schema, `${name}: no outputSchema`);
          assert(schema.type === 'object', `${name}: outputSchema.type = ${short(schema.type)}`);
        }
      });
      await check('annotations: search_notes readOnlyHint, delete_note destructiveHint', () => {
        const search = tools.get('search_notes')?.annotations;
        const del = tools.get('delete_note')?.annotations;
        const create = tools.get('create_note')?.annotations;
        assert(search?.readOnlyHint === true, `search_notes annotations = ${short(search)}`);
        assert(del?.destructiveHint === true, `delete_note annotations = ${short(del)}`);
        assert(create?.destructiveHint === false, `create_note annotations = ${short(create)}`);
      });
      await check('create_note input schema: title and body required', () => {
        const schema = tools.get('create_note')?.inputSchema;
        const required = schema?.required ?? [];
        assert(required.includes('title') && required.includes('body'), `required = ${short(required)}`);
        assert(schema.properties?.tags?.type === 'array', `tags = ${short(schema.properties?.tags)}`);
      });
    }

    // --- tools/call -----------------------------------------------------------------------------
    const title = 'Interop groceries';
    let createdResult;
    const created = await check('call create_note returns the note (structuredContent passes Ajv)', async () => {
      const result = await client.callTool({
        name: 'create_note',
        arguments: { title, body: 'Buy zucchini and oat milk', tags: ['shopping', 'interop'] },
      });
      createdResult = result;
      assert(!result.isError, `isError result: ${textOf(result)}`);
      const sc = result.structuredContent;
      assert(sc && typeof sc === 'object', `no structuredContent: ${short(result)}`);
      assert(Number.isInteger(sc.id), `structuredContent.id = ${short(sc.id)}`);
      assert(sc.title === title, `structuredContent.title = ${short(sc.title)}`);
      assert(short(sc.tags) === short(['shopping', 'interop']), `structuredContent.tags = ${short(sc.tags)}`);
      return sc;
    });

    await check('call create_note also returns the same JSON as a text block', () => {
      assert(created, 'create_note failed');
      // Older clients read the text block: it should hold the same JSON as structuredContent.
      const text = textOf(createdResult);
      let parsed;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new Error(`text block is not JSON: ${short(text)}`);
      }
      assert(short(parsed) === short(created), `text ${short(text)} != structuredContent ${short(created)}`);
    });

    await check('call search_notes finds the created note', async () => {
      assert(created, 'create_note failed');
      const result = await client.callTool({ name: 'search_notes', arguments: { query: 'ZUCCHINI' } });
      assert(!result.isError, `isError result: ${textOf(result)}`);
      const sc = result.structuredContent;
      assert(sc && sc.total >= 1, `structuredContent = ${short(sc)}`);
      assert(
        Array.isArray(sc.notes) && sc.notes.some((n) => n.id === created.id),
        `note ${created.id} not in ${short(sc.notes)}`,
      );
    });

    await check('call search_notes with a tag that no note has finds nothing', async () => {
      const result = await client.callTool({
        name: 'search_notes',
        arguments: { query: 'zucchini', tag: 'no-such-tag' },
      });
      assert(!result.isError, `isError result: ${textOf(result)}`);
      assert(result.structuredContent?.total === 0, `structuredContent = ${short(result.structuredContent)}`);
    });

    await check('call search_notes with invalid arguments: isError naming /limit and /query', async () => {
      let result;
      try {
        result = await client.callTool({ name: 'search_notes', arguments: { query: 5, limit: 'ten' } });
      } catch (err) {
        throw new Error(`expected an isError result (SEP-1303), the call rejected: ${err.message}`);
      }
      assert(result.isError === true, `isError = ${short(result.isError)} in ${short(result)}`);
      const text = textOf(result);
      assert(text.includes('/limit'), `text does not mention /limit: ${short(text)}`);
      assert(text.includes('/query'), `text does not mention /query: ${short(text)}`);
    });

    await check('call create_note with an empty title: isError with a message', async () => {
      const result = await client.callTool({ name: 'create_note', arguments: { title: '  ', body: 'x' } });
      assert(result.isError === true, `isError = ${short(result.isError)} in ${short(result)}`);
      assert(textOf(result).trim() !== '', `no text in ${short(result)}`);
    });

    await check('call delete_note with an unknown id: isError', async () => {
      const result = await client.callTool({ name: 'delete_note', arguments: { id: 987654321 } });
      assert(result.isError === true, `isError = ${short(result.isError)} in ${short(result)}`);
      assert(textOf(result).trim() !== '', `no text in ${short(result)}`);
    });

    await check('call delete_note with the created id: deleted', async () => {
      assert(created, 'create_note failed');
      const result = await client.callTool({ name: 'delete_note', arguments: { id: created.id } });
      assert(!result.isError, `isError result: ${textOf(result)}`);
      assert(textOf(result).includes('Deleted'), `text = ${short(textOf(result))}`);
    });

    await check('call search_notes after delete no longer finds the note', async () => {
      assert(created, 'create_note failed');
      const result = await client.callTool({ name: 'search_notes', arguments: { query: 'zucchini' } });
      assert(!result.isError, `isError result: ${textOf(result)}`);
      assert(result.structuredContent?.total === 0, `structuredContent = ${short(result.structuredContent)}`);
    });

    await check('call of an unknown tool rejects with McpError -32602', async () => {
      let result;
      try {
        result = await client.callTool({ name: 'no_such_tool', arguments: {} });
      } catch (err) {
        assert(err instanceof McpError, `rejected with ${err?.name}: ${err?.message}`);
        assert(err.code === ErrorCode.InvalidParams, `McpError code ${err.code} (${err.message})`);
        return;
      }
      throw new Error(`resolved instead of rejecting: ${short(result)}`);
    });

    await check('server still alive: ping', async () => {
      const result = await client.ping();
      assert(result && typeof result === 'object', `ping result = ${short(result)}`);
    });

    await check('ping result on the wire is exactly {}', () => {
      // Requests are numbered from 0 by the SDK; the last answered one is the ping.
      const answers = tap.messages.filter((m) => m.id !== undefined && ('result' in m || 'error' in m));
      const last = answers[answers.length - 1];
      assert(last && short(last.result) === '{}', `last answer = ${short(last)}`);
    });

    await check('stdout carried only valid JSON-RPC (no transport errors)', () => {
      assert(tap.errors.length === 0, tap.errors.map((e) => e.message).join('; '));
    });
  } finally {
    await client.close().catch(() => {});
  }

  if (child) {
    await check('server exits with status 0 on stdin EOF', () => {
      assert(
        child.exitCode === 0 && child.signalCode === null,
        `exitCode ${child.exitCode}, signal ${child.signalCode} (the SDK sends SIGTERM after 2 s)`,
      );
    });
  }
  if (tally.failed > 0 && tap.stderr.trim() !== '') {
    console.log('# server stderr (main connection):');
    for (const line of tap.stderr.trimEnd().split('\n').slice(-20)) console.log(`#   ${line}`);
  }
}

async function secondConnection() {
  // A fresh server process, a client with every option left to the SDK (protocol version
  // negotiated by the SDK, no client capabilities).
  const { transport, tap } = makeTransport('second');
  const client = new Client({ name: 'mcp-tools-interop-2', version: '0.0.0' });
  try {
    const connected = await check('second connection: connect with SDK-negotiated protocol', async () => {
      await client.connect(transport);
      return true;
    });
    if (!connected) {
      skipAsFailed('second connection: capabilities', 'connect failed');
      return;
    }
    await check('second connection: getServerCapabilities() is an object with tools', () => {
      const caps = client.getServerCapabilities();
      assert(caps && typeof caps === 'object' && !Array.isArray(caps), `getServerCapabilities() = ${short(caps)}`);
      assert(caps.tools && typeof caps.tools === 'object', `no tools in ${short(caps)}`);
    });
    await check('second connection: fresh state (no notes) and tools/list works', async () => {
      const { tools } = await client.listTools();
      assert(tools.length === 3, `${tools.length} tools`);
      const result = await client.callTool({ name: 'search_notes', arguments: { query: '' } });
      assert(result.structuredContent?.total === 0, `structuredContent = ${short(result.structuredContent)}`);
    });
  } finally {
    await client.close().catch(() => {});
  }
  if (tap.errors.length > 0 || (tally.failed > 0 && tap.stderr.trim() !== '')) {
    for (const e of tap.errors) console.log(`# second connection transport error: ${e.message}`);
  }
}
