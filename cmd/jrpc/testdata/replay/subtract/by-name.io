// speconly: any number fits; the recorded 7 is one example.
>> {"jsonrpc":"2.0","method":"subtract","params":{"minuend":1,"subtrahend":0.5},"id":"n"}
<< {"jsonrpc":"2.0","result":7,"id":"n"}
