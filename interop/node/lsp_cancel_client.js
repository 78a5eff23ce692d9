'use strict';
// Usage: node lsp_cancel_client.js SERVER_COMMAND [ARGS...]
//
// Spawns a JSON-RPC server on stdio with Content-Length framing (our
// cmd/stdioserver -convention lsp), cancels a long request with
// vscode-jsonrpc's CancellationTokenSource (which sends $/cancelRequest),
// and prints one JSON object with what came back. Exit status 0 when the
// script ran to its end (the Go test judges the results), 2 on a crash or
// a timeout.

const { spawn } = require('node:child_process');
const rpc = require('vscode-jsonrpc/node');

const TIMEOUT_MS = 20000;

async function outcome(promise) {
  try {
    return { result: await promise };
  } catch (e) {
    if (e instanceof rpc.ResponseError) return { error: { code: e.code, message: e.message, data: null } };
    return { error: { code: null, message: String((e && e.message) || e), data: null } };
  }
}

async function main() {
  const [cmd, ...args] = process.argv.slice(2);
  const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise((resolve, reject) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
    child.on('error', reject);
  });
  const timer = setTimeout(() => {
    process.stderr.write('lsp_cancel_client: timed out\n');
    child.kill('SIGKILL');
    process.exit(2);
  }, TIMEOUT_MS);
  const conn = rpc.createMessageConnection(
    new rpc.StreamMessageReader(child.stdout),
    new rpc.StreamMessageWriter(child.stdin),
  );
  conn.listen();

  const out = {};
  const source = new rpc.CancellationTokenSource();
  const started = Date.now();
  const cancelled = outcome(conn.sendRequest('sleep', { ms: 60000 }, source.token));
  setTimeout(() => source.cancel(), 50);
  out.cancelled = await cancelled;
  out.cancelledWithinMs = Date.now() - started < 10000;
  out.afterCancel = await outcome(conn.sendRequest('sum', 1, 1));
  child.stdin.end();
  out.exit = await exited;
  conn.dispose();
  clearTimeout(timer);
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  process.stderr.write(`lsp_cancel_client: ${(e && e.stack) || e}\n`);
  process.exit(2);
});
