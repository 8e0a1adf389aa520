// End-to-end OAuth test: examples/protected.rs as an OAuth 2.1 resource server, a real
// authorization server (oidc-provider, provider.mjs), and the official MCP TypeScript SDK
// clients' OAuth support, 1.x (@modelcontextprotocol/sdk, a 2025-11-25 client) and 2.x
// (@modelcontextprotocol/client, a 2026-07-28 client), headless.
//
//   node oauth_e2e.mjs --mcp http://127.0.0.1:P/mcp --issuer http://127.0.0.1:AS
//
// where the server runs as
//   protected --http 127.0.0.1:P --auth-issuer http://127.0.0.1:AS \
//     --auth-audience http://127.0.0.1:P/mcp --auth-scopes notes:read
// and the authorization server as `node provider.mjs --port AS --resource http://127.0.0.1:P/mcp`.
//
// 1. discovery: no token → 401 with the challenge; the protected-resource metadata names the
//    authorization server; its metadata offers what the flows below use.
// 2. client credentials (plain HTTP, then the SDK's ClientCredentialsProvider): tokens from the
//    token endpoint with `resource`; what a reader may see and call; 403 step-up challenges;
//    tokens for another audience, without audience, tampered, without the required scope.
// 3. the SDK 1.x authorization-code flow (an OAuthClientProvider whose redirectToAuthorization is a
//    headless user agent: plain HTTP requests following redirects through provider.mjs's
//    automated login and consent, cookies kept, until the redirect to redirect_uri carries the
//    code): 401 → discovery → dynamic registration → authorization code + PKCE → token → 200,
//    every step checked on the wire.
// 4. step-up: add_note with a notes:read token → 403 insufficient_scope naming the server's
//    required scope with the operation's (notes:read notes:write); the SDK 1.x reacts with a new
//    authorization for exactly the challenged scopes, and its new token works: add_note succeeds
//    (had the challenge named the operation's scope alone, the SDK would drop notes:read and
//    alternate between the two challenges for ever).
// 5. identity: whoami shows the account's subject; a session is refused (404) to another
//    subject's token.
// 6. the SDK 2.x client (@modelcontextprotocol/client, a 2026-07-28 client): the same flow
//    headless, then its own step-ups, which ask for the union of the scopes (SEP-2350): add_note
//    and then purge_notes succeed after automated re-authorizations.
//
// Prints one line per check ("ok - name" / "not ok - name: reason"), then "N passed, M failed".
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  Client as Client2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransport2,
  UnauthorizedError as UnauthorizedError2,
} from '@modelcontextprotocol/client';
import crypto from 'node:crypto';
import { parseArgs } from 'node:util';

import { assert, check, fail, short, summary, tally, textOf, watchdog } from '../checks.mjs';
import { ACCOUNT, STATIC_CLIENTS } from './clients.mjs';

const { values: args } = parseArgs({ options: { mcp: { type: 'string' }, issuer: { type: 'string' } } });
if (!args.mcp || !args.issuer) {
  console.error('usage: node oauth_e2e.mjs --mcp MCP_URL --issuer ISSUER_URL');
  process.exit(2);
}
const MCP = args.mcp;
const ISSUER = args.issuer;
const MCP_ORIGIN = new URL(MCP).origin;
const METADATA_URL = `${MCP_ORIGIN}/.well-known/oauth-protected-resource${new URL(MCP).pathname}`;
const OTHER_RESOURCE = 'https://other.example/mcp';
// Never contacted: the headless user agent stops at the redirect to it.
const REDIRECT_URL = 'http://127.0.0.1/oauth/callback';
const PROTOCOL = '2025-11-25';

const warnings = new Set();
console.warn = (...a) => warnings.add(a.map(String).join(' '));
watchdog(100_000);

// ---------------------------------------------------------------------------------------------
// Helpers: JSON-RPC over plain HTTP, tokens, JWTs, the wire log.

/** Every HTTP request the SDK and the headless user agent made: "METHOD URL STATUS". */
const wire = [];

/** fetch, recording the request and its status in `wire`. */
async function loggedFetch(url, init = {}) {
  const response = await fetch(url, init);
  const version = new Headers(init.headers).get('mcp-protocol-version');
  wire.push({ method: init.method ?? 'GET', url: String(url), status: response.status, version });
  return response;
}

/** The wire log since index `from`, one short line per request. */
function wireSince(from) {
  return wire.slice(from).map((w) => `${w.method} ${w.url.replace(/\?.*/, '?…')} ${w.status}`);
}

/** POSTs a JSON-RPC message to the MCP endpoint: { status, headers, body } (JSON or SSE). */
async function rpc(message, { token, session } = {}) {
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  if (token) headers.authorization = `Bearer ${token}`;
  if (session) {
    headers['mcp-session-id'] = session;
    headers['mcp-protocol-version'] = PROTOCOL;
  }
  const response = await fetch(MCP, { method: 'POST', headers, body: JSON.stringify(message) });
  const text = await response.text();
  let body = null;
  if (text.trim().startsWith('{')) body = JSON.parse(text);
  else {
    const data = text
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .pop();
    if (data) body = JSON.parse(data.slice(5));
  }
  return { status: response.status, headers: response.headers, body };
}

let nextId = 1;
const request = (method, params) => ({ jsonrpc: '2.0', id: nextId++, method, params });

/** Opens a 2025-11-25 session with `token`: its id. */
async function openSession(token) {
  const init = await rpc(
    request('initialize', {
      protocolVersion: PROTOCOL,
      capabilities: {},
      clientInfo: { name: 'oauth-e2e', version: '1' },
    }),
    { token },
  );
  assert(init.status === 200, `initialize: HTTP ${init.status} ${short(init.body)}`);
  const session = init.headers.get('mcp-session-id');
  assert(session, 'initialize: no Mcp-Session-Id');
  const initialized = await rpc({ jsonrpc: '2.0', method: 'notifications/initialized' }, { token, session });
  assert(initialized.status === 202, `notifications/initialized: HTTP ${initialized.status}`);
  return session;
}

/** The tool names `tools/list` shows to `token`'s session. */
async function toolNames(token, session) {
  const list = await rpc(request('tools/list'), { token, session });
  assert(list.status === 200, `tools/list: HTTP ${list.status} ${short(list.body)}`);
  return list.body.result.tools.map((t) => t.name).sort();
}

/** Calls a tool: { status, challenge, body }. */
async function callTool(token, session, name, args = {}) {
  const r = await rpc(request('tools/call', { name, arguments: args }), { token, session });
  return { status: r.status, challenge: r.headers.get('www-authenticate'), body: r.body };
}

/** The parameters of a `Bearer k="v", …` challenge. */
function challengeParams(header) {
  const params = {};
  for (const m of (header ?? '').matchAll(/([a-z_]+)="((?:[^"\\]|\\.)*)"/g)) params[m[1]] = m[2];
  return params;
}

/** Whether two space-separated scope lists name the same scopes. */
function sameScopes(a, b) {
  const set = (s) =>
    [
      ...new Set(
        String(s ?? '')
          .split(' ')
          .filter(Boolean),
      ),
    ]
      .sort()
      .join(' ');
  return set(a) === set(b);
}

/**
 * Asserts a 403 insufficient_scope step-up challenge for an operation needing `scope`: the
 * challenge names it, and at most also the server's required notes:read (both are what the
 * specification allows: the operation's own scopes, or those and the ones every request needs).
 */
function assertStepUp(r, scope) {
  assert(r.status === 403, `HTTP ${r.status} ${short(r.body)}`);
  assert(/^Bearer /.test(r.challenge ?? ''), `WWW-Authenticate: ${r.challenge}`);
  const p = challengeParams(r.challenge);
  assert(p.error === 'insufficient_scope', `error=${p.error} in ${r.challenge}`);
  // The operation's scopes with the server's required one (a client that replaces its scopes
  // with the challenge's still gets a token every request accepts).
  assert(
    sameScopes(p.scope, scope === 'notes:read' ? scope : `notes:read ${scope}`),
    `scope="${p.scope}", expected "notes:read ${scope}", in ${r.challenge}`,
  );
  assert(p.resource_metadata === METADATA_URL, `resource_metadata=${p.resource_metadata}`);
}

/** The authorization server's metadata (fetched once). */
let asMetadata;

/** A client-credentials token from the token endpoint: the whole answer. */
async function clientCredentials(client, { scope, resource } = {}) {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (scope) form.set('scope', scope);
  if (resource) form.set('resource', resource);
  const basic = Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64');
  const response = await fetch(asMetadata.token_endpoint, {
    method: 'POST',
    headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: form,
  });
  const body = await response.json();
  assert(response.status === 200 && body.access_token, `token endpoint: HTTP ${response.status} ${short(body)}`);
  return body;
}

/** The header and payload of a JWT (not verified: the MCP server does that). */
function jwt(token) {
  const parts = String(token).split('.');
  assert(parts.length === 3, 'not a JWT');
  const part = (p) => JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
  return { header: part(parts[0]), payload: part(parts[1]) };
}

// ---------------------------------------------------------------------------------------------
// The headless OAuthClientProvider: the SDK's view of an interactive client, with a user agent
// that follows the authorization request through the automated login and consent.

/** Cookies of the authorization server (name and path → value), as a browser would keep them. */
class CookieJar {
  #cookies = new Map();
  store(response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';').map((s) => s.trim());
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      const attr = Object.fromEntries(
        attributes.map((a) => {
          const i = a.indexOf('=');
          return i < 0 ? [a.toLowerCase(), true] : [a.slice(0, i).toLowerCase(), a.slice(i + 1)];
        }),
      );
      const path = attr.path || '/';
      const expired = attr['max-age'] === '0' || (attr.expires && Date.parse(attr.expires) <= Date.now());
      if (expired || value === '') this.#cookies.delete(`${name} ${path}`);
      else this.#cookies.set(`${name} ${path}`, { name, value, path });
    }
  }
  header(url) {
    const { pathname } = new URL(url);
    return [...this.#cookies.values()]
      .filter((c) => pathname === c.path || pathname.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`))
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');
  }
}

class HeadlessOAuthClient {
  constructor() {
    this.jar = new CookieJar(); // the "browser" session at the authorization server
    this.authorizations = []; // every authorization URL the SDK sent the user to
    this.interactions = []; // for each, the prompts of the interaction pages it went through
    this.code = undefined; // the code of the last authorization
    this.stored = {};
  }
  get redirectUrl() {
    return REDIRECT_URL;
  }
  get clientMetadata() {
    return {
      client_name: 'mcp-tools oauth e2e (TypeScript SDK)',
      redirect_uris: [REDIRECT_URL],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state() {
    this.expectedState = crypto.randomBytes(16).toString('base64url');
    return this.expectedState;
  }
  clientInformation() {
    return this.stored.client;
  }
  saveClientInformation(info) {
    this.stored.client = info;
  }
  tokens() {
    return this.stored.tokens;
  }
  saveTokens(tokens) {
    this.stored.tokens = tokens;
  }
  saveCodeVerifier(verifier) {
    this.stored.verifier = verifier;
  }
  codeVerifier() {
    return this.stored.verifier;
  }
  saveDiscoveryState(state) {
    this.stored.discovery = state;
  }
  discoveryState() {
    return this.stored.discovery;
  }
  invalidateCredentials(scope) {
    if (scope === 'all' || scope === 'client') delete this.stored.client;
    if (scope === 'all' || scope === 'tokens') delete this.stored.tokens;
    if (scope === 'all' || scope === 'verifier') delete this.stored.verifier;
    if (scope === 'all' || scope === 'discovery') delete this.stored.discovery;
  }

  /** The user agent: follows the authorization request to the redirect carrying the code. */
  async redirectToAuthorization(authorizationUrl) {
    this.authorizations.push(new URL(authorizationUrl));
    const prompts = [];
    this.interactions.push(prompts);
    this.code = undefined;
    const origin = new URL(authorizationUrl).origin;
    let url = String(authorizationUrl);
    for (let hop = 0; hop < 12; hop++) {
      if (url.startsWith(REDIRECT_URL)) {
        const back = new URL(url);
        if (back.searchParams.get('error')) {
          throw new Error(
            `authorization refused: ${back.searchParams.get('error')}: ${back.searchParams.get('error_description')}`,
          );
        }
        assert(back.searchParams.get('state') === this.expectedState, 'the redirect carries another state');
        assert(
          back.searchParams.get('iss') === ISSUER,
          `the redirect's iss (RFC 9207) is ${back.searchParams.get('iss')}`,
        );
        this.code = back.searchParams.get('code');
        this.callback = back.searchParams;
        assert(this.code, `no code in the redirect ${url}`);
        return;
      }
      assert(new URL(url).origin === origin, `redirected away from the authorization server to ${url}`);
      const response = await loggedFetch(url, { redirect: 'manual', headers: { cookie: this.jar.header(url) } });
      this.jar.store(response);
      const prompt = response.headers.get('x-interaction-prompt');
      if (prompt) prompts.push(prompt);
      const location = response.headers.get('location');
      if (![302, 303].includes(response.status) || !location) {
        throw new Error(
          `${url.replace(/\?.*/, '')} answered HTTP ${response.status}: ${(await response.text()).slice(0, 300)}`,
        );
      }
      url = new URL(location, url).href;
    }
    throw new Error('too many redirects');
  }
}

/** Connects `client` through a new transport with `provider`; returns the transport. */
async function connect(client, provider) {
  const transport = new StreamableHTTPClientTransport(new URL(MCP), { authProvider: provider, fetch: loggedFetch });
  await client.connect(transport);
  return transport;
}

const newClient = () => new Client({ name: 'mcp-tools-oauth-e2e', version: '1.0.0' });

// =============================================================================================
// 1. discovery

let prm;
await check(
  'discovery: a request without a token gets 401 with WWW-Authenticate: Bearer resource_metadata=… scope="notes:read"',
  async () => {
    const r = await rpc(
      request('initialize', { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'x', version: '1' } }),
    );
    assert(r.status === 401, `HTTP ${r.status}`);
    const header = r.headers.get('www-authenticate');
    assert(header === `Bearer resource_metadata="${METADATA_URL}", scope="notes:read"`, `WWW-Authenticate: ${header}`);
    assert(r.body?.error?.code === -32003, `body ${short(r.body)}`);
  },
);
await check(
  'discovery: the protected-resource metadata (RFC 9728) is served without a token and names the authorization server',
  async () => {
    const response = await fetch(METADATA_URL);
    assert(response.status === 200, `HTTP ${response.status}`);
    prm = await response.json();
    assert(prm.resource === MCP, `resource ${prm.resource}`);
    assert(
      JSON.stringify(prm.authorization_servers) === JSON.stringify([ISSUER]),
      `authorization_servers ${short(prm.authorization_servers)}`,
    );
    assert(prm.scopes_supported?.includes('notes:read'), `scopes_supported ${short(prm.scopes_supported)}`);
  },
);
await check(
  'discovery: the authorization server metadata offers code+PKCE (S256), client credentials, registration and its keys',
  async () => {
    const response = await fetch(`${ISSUER}/.well-known/openid-configuration`);
    assert(response.status === 200, `HTTP ${response.status}`);
    asMetadata = await response.json();
    assert(asMetadata.issuer === ISSUER, `issuer ${asMetadata.issuer}`);
    assert(asMetadata.code_challenge_methods_supported?.includes('S256'), 'no S256');
    for (const g of ['authorization_code', 'client_credentials']) {
      assert(asMetadata.grant_types_supported?.includes(g), `grant_types_supported lacks ${g}`);
    }
    for (const e of ['authorization_endpoint', 'token_endpoint', 'registration_endpoint', 'jwks_uri']) {
      assert(asMetadata[e]?.startsWith(ISSUER), `${e}: ${asMetadata[e]}`);
    }
  },
);
if (!asMetadata) {
  fail('discovery', 'no authorization server metadata: nothing else can run');
  finish();
}

// =============================================================================================
// 2. client credentials

const reader = STATIC_CLIENTS.reader;
const admin = STATIC_CLIENTS.admin;
let readerToken;
await check(
  'client credentials: svc-reader gets a JWT access token (RFC 9068) for the MCP resource with scope notes:read',
  async () => {
    const answer = await clientCredentials(reader, { scope: 'notes:read', resource: MCP });
    readerToken = answer.access_token;
    const { header, payload } = jwt(readerToken);
    assert(header.typ === 'at+jwt' && header.alg === 'ES256' && header.kid, `header ${short(header)}`);
    assert(payload.aud === MCP && payload.iss === ISSUER, `aud ${payload.aud}, iss ${payload.iss}`);
    assert(payload.scope === 'notes:read' && payload.sub === reader.client_id, `payload ${short(payload)}`);
  },
);
let readerSession;
await check('client credentials: with it, initialize → 200 and a session; tools/call list_notes → 200', async () => {
  readerSession = await openSession(readerToken);
  const r = await callTool(readerToken, readerSession, 'list_notes');
  assert(r.status === 200 && r.body.result && !r.body.result.isError, `HTTP ${r.status} ${short(r.body)}`);
  assert(Array.isArray(r.body.result.structuredContent?.notes), `result ${short(r.body.result)}`);
});
await check(
  'client credentials: tools/list for a notes:read token hides add_note (notes:write) and purge_notes (notes:admin)',
  async () => {
    const names = await toolNames(readerToken, readerSession);
    assert(JSON.stringify(names) === JSON.stringify(['list_notes', 'whoami']), `tools ${names}`);
  },
);
await check(
  'client credentials: calling hidden add_note → 403 insufficient_scope, scope="notes:write", with the JSON-RPC id',
  async () => {
    const r = await callTool(readerToken, readerSession, 'add_note', { text: 'x' });
    assertStepUp(r, 'notes:write');
    assert(r.body?.error?.code === -32003 && r.body.id === nextId - 1, `body ${short(r.body)}`);
  },
);
await check(
  'client credentials: calling hidden purge_notes → 403 insufficient_scope, scope="notes:admin"',
  async () => {
    assertStepUp(await callTool(readerToken, readerSession, 'purge_notes'), 'notes:admin');
  },
);
await check(
  'client credentials: a token with notes:read notes:write sees and calls add_note (200), still not purge_notes',
  async () => {
    const token = (await clientCredentials(reader, { scope: 'notes:read notes:write', resource: MCP })).access_token;
    assert(sameScopes(jwt(token).payload.scope, 'notes:read notes:write'), `scope ${jwt(token).payload.scope}`);
    const session = await openSession(token);
    const names = await toolNames(token, session);
    assert(JSON.stringify(names) === JSON.stringify(['add_note', 'list_notes', 'whoami']), `tools ${names}`);
    const r = await callTool(token, session, 'add_note', { text: 'from svc-reader' });
    assert(r.status === 200 && !r.body.result?.isError, `HTTP ${r.status} ${short(r.body)}`);
    assert(
      r.body.result.structuredContent?.author === reader.client_id,
      `note ${short(r.body.result.structuredContent)}`,
    );
  },
);
await check(
  'client credentials: svc-admin with notes:read notes:write notes:admin sees every tool and purges (200)',
  async () => {
    const token = (await clientCredentials(admin, { scope: 'notes:read notes:write notes:admin', resource: MCP }))
      .access_token;
    const session = await openSession(token);
    const names = await toolNames(token, session);
    assert(
      JSON.stringify(names) === JSON.stringify(['add_note', 'list_notes', 'purge_notes', 'whoami']),
      `tools ${names}`,
    );
    const r = await callTool(token, session, 'purge_notes');
    assert(r.status === 200 && /^Purged [1-9][0-9]* notes\.$/.test(textOf(r.body.result)), `HTTP ${r.status} ${short(r.body)}`);
    const after = await callTool(token, session, 'list_notes');
    assert(after.body?.result?.structuredContent?.notes?.length === 0, `notes after the purge ${short(after.body)}`);
  },
);
await check(
  'client credentials: a token without the required notes:read → 403 insufficient_scope, scope="notes:read"',
  async () => {
    const token = (await clientCredentials(reader, { scope: 'notes:write', resource: MCP })).access_token;
    const r = await rpc(request('tools/list'), { token });
    assertStepUp({ status: r.status, challenge: r.headers.get('www-authenticate'), body: r.body }, 'notes:read');
  },
);
/** A request with `token` is refused with 401 invalid_token; its error_description. */
async function refused(token) {
  const r = await rpc(request('tools/list'), { token });
  assert(r.status === 401, `HTTP ${r.status} ${short(r.body)}`);
  const p = challengeParams(r.headers.get('www-authenticate'));
  assert(
    p.error === 'invalid_token' && p.resource_metadata === METADATA_URL,
    `WWW-Authenticate: ${r.headers.get('www-authenticate')}`,
  );
  return p.error_description ?? '';
}
await check(
  'client credentials: a JWT the same issuer signed for another resource (RFC 8707 audience) → 401 invalid_token',
  async () => {
    const token = (await clientCredentials(reader, { scope: 'notes:read', resource: OTHER_RESOURCE })).access_token;
    assert(jwt(token).payload.aud === OTHER_RESOURCE, `aud ${jwt(token).payload.aud}`);
    const why = await refused(token);
    assert(/not issued for this resource/.test(why), `error_description "${why}"`);
  },
);
await check(
  'client credentials: an opaque token issued without a resource (userinfo only) → 401 invalid_token',
  async () => {
    const token = (await clientCredentials(reader, { scope: 'notes:read' })).access_token;
    assert(token.split('.').length !== 3, 'the issuer made a JWT');
    await refused(token);
  },
);
await check(
  'client credentials: the JWT with its payload altered (scope notes:admin) → 401 invalid_token, bad signature',
  async () => {
    const [h, , s] = readerToken.split('.');
    const payload = { ...jwt(readerToken).payload, scope: 'notes:read notes:admin' };
    const forged = `${h}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${s}`;
    const why = await refused(forged);
    assert(/bad signature/.test(why), `error_description "${why}"`);
  },
);
await check(
  "client credentials: the SDK's ClientCredentialsProvider connects on its own (401 → metadata → token with resource → 200) and lists the reader's tools",
  async () => {
    const provider = new ClientCredentialsProvider({
      clientId: reader.client_id,
      clientSecret: reader.client_secret,
      scope: 'notes:read',
      expectedIssuer: ISSUER,
    });
    const from = wire.length;
    const client = newClient();
    await connect(client, provider);
    try {
      const log = wireSince(from);
      const tokenPost = log.findIndex((l) => l === `POST ${asMetadata.token_endpoint} 200`);
      assert(
        log[0] === `POST ${MCP} 401` && tokenPost > 0 && log.slice(tokenPost + 1).some((l) => l === `POST ${MCP} 200`),
        `wire: ${log.join(', ')}`,
      );
      assert(log.includes(`GET ${METADATA_URL} 200`), `no metadata request: ${log.join(', ')}`);
      const { payload } = jwt(provider.tokens().access_token);
      assert(payload.aud === MCP && payload.scope === 'notes:read', `token ${short(payload)}`);
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name).sort();
      assert(JSON.stringify(names) === JSON.stringify(['list_notes', 'whoami']), `tools ${names}`);
    } finally {
      await client.close();
    }
  },
);

// =============================================================================================
// 3. the SDK's authorization-code flow, headless

const user = new HeadlessOAuthClient();
let userClient;
let userTransport;
await check(
  'TS SDK 1.x: connecting without a token → 401 → discovery (RFC 9728, then the AS metadata) → dynamic registration → authorization request → redirectToAuthorization',
  async () => {
    const from = wire.length;
    const client = newClient();
    let error;
    try {
      await connect(client, user);
    } catch (e) {
      error = e;
    }
    assert(
      error instanceof UnauthorizedError,
      `connect: ${error ? `${error.name}: ${error.message}` : 'succeeded without a token'}`,
    );
    const log = wireSince(from);
    const expected = [`POST ${MCP} 401`, `GET ${METADATA_URL} 200`, `POST ${asMetadata.registration_endpoint} 201`];
    let at = 0;
    for (const line of log) if (line === expected[at]) at++;
    assert(at === expected.length, `expected ${expected.join(' → ')} in ${log.join(', ')}`);
    assert(
      log.some((l) => l.startsWith(`GET ${ISSUER}/.well-known/`) && l.endsWith(' 200')),
      `no AS metadata: ${log.join(', ')}`,
    );
    assert(user.stored.client?.client_id, 'no registered client');
    assert(user.code, 'the user agent got no code');
  },
);
await check(
  'TS SDK 1.x: the authorization request carries PKCE (S256), the resource (RFC 8707), the challenged scope notes:read and the state',
  async () => {
    const url = user.authorizations.at(-1);
    assert(url, 'no authorization request');
    const q = url.searchParams;
    assert(url.href.startsWith(asMetadata.authorization_endpoint), `endpoint ${url.origin}${url.pathname}`);
    assert(q.get('response_type') === 'code' && q.get('client_id') === user.stored.client.client_id, `params ${q}`);
    assert(
      q.get('code_challenge_method') === 'S256' && /^[A-Za-z0-9_-]{43}$/.test(q.get('code_challenge') ?? ''),
      `PKCE ${q.get('code_challenge_method')}`,
    );
    const challenge = crypto.createHash('sha256').update(user.stored.verifier).digest('base64url');
    assert(q.get('code_challenge') === challenge, 'code_challenge is not S256 of the saved verifier');
    assert(q.get('resource') === MCP, `resource ${q.get('resource')}`);
    assert(q.get('scope') === 'notes:read', `scope ${q.get('scope')}`);
    assert(q.get('redirect_uri') === REDIRECT_URL && q.get('state') === user.expectedState, `redirect_uri/state ${q}`);
  },
);
await check(
  'TS SDK 1.x: the user agent went through the automated login and consent (interaction routes, cookies) to the redirect with the code',
  async () => {
    const hops = wire.filter((w) => w.url.startsWith(`${ISSUER}/auth`) || w.url.startsWith(`${ISSUER}/interaction/`));
    const paths = hops.map((w) => `${new URL(w.url).pathname.replace(/\/[^/]{10,}$/, '/:uid')} ${w.status}`);
    assert(
      JSON.stringify(paths) ===
        JSON.stringify([
          '/auth 303',
          '/interaction/:uid 303',
          '/auth/:uid 303',
          '/interaction/:uid 303',
          '/auth/:uid 303',
        ]),
      `hops ${paths.join(', ')}`,
    );
  },
);
await check(
  'TS SDK 1.x: finishAuth(code) exchanges the code (with the PKCE verifier) for a JWT of alice for the resource, scope notes:read',
  async () => {
    const from = wire.length;
    const transport = new StreamableHTTPClientTransport(new URL(MCP), { authProvider: user, fetch: loggedFetch });
    await transport.finishAuth(user.code);
    const log = wireSince(from);
    assert(log.includes(`POST ${asMetadata.token_endpoint} 200`), `wire: ${log.join(', ')}`);
    const { payload } = jwt(user.tokens().access_token);
    assert(payload.sub === ACCOUNT && payload.aud === MCP && payload.iss === ISSUER, `token ${short(payload)}`);
    assert(
      payload.scope === 'notes:read' && payload.client_id === user.stored.client.client_id,
      `token ${short(payload)}`,
    );
    assert(!user.tokens().refresh_token, 'a refresh token was issued (offline_access was not asked for)');
  },
);
await check('TS SDK 1.x: reconnecting with the token → 200, initialized; tools/call list_notes succeeds', async () => {
  const from = wire.length;
  userClient = newClient();
  userTransport = await connect(userClient, user);
  const log = wireSince(from);
  assert(log[0] === `POST ${MCP} 200`, `wire: ${log.join(', ')}`);
  assert(userClient.getServerVersion()?.name === 'protected-notes', `server ${short(userClient.getServerVersion())}`);
  const result = await userClient.callTool({ name: 'list_notes', arguments: {} });
  assert(!result.isError && Array.isArray(result.structuredContent?.notes), `result ${short(result)}`);
});
await check("TS SDK 1.x: alice's tools/list (notes:read) hides add_note and purge_notes", async () => {
  const names = (await userClient.listTools()).tools.map((t) => t.name).sort();
  assert(JSON.stringify(names) === JSON.stringify(['list_notes', 'whoami']), `tools ${names}`);
});

// =============================================================================================
// 4. step-up

await check(
  'step-up (SDK 1.x): add_note with alice\'s notes:read token → 403 insufficient_scope, scope="notes:read notes:write" (plain HTTP, her session)',
  async () => {
    const r = await callTool(user.tokens().access_token, userTransport.sessionId, 'add_note', { text: 'x' });
    assertStepUp(r, 'notes:write');
  },
);
let sdkStepUp;
await check(
  'step-up (SDK 1.x): the SDK answers the 403 on its own: a new authorization request for the challenged scope (same client, PKCE, resource) through the automated consent',
  async () => {
    const before = user.authorizations.length;
    let error;
    try {
      await userClient.callTool({ name: 'add_note', arguments: { text: 'by alice' } });
    } catch (e) {
      error = e;
    }
    assert(
      error instanceof UnauthorizedError,
      `callTool: ${error ? `${error.name}: ${error.message}` : 'succeeded with a notes:read token'}`,
    );
    assert(user.authorizations.length === before + 1, 'no new authorization request');
    const q = user.authorizations.at(-1).searchParams;
    assert(
      q.get('client_id') === user.stored.client.client_id &&
        q.get('resource') === MCP &&
        q.get('code_challenge_method') === 'S256',
      `params ${q}`,
    );
    assert(user.code, 'no code');
    sdkStepUp = { scope: q.get('scope'), code: user.code };
  },
);
if (sdkStepUp) {
  // What the SDK's own step-up gives: a token for exactly the challenged scopes (the SDK 1.x
  // replaces its scope with the challenge's rather than adding to it). The server names its
  // required scope with the operation's, so that token is enough.
  await check(
    `step-up (SDK 1.x): the code of the SDK's own step-up (scope "${sdkStepUp.scope}") is exchanged; the MCP server judges the resulting token by its scopes`,
    async () => {
      await userTransport.finishAuth(sdkStepUp.code);
      const { payload } = jwt(user.tokens().access_token);
      assert(sameScopes(payload.scope, sdkStepUp.scope) && payload.sub === ACCOUNT, `token ${short(payload)}`);
      const granted = new Set(payload.scope.split(' '));
      const r = await callTool(user.tokens().access_token, userTransport.sessionId, 'add_note', { text: 'probe' });
      assert(granted.has('notes:read') && granted.has('notes:write'), `the step-up asked for ${sdkStepUp.scope}`);
      assert(r.status === 200 && !r.body.result?.isError, `HTTP ${r.status} ${short(r.body)}`);
      sdkStepUp.sufficient = true;
    },
  );
}
await check(
  "step-up (SDK 1.x): with the stepped-up token (or, had the SDK's own step-up failed, a re-authorization for the union with its auth()), add_note through the same client → 200",
  async () => {
    if (!sdkStepUp?.sufficient) {
      const scope = 'notes:read notes:write';
      const first = await auth(user, { serverUrl: new URL(MCP), scope, fetchFn: loggedFetch });
      assert(first === 'REDIRECT', `auth: ${first}`);
      assert(
        user.authorizations.at(-1).searchParams.get('scope') === scope,
        `scope ${user.authorizations.at(-1).searchParams.get('scope')}`,
      );
      const second = await auth(user, {
        serverUrl: new URL(MCP),
        authorizationCode: user.code,
        scope,
        fetchFn: loggedFetch,
      });
      assert(second === 'AUTHORIZED', `auth with the code: ${second}`);
    }
    const { payload } = jwt(user.tokens().access_token);
    assert(sameScopes(payload.scope, 'notes:read notes:write') && payload.sub === ACCOUNT, `token ${short(payload)}`);
    const result = await userClient.callTool({ name: 'add_note', arguments: { text: 'by alice' } });
    assert(!result.isError && result.structuredContent?.author === ACCOUNT, `result ${short(result)}`);
  },
);
await check(
  'step-up (SDK 1.x): the user agent was asked for consent only (her session at the authorization server kept, no new login); a request for scopes all granted already needed no interaction',
  async () => {
    // One entry per authorization request: the interaction pages it went through.
    const seen = user.interactions.map((n) => n.length);
    assert(seen[0] === 2 && seen[1] === 1, `interactions per authorization request: ${short(seen)}`);
    const kinds = user.interactions.flat();
    assert(kinds.slice(0, 3).join(' ') === 'login consent consent', `prompts ${kinds.join(' ')}`);
    if (seen.length > 2) assert(seen[2] === 0, `the union's authorization went through ${seen[2]} interactions`);
  },
);
await check(
  'step-up (SDK 1.x): with the stepped-up token tools/list shows add_note, still hides purge_notes; purge_notes → 403 scope="notes:admin"',
  async () => {
    const names = (await userClient.listTools()).tools.map((t) => t.name).sort();
    assert(JSON.stringify(names) === JSON.stringify(['add_note', 'list_notes', 'whoami']), `tools ${names}`);
    assertStepUp(await callTool(user.tokens().access_token, userTransport.sessionId, 'purge_notes'), 'notes:admin');
  },
);

// =============================================================================================
// 5. identity and sessions

await check('identity: whoami shows alice, the registered client, her scopes and the issuer', async () => {
  const result = await userClient.callTool({ name: 'whoami', arguments: {} });
  const me = result.structuredContent;
  assert(me?.subject === ACCOUNT && me.client_id === user.stored.client.client_id, `whoami ${short(me)}`);
  assert(
    JSON.stringify(me.scopes) === JSON.stringify(['notes:read', 'notes:write']) && me.issuer === ISSUER,
    `whoami ${short(me)}`,
  );
});
await check(
  "identity: alice's session is refused (404) to svc-reader's token, and (401) without a token; still hers",
  async () => {
    const session = userTransport.sessionId;
    assert(session, 'the SDK has no session id');
    const ping = () => request('ping');
    const other = await rpc(ping(), { token: readerToken, session });
    assert(other.status === 404, `svc-reader: HTTP ${other.status} ${short(other.body)}`);
    const none = await rpc(ping(), { session });
    assert(none.status === 401, `no token: HTTP ${none.status}`);
    const hers = await rpc(ping(), { token: user.tokens().access_token, session });
    assert(hers.status === 200, `alice: HTTP ${hers.status} ${short(hers.body)}`);
  },
);
await check("identity: list_notes through the SDK shows alice's note", async () => {
  const result = await userClient.callTool({ name: 'list_notes', arguments: {} });
  const notes = result.structuredContent?.notes ?? [];
  assert(
    notes.some((n) => n.author === ACCOUNT && n.text === 'by alice'),
    `notes ${short(notes)}`,
  );
});
await userClient?.close().catch(() => {});

// =============================================================================================
// 6. the SDK 2.x client: a 2026-07-28 client, whose step-up asks for the union of the scopes

const user2 = new HeadlessOAuthClient();
const client2 = new Client2(
  { name: 'mcp-tools-oauth-e2e-2', version: '1.0.0' },
  { versionNegotiation: { mode: 'auto' } },
);
const transport2 = () => new StreamableHTTPClientTransport2(new URL(MCP), { authProvider: user2, fetch: loggedFetch });
let connected2 = false;
await check(
  'TS SDK 2.x: connecting → 401 → discovery → registration → authorization (PKCE, resource, notes:read) → finishAuth(callback, RFC 9207 iss) → connected on 2026-07-28',
  async () => {
    const from = wire.length;
    let error;
    try {
      await client2.connect(transport2());
    } catch (e) {
      error = e;
    }
    assert(
      error instanceof UnauthorizedError2,
      `connect: ${error ? `${error.name}: ${error.message}` : 'succeeded without a token'}`,
    );
    assert(
      user2.stored.client?.client_id && user2.stored.client.client_id !== user.stored.client.client_id,
      'no new registration',
    );
    const q = user2.authorizations.at(-1)?.searchParams;
    assert(
      q?.get('code_challenge_method') === 'S256' && q.get('resource') === MCP && q.get('scope') === 'notes:read',
      `authorization ${q}`,
    );
    const t = transport2();
    await t.finishAuth(user2.callback);
    const { payload } = jwt(user2.tokens().access_token);
    assert(payload.sub === ACCOUNT && payload.aud === MCP && payload.scope === 'notes:read', `token ${short(payload)}`);
    await client2.connect(t);
    connected2 = true;
    const posts = wire.slice(from).filter((w) => w.url === MCP && w.method === 'POST');
    assert(posts[0]?.status === 401 && posts.at(-1)?.status === 200, `POSTs ${posts.map((w) => w.status)}`);
    assert(
      posts.filter((w) => w.status === 200).every((w) => w.version === '2026-07-28'),
      `versions ${posts.map((w) => w.version)}`,
    );
  },
);
if (connected2) {
  await check('TS SDK 2.x: list_notes succeeds; tools/list hides add_note and purge_notes', async () => {
    const result = await client2.callTool({ name: 'list_notes', arguments: {} });
    assert(!result.isError && Array.isArray(result.structuredContent?.notes), `result ${short(result)}`);
    const names = (await client2.listTools()).tools.map((t) => t.name).sort();
    assert(JSON.stringify(names) === JSON.stringify(['list_notes', 'whoami']), `tools ${names}`);
  });
  /** Calls `name` through the 2.x client, completing the SDK's own step-up if it starts one. */
  const stepUp2 = async (name, args) => {
    const before = user2.authorizations.length;
    let error;
    try {
      await client2.callTool({ name, arguments: args });
    } catch (e) {
      error = e;
    }
    assert(
      error instanceof UnauthorizedError2,
      `first call: ${error ? `${error.name}: ${error.message}` : 'succeeded'}`,
    );
    assert(user2.authorizations.length === before + 1, 'the SDK started no authorization');
    const asked = user2.authorizations.at(-1).searchParams.get('scope');
    const t = client2.transport;
    await t.finishAuth(user2.callback);
    return { asked, result: await client2.callTool({ name, arguments: args }) };
  };
  await check(
    'TS SDK 2.x: add_note → 403 → the SDK\'s own step-up asks for the union "notes:read notes:write" → re-authorized → add_note succeeds',
    async () => {
      const { asked, result } = await stepUp2('add_note', { text: 'by alice, SDK 2.x' });
      assert(sameScopes(asked, 'notes:read notes:write'), `the SDK asked for "${asked}"`);
      assert(!result.isError && result.structuredContent?.author === ACCOUNT, `result ${short(result)}`);
      const names = (await client2.listTools()).tools.map((t) => t.name).sort();
      assert(
        JSON.stringify(names) === JSON.stringify(['add_note', 'list_notes', 'whoami']),
        `tools after the step-up ${names}`,
      );
    },
  );
  await check(
    'TS SDK 2.x: purge_notes → 403 → a second step-up asks for all three scopes → purge_notes succeeds; whoami shows them',
    async () => {
      const { asked, result } = await stepUp2('purge_notes', {});
      assert(sameScopes(asked, 'notes:read notes:write notes:admin'), `the SDK asked for "${asked}"`);
      assert(!result.isError && /^Purged [0-9]+ notes\.$/.test(textOf(result)), `result ${short(result)}`);
      const me = (await client2.callTool({ name: 'whoami', arguments: {} })).structuredContent;
      assert(me?.subject === ACCOUNT && me.client_id === user2.stored.client.client_id, `whoami ${short(me)}`);
      assert(
        JSON.stringify(me.scopes) === JSON.stringify(['notes:admin', 'notes:read', 'notes:write']),
        `whoami ${short(me)}`,
      );
    },
  );
  await client2.close().catch(() => {});
}

finish();

function finish() {
  for (const w of warnings) console.log(`# warning from the SDK: ${w.replace(/\s+/g, ' ').slice(0, 300)}`);
  console.log(summary());
  process.exit(tally.failed === 0 ? 0 : 1);
}
