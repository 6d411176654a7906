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

function parseArgs(argv) {
  const opts = { command: [], callTimeoutMs: 20000 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      opts.command = argv.slice(i + 1);
      break;
    } else if (a === '--url') {
      opts.url = argv[++i];
    } else if (a === '--negotiation') {
      opts.negotiation = argv[++i];
    } else if (a === '--call-timeout-ms') {
      opts.callTimeoutMs = Number(argv[++i]);
    } else {
      throw new Error(`unknown argument ${a}; see the usage at the top of v2client.mjs`);
    }
  }
  if (!opts.url === !opts.command.length) {
    throw new Error('give either --url or -- COMMAND...');
  }
  if (opts.negotiation !== 'pin' && opts.negotiation !== 'auto') {
    throw new Error('--negotiation must be pin or auto');
  }
  return opts;
}

function errorText(err) {
  return { error: `${err?.name ?? 'Error'}: ${err?.message ?? String(err)}` };
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
let answer = null;
const asked = [];
client.setRequestHandler('elicitation/create', async (request) => {
  asked.push({ message: request.params.message, requestedSchema: request.params.requestedSchema });
  if (!answer) {
    throw new Error('no answer prepared for this elicitation');
  }
  return answer;
});

const transport = opts.url
  ? new StreamableHTTPClientTransport(new URL(opts.url))
  : new StdioClientTransport({ command: opts.command[0], args: opts.command.slice(1), stderr: 'inherit' });
await client.connect(transport);

const out = { era: client.getProtocolEra(), protocolVersion: client.getNegotiatedProtocolVersion() };

const answers = {
  accept: { action: 'accept', content: { name: 'Ada' } },
  decline: { action: 'decline' },
  cancel: { action: 'cancel' }
};
out.elicitation = {};
for (const [action, a] of Object.entries(answers)) {
  answer = a;
  asked.length = 0;
  try {
    const result = await client.callTool({ name: 'greet', arguments: {} }, { timeout: opts.callTimeoutMs });
    out.elicitation[action] = { result, asked: [...asked] };
  } catch (err) {
    out.elicitation[action] = { ...errorText(err), asked: [...asked] };
  }
}

await client.close();
process.stdout.write(JSON.stringify(out) + '\n');
