// Finds localstripe (a stateful fake of Stripe's API, from PyPI) in .tools/, installing its pinned version when missing.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const LOCALSTRIPE_PIN = 'localstripe==1.15.10';
const projectRoot = path.resolve(__dirname, '..');
const tools = path.join(projectRoot, '.tools');
fs.mkdirSync(tools, { recursive: true });
// The real path, so checkouts sharing one .tools (a symlink) share one venv instead of reinstalling in turn.
const venv = path.join(fs.realpathSync(tools), 'localstripe-venv');
const binary = path.join(venv, 'bin', 'localstripe');
const pinFile = path.join(venv, '.pins');

// The venv's scripts name its interpreter by absolute path: a checkout moved or cloned elsewhere reinstalls.
const installedPin = `${LOCALSTRIPE_PIN} ${venv}`;

function installed() {
  return (
    fs.existsSync(binary) &&
    fs.existsSync(pinFile) &&
    fs.readFileSync(pinFile, 'utf8').trim() === installedPin
  );
}

function run(command, args) {
  const result = spawnSync(command, args, {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, PIP_ROOT_USER_ACTION: 'ignore' },
  });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed${result.error ? `: ${result.error.message}` : ''}`);
  }
}

/** An absolute path to the pinned localstripe, installed into its own virtual environment on first use. */
function ensureLocalstripe(log = (message) => process.stderr.write(`[localstripe] ${message}\n`)) {
  if (installed()) return binary;
  log(`installing ${LOCALSTRIPE_PIN} into .tools/localstripe-venv`);
  fs.rmSync(venv, { recursive: true, force: true });
  run('python3', ['-m', 'venv', venv]);
  run(path.join(venv, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', LOCALSTRIPE_PIN]);
  fs.writeFileSync(pinFile, `${installedPin}\n`);
  return binary;
}

module.exports = { ensureLocalstripe, LOCALSTRIPE_PIN };

if (require.main === module) {
  try {
    process.stdout.write(`${ensureLocalstripe()}\n`);
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}
