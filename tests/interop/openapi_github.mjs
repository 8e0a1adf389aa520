// The OpenAPI bridge at scale: GitHub's REST API description (npm @octokit/openapi,
// api.github.com.json, about 1,200 operations) served by examples/openapi, read by the official
// TypeScript SDK client (1.x) over stdio.
//
//   node openapi_github.mjs /path/to/target/debug/examples/openapi /path/to/api.github.com.json
//
// 1. Served directly: the client's `listTools` (every page) accepts every generated tool under
//    its strict result schema, and compiles every output schema (it validates results with
//    them); the tool count matches the document's operations, less those skipped.
// 2. Served deferred (`--defer`): `search_tools` finds the operation a natural request means,
//    among its first five results, for a fixed set of requests written before looking at the
//    results (each printed); at least all but one must be found.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { assert, check, fail, short, summary, watchdog } from './checks.mjs';

const [binary, spec] = process.argv.slice(2);
if (!binary || !spec) {
  console.error('usage: node openapi_github.mjs OPENAPI_BINARY api.github.com.json');
  process.exit(2);
}
watchdog(240_000);

async function connect(extra) {
  const transport = new StdioClientTransport({
    command: binary,
    args: [spec, '--base-url', 'https://api.github.com', ...extra],
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => (stderr += chunk));
  const client = new Client({ name: 'mcp-tools-interop-openapi', version: '0.0.0' });
  const started = Date.now();
  await client.connect(transport);
  return { client, transport, stderr: () => stderr, ms: Date.now() - started };
}

const direct = await check('direct: the server answers initialize', () => connect([]));
if (direct) {
  const banner = /: (\d+) tools from (\d+) operations(?: \((\d+) skipped[^)]*\))? in (\d+) ms/.exec(direct.stderr());
  console.log(`# ${banner ? banner[0].slice(2) : 'no load banner'}; connected in ${direct.ms} ms`);
  const tools = await check('direct: listTools (every page) passes the SDK client\'s strict validation', async () => {
    const all = [];
    let cursor;
    do {
      const page = await direct.client.listTools(cursor ? { cursor } : {});
      all.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return all;
  });
  if (tools) {
    await check('direct: one tool per operation served, more than 1,000', () => {
      assert(banner, `no load banner in stderr: ${short(direct.stderr())}`);
      const [served, operations, skipped] = [Number(banner[1]), Number(banner[2]), Number(banner[3] ?? 0)];
      assert(tools.length === served && served === operations - skipped && served > 1000, `${tools.length} listed, banner ${banner[0]}`);
    });
    await check('direct: names follow the tool-name rules and are unique', () => {
      const bad = tools.filter((t) => !/^[A-Za-z0-9_.-]{1,128}$/.test(t.name)).map((t) => t.name);
      assert(bad.length === 0, `bad names ${short(bad.slice(0, 5))}`);
      assert(new Set(tools.map((t) => t.name)).size === tools.length, 'duplicate names');
    });
    await check('direct: issues_create-comment is a POST with its path parameters required and a JSON body', () => {
      const tool = tools.find((t) => t.name === 'issues_create-comment');
      assert(tool, 'no issues_create-comment');
      const required = tool.inputSchema.required ?? [];
      assert(['owner', 'repo', 'issue_number', 'body'].every((r) => required.includes(r)), `required ${short(required)}`);
      assert(tool.annotations?.readOnlyHint !== true && tool.annotations?.openWorldHint === true, `annotations ${short(tool.annotations)}`);
    });
    await check('direct: GET operations are read-only and idempotent', () => {
      const get = tools.find((t) => t.name === 'repos_get');
      assert(get?.annotations?.readOnlyHint === true && get.annotations.idempotentHint === true, short(get?.annotations));
    });
  }
  await direct.client.close();
}

// Natural requests and the operation each means (written before looking at any result).
const QUERIES = [
  ['create an issue comment', 'issues_create-comment'],
  ['list pull requests of a repository', 'pulls_list'],
  ['star a repository', 'activity_star-repo-for-authenticated-user'],
  ['get the latest release', 'repos_get-latest-release'],
  ['delete a gist', 'gists_delete'],
  ['add labels to an issue', 'issues_add-labels'],
  ['create a webhook for a repository', 'repos_create-webhook'],
];
const deferred = await check('deferred: the server answers initialize with the meta-tools', async () => {
  const d = await connect(['--defer']);
  const { tools } = await d.client.listTools();
  assert(['search_tools', 'describe_tools', 'call_tool'].every((n) => tools.some((t) => t.name === n)), short(tools.map((t) => t.name)));
  return d;
});
if (deferred) {
  let found = 0;
  for (const [query, expected] of QUERIES) {
    const result = await deferred.client.callTool({ name: 'search_tools', arguments: { query, limit: 5 } });
    const names = (result.structuredContent?.tools ?? []).map((t) => t.name);
    const rank = names.indexOf(expected) + 1;
    if (rank > 0) found += 1;
    console.log(`# "${query}" → ${expected}: ${rank > 0 ? `rank ${rank}` : `not in the top 5 (${names.join(', ')})`}`);
  }
  if (found >= QUERIES.length - 1) {
    await check(`deferred: search_tools finds the operation meant in its top 5 for ${found} of ${QUERIES.length} requests (all but one at least)`, () => {});
  } else {
    fail('deferred: search_tools finds the operation meant in its top 5 for all requests but one', `only ${found} of ${QUERIES.length}`);
  }
  await deferred.client.close();
}
console.log(summary());
process.exit(0);
