// Usage: node mcp_sdk_client.mjs stdio SERVER_COMMAND [ARGS...]
//        node mcp_sdk_client.mjs http URL
//
// Drives an MCP server (the demo, `jrpc serve --mcp`) with the official
// TypeScript MCP SDK's Client, over StdioClientTransport (spawning the
// server) or StreamableHTTPClientTransport, and prints one JSON object with
// what it saw: initialize, ping, tools/list, a call of every demo tool,
// progress, a call cancelled with an AbortSignal (and the log message the
// server sends once the tool has stopped), an unknown tool, bad arguments;
// over HTTP also every HTTP exchange (method, session header, status, type),
// the messages that came on the GET stream, and terminateSession (DELETE).
// The Go test (mcp_node_test.go) checks every field. Exit status: 0 when
// the script ran to its end (the Go test judges the results), 2 on a crash
// or a timeout. Every await is bounded.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema, McpError } from '@modelcontextprotocol/sdk/types.js';

const TIMEOUT_MS = 30000; // the whole script
const STEP_MS = 10000; // any one request or wait

const watchdog = setTimeout(() => {
  process.stderr.write('mcp_sdk_client: timed out\n');
  process.exit(2);
}, TIMEOUT_MS);

// outcome waits for a request and records its result or its error.
async function outcome(promise) {
  try {
    return { result: await promise };
  } catch (e) {
    if (e instanceof McpError) {
      return { error: { code: e.code, message: e.message, data: e.data === undefined ? null : e.data } };
    }
    return { error: { code: null, message: String((e && e.message) || e), data: null } };
  }
}

// until waits for cond() to hold, checking every 10 ms, for at most STEP_MS.
async function until(cond) {
  const end = Date.now() + STEP_MS;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
  return cond();
}

const opts = { timeout: STEP_MS };

async function main() {
  const [mode, ...rest] = process.argv.slice(2);
  const http = { exchanges: [], getStream: [] };
  let transport;
  if (mode === 'stdio') {
    transport = new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: 'inherit' });
  } else if (mode === 'http') {
    // Every HTTP exchange is recorded; what the GET stream carries is read
    // from a copy of its body.
    const tap = async (url, init = {}) => {
      const headers = new Headers(init.headers);
      const res = await fetch(url, init);
      const ex = {
        method: init.method || 'GET',
        session: headers.get('mcp-session-id'),
        protocolVersion: headers.get('mcp-protocol-version'),
        lastEventId: headers.get('last-event-id'),
        status: res.status,
        contentType: res.headers.get('content-type'),
      };
      http.exchanges.push(ex);
      if (ex.method === 'GET' && res.body && (ex.contentType || '').startsWith('text/event-stream')) {
        const [mine, theirs] = res.body.tee();
        (async () => {
          const dec = new TextDecoder();
          let buf = '';
          try {
            for await (const chunk of mine) {
              buf += dec.decode(chunk, { stream: true });
              let i;
              while ((i = buf.indexOf('\n\n')) >= 0) {
                const ev = buf.slice(0, i);
                buf = buf.slice(i + 2);
                const data = ev.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
                if (data) http.getStream.push(JSON.parse(data));
              }
            }
          } catch {
            // the stream ended (aborted by the client at close)
          }
        })();
        return new Response(theirs, { status: res.status, statusText: res.statusText, headers: res.headers });
      }
      return res;
    };
    transport = new StreamableHTTPClientTransport(new URL(rest[0]), { fetch: tap });
  } else {
    throw new Error('usage: node mcp_sdk_client.mjs stdio COMMAND [ARGS...] | http URL');
  }

  const client = new Client({ name: 'interop-ts', version: '1.0.0' }, { capabilities: {} });
  const logs = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
  // Every message in and out, as the transport carries it: the handler the
  // client installs at connect is wrapped as it is set.
  const sent = [];
  const received = [];
  let onmessage;
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () => onmessage,
    set: (fn) => {
      onmessage = fn && ((m, extra) => {
        received.push(m);
        fn(m, extra);
      });
    },
  });
  const send = transport.send.bind(transport);
  transport.send = (m, o) => {
    sent.push(m);
    return send(m, o);
  };
  await client.connect(transport, opts);
  const init = received.find((m) => m.id !== undefined && m.result && m.result.protocolVersion);

  const out = {};
  out.initialize = {
    protocolVersion: init ? init.result.protocolVersion : null,
    requestedVersion: sent[0].params.protocolVersion,
    serverVersion: client.getServerVersion(),
    capabilities: client.getServerCapabilities(),
    instructions: client.getInstructions() || null,
  };
  out.ping = await outcome(client.ping(opts));
  const tools = await outcome(client.listTools(undefined, opts));
  out.tools = tools.error ? tools : tools.result.tools.map((t) => ({ name: t.name, inputSchema: t.inputSchema, outputSchema: t.outputSchema || null }));

  out.calls = {};
  for (const [name, args] of [
    ['add', { a: 2, b: 3 }],
    ['echo', { text: 'héllo, 世界' }],
    ['now', {}],
    ['sleep', { ms: 20 }],
  ]) {
    out.calls[name] = await outcome(client.callTool({ name, arguments: args }, undefined, opts));
  }

  // Progress: the SDK sends a progressToken (the request's id) and hands
  // the reports to onprogress; the raw notifications are kept too.
  const reports = [];
  const progress = await outcome(
    client.callTool({ name: 'sleep', arguments: { ms: 300 } }, undefined, { ...opts, onprogress: (p) => reports.push(p) }),
  );
  const call = sent.find((m) => m.method === 'tools/call' && m.params && m.params.arguments && m.params.arguments.ms === 300);
  out.progress = {
    result: progress,
    sentToken: call && call.params._meta ? call.params._meta.progressToken : null,
    reports,
    raw: received.filter((m) => m.method === 'notifications/progress').map((m) => m.params),
  };

  // Cancellation: logging at notice first, so that the server reports the
  // tool it stopped; then a long sleep aborted after 300 ms.
  out.setLevel = await outcome(client.setLoggingLevel('notice', opts));
  const ac = new AbortController();
  const started = Date.now();
  setTimeout(() => ac.abort('the test cancels'), 300);
  const cancelled = await outcome(client.callTool({ name: 'sleep', arguments: { ms: 60000 } }, undefined, { ...opts, signal: ac.signal }));
  const rejectedAfterMs = Date.now() - started;
  const logged = await until(() => logs.some((l) => l.data && l.data.event === 'cancelled'));
  out.cancel = {
    outcome: cancelled,
    rejectedAfterMs,
    sentCancel: sent.filter((m) => m.method === 'notifications/cancelled').map((m) => m.params),
    logged,
    logs,
    pingAfter: await outcome(client.ping(opts)),
    addAfter: await outcome(client.callTool({ name: 'add', arguments: { a: 1, b: 1 } }, undefined, opts)),
  };

  out.unknownTool = await outcome(client.callTool({ name: 'nope' }, undefined, opts));
  out.badArguments = await outcome(client.callTool({ name: 'add', arguments: { a: 'two', b: 3 } }, undefined, opts));

  if (mode === 'http') {
    // Idle for a while after the cancelled call: the SDK resumes the
    // call's ended stream once, and must not keep polling the server.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const session = transport.sessionId;
    out.http = { sessionId: session || null };
    out.http.terminate = await outcome(transport.terminateSession());
    // The ended session's id is refused now (404).
    const after = await fetch(rest[0], {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': transport.protocolVersion },
      body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'ping' }),
      signal: AbortSignal.timeout(STEP_MS),
    });
    out.http.afterTerminateStatus = after.status;
    await after.body?.cancel();
    out.http.exchanges = http.exchanges;
    out.http.getStream = http.getStream;
  }
  await client.close();
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().then(
  () => {
    clearTimeout(watchdog);
    process.exit(0);
  },
  (e) => {
    process.stderr.write(`mcp_sdk_client: ${(e && e.stack) || e}\n`);
    process.exit(2);
  },
);
