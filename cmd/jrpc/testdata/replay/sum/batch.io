// A batch with a notification: one Response in the Array.
>> [{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":"a"},{"jsonrpc":"2.0","method":"notify_hello","params":[7]}]
<< [{"jsonrpc":"2.0","result":7,"id":"a"}]
