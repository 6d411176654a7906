// The MCP TypeScript SDK v2 client (@modelcontextprotocol/client, pinned in
// package.json) against a vmcp server, negotiating protocol 2026-07-28.
// e2e/sdk_v2_test.go runs it per transport and negotiation mode and judges
// what it prints; this script only observes.
//
//   node v2client.mjs --negotiation pin|auto --url http://127.0.0.1:PORT/mcp
//   node v2client.mjs --negotiation pin|auto -- vmcp run --config C
//
// --negotiation pin pins the connection to 2026-07-28; auto lets the SDK
// probe with server/discover (on stdio it starts the command twice, once
// for the probe). --call-timeout-ms bounds each call (default 20000), so a
// question the server never brings to the client fails the call instead of
// hanging the test.
//
// It connects once and prints a single JSON object on stdout:
//
//   era, protocolVersion   what the connection negotiated
//   elicitation            greet answered accept, decline and cancel: each
//                          call's result (or {error}) and the questions the
//                          client's elicitation handler was given

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Answerer, elicitations, parseArgs as parseCommon, transportFor } from './common.mjs';

function parseArgs(argv) {
  const opts = parseCommon(argv, 'v2client.mjs', {
    '--negotiation': (o, v) => (o.negotiation = v),
    '--call-timeout-ms': (o, v) => (o.callTimeoutMs = Number(v))
  }, { callTimeoutMs: 20000 });
  if (opts.negotiation !== 'pin' && opts.negotiation !== 'auto') {
    throw new Error('--negotiation must be pin or auto');
  }
  return opts;
}

const opts = parseArgs(process.argv.slice(2));
const mode = opts.negotiation === 'pin' ? { pin: '2026-07-28' } : 'auto';
const client = new Client(
  { name: 'vmcp-e2e-sdk-v2-client', version: '1.0.0' },
  { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode } }
);

// The elicitation handler answers with whatever the current call set; on
// 2026-07-28 the SDK calls it for each input request of an input_required
// result and retries the call with the answer.
const answerer = new Answerer();
client.setRequestHandler('elicitation/create', (request) => answerer.handle(request.params));

await client.connect(transportFor(opts, { StreamableHTTPClientTransport, StdioClientTransport }));

const out = { era: client.getProtocolEra(), protocolVersion: client.getNegotiatedProtocolVersion() };
out.elicitation = await elicitations(answerer, () =>
  client.callTool({ name: 'greet', arguments: {} }, { timeout: opts.callTimeoutMs })
);

await client.close();
process.stdout.write(JSON.stringify(out) + '\n');
