// `npm run build`'s last step: the workflow bundle production workers start from, written beside the compiled code.
//
// Usage: node scripts/build-workflow-bundle.cjs [build output folder, dist/ by default]
// Writes <folder>/workflow-bundle.js and <folder>/workflow-bundle.json (every file bundled, with its digest: a
// worker uses the bundle only while those files are unchanged, and otherwise bundles from source and says why).
const path = require('node:path');

const outputDirectory = path.resolve(process.argv[2] ?? path.join(__dirname, '..', 'dist'));

async function main() {
  const { writeWorkflowBundle } = require(path.join(outputDirectory, 'src', 'worker', 'workflow-bundle.js'));
  const started = Date.now();
  // webpack's own report is noise here; warnings and errors still show.
  const { DefaultLogger } = require('@temporalio/worker');
  const { codePath, fileCount } = await writeWorkflowBundle(outputDirectory, new DefaultLogger('WARN'));
  process.stdout.write(
    `workflow bundle: ${path.relative(process.cwd(), codePath)} from ${fileCount} files in ${Date.now() - started} ms\n`,
  );
}

main().catch((error) => {
  process.stderr.write(`build-workflow-bundle: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
