'use strict';
// Usage: node http_client.js URL
//
// Calls a JSON-RPC server over HTTP POST with the json-rpc-2.0 package's
// JSONRPCClient (its send function is Node's fetch, as the package's README
// shows) and prints one JSON object with what it saw: each request's result
// or error, and the HTTP status and content type of every exchange. The Go
// test (jsonrpc2npm_test.go) checks every field. Exit status: 0 when the
// script ran to its end (the Go test judges the results), 2 on a crash.

const { JSONRPCClient, JSONRPCErrorException } = require('json-rpc-2.0');

const TIMEOUT_MS = 20000;

// until waits for cond() to hold, checking every 10 ms.
async function until(cond) {
  while (!cond()) await new Promise((resolve) => setTimeout(resolve, 10));
}

async function main() {
  const url = process.argv[2];
  if (!url) throw new Error('usage: node http_client.js URL');

  const exchanges = []; // {kind, status, contentType, body}
  const client = new JSONRPCClient(async (payload) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(payload),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const text = await response.text();
    const kind = Array.isArray(payload)
      ? 'batch:' + payload.map((r) => (r.id === undefined ? 'n' : 'c')).join('')
      : payload.id === undefined
        ? 'notification:' + payload.method
        : 'call:' + payload.method;
    exchanges.push({ kind, status: response.status, contentType: response.headers.get('content-type'), body: text });
    if (response.status === 200) {
      client.receive(JSON.parse(text));
    } else if (Array.isArray(payload) ? payload.some((r) => r.id !== undefined) : payload.id !== undefined) {
      throw new Error(`HTTP ${response.status}`);
    }
  });

  // outcome waits for a request and records either its result or its error.
  async function outcome(promise) {
    try {
      return { result: await promise };
    } catch (e) {
      if (e instanceof JSONRPCErrorException) {
        return { error: { code: e.code, message: e.message, data: e.data === undefined ? null : e.data } };
      }
      return { error: { code: null, message: String((e && e.message) || e), data: null } };
    }
  }

  const out = {};
  out.subtractPositional = await outcome(client.request('subtract', [42, 23]));
  out.subtractNamed = await outcome(client.request('subtract', { subtrahend: 23, minuend: 42 }));
  out.sum = await outcome(client.request('sum', [1, 2, 3.5]));
  out.getData = await outcome(client.request('get_data'));
  out.echo = await outcome(client.request('echo', { s: 'h\u00e9llo \u2028 \u{1F600} "q" \\', n: [1, 2.5, -3e-7], o: { a: [true, false] } }));
  out.error = await outcome(client.request('error', { code: -32042, message: 'custom failure', data: { why: 'test', n: 7 } }));
  out.unknownMethod = await outcome(client.request('no_such_method', []));
  out.badParams = await outcome(client.request('subtract', ['x', 'y']));

  // A notification: the library sends it and forgets it; the Go side sees it
  // arrive, and the exchange shows the HTTP status.
  client.notify('record', { from: 'json-rpc-2.0' });
  await until(() => exchanges.some((e) => e.kind === 'notification:record'));

  // A batch: two calls, a notification and a call to an unknown method.
  const batch = await client.requestAdvanced([
    { jsonrpc: '2.0', id: 'b1', method: 'sum', params: [1, 2, 3] },
    { jsonrpc: '2.0', method: 'record', params: ['batched'] },
    { jsonrpc: '2.0', id: 'b2', method: 'no_such_method' },
    { jsonrpc: '2.0', id: 'b3', method: 'subtract', params: { minuend: 1, subtrahend: 3 } },
  ]);
  out.batch = batch;

  // A batch of notifications only: no response body.
  await client.send([
    { jsonrpc: '2.0', method: 'record', params: ['only-1'] },
    { jsonrpc: '2.0', method: 'record', params: ['only-2'] },
  ]);

  // Concurrent requests over the client's connection pool.
  out.concurrent = (
    await Promise.all(Array.from({ length: 16 }, (_, i) => outcome(client.request('subtract', [i, 1]))))
  ).map((o) => o.result);

  // ask_peer needs a connection to call back on, which HTTP has not.
  out.askPeer = await outcome(client.request('ask_peer', { method: 'client/add', params: [1] }));

  out.exchanges = exchanges;
  process.stdout.write(JSON.stringify(out) + '\n');
}

const timer = setTimeout(() => {
  process.stderr.write('http_client: timed out\n');
  process.exit(2);
}, TIMEOUT_MS + 5000);
main()
  .then(() => clearTimeout(timer))
  .catch((e) => {
    process.stderr.write(`http_client: ${(e && e.stack) || e}\n`);
    process.exit(2);
  });
