// The official MCP TypeScript SDK client (@modelcontextprotocol/sdk, pinned
// in package.json) signing in to vmcp by itself: its StreamableHTTP
// transport with the SDK's ClientCredentialsProvider as authProvider.
// e2e/sdk_oauth_test.go runs it against vmcp and Ory Hydra.
//
//   node oauth.mjs --url http://127.0.0.1:PORT/mcp --client-id ID \
//     --client-secret SECRET --scope 'vmcp:run' --audience AUD
//
// Nothing is configured but the client's credentials: the SDK gets the
// 401, reads vmcp's RFC 9728 metadata from its WWW-Authenticate header,
// discovers the authorization server, gets a token and retries. Hydra
// puts a token's aud only from the `audience` parameter (not RFC 8707's
// `resource`, which the SDK sends), so the provider's prepareTokenRequest
// (the SDK's hook for the token request's parameters) adds it.
//
// It prints one JSON object: requests (each HTTP request the SDK made:
// method, URL, status), tools (the names tools/list gave), call (the
// result of say {text: "hi"}), or error when something threw.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { errorText } from './common.mjs';

function parseArgs(argv) {
  const opts = {};
  const names = { '--url': 'url', '--client-id': 'clientId', '--client-secret': 'clientSecret', '--scope': 'scope', '--audience': 'audience' };
  for (let i = 0; i < argv.length; i++) {
    const key = names[argv[i]];
    if (!key) {
      throw new Error(`unknown argument ${argv[i]}; see the usage at the top of oauth.mjs`);
    }
    opts[key] = argv[++i];
  }
  for (const [flag, key] of Object.entries(names)) {
    if (!opts[key]) {
      throw new Error(`${flag} is required`);
    }
  }
  return opts;
}

// AudienceProvider is the SDK's client credentials provider that also
// asks for an audience (Hydra's parameter for aud).
class AudienceProvider extends ClientCredentialsProvider {
  constructor(options, audience) {
    super(options);
    this.audience = audience;
  }
  prepareTokenRequest(scope) {
    const params = super.prepareTokenRequest(scope);
    params.set('audience', this.audience);
    return params;
  }
}

const opts = parseArgs(process.argv.slice(2));
const out = { requests: [] };
const recording = async (url, init) => {
  const res = await fetch(url, init);
  out.requests.push({ method: init?.method ?? 'GET', url: String(url), status: res.status });
  return res;
};
const provider = new AudienceProvider({ clientId: opts.clientId, clientSecret: opts.clientSecret, scope: opts.scope }, opts.audience);
const client = new Client({ name: 'oauth-sdk-test', version: '1.0.0' });
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(opts.url), { authProvider: provider, fetch: recording }));
  out.tools = (await client.listTools()).tools.map((t) => t.name);
  out.call = await client.callTool({ name: 'say', arguments: { text: 'hi' } });
  await client.close();
} catch (err) {
  Object.assign(out, errorText(err));
}
console.log(JSON.stringify(out));
