// Installs what `npm start` and `npm test` need on a fresh machine: the project's Node, npm packages, the temporal CLI.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { ensureNodeRuntime } = require('./node-runtime.cjs');

const projectRoot = path.resolve(__dirname, '..');
const lockFile = path.join(projectRoot, 'package-lock.json');
const installedLock = path.join(projectRoot, 'node_modules', '.package-lock.json');

function packagesAreCurrent() {
  if (!fs.existsSync(installedLock)) return false;
  return fs.statSync(installedLock).mtimeMs >= fs.statSync(lockFile).mtimeMs;
}

let nodeBin;
try {
  nodeBin = ensureNodeRuntime();
} catch (error) {
  process.stderr.write(`[bootstrap] ${error.message}\n`);
  process.exit(1);
}

if (!packagesAreCurrent()) {
  process.stderr.write('[bootstrap] installing npm packages (npm ci)\n');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  // npm itself runs on the project's Node, as the scripts it later runs do, whichever node started this one.
  const env = { ...process.env, PATH: `${nodeBin}${path.delimiter}${process.env.PATH ?? ''}` };
  const result = spawnSync(npm, ['ci', '--no-audit', '--no-fund'], {
    cwd: projectRoot,
    stdio: 'inherit',
    env,
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

try {
  require('./temporal-cli.cjs').ensureTemporalCli();
} catch (error) {
  process.stderr.write(`[bootstrap] ${error.message}\n`);
  process.exit(1);
}
