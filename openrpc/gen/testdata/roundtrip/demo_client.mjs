// Calls the demo service through the TypeScript client jrpc gen made from
// its rpc.discover (compiled to out/demo.js), over HTTP and WebSocket, and
// prints what it got as one JSON line per transport (see TestTypeScript).
import { Client, RpcError, httpTransport, webSocketTransport } from "./out/demo.js";

async function callAll(transport) {
  const c = new Client(transport);
  const r = {
    diff: await c.subtract(42, 23),
    total: await c.sum(1, 2, 3.5),
    echo: await c.echo({ a: [1, "two", null] }),
    big: await c.big(5),
  };
  try {
    await c.error(-32000, "busy", { retry: true });
    r.err = "no error";
  } catch (e) {
    r.err = e instanceof RpcError ? { code: e.code, message: e.message, data: e.data } : String(e);
  }
  try {
    await transport.call("no_such_method", []);
    r.unknown = "no error";
  } catch (e) {
    r.unknown = e instanceof RpcError ? { code: e.code } : String(e);
  }
  return r;
}

const [httpURL, wsURL] = process.argv.slice(2);
console.log(JSON.stringify(await callAll(httpTransport(httpURL))));
const ws = webSocketTransport(wsURL);
console.log(JSON.stringify(await callAll(ws)));
ws.close();
