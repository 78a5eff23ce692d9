// Package httpmsg is HTTP as a message transport, one message per POST,
// with nothing of JSON-RPC in it: the server's checks of a POST (method
// 405, Content-Type and Content-Encoding 415, size 413 from Content-Length
// or as a chunked or compressed body passes the limit, the body's read
// deadline 408) and the client's reading of the reply (the size limit, an
// empty body where a reply was due, the Content-Type, the start of a body
// sent with an error status, draining what is left for keep-alive).
//
// The jsonrpc package keeps the public types (HTTPClient, HTTPError) and
// answers what needs JSON-RPC (the 413's log line, the 429 body).
package httpmsg
