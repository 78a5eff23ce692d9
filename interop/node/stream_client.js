'use strict';
// Usage: node stream_client.js http URL
//        node stream_client.js stdio-line SERVER_COMMAND [ARGS...]
//        node stream_client.js stdio-lsp SERVER_COMMAND [ARGS...]
//
// Calls "items" (a result the server streams) and "items_slice" (the same
// elements in a slice) with n = 5000 (about 1 MiB), through an npm client
// that knows nothing of streaming: json-rpc-2.0 over HTTP (Node's fetch,
// which asks for gzip and decompresses) or over a child's pipes with
// newline framing, or vscode-jsonrpc over a child's pipes with
// Content-Length framing. Prints one JSON object: both results and, over
// HTTP, the headers of the streamed reply. The Go test (node_stream_test.go)
// checks them. Exit status: 0 when the script ran to its end, 2 on a crash
// or a timeout.

const { spawn } = require('node:child_process');
const readline = require('node:readline');
const { JSONRPCClient } = require('json-rpc-2.0');
const rpc = require('vscode-jsonrpc/node');

const TIMEOUT_MS = 60000;
const N = 5000;

// httpClient is json-rpc-2.0 over fetch; it keeps the headers of the
// replies to "items".
function httpClient(url, out) {
  const client = new JSONRPCClient(async (payload) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'accept-encoding': 'gzip' },
      body: JSON.stringify(payload),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    if (payload.method === 'items') {
      out.contentEncoding = response.headers.get('content-encoding');
      out.transferEncoding = response.headers.get('transfer-encoding');
    }
    if (response.status !== 200) throw new Error(`HTTP ${response.status}`);
    client.receive(await response.json());
  });
  return { request: (method, params) => client.request(method, params), close() {} };
}

// lineClient is json-rpc-2.0 over a child's pipes, one message a line.
function lineClient(cmd, args) {
  const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const client = new JSONRPCClient((payload) => {
    child.stdin.write(JSON.stringify(payload) + '\n');
  });
  readline.createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (line) => {
    if (line.trim() !== '') client.receive(JSON.parse(line));
  });
  return {
    request: (method, params) => client.request(method, params),
    close() {
      child.stdin.end();
    },
  };
}

// lspClient is vscode-jsonrpc over a child's pipes (Content-Length framing).
function lspClient(cmd, args) {
  const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
  conn.listen();
  return {
    // An array is sent as positional params only when spread.
    request: (method, params) => (Array.isArray(params) ? conn.sendRequest(method, ...params) : conn.sendRequest(method, params)),
    close() {
      conn.dispose();
      child.stdin.end();
    },
  };
}

async function main() {
  const [mode, target, ...args] = process.argv.slice(2);
  const out = {};
  let client;
  switch (mode) {
    case 'http':
      client = httpClient(target, out);
      break;
    case 'stdio-line':
      client = lineClient(target, args);
      break;
    case 'stdio-lsp':
      client = lspClient(target, args);
      break;
    default:
      throw new Error('usage: node stream_client.js http URL | stdio-line CMD... | stdio-lsp CMD...');
  }
  out.streamed = await client.request('items', { n: N });
  out.slice = await client.request('items_slice', { n: N });
  out.after = await client.request('sum', [1, 2]); // the connection goes on
  client.close();
  process.stdout.write(JSON.stringify(out) + '\n');
}

const timer = setTimeout(() => {
  process.stderr.write('stream_client: timed out\n');
  process.exit(2);
}, TIMEOUT_MS + 5000);
main()
  .then(() => clearTimeout(timer))
  .catch((e) => {
    process.stderr.write(`stream_client: ${(e && e.stack) || e}\n`);
    process.exit(2);
  });
