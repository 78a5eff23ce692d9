// A JSON-RPC server over HTTP built with the npm package json-rpc-2.0 (its
// JSONRPCServer, as its README shows it), for `jrpc conform` to check. It
// prints {"url": ...} on standard output once it listens on loopback.
"use strict";
const http = require("http");
const { JSONRPCServer } = require("json-rpc-2.0");

const server = new JSONRPCServer();
server.addMethod("subtract", (p) => (Array.isArray(p) ? p[0] - p[1] : p.minuend - p.subtrahend));
server.addMethod("echo", (p) => p);

const httpServer = http.createServer((req, res) => {
  let body = "";
  req.setEncoding("utf8");
  req.on("data", (chunk) => (body += chunk));
  req.on("end", async () => {
    const reply = await server.receiveJSON(body);
    if (reply === null) {
      res.writeHead(204);
      res.end();
      return;
    }
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify(reply));
  });
});
httpServer.listen(0, "127.0.0.1", () => {
  console.log(JSON.stringify({ url: `http://127.0.0.1:${httpServer.address().port}/` }));
});
