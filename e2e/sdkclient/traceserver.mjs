// A backend MCP server made with the TypeScript SDK (@modelcontextprotocol/sdk,
// the pinned npm package), over streamable HTTP, that tells what trace
// context each tool call reached it with: its one tool, `seen`, answers
// with the traceparent and tracestate HTTP headers of the request and the
// traceparent and tracestate of the call's params._meta. e2e's
// TestTracingReachesATypeScriptServer calls it through vmcp.
//
//   node e2e/sdkclient/traceserver.mjs --port PORT
//
// Stateless: a fresh server and transport per POST, as the SDK's stateless
// example does. It prints "listening PORT" once it listens.
import http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

const portAt = process.argv.indexOf('--port');
const port = portAt > 0 ? Number(process.argv[portAt + 1]) : NaN;
if (!Number.isInteger(port) || port <= 0) {
  console.error('usage: traceserver.mjs --port PORT');
  process.exit(2);
}

function newServer() {
  const server = new McpServer({ name: 'traceserver', version: '1.0.0' });
  server.registerTool(
    'seen',
    { description: 'The trace context this call arrived with (headers and _meta)' },
    async (extra) => {
      const h = extra.requestInfo?.headers ?? {};
      const meta = extra._meta ?? {};
      const seen = {
        header: { traceparent: h.traceparent ?? '', tracestate: h.tracestate ?? '' },
        meta: { traceparent: meta.traceparent ?? '', tracestate: meta.tracestate ?? '' },
      };
      return { content: [{ type: 'text', text: JSON.stringify(seen) }], structuredContent: seen };
    },
  );
  return server;
}

const httpServer = http.createServer(async (req, res) => {
  if (req.method !== 'POST') {
    res.writeHead(405).end();
    return;
  }
  let body = '';
  for await (const chunk of req) body += chunk;
  const server = newServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => {
    transport.close();
    server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, JSON.parse(body));
});
httpServer.listen(port, '127.0.0.1', () => console.log(`listening ${port}`));
