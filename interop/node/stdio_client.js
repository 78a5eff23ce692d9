'use strict';
// Usage: node stdio_client.js SERVER_COMMAND [ARGS...]
//
// Spawns a JSON-RPC server that speaks on its standard input and output with
// Content-Length framing (cmd/stdioserver), talks to it with vscode-jsonrpc's
// StreamMessageReader/StreamMessageWriter over the child's pipes, answers the
// server's requests to the client, and prints one JSON object with what it
// saw. The Go test (vscode_test.go) checks every field. The child's standard
// error goes to ours. Exit status: 0 when the script ran to its end (the Go
// test judges the results), 2 on a crash or a timeout.

const { spawn } = require('node:child_process');
const rpc = require('vscode-jsonrpc/node');

const TIMEOUT_MS = 20000;

// errorOf turns a rejected request into {code, message, data}.
function errorOf(e) {
  if (e instanceof rpc.ResponseError) {
    return { code: e.code, message: e.message, data: e.data === undefined ? null : e.data };
  }
  return { code: null, message: String((e && e.message) || e), data: null };
}

// outcome waits for a request and records either its result or its error.
async function outcome(promise) {
  try {
    return { result: await promise };
  } catch (e) {
    return { error: errorOf(e) };
  }
}

// waiter returns a queue of notifications with a next() that waits for one.
function waiter() {
  const items = [];
  const waiting = [];
  return {
    push(v) {
      const w = waiting.shift();
      if (w) w(v);
      else items.push(v);
    },
    next() {
      if (items.length) return Promise.resolve(items.shift());
      return new Promise((resolve) => waiting.push(resolve));
    },
  };
}

async function main() {
  const [cmd, ...args] = process.argv.slice(2);
  if (!cmd) throw new Error('usage: node stdio_client.js SERVER_COMMAND [ARGS...]');
  const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise((resolve, reject) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
    child.on('error', reject);
  });
  const timer = setTimeout(() => {
    process.stderr.write('stdio_client: timed out\n');
    child.kill('SIGKILL');
    process.exit(2);
  }, TIMEOUT_MS);

  const conn = rpc.createMessageConnection(
    new rpc.StreamMessageReader(child.stdout),
    new rpc.StreamMessageWriter(child.stdin),
  );
  const recorded = waiter();
  const notes = waiter();
  const callbacks = []; // what the server asked of us
  // Positional params arrive spread, followed by a cancellation token.
  conn.onRequest('client/add', (...args) => {
    const xs = args.filter((x) => typeof x === 'number');
    callbacks.push({ method: 'client/add', params: xs });
    return xs.reduce((a, b) => a + b, 0);
  });
  conn.onRequest('client/fail', () => {
    callbacks.push({ method: 'client/fail' });
    throw new rpc.ResponseError(-32050, 'the client refuses', { who: 'vscode-jsonrpc' });
  });
  conn.onNotification('recorded', (params) => recorded.push(params));
  conn.onNotification('client/note', (params) => notes.push(params));
  conn.listen();

  const out = {};
  out.subtractPositional = await outcome(conn.sendRequest('subtract', 42, 23));
  out.subtractNamed = await outcome(conn.sendRequest('subtract', { subtrahend: 23, minuend: 42 }));
  out.sum = await outcome(conn.sendRequest('sum', 1, 2, 3.5));
  out.getData = await outcome(conn.sendRequest('get_data'));
  out.echo = await outcome(conn.sendRequest('echo', { s: 'h\u00e9llo \u2028 \u{1F600} "q" \\', n: [1, 2.5, -3e-7], o: { a: [true, false] } }));
  out.error = await outcome(conn.sendRequest('error', { code: -32042, message: 'custom failure', data: { why: 'test', n: 7 } }));
  out.unknownMethod = await outcome(conn.sendRequest('no_such_method'));
  out.badParams = await outcome(conn.sendRequest('subtract', 'x', 'y'));

  await conn.sendNotification('record', { from: 'vscode-jsonrpc' });
  out.recorded = await recorded.next();

  out.askAdd = await outcome(conn.sendRequest('ask_peer', { method: 'client/add', params: [2, 3, 4] }));
  out.askFail = await outcome(conn.sendRequest('ask_peer', { method: 'client/fail' }));
  out.askMissing = await outcome(conn.sendRequest('ask_peer', { method: 'client/missing' }));
  out.tell = await outcome(conn.sendRequest('tell_peer', { method: 'client/note', params: { n: 1 } }));
  out.note = await notes.next();
  out.callbacks = callbacks;

  // Large messages, cut across many reads on both sides.
  const big = await outcome(conn.sendRequest('big', { n: 1 << 20 }));
  out.bigLength = big.error ? big : big.result.length;
  const s = '\u00e9\u{1F600}'.repeat(1 << 17);
  const echoed = await outcome(conn.sendRequest('echo', s)); // one positional param: [s]
  out.bigEcho = !echoed.error && echoed.result.length === 1 && echoed.result[0] === s;

  // Concurrent requests: later ones sleep less, so answers come out of order.
  const n = 16;
  const sleeps = await Promise.all(
    Array.from({ length: n }, (_, i) => outcome(conn.sendRequest('sleep', { ms: 5 * (n - i) }))),
  );
  out.concurrent = sleeps.map((o) => o.result);

  // vscode-jsonrpc sends "$/cancelRequest" when a token is cancelled. Our
  // server has no such method: the notification is dropped, the request
  // is answered as usual, and the connection goes on.
  const source = new rpc.CancellationTokenSource();
  const cancelled = outcome(conn.sendRequest('sleep', { ms: 100 }, source.token));
  setTimeout(() => source.cancel(), 10);
  out.cancelled = await cancelled;
  out.afterCancel = await outcome(conn.sendRequest('sum', 1, 1));

  // End of input with a request in flight: the server answers it, then exits.
  const last = outcome(conn.sendRequest('sleep', { ms: 300 }));
  await conn.sendNotification('notify_hello', [1]); // written after the request
  child.stdin.end();
  out.inFlightAtEOF = await last;
  out.exit = await exited;

  conn.dispose();
  clearTimeout(timer);
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  process.stderr.write(`stdio_client: ${(e && e.stack) || e}\n`);
  process.exit(2);
});
