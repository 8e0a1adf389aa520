// Interop test: the MCP Apps views of examples/widgets.rs in a real browser. Headless Chromium
// (Debian's, driven by playwright-core) opens a small host page (host.html + host.js, bundled here
// with esbuild) that uses the host bridge of @modelcontextprotocol/ext-apps to connect to the
// running `widgets --http` server, call a tool, read its ui:// view, render it in a double-iframe
// sandbox (sandbox.html on a second origin) and deliver the tool result; the checks look at the
// DOM inside the view.
//
//   node views.mjs --server http://127.0.0.1:PORT/mcp --modules DIR --work DIR
//                  [--chromium /usr/bin/chromium] [--screenshot docs/widgets.png]
//
// --modules is where package.json/package-lock.json of this folder were installed (npm ci), --work
// a scratch folder (the bundle, the browser's profile, chromium.pid, console.log). Both cases
// run with each MCP client the host page can use (see host.js): @modelcontextprotocol/client 2.x
// and @modelcontextprotocol/sdk 1.x. The widgets server must be fresh: the note ids start at 1.
//
// Prints one line per check ("ok - name" / "not ok - name: reason"), then "N passed, M failed";
// exits 1 when a check failed. Run by scripts/interop.sh (part 5).

import { createRequire } from 'node:module';
import { createServer, request as httpRequest } from 'node:http';
import { appendFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { assert, check, fail, pass, summary, tally } from '../checks.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const DEADLINE_MS = 180_000;
const STEP_MS = 15_000;
const VIEWPORT = { width: 800, height: 560 };
// As the interop script asks: Debian's Chromium, no download, nothing in the background.
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

function parseArgs(argv) {
  const out = { chromium: '/usr/bin/chromium' };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i]?.replace(/^--/, '');
    if (!['server', 'modules', 'work', 'chromium', 'screenshot'].includes(key) || argv[i + 1] === undefined) {
      console.error(`usage: node views.mjs --server URL --modules DIR --work DIR [--chromium PATH] [--screenshot FILE]`);
      process.exit(2);
    }
    out[key] = argv[i + 1];
  }
  if (!out.server || !out.modules || !out.work) {
    console.error('views.mjs: --server, --modules and --work are required');
    process.exit(2);
  }
  return out;
}

const opts = parseArgs(process.argv.slice(2));
const WORK = resolve(opts.work);
const CONSOLE_LOG = join(WORK, 'console.log');
mkdirSync(join(WORK, 'www'), { recursive: true });
writeFileSync(CONSOLE_LOG, '');
rmSync(join(WORK, 'chromium.pid'), { force: true });

// The packages live in the install folder (.cache/interop/browser), not next to this file.
const requireFromInstall = createRequire(join(resolve(opts.modules), 'package.json'));
const { chromium } = requireFromInstall('playwright-core');
const esbuild = requireFromInstall('esbuild');

// Polls fn until it returns a truthy value; throws the last reason after ms.
async function eventually(ms, what, fn) {
  const end = Date.now() + ms;
  let last = 'never checked';
  while (Date.now() < end) {
    try {
      const v = await fn();
      if (v) return v;
      last = 'condition false';
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} (after ${ms} ms: ${last})`);
}

// --- the host page: bundle, two origins, the MCP endpoint passed on --------------------------
async function bundleHost() {
  await esbuild.build({
    entryPoints: [join(HERE, 'host.js')],
    outfile: join(WORK, 'www', 'host.js'),
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'chrome120',
    nodePaths: [join(resolve(opts.modules), 'node_modules')],
    logLevel: 'silent',
    legalComments: 'none',
  });
}

// The view's Content-Security-Policy (MCP Apps: the restrictive default, widened only by the
// domains the resource declares in `_meta.ui.csp`), sent as a header with sandbox.html and so
// inherited by the view's srcdoc iframe.
function viewCsp(csp) {
  const list = (v) =>
    (Array.isArray(v) ? v : []).filter((d) => typeof d === 'string' && /^[a-z][a-z0-9+.-]*:\/\/[^\s;'",]+$/i.test(d)).join(' ');
  const res = list(csp?.resourceDomains);
  const connect = list(csp?.connectDomains);
  const frame = list(csp?.frameDomains);
  const base = list(csp?.baseUriDomains);
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline' ${res}`,
    `style-src 'self' 'unsafe-inline' ${res}`,
    `img-src 'self' data: ${res}`,
    `font-src 'self' data: ${res}`,
    `media-src 'self' data: ${res}`,
    connect ? `connect-src ${connect}` : "connect-src 'none'",
    frame ? `frame-src ${frame}` : "frame-src 'none'",
    "object-src 'none'",
    base ? `base-uri ${base}` : "base-uri 'self'",
  ]
    .map((d) => d.trim())
    .join('; ');
}

function listen(handler) {
  return new Promise((resolveListen, reject) => {
    const server = createServer(handler);
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => resolveListen(server));
  });
}

const mcpTarget = new URL(opts.server);
const sockets = new Set();

// The host's origin serves the page, its bundle, and /mcp: the widgets server does not answer
// CORS preflights, so a page on another origin could not reach it directly.
async function startHostServer() {
  const page = readFileSync(join(HERE, 'host.html'));
  const server = await listen((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    if (req.method === 'GET' && url.pathname === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(page);
    } else if (req.method === 'GET' && url.pathname === '/host.js') {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-store' });
      res.end(readFileSync(join(WORK, 'www', 'host.js')));
    } else if (url.pathname === '/mcp') {
      // Passed on as is (Origin included: the server checks it), the answer streamed back.
      const headers = { ...req.headers, host: mcpTarget.host };
      const upstream = httpRequest(
        { hostname: mcpTarget.hostname, port: mcpTarget.port, path: mcpTarget.pathname + url.search, method: req.method, headers },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      upstream.on('error', (err) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`proxy: ${err.message}`);
      });
      res.on('close', () => upstream.destroy());
      req.pipe(upstream);
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    }
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return server;
}

async function startSandboxServer() {
  const page = readFileSync(join(HERE, 'sandbox.html'));
  const server = await listen((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    if (req.method === 'GET' && url.pathname === '/sandbox.html') {
      let csp = {};
      try {
        csp = JSON.parse(url.searchParams.get('csp') || '{}');
      } catch {
        csp = {};
      }
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        'content-security-policy': viewCsp(csp),
      });
      res.end(page);
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('only sandbox.html is served here');
    }
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return server;
}

// --- the browser ---------------------------------------------------------------------------
let browser = null;
let hostServer = null;
let sandboxServer = null;

async function shutdown() {
  if (browser) {
    const b = browser;
    browser = null;
    await Promise.race([b.close().catch(() => {}), new Promise((r) => setTimeout(r, 10_000))]);
  }
  for (const s of sockets) s.destroy();
  for (const server of [hostServer, sandboxServer]) if (server) server.close();
}

const watchdog = setTimeout(async () => {
  fail('browser views: finished in time', `still running after ${DEADLINE_MS / 1000} s`);
  await shutdown();
  console.log(summary());
  process.exit(1);
}, DEADLINE_MS);

function readCmdline(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}
function childPids() {
  const out = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // /proc/PID/stat: "pid (comm) state ppid ..."; comm may hold spaces, so read after the last ")".
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

const consoleLines = [];
function recordConsole(kind, text, where) {
  const line = `[${kind}] ${where ? `${where}: ` : ''}${text}`;
  consoleLines.push(line);
  appendFileSync(CONSOLE_LOG, `${line}\n`);
}

async function openHost(context, hostOrigin, sandboxOrigin) {
  const page = await context.newPage();
  page.setDefaultTimeout(STEP_MS);
  page.on('console', (msg) => {
    // The bridge traces every message at debug level: left out.
    if (msg.type() !== 'debug') recordConsole(msg.type(), msg.text(), msg.location()?.url?.slice(0, 80));
  });
  page.on('pageerror', (err) => recordConsole('pageerror', err.message));
  const url = `${hostOrigin}/?sandbox=${encodeURIComponent(`${sandboxOrigin}/sandbox.html`)}`;
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForFunction(() => window.mcpHost !== undefined, null, { timeout: STEP_MS });
  return page;
}

// The document inside view `id` (the inner iframe of its sandbox proxy).
function viewFrame(page, id) {
  return page.frameLocator(`#view-${id}`).frameLocator('#inner');
}
async function innerFrame(page, id) {
  const outer = await (await page.$(`#view-${id}`))?.contentFrame();
  const inner = await (await outer?.$('#inner'))?.contentFrame();
  if (!inner) throw new Error(`view ${id} has no inner frame`);
  return inner;
}

async function runClient(context, kind, origins, firstRun) {
  const { hostOrigin, sandboxOrigin } = origins;
  const page = await openHost(context, hostOrigin, sandboxOrigin);
  const label = kind === 'v2' ? 'client 2.x' : 'sdk 1.x';
  const before = consoleLines.length;
  const expected = []; // console lines a check provokes on purpose: [from, to)
  const show = (tool, args) => page.evaluate((a) => window.mcpHost.show(a), { client: kind, tool, args });
  const viewState = (id) => page.evaluate((i) => window.mcpHost.state.views[i], id);

  // 1. The chart: show_forecast's structured result drawn by the temperature-chart view.
  const city = 'Lisbon';
  const chart = await check(`${label}: show_forecast through the host: resources/read ui://widget/temperature-chart.html (text/html;profile=mcp-app), the view initializes with the AppBridge`, async () => {
    const info = await show('show_forecast', { city });
    assert(info.uri === 'ui://widget/temperature-chart.html', `resourceUri ${info.uri}`);
    assert(info.ui?.prefersBorder === true, `_meta.ui ${JSON.stringify(info.ui)}`);
    assert(info.appInfo?.name === 'temperature-chart', `appInfo ${JSON.stringify(info.appInfo)}`);
    assert(info.result?.structuredContent?.days?.length === 5, `result ${JSON.stringify(info.result)}`);
    return info;
  });
  if (chart) {
    const days = chart.result.structuredContent.days;
    const view = viewFrame(page, chart.id);
    await check(`${label}: the chart view renders the delivered result: "Temperatures in ${city}" and 5 bars with their highs`, async () => {
      await eventually(STEP_MS, 'the title shows the city', async () => (await view.locator('#title').textContent()) === `Temperatures in ${city}`);
      await eventually(STEP_MS, '5 bars', async () => (await view.locator('.bar').count()) === 5);
      for (const d of days) {
        const row = view.locator(`.bar[data-day="${d.day}"]`);
        const value = (await row.locator('.value').textContent())?.trim();
        assert(value === `${d.high} °C`, `${d.day}: shows ${JSON.stringify(value)}, expected "${d.high} °C"`);
        const box = await row.locator('.fill').boundingBox();
        assert(box && box.width > 0 && box.height > 0, `${d.day}: the bar is not drawn (${JSON.stringify(box)})`);
        assert(await row.isVisible(), `${d.day}: the row is not visible`);
      }
    });
    await check(`${label}: the chart view reports its size (ui/notifications/size-changed) and the host fits the iframe to it`, async () => {
      const sizes = await eventually(STEP_MS, 'a size-changed notification', async () => {
        const got = (await viewState(chart.id)).sizes.filter((x) => x.height > 0);
        return got.length ? got : null;
      });
      const last = sizes[sizes.length - 1];
      const frameBox = await eventually(STEP_MS, 'the iframe height follows', async () => {
        const box = await page.locator(`#view-${chart.id}`).boundingBox();
        return box && Math.abs(box.height - Math.min(Math.ceil(last.height), 320)) <= 2 ? box : null;
      });
      const drawn = await view.locator('#chart').boundingBox();
      assert(drawn && drawn.y + drawn.height <= frameBox.y + frameBox.height + 1, 'the chart is cut off by the iframe');
    });
    const from = consoleLines.length;
    await check(`${label}: the view is isolated: its own origin (the sandbox's), no access to the host page, fetch blocked by the CSP`, async () => {
      const frame = await innerFrame(page, chart.id);
      const probe = await frame.evaluate(async (hostUrl) => {
        let top = 'isolated';
        try {
          top = String(window.top.document.title);
        } catch {
          // expected: a cross-origin host page
        }
        let fetched = 'blocked';
        try {
          await fetch(hostUrl);
          fetched = 'fetched';
        } catch {
          // expected: connect-src 'none'
        }
        return { origin: self.origin, top, fetched };
      }, `${hostOrigin}/`);
      assert(probe.origin === sandboxOrigin, `the view's origin is ${probe.origin}, not the sandbox's ${sandboxOrigin}`);
      assert(probe.top === 'isolated', `the view read the host page (${probe.top})`);
      assert(probe.fetched === 'blocked', 'the view could fetch from the host origin');
    });
    await new Promise((r) => setTimeout(r, 200)); // the CSP report reaches the console
    expected.push([from, consoleLines.length]);
  }

  // 2. The form: compose_note's view saves through the app-only tool save_note, via the host.
  const draftTitle = 'Groceries';
  const form = await check(`${label}: compose_note through the host: the note-form view initializes and shows the draft title`, async () => {
    const info = await show('compose_note', { title: draftTitle });
    assert(info.uri === 'ui://widget/note-form.html', `resourceUri ${info.uri}`);
    assert(info.appInfo?.name === 'note-form', `appInfo ${JSON.stringify(info.appInfo)}`);
    const view = viewFrame(page, info.id);
    await eventually(STEP_MS, 'the title input holds the draft', async () => (await view.locator('#title').inputValue()) === draftTitle);
    return info;
  });
  if (form) {
    const view = viewFrame(page, form.id);
    await check(`${label}: save_note is app-only: in tools/list for the host, left out of the model's tools`, async () => {
      assert(form.allTools.includes('save_note'), `tools/list: ${form.allTools}`);
      assert(!form.modelTools.includes('save_note'), `model tools: ${form.modelTools}`);
      assert(['show_forecast', 'compose_note'].every((n) => form.modelTools.includes(n)), `model tools: ${form.modelTools}`);
    });
    const expectedId = firstRun ? 1 : 2;
    const title = 'Groceries for Sunday';
    const body = 'bread, olives, 6 eggs';
    const saved = await check(`${label}: typing in the form and clicking Save calls save_note through the host bridge; the view shows "Saved note ${expectedId}"`, async () => {
      await view.locator('#title').fill(title);
      await view.locator('#body').click();
      await view.locator('#body').pressSequentially(body);
      await view.locator('#save').click();
      await eventually(STEP_MS, `the view shows "Saved note ${expectedId}"`, async () => (await view.locator('#saved').textContent())?.trim() === `Saved note ${expectedId}`);
      const calls = (await viewState(form.id)).viewCalls;
      assert(calls.length === 1, `the host saw ${calls.length} tools/call from the view: ${JSON.stringify(calls)}`);
      const [call] = calls;
      assert(call.name === 'save_note', `called ${call.name}`);
      assert(call.arguments?.title === title && call.arguments?.body === body, `arguments ${JSON.stringify(call.arguments)}`);
      assert(call.result?.structuredContent?.id === expectedId && !call.result.isError, `server answered ${JSON.stringify(call.result)}`);
      return true;
    });
    if (saved && firstRun && opts.screenshot) {
      await check(`screenshot of the host page with both views: ${opts.screenshot}`, async () => {
        await eventually(STEP_MS, 'the form view fits its iframe', async () => (await viewState(form.id)).sizes.length > 0);
        await page.evaluate(() => document.fonts.ready);
        await new Promise((r) => setTimeout(r, 200));
        mkdirSync(dirname(resolve(opts.screenshot)), { recursive: true });
        await page.screenshot({ path: resolve(opts.screenshot), fullPage: false, animations: 'disabled', caret: 'hide' });
        const height = await page.evaluate(() => document.documentElement.scrollHeight);
        assert(height <= VIEWPORT.height, `the page is ${height} px high, the screenshot cuts it at ${VIEWPORT.height}`);
      });
    }
    await check(`${label}: an empty title is refused by save_note (isError) and the view says so`, async () => {
      await view.locator('#title').fill('');
      await view.locator('#save').click();
      await eventually(STEP_MS, 'the view shows the error', async () => /needs a title/.test((await view.locator('#saved').textContent()) ?? ''));
      const calls = (await viewState(form.id)).viewCalls;
      assert(calls.length === 2 && calls[1].result?.isError === true, `host saw ${JSON.stringify(calls.slice(1))}`);
    });
  }

  for (const [name, info] of [['chart', chart], ['note-form', form]]) {
    if (!info) continue;
    await check(`${label}: the ${name} view answers ui/resource-teardown`, async () => {
      const t = await page.evaluate((id) => window.mcpHost.teardown(id), info.id);
      assert(t.answered, `no answer: ${t.error}`);
    });
  }

  await check(`${label}: no page error and no CSP violation in the host, the sandbox or the views`, async () => {
    const bad = consoleLines
      .map((line, i) => ({ line, i }))
      .slice(before)
      .filter(({ i }) => !expected.some(([from, to]) => i >= from && i < to))
      .map(({ line }) => line)
      .filter((l) => l.startsWith('[pageerror]') || l.startsWith('[error]') || /Content.Security.Policy|Refused to/i.test(l));
    assert(bad.length === 0, bad.slice(0, 3).join(' | '));
  });
  await page.close();
}

async function main() {
  const bundled = await check('the host page bundles (esbuild: ext-apps app-bridge, @modelcontextprotocol/client, @modelcontextprotocol/sdk)', async () => {
    await bundleHost();
    return true;
  });
  if (!bundled) return;
  hostServer = await startHostServer();
  sandboxServer = await startSandboxServer();
  const origins = {
    hostOrigin: `http://127.0.0.1:${hostServer.address().port}`,
    sandboxOrigin: `http://127.0.0.1:${sandboxServer.address().port}`,
  };
  console.log(`# host page ${origins.hostOrigin}, sandbox ${origins.sandboxOrigin}, MCP server ${opts.server}`);

  browser = await check(`Chromium starts (${opts.chromium}, playwright-core)`, async () => {
    const b = await chromium.launch({ executablePath: opts.chromium, headless: true, args: CHROMIUM_ARGS, timeout: 60_000 });
    // The browser's main process (our child, in its own process group), for the interop script
    // to stop should this process die without closing it.
    const pid = childPids().find((p) => readCmdline(p).includes('chromium'));
    if (pid) writeFileSync(join(WORK, 'chromium.pid'), `${pid}\n`);
    console.log(`# Chromium ${b.version()}, pid ${pid ?? 'unknown'}`);
    return b;
  });
  if (!browser) return;
  const context = await browser.newContext({ viewport: VIEWPORT, deviceScaleFactor: 1, locale: 'en-US' });
  let first = true;
  for (const kind of ['v2', 'sdk']) {
    try {
      await runClient(context, kind, origins, first);
    } catch (err) {
      fail(`${kind}: the run ended early`, err instanceof Error ? err.message : err);
    }
    first = false;
  }
  await context.close();
}

try {
  await main();
} catch (err) {
  fail('browser views: ran to the end', err instanceof Error ? err.stack : err);
} finally {
  await shutdown();
  clearTimeout(watchdog);
}
console.log(summary());
process.exit(tally.failed > 0 ? 1 : 0);
