// Time to first tools/list: the MCP TypeScript SDK v2 client
// (@modelcontextprotocol/client, pinned in package.json) starts a server on
// stdio, connects with the given negotiation, lists the tools once and
// exits, printing how many tools it saw. Timed from outside as a whole
// process (for example with /usr/bin/time), it measures what an MCP host
// waits before it can show vmcp's tools.
//
//   node firstlist.mjs --negotiation legacy|auto|pin -- vmcp run --config C

import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const argv = process.argv.slice(2);
const sep = argv.indexOf('--');
if (argv[0] !== '--negotiation' || sep !== 2 || sep === argv.length - 1) {
  throw new Error('usage: node firstlist.mjs --negotiation legacy|auto|pin -- COMMAND...');
}
const modes = { legacy: 'legacy', auto: 'auto', pin: { pin: '2026-07-28' } };
const mode = modes[argv[1]];
if (!mode) {
  throw new Error(`--negotiation must be legacy, auto or pin, not ${argv[1]}`);
}
const command = argv.slice(sep + 1);
const client = new Client({ name: 'vmcp-first-list', version: '1.0.0' }, { versionNegotiation: { mode } });
await client.connect(new StdioClientTransport({ command: command[0], args: command.slice(1), stderr: 'ignore' }));
const { tools } = await client.listTools();
await client.close();
process.stdout.write(`${tools.length} tools\n`);
