// An upstream MCP server written with the TypeScript SDK 2.x (`@modelcontextprotocol/server`,
// pinned in tests/interop/package.json), for the gateway's interop checks (scripts/interop.sh,
// section 9) and examples/client_check.rs. The same factory serves both eras: 2026-07-28
// (server/discover, the per-request envelope) and 2025-11-25 (initialize).
//
//   node ts_server.mjs                     # stdio
//   node ts_server.mjs --http PORT         # Streamable HTTP at http://127.0.0.1:PORT/mcp
//
// Tools: get_forecast (structured output), count_up (progress), slow_job (sleeps, for the
// kill-mid-call check), whoami (the process id); resource ts://info; prompt plan_trip.
//
// When the file named by $UPSTREAM_SLOW_START_FILE exists at start, the server removes it and
// waits the number of seconds it holds before serving: a slow restart, which keeps the window in
// which the gateway has lost this server open long enough to be checked (ts_kill.mjs).

import { existsSync, readFileSync, unlinkSync } from 'node:fs';
import { createServer } from 'node:http';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function makeServer() {
  const server = new McpServer({ name: 'ts-upstream', version: '1.0.0' });
  server.registerTool(
    'get_forecast',
    {
      description: 'Get the weather forecast for a city: temperature in Celsius and the sky conditions.',
      inputSchema: z.object({ city: z.string().describe('The city') }),
      outputSchema: z.object({ city: z.string(), temperature_c: z.number(), conditions: z.string() }),
    },
    async ({ city }) => {
      const output = { city, temperature_c: 21.5, conditions: 'sunny' };
      return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output };
    },
  );
  server.registerTool(
    'count_up',
    {
      description: 'Count from one up to a number, reporting progress at each step.',
      inputSchema: z.object({ to: z.number().int().min(1).max(10).describe('Where to stop') }),
    },
    async ({ to }, ctx) => {
      const token = ctx.mcpReq._meta?.progressToken;
      for (let i = 1; i <= to; i++) {
        if (token !== undefined) {
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: { progressToken: token, progress: i, total: to, message: `step ${i}` },
          });
        }
        await sleep(20);
      }
      return { content: [{ type: 'text', text: `counted to ${to}` }] };
    },
  );
  server.registerTool(
    'slow_job',
    {
      description: 'A slow batch job that takes a long time before it answers.',
      inputSchema: z.object({ seconds: z.number().describe('How long it works') }),
    },
    async ({ seconds }) => {
      await sleep(seconds * 1000);
      return { content: [{ type: 'text', text: `slow_job done after ${seconds} s` }] };
    },
  );
  server.registerTool(
    'whoami',
    { description: 'The process id of this TypeScript server.', inputSchema: z.object({}) },
    async () => ({ content: [{ type: 'text', text: String(process.pid) }] }),
  );
  server.registerResource(
    'info',
    'ts://info',
    { description: 'About this TypeScript server.', mimeType: 'text/plain' },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'TypeScript SDK upstream' }] }),
  );
  server.registerPrompt(
    'plan_trip',
    {
      description: 'Plan a trip to a city.',
      argsSchema: z.object({ city: z.string().describe('Where to go') }),
    },
    ({ city }) => ({
      messages: [{ role: 'user', content: { type: 'text', text: `Plan a weekend trip to ${city}.` } }],
    }),
  );
  return server;
}

const slowStart = process.env.UPSTREAM_SLOW_START_FILE;
if (slowStart && existsSync(slowStart)) {
  const seconds = Number(readFileSync(slowStart, 'utf8').trim() || '0');
  unlinkSync(slowStart);
  await sleep(seconds * 1000);
}

const args = process.argv.slice(2);
const at = args.indexOf('--http');
if (at < 0) {
  serveStdio(() => makeServer());
} else {
  const port = Number(args[at + 1]);
  const handler = createMcpHandler(() => makeServer());
  // node:http -> the handler's web-standard fetch face, and its Response (JSON or SSE) back.
  createServer(async (req, res) => {
    try {
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      const body = chunks.length ? Buffer.concat(chunks) : undefined;
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
      }
      const abort = new AbortController();
      res.on('close', () => abort.abort());
      const request = new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url}`, {
        method: req.method,
        headers,
        body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body,
        signal: abort.signal,
      });
      const response = await handler.fetch(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body) {
        const reader = response.body.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          res.write(value);
        }
      }
      res.end();
    } catch (err) {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(err));
    }
  }).listen(port, '127.0.0.1', () => console.error(`ts-upstream listening on http://127.0.0.1:${port}/mcp`));
}
