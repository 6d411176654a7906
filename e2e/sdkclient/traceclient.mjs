// The official MCP TypeScript SDK client as a traced agent: it calls one
// tool with a W3C traceparent in the request's params._meta (as an agent
// that traces with OpenTelemetry sends it) and prints the result's _meta.
// e2e/tracing_test.go then finds vmcp's run span under the agent's span.
//
//   node traceclient.mjs --tool NAME --traceparent TP -- vmcp run --config C

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const argv = process.argv.slice(2);
const opts = { command: [] };
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--') {
    opts.command = argv.slice(i + 1);
    break;
  } else if (argv[i] === '--tool') {
    opts.tool = argv[++i];
  } else if (argv[i] === '--traceparent') {
    opts.traceparent = argv[++i];
  } else {
    throw new Error(`unknown argument ${argv[i]}`);
  }
}
const transport = new StdioClientTransport({ command: opts.command[0], args: opts.command.slice(1), stderr: 'inherit' });
const client = new Client({ name: 'traced-agent', version: '1.0.0' });
await client.connect(transport);
const result = await client.callTool({ name: opts.tool, arguments: {}, _meta: { traceparent: opts.traceparent } });
process.stdout.write(JSON.stringify({ isError: result.isError ?? false, meta: result._meta ?? null }));
await client.close();
