// A real OAuth 2.1 / OpenID authorization server for the OAuth end-to-end test: oidc-provider
// (npm, pinned in package-lock.json), configured here. Run by scripts/interop.sh:
//
//   node provider.mjs --port AS_PORT --resource http://127.0.0.1:MCP_PORT/mcp
//
// What it offers (all from oidc-provider itself; only the configuration and the automated
// interaction below are ours):
// - issuer http://127.0.0.1:AS_PORT, OpenID discovery metadata, a key set generated at start
//   (one EC P-256 key signing the access tokens, ES256; one RSA key for ID tokens);
// - RFC 8707 resource indicators: `--resource` is a resource server whose access tokens are
//   JWTs (RFC 9068, `aud` = the resource) with the scopes notes:read, notes:write, notes:admin;
//   a second resource, https://other.example/mcp, exists so that a token for another audience
//   can be had;
// - client credentials for the static clients svc-reader and svc-admin (client_secret_basic);
// - dynamic client registration (RFC 7591), open, as MCP clients use it;
// - the authorization-code flow with PKCE required for every client;
// - an automated user: every interaction logs in the fixed account `alice` and grants what the
//   request asks for, so the flow completes without a browser (our own interaction routes, on
//   oidc-provider's interactionDetails / interactionFinished / Grant APIs, in place of a login
//   and consent page).
//
// Every request is logged to stdout (method, path, status), events to stderr.
import crypto from 'node:crypto';
import http from 'node:http';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';

import Provider from 'oidc-provider';

import { ACCOUNT, STATIC_CLIENTS } from './clients.mjs';

const { values: args } = parseArgs({
  options: {
    port: { type: 'string' },
    resource: { type: 'string' },
  },
});
if (!args.port || !args.resource) {
  console.error('usage: node provider.mjs --port PORT --resource RESOURCE_URI');
  process.exit(2);
}

const ISSUER = `http://127.0.0.1:${args.port}`;
const RESOURCE = args.resource;
const OTHER_RESOURCE = 'https://other.example/mcp';
const NOTES_SCOPES = 'notes:read notes:write notes:admin';

/** A private JWK generated now, with its key id and use. */
function privateJwk(type, options, kid, alg) {
  const { privateKey } = crypto.generateKeyPairSync(type, options);
  return { ...privateKey.export({ format: 'jwk' }), kid, alg, use: 'sig' };
}

const jwks = {
  keys: [
    privateJwk('ec', { namedCurve: 'P-256' }, 'interop-es256', 'ES256'),
    privateJwk('rsa', { modulusLength: 2048 }, 'interop-rs256', 'RS256'),
  ],
};

const resourceServers = {
  [RESOURCE]: {
    scope: NOTES_SCOPES,
    audience: RESOURCE,
    accessTokenTTL: 600,
    accessTokenFormat: 'jwt',
    jwt: { sign: { alg: 'ES256' } },
  },
  [OTHER_RESOURCE]: {
    scope: 'notes:read',
    audience: OTHER_RESOURCE,
    accessTokenTTL: 600,
    accessTokenFormat: 'jwt',
    jwt: { sign: { alg: 'ES256' } },
  },
};

const configuration = {
  clients: Object.values(STATIC_CLIENTS).map((c) => ({
    ...c,
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_basic',
  })),
  jwks,
  cookies: { keys: [crypto.randomBytes(32).toString('base64url')] },
  // The OpenID scopes; the resource's scopes (notes:*) are those of its resource server below.
  scopes: ['openid', 'offline_access'],
  claims: { openid: ['sub'] },
  findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    registration: { enabled: true },
    resourceIndicators: {
      enabled: true,
      // No resource asked for: no default (a token without an audience is only for userinfo).
      defaultResource: async (_ctx, _client, oneOf) => oneOf,
      // The token request of the code flow may omit `resource`: the granted one is used.
      useGrantedResource: async () => true,
      getResourceServerInfo: async (_ctx, resource) => {
        const info = resourceServers[resource];
        if (!info) throw new Provider.errors.InvalidTarget(`unknown resource ${resource}`);
        return info;
      },
    },
  },
  // A registered client's `scope` (RFC 7591) is checked by oidc-provider against its static
  // OpenID scopes only; the scopes of a resource are granted per resource (above), so a
  // registration asking for notes:* would be refused. RFC 7591 §2 lets an authorization server
  // replace requested metadata: here the resource scopes are dropped from it (keeping any
  // OpenID ones), so a registered client may ask for any scope of the resource later (step-up).
  extraClientMetadata: {
    properties: ['scope'],
    validator(_ctx, key, value, metadata) {
      if (key !== 'scope' || typeof value !== 'string') return;
      const kept = value.split(' ').filter((s) => configuration.scopes.includes(s));
      if (kept.length) metadata.scope = kept.join(' ');
      else delete metadata.scope;
    },
  },
  pkce: { required: () => true },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  ttl: {
    AccessToken: 600,
    AuthorizationCode: 60,
    ClientCredentials: 600,
    Grant: 3600,
    IdToken: 600,
    Interaction: 600,
    RefreshToken: 3600,
    Session: 3600,
  },
  // Errors as JSON, so the test's failure messages say what the server said.
  renderError: async (ctx, out) => {
    ctx.type = 'application/json';
    ctx.body = JSON.stringify(out);
  },
};

const provider = new Provider(ISSUER, configuration);

for (const event of ['registration_create.success', 'authorization.success', 'grant.success', 'interaction.ended']) {
  provider.on(event, (ctx) => console.error(`event ${event} ${ctx?.oidc?.client?.clientId ?? ''}`));
}
for (const event of ['authorization.error', 'grant.error', 'registration_create.error', 'server_error']) {
  provider.on(event, (_ctx, err) =>
    console.error(`event ${event}: ${err?.name} ${err?.message} ${err?.error_description ?? ''}`),
  );
}

/**
 * The automated user at the interaction routes: logs in `alice` (the login prompt), then
 * grants every scope and resource the request asks for (the consent prompt).
 */
async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params } = details;
  // Tells the test which page this was (a browser would have shown a login or consent form).
  res.setHeader('X-Interaction-Prompt', prompt.name);
  if (prompt.name === 'login') {
    console.error(`interaction ${details.uid}: login as ${ACCOUNT}`);
    await provider.interactionFinished(req, res, { login: { accountId: ACCOUNT } }, { mergeWithLastSubmission: false });
    return;
  }
  if (prompt.name === 'consent') {
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: details.session.accountId, clientId: params.client_id });
    const { missingOIDCScope, missingOIDCClaims, missingResourceScopes } = prompt.details;
    if (missingOIDCScope) grant.addOIDCScope(missingOIDCScope.join(' '));
    if (missingOIDCClaims) grant.addOIDCClaims(missingOIDCClaims);
    for (const [resource, scopes] of Object.entries(missingResourceScopes ?? {})) {
      grant.addResourceScope(resource, scopes.join(' '));
    }
    const grantId = await grant.save();
    console.error(
      `interaction ${details.uid}: consent to ${JSON.stringify(missingResourceScopes ?? {})} (grant ${grantId})`,
    );
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
    return;
  }
  throw new Error(`unexpected prompt ${prompt.name}`);
}

const callback = provider.callback();
const server = http.createServer((req, res) => {
  res.on('finish', () => console.log(`${req.method} ${req.url.split('?')[0]} ${res.statusCode}`));
  if (req.method === 'GET' && req.url.startsWith('/interaction/')) {
    interaction(req, res).catch((err) => {
      console.error(`interaction failed: ${err?.stack ?? err}`);
      res.statusCode = 500;
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ error: 'interaction_failed', error_description: String(err?.message ?? err) }));
    });
    return;
  }
  callback(req, res);
});
server.listen(Number(args.port), '127.0.0.1', () => {
  const { version } = createRequire(import.meta.url)('oidc-provider/package.json');
  console.error(`oidc-provider ${version} on node ${process.version} at ${ISSUER} for ${RESOURCE}`);
});
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    server.close();
    process.exit(0);
  });
}
