// Removes compiled files under dist/ whose TypeScript source is gone (tsc never deletes them), so a module that
// became a folder (src/config.ts -> src/config/) or moved (src/stack -> dev/stack) is not loaded from a stale copy.
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const dist = path.join(root, 'dist');
const compiled = /\.(js|js\.map|d\.ts)$/;

function prune(directory) {
  for (const entry of fs.readdirSync(directory, { withFileTypes: true })) {
    const file = path.join(directory, entry.name);
    if (entry.isDirectory()) {
      prune(file);
      if (fs.readdirSync(file).length === 0) fs.rmdirSync(file);
      continue;
    }
    if (!compiled.test(entry.name)) continue;
    const source = path.join(root, path.relative(dist, file)).replace(compiled, '.ts');
    if (!fs.existsSync(source)) fs.rmSync(file);
  }
}

for (const tree of ['src', 'dev', 'migrations']) {
  if (fs.existsSync(path.join(dist, tree))) prune(path.join(dist, tree));
}
