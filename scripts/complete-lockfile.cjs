// Adds the lock entries npm leaves out when the registry mirror serves only this platform's optional binaries.
// Without them `npm ci` refuses the lock ("Missing: @swc/core-darwin-arm64 from lock file"). Run after `npm install`.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const lockPath = path.resolve(__dirname, '..', 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(lockPath, 'utf8'));
const packages = lock.packages;

function installedLocation(parentLocation, name) {
  // Node resolution: look beside the parent, then up the node_modules chain to the root.
  let base = parentLocation;
  for (;;) {
    const candidate = `${base ? `${base}/` : ''}node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (!base) return undefined;
    const index = base.lastIndexOf('node_modules/');
    base = index <= 0 ? '' : base.slice(0, index - 1);
  }
}

let added = 0;
for (const [location, entry] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies || {})) {
    if (installedLocation(location, name)) continue;
    const target = `node_modules/${name}`;
    if (packages[target]) continue;
    // An exact version is what these platform packages always pin; record it as optional so other platforms fetch it.
    packages[target] = { version, optional: true, ...(entry.dev ? { dev: true } : {}) };
    added += 1;
  }
}

const sorted = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
lock.packages = sorted;
fs.writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
process.stdout.write(`complete-lockfile: added ${added} optional platform entries\n`);
