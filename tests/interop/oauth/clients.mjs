// The static clients of provider.mjs (client credentials, client_secret_basic) and the fixed
// account its automated interaction logs in: shared with oauth_e2e.mjs.
export const STATIC_CLIENTS = {
  reader: { client_id: 'svc-reader', client_secret: 'svc-reader-secret-0123456789abcdef' },
  admin: { client_id: 'svc-admin', client_secret: 'svc-admin-secret-0123456789abcdef' },
};
export const ACCOUNT = 'alice';
