// Two calls in one fixture, the second with a string id; members in
// another order than the server writes them.
>> {"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}
<< {"jsonrpc":"2.0","id":1,"result":"0x2a"}
>> {"jsonrpc":"2.0","id":"two","method":"eth_blockNumber","params":[]}
<< {"id":"two","result":"0x2a","jsonrpc":"2.0"}
