// The specification's first example.
>> {"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}
<< {"jsonrpc":"2.0","result":19,"id":1}
>> {"jsonrpc":"2.0","method":"subtract","params":[23,42],"id":2}
<< {"jsonrpc":"2.0","result":-19.0,"id":2}
