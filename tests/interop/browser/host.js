// The host side of the browser test (views.mjs bundles this file with esbuild; no CDN): a web page
// that connects to an MCP server over Streamable HTTP, calls a tool linked to an MCP Apps view,
// reads the view with resources/read, renders it in a double-iframe sandbox (sandbox.html on
// another origin, the view in an inner sandboxed iframe) and talks to it through the host bridge
// of @modelcontextprotocol/ext-apps (AppBridge + PostMessageTransport).
//
// Two MCP clients can back the bridge (chosen per call, `client`):
//   "v2"  @modelcontextprotocol/client 2.x, the bridge's own peer: passed to AppBridge, which
//         forwards the view's tools/call and resources/read to the server by itself;
//   "sdk" @modelcontextprotocol/sdk 1.x (the SDK the other interop tests pin): AppBridge(null)
//         with the host's own forwarding handlers.
// Either way the host lets the view call only tools whose `_meta.ui.visibility` includes "app".
//
// views.mjs drives it through `window.mcpHost` and asserts on the DOM inside the view.

import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  getToolUiResourceUri,
  isToolVisibilityAppOnly,
} from '@modelcontextprotocol/ext-apps/app-bridge';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpTransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientSdk } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpTransportSdk } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const HOST_INFO = { name: 'mcp-tools-interop-host', version: '1.0.0' };
const UI_EXTENSION = 'io.modelcontextprotocol/ui';
// The inner iframe's sandbox: scripts, and the sandbox proxy's (not the host's) origin.
const INNER_SANDBOX = 'allow-scripts allow-same-origin';
const STEP_MS = 10_000;

const params = new URLSearchParams(location.search);
// The sandbox proxy, on another origin than this page (another port of the test's static server).
const SANDBOX_URL = params.get('sandbox');
// The MCP endpoint: /mcp of this page's origin, which the static server passes to the MCP server.
const MCP_URL = new URL('/mcp', location.href);

// The views on the page, by id: { client, bridge, turn }. Each has its own MCP session.
const live = new Map();
let lastId = 0;
// What the test reads: per view, the tools/call requests it made and the sizes it reported.
const state = { events: [], views: {} };

function log(...args) {
  const line = args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' ');
  state.events.push(line);
  console.log('[host]', line);
}

// Every step is bounded: a hung view or server fails the step instead of the whole test.
function within(ms, what, promise) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function connect(kind) {
  // Announce MCP Apps support (extension capability), as MCP Apps hosts do.
  const capabilities = { extensions: { [UI_EXTENSION]: { mimeTypes: [RESOURCE_MIME_TYPE] } } };
  if (kind === 'v2') {
    const client = new ClientV2(HOST_INFO, { capabilities });
    await within(STEP_MS, 'connect (@modelcontextprotocol/client)', client.connect(new HttpTransportV2(MCP_URL)));
    return client;
  }
  if (kind === 'sdk') {
    const client = new ClientSdk(HOST_INFO, { capabilities });
    await within(STEP_MS, 'connect (@modelcontextprotocol/sdk)', client.connect(new HttpTransportSdk(MCP_URL)));
    return client;
  }
  throw new Error(`unknown client kind ${kind}`);
}

function appCallable(tool) {
  const visibility = tool?._meta?.ui?.visibility ?? ['model', 'app'];
  return visibility.includes('app');
}

// The outer iframe: the sandbox proxy on its own origin, with the view's CSP.
function loadSandboxProxy(id, stage, csp) {
  const iframe = document.createElement('iframe');
  iframe.id = `view-${id}`;
  iframe.className = 'view';
  iframe.title = 'MCP Apps view (sandbox proxy)';
  iframe.setAttribute('sandbox', 'allow-scripts allow-same-origin');
  const url = new URL(SANDBOX_URL);
  url.searchParams.set('host', location.origin);
  url.searchParams.set('csp', JSON.stringify(csp ?? {}));
  const ready = new Promise((resolve) => {
    const listener = (event) => {
      if (event.source === iframe.contentWindow && event.data?.method === 'ui/notifications/sandbox-proxy-ready') {
        window.removeEventListener('message', listener);
        resolve();
      }
    };
    window.addEventListener('message', listener);
  });
  iframe.src = url.href;
  stage.replaceChildren(iframe);
  return { iframe, ready: within(STEP_MS, 'sandbox proxy ready', ready) };
}

/**
 * Calls `tool` with `args` as a model-driven host would and shows its view. Resolves once the
 * view is initialized and has been sent the tool input and result.
 */
async function show({ client: kind, tool: toolName, args }) {
  const id = ++lastId;
  const mine = { viewCalls: [], sizes: [] };
  state.views[id] = mine;
  const client = await connect(kind);
  const serverVersion = client.getServerVersion();
  log('connected to', serverVersion, 'with', kind);

  const { tools } = await within(STEP_MS, 'tools/list', client.listTools());
  const tool = tools.find((t) => t.name === toolName);
  if (!tool) throw new Error(`the server has no tool ${toolName}`);
  const uri = getToolUiResourceUri(tool);
  if (!uri) throw new Error(`${toolName} has no _meta.ui.resourceUri`);
  // What the model would see: app-only tools are left out.
  const modelTools = tools.filter((t) => !isToolVisibilityAppOnly(t)).map((t) => t.name);
  const byName = new Map(tools.map((t) => [t.name, t]));

  // A turn of the conversation: the tool call, its text for the model, and its view.
  const turn = document.createElement('div');
  turn.className = 'turn';
  turn.id = `turn-${id}`;
  const callLine = document.createElement('div');
  callLine.className = 'call';
  callLine.textContent = `${toolName} ${JSON.stringify(args)}`;
  const textLine = document.createElement('div');
  textLine.className = 'text';
  const stage = document.createElement('div');
  turn.append(callLine, textLine, stage);
  document.getElementById('turns').append(turn);

  // The tool call and the view's HTML, in parallel.
  const resultPromise = within(STEP_MS, `tools/call ${toolName}`, client.callTool({ name: toolName, arguments: args }));
  const resource = await within(STEP_MS, `resources/read ${uri}`, client.readResource({ uri }));
  if (resource.contents.length !== 1) throw new Error(`resources/read ${uri}: ${resource.contents.length} contents`);
  const content = resource.contents[0];
  if (content.mimeType !== RESOURCE_MIME_TYPE) {
    throw new Error(`resources/read ${uri}: mimeType ${content.mimeType}, not ${RESOURCE_MIME_TYPE}`);
  }
  const html = typeof content.text === 'string' ? content.text : atob(content.blob);
  const ui = content._meta?.ui ?? {};
  log('read', uri, { mimeType: content.mimeType, bytes: html.length, ui });

  stage.className = ui.prefersBorder ? 'border' : '';
  const { iframe, ready } = loadSandboxProxy(id, stage, ui.csp);
  await ready;
  log('sandbox proxy ready');

  const bridge = new AppBridge(
    kind === 'v2' ? client : null,
    HOST_INFO,
    { openLinks: {}, serverTools: {}, serverResources: {}, logging: {} },
    {
      hostContext: {
        theme: 'light',
        platform: 'web',
        displayMode: 'inline',
        availableDisplayModes: ['inline'],
        containerDimensions: { width: iframe.clientWidth, maxHeight: 320 },
        locale: 'en-US',
        toolInfo: { tool },
      },
    },
  );
  if (kind !== 'v2') {
    bridge.oncalltool = (p) => client.callTool(p);
    bridge.onreadresource = (p) => client.readResource(p);
  }
  const initialized = new Promise((resolve) => bridge.addEventListener('initialized', () => resolve()));
  bridge.addEventListener('sizechange', ({ width, height }) => {
    mine.sizes.push({ width, height });
    if (typeof height === 'number' && height > 0) iframe.style.height = `${Math.min(Math.ceil(height), 320)}px`;
  });
  bridge.addEventListener('loggingmessage', (p) => log('view log', p));
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));

  // Host policy (MCP Apps: "Host MUST reject tools/call requests from apps for tools that don't
  // include "app" in visibility"), in front of the bridge's own forwarding.
  const forward = bridge.oncalltool;
  bridge.oncalltool = async (p, extra) => {
    const call = { name: p.name, arguments: p.arguments };
    mine.viewCalls.push(call);
    log('view calls', call);
    if (!appCallable(byName.get(p.name))) throw new Error(`the view may not call ${p.name}`);
    const result = await forward(p, extra);
    call.result = result;
    log('forwarded', p.name, '->', result);
    return result;
  };

  live.set(id, { client, bridge, turn });
  await within(STEP_MS, 'sandbox-resource-ready', bridge.sendSandboxResourceReady({ html, csp: ui.csp, permissions: ui.permissions, sandbox: INNER_SANDBOX }));
  await within(STEP_MS, 'the view initialized (ui/initialize, ui/notifications/initialized)', initialized);
  const appInfo = bridge.getAppVersion();
  log('view initialized', appInfo);

  await bridge.sendToolInput({ arguments: args });
  const result = await resultPromise;
  textLine.textContent = result.content?.find((c) => c.type === 'text')?.text ?? '';
  await bridge.sendToolResult(result);
  log('tool result sent');
  return { id, uri, mimeType: content.mimeType, ui, appInfo, modelTools, allTools: tools.map((t) => t.name), result };
}

/** Tears view `id` down: ui/resource-teardown, which the view must answer, then close. */
async function teardown(id) {
  const view = live.get(id);
  if (!view) return { answered: false, error: `no view ${id}` };
  live.delete(id);
  const { client, bridge, turn } = view;
  let answered = false;
  let error = null;
  try {
    await bridge.teardownResource({ reason: 'test done' }, { timeout: 5000 });
    answered = true;
  } catch (err) {
    error = String(err?.message ?? err);
  }
  await bridge.close().catch(() => {});
  turn.remove();
  await within(STEP_MS, 'client close', client.close()).catch(() => {});
  return { answered, error };
}

window.mcpHost = { show, teardown, state };
document.documentElement.dataset.ready = 'true';
