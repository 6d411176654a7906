// The official MCP TypeScript SDK client (@modelcontextprotocol/sdk, pinned
// in package.json) against a vmcp server. e2e/sdk_test.go runs it once per
// transport and asserts on what it prints; this script only observes.
//
//   node client.mjs --url http://127.0.0.1:PORT/mcp --record REC [--progress-calls N]
//   node client.mjs --record REC [--progress-calls N] -- vmcp run --config C
//
// It connects once, then runs each section below on that one connection and
// prints a single JSON object on stdout, one key per section:
//
//   initialize   the server's name, version and capabilities from initialize
//   tools        tools/list as the SDK parsed it (names, schemas, annotations)
//   call         add_then_echo {a: 2, b: 40} and failing, as CallToolResults
//   progress     N calls of fan with an onprogress callback: the progress
//                notifications each call received, in arrival order
//   abort        a call of slow aborted with an AbortSignal once the test
//                backend has started its nap (seen in the record file), and
//                the call that follows it
//   elicitation  greet answered accept, decline and cancel: each result and
//                the elicitation/create request the client was sent
//
// A section that throws records {error: "..."} and the next one still runs.

import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Answerer, elicitations, errorText, parseArgs as parseCommon, transportFor } from './common.mjs';

function parseArgs(argv) {
  const opts = parseCommon(argv, 'client.mjs', {
    '--record': (o, v) => (o.record = v),
    '--progress-calls': (o, v) => (o.progressCalls = Number(v))
  }, { progressCalls: 3 });
  if (!opts.record) {
    throw new Error('--record is required');
  }
  return opts;
}

async function section(fn) {
  try {
    return await fn();
  } catch (err) {
    return errorText(err);
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// waitForRecord polls the test backend's record file for a line.
async function waitForRecord(path, line, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    let text = '';
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      // not written yet
    }
    if (text.split('\n').includes(line)) {
      return;
    }
    if (Date.now() > deadline) {
      throw new Error(`the record file never had "${line}" within ${ms}ms`);
    }
    await sleep(20);
  }
}

const opts = parseArgs(process.argv.slice(2));
const client = new Client(
  { name: 'vmcp-e2e-sdk-client', version: '1.0.0' },
  { capabilities: { elicitation: { form: {} } } }
);

// The elicitation handler answers with whatever the current section set.
const answerer = new Answerer();
client.setRequestHandler(ElicitRequestSchema, (request) => answerer.handle(request.params));

await client.connect(transportFor(opts, { StreamableHTTPClientTransport, StdioClientTransport }));

const out = {
  initialize: { server: client.getServerVersion(), capabilities: client.getServerCapabilities() }
};

out.tools = await section(async () => (await client.listTools()).tools);

out.call = await section(async () => ({
  add: await client.callTool({ name: 'add_then_echo', arguments: { a: 2, b: 40 } }),
  failing: await client.callTool({ name: 'failing', arguments: {} })
}));

out.progress = await section(async () => {
  const calls = [];
  for (let i = 0; i < opts.progressCalls; i++) {
    const seen = [];
    const result = await client.callTool({ name: 'fan', arguments: {} }, undefined, {
      onprogress: (p) => seen.push({ progress: p.progress, total: p.total, message: p.message })
    });
    calls.push({ isError: result.isError ?? false, progress: seen });
  }
  return calls;
});

out.abort = await section(async () => {
  const label = `sdk-abort-${opts.url ? 'http' : 'stdio'}`;
  const controller = new AbortController();
  const call = client.callTool({ name: 'slow', arguments: { label } }, undefined, {
    signal: controller.signal
  });
  const outcome = call.then(
    (result) => ({ result }),
    (err) => errorText(err)
  );
  await waitForRecord(opts.record, `start ${label}`, 30000);
  controller.abort('the test aborts the call');
  const aborted = await outcome;
  const after = await client.callTool({ name: 'add_then_echo', arguments: { a: 1, b: 1 } });
  return { label, aborted, after };
});

out.elicitation = await section(() =>
  elicitations(answerer, () => client.callTool({ name: 'greet', arguments: {} }))
);

await client.close();
process.stdout.write(JSON.stringify(out) + '\n');
