// Prints the OpenRPC meta-schema (the npm package ships it as a module).
"use strict";
process.stdout.write(JSON.stringify(require("@open-rpc/meta-schema").openrpcDocument));
