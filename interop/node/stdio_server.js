'use strict';
// Usage: node stdio_server.js
//
// A vscode-jsonrpc server on this process's standard input and output
// (Content-Length framing), for the Go test that spawns it with
// jsonrpc.DialCommand (vscode_test.go). It exits when its input ends.
//
//   subtract [a, b] or {minuend, subtrahend}  a - b
//   fail                                      error -32042 "vscode failure", data {why: "asked"}
//   record (notification)                     notifies "recorded" with the same params
//   askClient {method, params}                calls the client back and returns its answer
//   sleep {ms}                                answers ms after ms milliseconds
//   items {n}                                 an array of n {i, s}, s 200 times the letter i%26

const rpc = require('vscode-jsonrpc/node');

const conn = rpc.createMessageConnection(
  new rpc.StreamMessageReader(process.stdin),
  new rpc.StreamMessageWriter(process.stdout),
);

// Positional params arrive spread, followed by a cancellation token.
conn.onRequest('subtract', (a, b) => {
  if (a !== null && typeof a === 'object') return a.minuend - a.subtrahend;
  return a - b;
});
conn.onRequest('fail', () => {
  throw new rpc.ResponseError(-32042, 'vscode failure', { why: 'asked' });
});
conn.onNotification('record', (params) => conn.sendNotification('recorded', params));
conn.onRequest('askClient', (p) =>
  p.params === undefined ? conn.sendRequest(p.method) : conn.sendRequest(p.method, rpc.ParameterStructures.byName, p.params),
);
conn.onRequest('items', (p) =>
  Array.from({ length: p.n }, (_, i) => ({ i, s: String.fromCharCode(97 + (i % 26)).repeat(200) })),
);
conn.onRequest('sleep', (p) => new Promise((resolve) => setTimeout(() => resolve(p.ms), p.ms)));

conn.onClose(() => process.exit(0));
process.stdin.on('end', () => process.exit(0));
conn.listen();
