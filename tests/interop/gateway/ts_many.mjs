// Interop: twenty upstreams with over 1,000 tools behind the gateway (examples/gateway.rs),
// driven by the TypeScript SDK 1.x client over stdio.
//
//   node ts_many.mjs GATEWAY CONFIG
//
// CONFIG's entries `bNN` run `bench_large N` (N tools: add, echo, tool_00000…; "Generated tool
// number i: looks a record up by its id…"); the others are the mt/ts/py upstreams of
// upstreams.json. Checks: the gateway starts in time; listed (--no-defer), tools/list page by
// page gives every tool of every upstream (N per bench entry, > 1,000 in all) and a call works;
// deferred, search_tools finds specific tools by the words of their descriptions across
// upstreams (a number only one upstream's tools reach, the TypeScript and Python servers' tools
// by a natural request), its tag filter keeps one upstream, its total is the list's, and a call
// through call_tool works. Prints "ok - ..."/"not ok - ..." lines, then "N passed, M failed".

import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { assert, check, short, summary, tally, textOf, watchdog } from '../checks.mjs';

const [gateway, config] = process.argv.slice(2);
if (!gateway || !config) {
  console.error('usage: node ts_many.mjs GATEWAY CONFIG');
  process.exit(2);
}
watchdog(150_000);
const UPSTREAMS = JSON.parse(readFileSync(new URL('./upstreams.json', import.meta.url), 'utf8'));
const servers = JSON.parse(readFileSync(config, 'utf8')).mcpServers;
const bench = Object.entries(servers)
  .filter(([name]) => /^b\d+$/.test(name))
  .map(([name, entry]) => ({ name, count: Number(entry.args[0]) }));
const others = Object.keys(servers).filter((name) => UPSTREAMS[name]);
const biggest = bench.reduce((a, b) => (b.count > a.count ? b : a));
const second = Math.max(...bench.filter((b) => b !== biggest).map((b) => b.count));
// A generated tool number only the biggest bench upstream has.
const unique = second + Math.floor((biggest.count - second) / 2);
const uniqueTool = `${biggest.name}_tool_${String(unique).padStart(5, '0')}`;
const expectedBench = bench.reduce((sum, b) => sum + b.count, 0);

async function connect(p, listed) {
  const client = new Client({ name: 'gateway-interop-many', version: '0.0.0' });
  const transport = new StdioClientTransport({
    command: gateway,
    args: [config, ...(listed ? ['--no-defer'] : [])],
    stderr: 'ignore',
  });
  const started = Date.now();
  await check(`${p} the gateway with ${Object.keys(servers).length} upstreams answers within 30 s`, async () => {
    await client.connect(transport);
    const took = (Date.now() - started) / 1000;
    console.log(`# ${p} connected ${took.toFixed(1)} s after the start`);
    assert(took < 30, `took ${took} s`);
  });
  return client;
}

let listedTotal = 0;
{
  const p = 'many (listed):';
  const client = await connect(p, true);
  const tools = await check(`${p} tools/list, page by page, has every tool of every upstream (> 1,000)`, async () => {
    const tools = [];
    let cursor;
    let pages = 0;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      tools.push(...page.tools);
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor && pages < 1000);
    const names = new Set(tools.map((t) => t.name));
    assert(names.size === tools.length, `${tools.length - names.size} duplicates`);
    for (const { name, count } of bench) {
      const mine = tools.filter((t) => t.name.startsWith(`${name}_`)).length;
      assert(mine === count, `${name}: ${mine} tools listed, not ${count}`);
    }
    for (const name of others) assert(names.has(UPSTREAMS[name].tool), `${UPSTREAMS[name].tool} not listed`);
    assert(tools.length > 1000, `${tools.length} tools`);
    console.log(`# ${p} ${tools.length} tools in ${pages} page(s) (${expectedBench} of ${bench.length} bench_large upstreams)`);
    listedTotal = tools.length;
    return tools;
  });
  await check(`${p} call ${uniqueTool} by its name (structured output)`, async () => {
    const result = await client.callTool({ name: uniqueTool, arguments: { id: 'rec-42', limit: 3 } });
    assert(!result.isError && result.structuredContent?.id === 'rec-42', short(result));
  });
  await check(`${p} call ${bench[0].name}_add`, async () => {
    const result = await client.callTool({ name: `${bench[0].name}_add`, arguments: { a: 2, b: 3 } });
    assert(!result.isError && textOf(result) === '5', short(result));
  });
  void tools;
  await client.close();
}

{
  const p = 'many (deferred):';
  const client = await connect(p, false);
  const search = async (query, extra = {}) => {
    const result = await client.callTool({ name: 'search_tools', arguments: { query, ...extra } });
    assert(!result.isError, short(result));
    return result.structuredContent;
  };
  await check(`${p} "generated tool number ${unique}" finds ${uniqueTool} first`, async () => {
    const found = (await search(`generated tool number ${unique}`, { limit: 5 })).tools.map((t) => t.name);
    assert(found[0] === uniqueTool, `found ${short(found)}`);
  });
  for (const name of others) {
    const u = UPSTREAMS[name];
    await check(`${p} "${u.search}" finds ${u.tool} among ${listedTotal || 'all the'} tools`, async () => {
      const found = (await search(u.search, { limit: 5 })).tools.map((t) => t.name);
      assert(found.slice(0, 3).includes(u.tool), `top 3: ${short(found)}`);
    });
  }
  const tag = bench[Math.floor(bench.length / 2)].name;
  await check(`${p} "look a record up by its id" with tags [${tag}] keeps ${tag}'s tools only`, async () => {
    const result = await search('look a record up by its id and return its owner', { tags: [tag], limit: 20 });
    assert(result.tools.length === 20, `${result.tools.length} results`);
    assert(result.tools.every((t) => t.name.startsWith(`${tag}_tool_`)), short(result.tools.map((t) => t.name)));
  });
  await check(`${p} an empty query's total is the list's (${listedTotal})`, async () => {
    const result = await search('', { limit: 1 });
    assert(result.total === listedTotal, `total ${result.total}`);
  });
  await check(`${p} call ${uniqueTool} through call_tool`, async () => {
    const result = await client.callTool({ name: 'call_tool', arguments: { name: uniqueTool, arguments: { id: 'rec-7' } } });
    assert(!result.isError && result.structuredContent?.id === 'rec-7', short(result));
  });
  await client.close();
}

console.log(summary());
process.exit(tally.failed ? 1 : 0);
