// The project's Node: the pinned release from npm's binary package (node-<platform>-<arch>) in .tools/, or this node.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const NODE_VERSION = '24.22.3';
const projectRoot = path.resolve(__dirname, '..');
const toolsDir = path.join(projectRoot, '.tools');
const installDir = path.join(toolsDir, `node-v${NODE_VERSION}`);
const installedBinary = path.join(installDir, 'bin', 'node');
const stagingPrefix = `.node-v${NODE_VERSION}-`;
// An install still unpacking is minutes old at most; older staging folders are what an interrupted one left.
const abandonedAfterMs = 60 * 60 * 1000;

function majorOf(version) {
  return version.replace(/^v/, '').split('.')[0];
}

function versionOf(binary) {
  const result = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 20000 });
  return result.status === 0 ? result.stdout.trim() : undefined;
}

function run(command, args, options) {
  const result = spawnSync(command, args, { encoding: 'utf8', ...options });
  if (result.error) throw new Error(`${command} ${args.join(' ')}: ${result.error.message}`);
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} exited ${result.status}: ${(result.stderr || '').trim()}`);
  }
  return result.stdout;
}

function removeAbandonedStaging() {
  for (const name of fs.readdirSync(toolsDir)) {
    if (!name.startsWith(stagingPrefix)) continue;
    const folder = path.join(toolsDir, name);
    if (Date.now() - fs.statSync(folder).mtimeMs > abandonedAfterMs) {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  }
}

/**
 * Unpacks the package in a staging folder beside the final one and renames it into place only once its node runs
 * and says the pinned version, so the final folder is either absent or whole.
 */
function install(log) {
  const packageName = `node-${process.platform}-${process.arch}`;
  log(`installing Node ${NODE_VERSION} (npm package ${packageName}) into .tools/`);
  fs.mkdirSync(toolsDir, { recursive: true });
  removeAbandonedStaging();
  const staging = fs.mkdtempSync(path.join(toolsDir, stagingPrefix));
  try {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const packed = run(
      npm,
      ['pack', `${packageName}@${NODE_VERSION}`, '--pack-destination', staging, '--silent'],
      {
        cwd: staging,
      },
    );
    const tarball = path.join(staging, packed.trim().split('\n').pop());
    run('tar', ['-xzf', tarball, '-C', staging]);
    const unpackedBinary = path.join(staging, 'package', 'bin', 'node');
    const version = versionOf(unpackedBinary);
    if (version !== `v${NODE_VERSION}`) {
      throw new Error(
        `the unpacked ${packageName} says ${version ?? 'nothing'} to --version, not v${NODE_VERSION}`,
      );
    }
    try {
      fs.renameSync(path.join(staging, 'package'), installDir);
    } catch (error) {
      // Another install finished first: its folder is whole too.
      if (!fs.existsSync(installedBinary)) throw error;
    }
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * The folder whose `node` is the project's Node: this process's when it is the pinned major, else .tools/'s.
 * `exact` asks for the pinned release itself, as the container bases carry it.
 */
function ensureNodeRuntime({
  exact = false,
  log = (message) => process.stderr.write(`[node-runtime] ${message}\n`),
} = {}) {
  if (!exact && majorOf(process.version) === majorOf(NODE_VERSION)) return path.dirname(process.execPath);
  if (!fs.existsSync(installedBinary)) install(log);
  return path.dirname(installedBinary);
}

module.exports = { NODE_VERSION, ensureNodeRuntime };

if (require.main === module) {
  const option = process.argv[2];
  if (option === '--version') {
    process.stdout.write(`${NODE_VERSION}\n`);
  } else if (option !== undefined && option !== '--exact') {
    process.stderr.write('usage: node scripts/node-runtime.cjs [--exact | --version]\n');
    process.exit(2);
  } else {
    try {
      process.stdout.write(`${ensureNodeRuntime({ exact: option === '--exact' })}\n`);
    } catch (error) {
      process.stderr.write(`[node-runtime] ${error.message}\n`);
      process.exit(1);
    }
  }
}
