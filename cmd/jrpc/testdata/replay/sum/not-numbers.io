// Params of the wrong type: -32602 and the problems in data, whatever
// the message says.
>> {"jsonrpc":"2.0","method":"sum","params":["x"],"id":9}
<< {"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params","data":[{"path":"/0","problem":"expected number, got string"}]},"id":9}
