// speconly: a block the service has not got comes back null, which the
// result schema (an object) does not allow.
>> {"jsonrpc":"2.0","id":4,"method":"eth_getBlockByNumber","params":["0x99",false]}
<< {"jsonrpc":"2.0","id":4,"result":{"number":"0x99","hash":"0x0000000000000000000000000000000000000000000000000000000000000002","timestamp":"0x6"}}
