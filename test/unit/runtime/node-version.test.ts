// The project's Node is named once (scripts/node-runtime.cjs); engines, version files, the image and the tests agree.
import fs from 'node:fs';
import path from 'node:path';

const { NODE_VERSION } = require('../../../scripts/node-runtime.cjs') as { NODE_VERSION: string };

const root = path.resolve(__dirname, '..', '..', '..');
const packageJson = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  engines: { node: string };
  scripts: Record<string, string>;
};
const wrapper = 'bash scripts/with-node.sh ';
// Tools whose output does not depend on the Node they run on, and the hooks that bring the project's Node.
const unwrappedScripts = [
  'prepare',
  'prestart',
  'prestack:cluster',
  'pretest',
  'build',
  'build:dev',
  'generate',
  'lint',
  'format',
  'typecheck',
  'contracts:check',
  'boundaries:check',
  'contracts:release',
  'openapi:lint',
];

type Version = [number, number, number];

function parse(version: string): Version {
  const [major, minor = '0', patch = '0'] = version.replace(/^v/, '').split('.');
  return [Number(major), Number(minor), Number(patch)];
}

function compare(left: Version, right: Version): number {
  return left[0] - right[0] || left[1] - right[1] || left[2] - right[2];
}

/** `>=A.B[.C] <D`, the one range form engines.node is written in. */
function satisfiesEngines(version: string): boolean {
  const range = /^>=(\d+(?:\.\d+){0,2}) <(\d+)$/.exec(packageJson.engines.node);
  if (!range) throw new Error(`engines.node is not of the form ">=A.B <C": ${packageJson.engines.node}`);
  return compare(parse(version), parse(range[1])) >= 0 && compare(parse(version), parse(range[2])) < 0;
}

const pinnedMajor = parse(NODE_VERSION)[0];

describe("the project's Node", () => {
  it('is the Node 24 line', () => {
    expect(pinnedMajor).toBe(24);
  });

  it('runs these tests', () => {
    expect(parse(process.version)[0]).toBe(pinnedMajor);
    expect(satisfiesEngines(process.version)).toBe(true);
  });

  it("is within package.json's engines, which allow no other major", () => {
    expect(satisfiesEngines(NODE_VERSION)).toBe(true);
    expect(satisfiesEngines(`${pinnedMajor - 1}.99.0`)).toBe(false);
    expect(satisfiesEngines(`${pinnedMajor + 1}.0.0`)).toBe(false);
  });

  it('is what .nvmrc and .node-version name', () => {
    for (const file of ['.nvmrc', '.node-version']) {
      expect(fs.readFileSync(path.join(root, file), 'utf8').trim()).toBe(NODE_VERSION);
    }
  });

  it("is the major of the Dockerfile's default base", () => {
    const dockerfile = fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8');
    expect(/^ARG NODE_IMAGE=(.+)$/m.exec(dockerfile)?.[1]).toBe(`node:${pinnedMajor}-bookworm-slim`);
  });

  it('runs every npm script of project code, through the wrapper that puts it first on PATH', () => {
    const unwrapped = Object.entries(packageJson.scripts)
      .filter(([name, command]) => !unwrappedScripts.includes(name) && !command.startsWith(wrapper))
      .map(([name]) => name);
    expect(unwrapped).toEqual([]);
    for (const name of ['prestart', 'prestack:cluster', 'pretest']) {
      expect(packageJson.scripts[name]).toBe('node scripts/bootstrap.cjs');
    }
  });
});
