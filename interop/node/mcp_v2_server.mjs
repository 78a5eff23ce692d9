// Usage: node mcp_v2_server.mjs
//
// An MCP server built on the official TypeScript SDK v2
// (@modelcontextprotocol/server, createMcpHandler): 2026-07-28 per request,
// and 2025-era clients served statelessly (its default legacy posture), on
// http://127.0.0.1:PORT/mcp. Prints "listening URL" on stdout once it
// listens; exits when its standard input closes. Tools: add (a + b), and
// greet, which asks the user's name by multi round-trip (inputRequired
// with an elicitation) and greets them. The Go test
// (mcp_server_test.go, TestStreamableClientTypeScriptSDKv2Server) drives it
// with this library's MCP client.

import http from 'node:http';
import { McpServer, createMcpHandler, fromJsonSchema, inputRequired, acceptedContent } from '@modelcontextprotocol/server';

function factory() {
  const server = new McpServer({ name: 'ts-v2', version: '1.0.0' });
  server.registerTool('add', {
    description: 'Adds a and b.',
    inputSchema: fromJsonSchema({ type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] }),
  }, async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }));
  server.registerTool('greet', {
    description: 'Asks the user\'s name and greets them.',
    inputSchema: fromJsonSchema({ type: 'object', properties: {} }),
  }, async (_args, ctx) => {
    const got = acceptedContent(ctx.mcpReq.inputResponses, 'name');
    if (!got) {
      return inputRequired({
        inputRequests: {
          name: inputRequired.elicit({
            message: 'What is your name?',
            requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
          }),
        },
      });
    }
    return { content: [{ type: 'text', text: `Hello, ${got.name}!` }] };
  });
  return server;
}

const handler = createMcpHandler(factory);

// node:http to the handler's fetch face (what @modelcontextprotocol/node's
// toNodeHandler does), kept here to need no other package.
const srv = http.createServer(async (req, res) => {
  try {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) {
      for (const x of Array.isArray(v) ? v : [v]) if (x !== undefined) headers.append(k, x);
    }
    const ac = new AbortController();
    res.on('close', () => ac.abort());
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && req.method !== 'DELETE';
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method, headers, body: hasBody ? Buffer.concat(chunks) : undefined, signal: ac.signal,
    });
    const response = await handler.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) for await (const chunk of response.body) res.write(chunk);
    res.end();
  } catch (e) {
    process.stderr.write(`mcp_v2_server: ${e && e.stack || e}\n`);
    if (!res.headersSent) res.writeHead(500);
    res.end();
  }
});
srv.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening http://127.0.0.1:${srv.address().port}/mcp\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
