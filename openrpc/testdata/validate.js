// Validates an OpenRPC document (read from stdin) against the official
// OpenRPC meta-schema with ajv, as a second opinion next to the Go test's
// own validator. Prints the errors and exits 1 when the document is invalid.
"use strict";
const Ajv = require("ajv");
const { openrpcDocument } = require("@open-rpc/meta-schema");
const jsonSchemaTools = require("@json-schema-tools/meta-schema/schema.json");

const strip = (s) => {
  const c = structuredClone(s);
  delete c.$schema; // a custom meta-schema URI that ajv does not know; both are draft-07 shaped
  return c;
};
const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(strip(jsonSchemaTools), "https://meta.json-schema.tools");
const validate = ajv.compile(strip(openrpcDocument));
let input = "";
process.stdin.on("data", (d) => (input += d));
process.stdin.on("end", () => {
  const doc = JSON.parse(input);
  if (validate(doc)) {
    console.log("valid");
    return;
  }
  for (const e of validate.errors) console.log(`${e.instancePath || "/"}: ${e.message} (${e.schemaPath})`);
  process.exit(1);
});
