// Usage: node mcp_v2_client.mjs MODE stdio SERVER_COMMAND [ARGS...]
//        node mcp_v2_client.mjs MODE http URL
//
// Drives the demo (`jrpc serve --mcp`) with the official TypeScript MCP SDK
// v2 client (@modelcontextprotocol/client), negotiating MODE: "legacy"
// (2025-11-25, initialize), "auto" (server/discover first) or a revision to
// pin (2026-07-28). Prints one JSON object with what it saw: the revision
// reached, tools/list (with its caching hints as the wire carried them),
// tools/call add, an unknown tool, the greet tool (which asks the user's
// name: elicitation answered by this client, over the session or as a
// multi round-trip), progress of a sleep, and a sleep cancelled with an
// AbortSignal. The Go test (mcp_node_test.go) checks it. Exit status: 0
// when the script ran to its end, 2 on a crash or a timeout.

import { Client, ProtocolError } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const STEP_MS = 10000;
const watchdog = setTimeout(() => {
  process.stderr.write('mcp_v2_client: timed out\n');
  process.exit(2);
}, 30000);

async function outcome(promise) {
  try {
    return { result: await promise };
  } catch (e) {
    if (e instanceof ProtocolError) return { error: { code: e.code, message: e.message } };
    return { error: { code: (e && e.code) ?? null, message: String((e && e.message) || e) } };
  }
}

async function main() {
  const [mode, kind, ...rest] = process.argv.slice(2);
  const received = [];
  let transport;
  if (kind === 'stdio') {
    transport = new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: 'inherit' });
  } else {
    transport = new StreamableHTTPClientTransport(new URL(rest[0]));
  }
  const versionNegotiation = mode === 'legacy' ? { mode: 'legacy' } : mode === 'auto' ? { mode: 'auto' } : { mode: { pin: mode } };
  const client = new Client({ name: 'interop-ts-v2', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } }, versionNegotiation });
  const asked = [];
  client.setRequestHandler('elicitation/create', async (req) => {
    asked.push(req.params.message);
    return { action: 'accept', content: { name: 'Ada' } };
  });
  await client.connect(transport, { timeout: STEP_MS });
  // Every message the client receives, as the transport carries it.
  const onmessage = transport.onmessage;
  transport.onmessage = (m, extra) => {
    received.push(m);
    onmessage(m, extra);
  };
  const out = { protocolVersion: client.getNegotiatedProtocolVersion() ?? null, era: client.getProtocolEra() ?? null };
  out.tools = await outcome(client.listTools({}, { timeout: STEP_MS }));
  out.listWire = received.find((m) => m.result && m.result.tools)?.result ?? null;
  if (out.listWire) out.listWire = { ...out.listWire, tools: out.listWire.tools.map((t) => t.name) };
  if (out.tools.result) out.tools = { names: out.tools.result.tools.map((t) => t.name) };
  out.add = await outcome(client.callTool({ name: 'add', arguments: { a: 2, b: 3 } }, { timeout: STEP_MS }));
  out.unknown = await outcome(client.callTool({ name: 'nope', arguments: {} }, { timeout: STEP_MS }));
  out.greet = await outcome(client.callTool({ name: 'greet', arguments: {} }, { timeout: STEP_MS }));
  out.asked = asked;
  const progress = [];
  out.sleep = await outcome(client.callTool({ name: 'sleep', arguments: { ms: 300 } }, { timeout: STEP_MS, onprogress: (p) => progress.push(p.progress) }));
  out.progress = progress;
  const ac = new AbortController();
  setTimeout(() => ac.abort('test cancel'), 200);
  const started = Date.now();
  out.cancelled = await outcome(client.callTool({ name: 'sleep', arguments: { ms: 60000 } }, { timeout: STEP_MS, signal: ac.signal }));
  out.cancelledAfterMs = Date.now() - started;
  out.after = await outcome(client.callTool({ name: 'echo', arguments: { text: 'still here' } }, { timeout: STEP_MS }));
  await client.close();
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().then(
  () => {
    clearTimeout(watchdog);
    process.exit(0);
  },
  (e) => {
    process.stderr.write('mcp_v2_client: ' + ((e && e.stack) || e) + '\n');
    process.exit(2);
  },
);
