// A required argument is missing: -32602. The recorded message is
// another client's; error messages are not compared.
>> {"jsonrpc":"2.0","id":7,"method":"eth_getBalance","params":["0x00000000000000000000000000000000000000aa"]}
<< {"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"invalid argument 1: block number required"}}
