// Builds the tool catalog of bench/sets/mcp-servers.json from real MCP servers.
//
// Run through scripts/retrieval-mcp-servers.sh. For every server in SERVERS below it installs the
// pinned package (npm into its own folder, PyPI into its own venv) under the git-ignored
// .cache/retrieval/mcp-servers, starts it over stdio with dummy credentials, asks it for
// tools/list (following nextCursor) through the official TypeScript SDK client, and writes each
// tool exactly as the server listed it. The hand-written "tasks" of an existing
// bench/sets/mcp-servers.json are kept, and every answer is checked against the new catalog.
//
// Deterministic: exact versions of every server package, plus a resolution cut-off date for their
// dependencies (npm --before, pip --uploaded-prior-to), a fixed HOME, TZ=UTC and fixed dummy
// paths. Installs are reused while their stamp matches; pass --reinstall to redo them.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const CACHE = path.join(ROOT, ".cache/retrieval/mcp-servers");
const OUT = path.join(ROOT, "bench/sets/mcp-servers.json");
// Dependencies are resolved as the registries stood at this instant.
const BEFORE = "2026-11-30T00:00:00Z";
const SDK = "@modelcontextprotocol/sdk@1.32.2";
const PIP = "pip==26.0"; // the first pip with --uploaded-prior-to
const REINSTALL = process.argv.includes("--reinstall");
const ONLY = process.argv.filter((a) => a.startsWith("--only=")).map((a) => a.slice(7).split(",")).flat();

// Paths handed to servers that insist on one (all under CACHE, created below).
const D = {
  home: path.join(CACHE, "home"),
  work: path.join(CACHE, "work"),
  files: path.join(CACHE, "work/files"),
  stubBin: path.join(CACHE, "stub-bin"),
  oauthKeys: path.join(CACHE, "work/gcp-oauth.keys.json"),
  gdriveCreds: path.join(CACHE, "work/gdrive-credentials.json"),
};

// package.json says "SEE LICENSE IN LICENSE" and ships none; the modelcontextprotocol/servers
// LICENSE: code moving from MIT to Apache-2.0, contributions not yet relicensed stay MIT.
const MCP_SERVERS_REPO_LICENCE = "MIT AND Apache-2.0 (modelcontextprotocol/servers LICENSE)";

// server: the catalog's name; pkg: registry package; version: exact; bin: the executable
// (npm: a bin of the package; pypi: a script in the venv); extra: more pinned packages installed
// beside it; before: a resolution cut-off of its own; licence: set only where the package
// metadata does not state one.
const SERVERS = [
  { server: "filesystem", registry: "npm", pkg: "@modelcontextprotocol/server-filesystem", version: "2026.8.31", bin: "mcp-server-filesystem", args: [D.files], licence: MCP_SERVERS_REPO_LICENCE },
  { server: "git", registry: "pypi", pkg: "mcp-server-git", version: "2026.10.19", bin: "mcp-server-git" },
  { server: "github", registry: "npm", pkg: "@modelcontextprotocol/server-github", version: "2025.4.8", bin: "mcp-server-github", env: { GITHUB_PERSONAL_ACCESS_TOKEN: "dummy" } },
  // Declares no zod of its own: with today's zod-to-json-schema npm brings zod 4, which empties
  // its schemas, so the zod and zod-to-json-schema of its day (April 2025) are pinned beside it.
  { server: "gitlab", registry: "npm", pkg: "@modelcontextprotocol/server-gitlab", version: "2025.4.25", extra: ["zod@3.24.2", "zod-to-json-schema@3.24.5"], bin: "mcp-server-gitlab", env: { GITLAB_PERSONAL_ACCESS_TOKEN: "dummy" } },
  { server: "circleci", registry: "npm", pkg: "@circleci/mcp-server-circleci", version: "0.20.0", bin: "mcp-server-circleci", env: { CIRCLECI_TOKEN: "dummy" } },
  { server: "sentry", registry: "npm", pkg: "@sentry/mcp-server", version: "0.39.0", bin: "sentry-mcp", args: ["--access-token=dummy"] },
  { server: "slack", registry: "npm", pkg: "@modelcontextprotocol/server-slack", version: "2025.4.25", bin: "mcp-server-slack", env: { SLACK_BOT_TOKEN: "xoxb-dummy", SLACK_TEAM_ID: "T00000000" } },
  { server: "discord", registry: "npm", pkg: "mcp-discord", version: "1.3.4", bin: "mcp-discord", env: { DISCORD_TOKEN: "dummy" } },
  { server: "gmail", registry: "npm", pkg: "@gongrzhe/server-gmail-autoauth-mcp", version: "1.1.11", bin: "gmail-mcp", setup: "gmail" },
  { server: "google-calendar", registry: "npm", pkg: "@cocal/google-calendar-mcp", version: "2.6.3", bin: "google-calendar-mcp", env: { GOOGLE_OAUTH_CREDENTIALS: D.oauthKeys } },
  { server: "gdrive", registry: "npm", pkg: "@modelcontextprotocol/server-gdrive", version: "2025.1.14", bin: "mcp-server-gdrive", env: { GDRIVE_CREDENTIALS_PATH: D.gdriveCreds } },
  { server: "google-maps", registry: "npm", pkg: "@modelcontextprotocol/server-google-maps", version: "0.6.2", bin: "mcp-server-google-maps", env: { GOOGLE_MAPS_API_KEY: "dummy" } },
  { server: "postgres", registry: "npm", pkg: "@modelcontextprotocol/server-postgres", version: "0.6.2", bin: "mcp-server-postgres", args: ["postgresql://127.0.0.1:1/dummy"] },
  { server: "sqlite", registry: "pypi", pkg: "mcp-server-sqlite", version: "2025.4.25", extra: ["mcp==1.30.0"], bin: "mcp-server-sqlite", args: ["--db-path", path.join(D.work, "dummy.db")], licence: "MIT (the wheel states none; modelcontextprotocol/servers LICENSE when it was archived there)" },
  // Connects at start: a stub that answers +OK to every command stands in for Redis.
  { server: "redis", registry: "npm", pkg: "@modelcontextprotocol/server-redis", version: "2025.4.25", bin: "mcp-server-redis", args: ["redis://127.0.0.1:{REDIS_PORT}"] },
  { server: "puppeteer", registry: "npm", pkg: "@modelcontextprotocol/server-puppeteer", version: "2025.5.12", bin: "mcp-server-puppeteer" },
  { server: "playwright", registry: "npm", pkg: "@playwright/mcp", version: "0.0.83", bin: "playwright-mcp" },
  { server: "fetch", registry: "pypi", pkg: "mcp-server-fetch", version: "2026.10.24", bin: "mcp-server-fetch" },
  { server: "brave-search", registry: "npm", pkg: "@modelcontextprotocol/server-brave-search", version: "0.6.2", bin: "mcp-server-brave-search", env: { BRAVE_API_KEY: "dummy" } },
  { server: "tavily", registry: "npm", pkg: "tavily-mcp", version: "0.2.22", bin: "tavily-mcp", env: { TAVILY_API_KEY: "dummy" } },
  { server: "exa", registry: "npm", pkg: "exa-mcp-server", version: "3.4.1", bin: "exa-mcp-server", env: { EXA_API_KEY: "dummy" }, licence: "MIT (LICENSE file; package.json states none)" },
  { server: "context7", registry: "npm", pkg: "@upstash/context7-mcp", version: "4.1.1", bin: "context7-mcp" },
  { server: "aws-docs", registry: "pypi", pkg: "awslabs.aws-documentation-mcp-server", version: "1.2.3", bin: "awslabs.aws-documentation-mcp-server" },
  { server: "arxiv", registry: "pypi", pkg: "arxiv-mcp-server", version: "0.8.2", bin: "arxiv-mcp-server", args: ["--storage-path", path.join(D.work, "papers")] },
  { server: "memory", registry: "npm", pkg: "@modelcontextprotocol/server-memory", version: "2026.8.31", bin: "mcp-server-memory", env: { MEMORY_FILE_PATH: path.join(D.work, "memory.jsonl") }, licence: MCP_SERVERS_REPO_LICENCE },
  { server: "sequential-thinking", registry: "npm", pkg: "@modelcontextprotocol/server-sequential-thinking", version: "2026.8.31", bin: "mcp-server-sequential-thinking", licence: MCP_SERVERS_REPO_LICENCE },
  { server: "everything", registry: "npm", pkg: "@modelcontextprotocol/server-everything", version: "2026.8.31", bin: "mcp-server-everything", args: ["stdio"], licence: MCP_SERVERS_REPO_LICENCE },
  { server: "time", registry: "pypi", pkg: "mcp-server-time", version: "2026.10.19", bin: "mcp-server-time", args: ["--local-timezone", "UTC"] },
  { server: "weather", registry: "npm", pkg: "@dangahagan/weather-mcp", version: "1.23.0", bin: "weather-mcp" },
  { server: "notion", registry: "npm", pkg: "@notionhq/notion-mcp-server", version: "2.5.2", bin: "notion-mcp-server", env: { NOTION_TOKEN: "dummy" } },
  // Talks to the Obsidian Local REST API plugin, reached only when a tool is called.
  { server: "obsidian", registry: "pypi", pkg: "mcp-obsidian", version: "0.2.3", bin: "mcp-obsidian", env: { OBSIDIAN_API_KEY: "dummy", OBSIDIAN_HOST: "127.0.0.1" } },
  { server: "todoist", registry: "npm", pkg: "@doist/todoist-mcp", version: "11.0.0", bin: "todoist-mcp", env: { TODOIST_API_KEY: "dummy" } },
  { server: "linear", registry: "npm", pkg: "mcp-server-linear", version: "1.6.0", bin: "mcp-server-linear", env: { LINEAR_API_KEY: "dummy" } },
  // Jira only: without CONFLUENCE_* settings it lists no Confluence tools.
  { server: "jira", registry: "pypi", pkg: "mcp-atlassian", version: "0.23.1", bin: "mcp-atlassian", env: { JIRA_URL: "https://example.atlassian.net", JIRA_USERNAME: "dummy@example.com", JIRA_API_TOKEN: "dummy" } },
  { server: "airtable", registry: "npm", pkg: "airtable-mcp-server", version: "1.14.0", bin: "airtable-mcp-server", env: { AIRTABLE_API_KEY: "dummy" } },
  { server: "stripe", registry: "npm", pkg: "@stripe/mcp", version: "0.2.5", bin: "mcp", args: ["--tools=all", "--api-key=sk_test_dummy"] },
  // Needs podman or docker on PATH: a stub podman that only prints a version.
  { server: "containers", registry: "npm", pkg: "podman-mcp-server", version: "0.0.15", bin: "podman-mcp-server", stubPath: true },
  { server: "kubernetes", registry: "npm", pkg: "mcp-server-kubernetes", version: "4.1.7", bin: "mcp-server-kubernetes" },
  { server: "spotify", registry: "pypi", pkg: "spotify-mcp-server", version: "0.1.6", extra: ["mcp==1.30.0"], bin: "spotify-mcp-server", env: { SPOTIFY_CLIENT_ID: "dummy", SPOTIFY_CLIENT_SECRET: "dummy", SPOTIFY_REDIRECT_URI: "http://127.0.0.1:8888/callback" } },
  { server: "youtube", registry: "npm", pkg: "youtube-data-mcp-server", version: "1.0.16", bin: "youtube-data-mcp-server", env: { YOUTUBE_API_KEY: "dummy" } },
];

const SOURCE =
  "Tool definitions of " + SERVERS.length + " real MCP servers, published on npm and PyPI (filesystem, git, code hosting, CI, " +
  "error tracking, chat, mail, calendar, maps, databases, browser automation, web fetch and search, documentation, papers, " +
  "memory, time, weather, notes, task trackers, payments, containers, Kubernetes, music, video): each pinned package was " +
  "installed, started over stdio with dummy credentials and asked for tools/list by the official TypeScript SDK client; " +
  "every tool is kept exactly as its server listed it (name, description, inputSchema, title, annotations and any other " +
  "field), in the server's order. The tasks were written by hand, in users' words and without looking at any ranker's " +
  "results: a whole request each, answered by the 1 to 4 tools a competent agent would call, with equivalent tools of " +
  "other servers as alternatives. Regenerate the catalog with scripts/retrieval-mcp-servers.sh (the tasks are kept).";

function run(cmd, args, opts = {}) {
  execFileSync(cmd, args, { stdio: ["ignore", "inherit", "inherit"], ...opts });
}

function stampOk(dir, stamp) {
  if (REINSTALL) return false;
  try {
    return fs.readFileSync(path.join(dir, ".stamp"), "utf8") === stamp;
  } catch {
    return false;
  }
}

function npmInstall(dir, specs, before = BEFORE) {
  const stamp = JSON.stringify({ specs, before });
  if (stampOk(dir, stamp)) return;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "package.json"), '{"private": true}\n');
  console.error(`install npm ${specs.join(" ")}`);
  run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", "--save-exact", `--before=${before}`, ...specs], {
    cwd: dir,
    env: { ...process.env, PUPPETEER_SKIP_DOWNLOAD: "1", PUPPETEER_SKIP_CHROMIUM_DOWNLOAD: "1", PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: "1" },
  });
  fs.writeFileSync(path.join(dir, ".stamp"), stamp);
}

function pipInstall(dir, specs, before = BEFORE) {
  const stamp = JSON.stringify({ specs, before, PIP });
  if (stampOk(dir, stamp)) return;
  fs.rmSync(dir, { recursive: true, force: true });
  console.error(`install pypi ${specs.join(" ")}`);
  run("python3", ["-m", "venv", dir]);
  const pip = path.join(dir, "bin/pip");
  run(pip, ["install", "--quiet", "--disable-pip-version-check", PIP]);
  run(pip, ["install", "--quiet", "--disable-pip-version-check", `--uploaded-prior-to=${before}`, ...specs]);
  fs.writeFileSync(path.join(dir, ".stamp"), stamp);
}

function installDir(s) {
  return path.join(CACHE, s.registry, s.server);
}

function install(s) {
  const dir = installDir(s);
  if (s.registry === "npm") npmInstall(dir, [`${s.pkg}@${s.version}`, ...(s.extra || [])], s.before);
  else pipInstall(dir, [`${s.pkg}==${s.version}`, ...(s.extra || [])], s.before);
}

function npmPackageDir(s) {
  return path.join(installDir(s), "node_modules", s.pkg);
}

function pyDistInfo(s) {
  const site = path.join(installDir(s), "lib");
  const py = fs.readdirSync(site).find((d) => d.startsWith("python"));
  const sp = path.join(site, py, "site-packages");
  const norm = s.pkg.replace(/[-.]/g, "_").toLowerCase();
  const di = fs.readdirSync(sp).find((d) => d.toLowerCase() === `${norm}-${s.version}.dist-info`);
  if (!di) throw new Error(`${s.server}: no dist-info for ${s.pkg} ${s.version}`);
  return path.join(sp, di);
}

// The licence the package's own metadata states (npm "license"; wheel License-Expression,
// License, or a licence classifier), unless the spec says otherwise.
function licence(s) {
  if (s.licence) return s.licence;
  if (s.registry === "npm") {
    const pj = JSON.parse(fs.readFileSync(path.join(npmPackageDir(s), "package.json"), "utf8"));
    if (pj.version !== s.version) throw new Error(`${s.server}: installed ${pj.version}, want ${s.version}`);
    const l = typeof pj.license === "string" ? pj.license : pj.license?.type;
    if (!l || /^SEE LICEN[CS]E/i.test(l)) throw new Error(`${s.server}: package.json states no licence (${l}); set one in SERVERS`);
    return l;
  }
  const meta = fs.readFileSync(path.join(pyDistInfo(s), "METADATA"), "utf8").split("\n\n")[0];
  const field = (name) => meta.split("\n").find((l) => l.startsWith(name + ": "))?.slice(name.length + 2).trim();
  const expr = field("License-Expression");
  if (expr) return expr;
  const lic = field("License");
  if (lic && lic.length < 40 && !lic.includes("\n")) return lic;
  const cls = meta.split("\n").filter((l) => l.startsWith("Classifier: License :: OSI Approved :: ")).map((l) => l.split(" :: ").pop());
  if (cls.length) return cls.join(" OR ");
  // A LICENSE file only: name it by its first line.
  const lf = ["licenses/LICENSE", "LICENSE"].map((f) => path.join(pyDistInfo(s), f)).find((f) => fs.existsSync(f));
  if (lf) {
    const first = fs.readFileSync(lf, "utf8").trim().split("\n")[0].trim();
    if (/^MIT License$/i.test(first)) return "MIT (LICENSE file; no metadata field)";
    if (/^Apache License/i.test(first)) return "Apache-2.0 (LICENSE file; no metadata field)";
  }
  throw new Error(`${s.server}: no licence in the wheel metadata; set one in SERVERS`);
}

function command(s) {
  if (s.registry === "npm") {
    const pj = JSON.parse(fs.readFileSync(path.join(npmPackageDir(s), "package.json"), "utf8"));
    const bins = typeof pj.bin === "string" ? { [pj.name.split("/").pop()]: pj.bin } : pj.bin || {};
    const rel = bins[s.bin] ?? (Object.keys(bins).length === 1 ? Object.values(bins)[0] : undefined);
    if (!rel) throw new Error(`${s.server}: no bin ${s.bin} in ${JSON.stringify(bins)}`);
    return { command: process.execPath, args: [path.join(npmPackageDir(s), rel)] };
  }
  return { command: path.join(installDir(s), "bin", s.bin), args: [] };
}

// Dummy files and stubs for servers that insist on them.
function prepare() {
  for (const d of [D.home, D.work, D.files, D.stubBin]) fs.mkdirSync(d, { recursive: true });
  const oauth = { installed: { client_id: "dummy.apps.googleusercontent.com", client_secret: "dummy", redirect_uris: ["http://localhost"] } };
  fs.writeFileSync(D.oauthKeys, JSON.stringify(oauth));
  fs.writeFileSync(D.gdriveCreds, JSON.stringify({ access_token: "dummy", token_type: "Bearer" }));
  const gmail = path.join(D.home, ".gmail-mcp");
  fs.mkdirSync(gmail, { recursive: true });
  fs.writeFileSync(path.join(gmail, "gcp-oauth.keys.json"), JSON.stringify(oauth));
  fs.writeFileSync(path.join(gmail, "credentials.json"), JSON.stringify({ access_token: "dummy", refresh_token: "dummy", token_type: "Bearer" }));
  const podman = path.join(D.stubBin, "podman");
  fs.writeFileSync(podman, '#!/bin/sh\necho "podman version 5.0.0"\n');
  fs.chmodSync(podman, 0o755);
}

// A Redis stand-in on loopback: answers +OK to each command of a RESP request.
function redisStub() {
  return new Promise((resolve) => {
    const srv = net.createServer((c) =>
      c.on("data", (d) => {
        const n = (d.toString("latin1").match(/(^|\r\n)\*\d+\r\n/g) || []).length;
        c.write("+OK\r\n".repeat(Math.max(n, 1)));
      }),
    );
    srv.listen(0, "127.0.0.1", () => resolve(srv));
  });
}

async function listTools(sdk, s, subst) {
  const { command: cmd, args } = command(s);
  const env = {
    PATH: (s.stubPath ? D.stubBin + ":" : "") + process.env.PATH,
    HOME: D.home,
    TZ: "UTC",
    LANG: "C.UTF-8",
    DO_NOT_TRACK: "1",
    PYTHONHASHSEED: "0", // mcp-atlassian joins a set into a default value
    ...(s.env || {}),
  };
  const transport = new sdk.StdioClientTransport({
    command: cmd,
    args: [...args, ...(s.args || []).map((a) => a.replace(/\{(\w+)\}/g, (_, k) => subst[k]))],
    env,
    cwd: D.work,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d) => (stderr += d));
  const client = new sdk.Client({ name: "retrieval-mcp-servers", version: "1.0.0" });
  // The raw result: no client-side validation or reshaping of the tools.
  const Raw = sdk.z.object({ tools: sdk.z.array(sdk.z.any()), nextCursor: sdk.z.string().optional() }).passthrough();
  let timer;
  const timeout = new Promise((_, rej) => (timer = setTimeout(() => rej(new Error("timed out")), 120000)));
  try {
    const work = (async () => {
      await client.connect(transport);
      const tools = [];
      let cursor;
      do {
        const r = await client.request({ method: "tools/list", params: cursor ? { cursor } : {} }, Raw);
        tools.push(...r.tools);
        cursor = r.nextCursor;
      } while (cursor);
      return tools;
    })();
    return await Promise.race([work, timeout]);
  } catch (e) {
    throw new Error(`${s.server}: ${e.message}\n${stderr.slice(-2000)}`);
  } finally {
    clearTimeout(timer);
    await client.close().catch(() => {});
  }
}

// One server, tool or task a line; the rest indented.
function serialize(doc) {
  const line = (v) => JSON.stringify(v);
  const list = (a) => (a.length ? "[\n" + a.map((v) => "  " + line(v)).join(",\n") + "\n ]" : "[]");
  return (
    "{\n" +
    ` "name": ${line(doc.name)},\n` +
    ` "source": ${line(doc.source)},\n` +
    ` "servers": ${list(doc.servers)},\n` +
    ` "tools": ${list(doc.tools)},\n` +
    ` "tasks": ${list(doc.tasks)}\n` +
    "}\n"
  );
}

function checkTasks(tasks, tools) {
  const have = new Set(tools.map((t) => `${t.server}\u0000${t.name}`));
  const bad = [];
  tasks.forEach((t, i) => {
    for (const a of t.answers) {
      for (const x of [a, ...(a.alternatives || [])]) {
        if (!have.has(`${x.server}\u0000${x.tool}`)) bad.push(`task ${i}: ${x.server}/${x.tool}`);
      }
    }
  });
  return bad;
}

async function main() {
  fs.mkdirSync(CACHE, { recursive: true });
  prepare();
  const clientDir = path.join(CACHE, "client");
  npmInstall(clientDir, [SDK]);
  const sdkDir = path.join(clientDir, "node_modules/@modelcontextprotocol/sdk/dist/esm");
  const imp = (p) => import(pathToFileURL(p).href);
  const sdk = {
    ...(await imp(path.join(sdkDir, "client/index.js"))),
    ...(await imp(path.join(sdkDir, "client/stdio.js"))),
    z: await imp(path.join(clientDir, "node_modules/zod/v4/index.js")),
  };

  const chosen = ONLY.length ? SERVERS.filter((s) => ONLY.includes(s.server)) : SERVERS;
  for (const s of chosen) install(s);

  const redis = await redisStub();
  const subst = { REDIS_PORT: String(redis.address().port) };
  const servers = [];
  const tools = [];
  const failed = [];
  for (const s of chosen) {
    try {
      const listed = await listTools(sdk, s, subst);
      servers.push({ server: s.server, package: `${s.registry}:${s.pkg}@${s.version}`, licence: licence(s), tools: listed.length });
      for (const t of listed) tools.push({ server: s.server, ...t });
      console.error(`${s.server}: ${listed.length} tools`);
    } catch (e) {
      failed.push(e.message);
      console.error(`FAILED ${e.message}`);
    }
  }
  redis.close();
  if (failed.length) {
    console.error(`${failed.length} server(s) failed; ${OUT} not written`);
    process.exit(1);
  }
  if (ONLY.length) {
    console.log(JSON.stringify({ servers, tools }, null, 1));
    return;
  }
  const old = fs.existsSync(OUT) ? JSON.parse(fs.readFileSync(OUT, "utf8")) : {};
  const tasks = old.tasks || [];
  const bad = checkTasks(tasks, tools);
  fs.mkdirSync(path.dirname(OUT), { recursive: true });
  fs.writeFileSync(OUT, serialize({ name: "mcp-servers", source: SOURCE, servers, tools, tasks }));
  console.error(`wrote ${path.relative(ROOT, OUT)}: ${servers.length} servers, ${tools.length} tools, ${tasks.length} tasks`);
  if (bad.length) {
    console.error(`answers missing from the catalog:\n  ${bad.join("\n  ")}`);
    process.exit(1);
  }
}

await main();
process.exit(0);
