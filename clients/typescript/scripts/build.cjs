// `npm run build` in clients/typescript: the ES module and CommonJS builds with their declarations, each marked as such.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const packageRoot = path.join(__dirname, '..');
const dist = path.join(packageRoot, 'dist');
const tsc = require.resolve('typescript/bin/tsc');

fs.rmSync(dist, { recursive: true, force: true });
for (const [config, type] of [
  ['tsconfig.esm.json', 'module'],
  ['tsconfig.cjs.json', 'commonjs'],
]) {
  execFileSync(process.execPath, [tsc, '-p', config], { cwd: packageRoot, stdio: 'inherit' });
  // The folder's own package.json tells Node (and TypeScript, for the .d.ts) which module format its .js files are.
  const folder = path.join(dist, type === 'module' ? 'esm' : 'cjs');
  fs.writeFileSync(path.join(folder, 'package.json'), `${JSON.stringify({ type })}\n`);
}
