// openapi-typescript's types for each OpenAPI document on stdin (a JSON list of texts), as a JSON list on stdout.
// A process of its own: openapi-typescript's CommonJS build requires ESM-only packages, which Node loads natively and
// jest's module loader (the unit tests of the typed-client check) does not.
const { default: openapiTS, astToString } = require('openapi-typescript');

async function main() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  const texts = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  const sources = [];
  for (const [index, text] of texts.entries()) {
    try {
      sources.push(astToString(await openapiTS(text, { silent: true })));
    } catch (error) {
      process.stderr.write(`document ${index}: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
      return;
    }
  }
  process.stdout.write(JSON.stringify(sources));
}

main();
