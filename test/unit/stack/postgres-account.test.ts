// Whether the account PostgreSQL runs as can reach a folder: judged from real folders' owners and modes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { accountCanEnter, accountCanExecute } from '../../../dev/stack/postgres-account';

const owner = { uid: process.getuid!(), gid: process.getgid!() };
// Neither the owner nor in the owner's group: "others" bits apply to it.
const stranger = { uid: 4_200_001, gid: 4_200_001 };

let folder: string;

beforeEach(() => {
  folder = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'account-reach-')));
  fs.chmodSync(folder, 0o755);
});

afterEach(() => {
  fs.chmodSync(folder, 0o755);
  fs.rmSync(folder, { recursive: true, force: true });
});

function makeFolder(relative: string, mode: number): string {
  const made = path.join(folder, relative);
  fs.mkdirSync(made, { recursive: true });
  fs.chmodSync(made, mode);
  return made;
}

describe('reachability for the account PostgreSQL runs as', () => {
  it('shuts an account out of everything under a folder only its owner may enter', () => {
    makeFolder('private', 0o700);
    const inside = makeFolder('private/checkout/.data', 0o755);

    expect(accountCanEnter(inside, owner)).toBe(true);
    expect(accountCanEnter(inside, stranger)).toBe(false);

    fs.chmodSync(path.join(folder, 'private'), 0o711);
    expect(accountCanEnter(inside, stranger)).toBe(true);
  });

  it("judges the owner by the owner's bits alone", () => {
    const ownerShutOut = makeFolder('owner-shut-out', 0o077);
    expect(accountCanEnter(ownerShutOut, stranger)).toBe(true);
    expect(accountCanEnter(ownerShutOut, owner)).toBe(false);
  });

  it("requires both the link's folders and its target's folders to be open", () => {
    makeFolder('private', 0o700);
    const open = makeFolder('open/binaries', 0o755);
    const hidden = makeFolder('private/binaries', 0o755);
    fs.symlinkSync(open, path.join(folder, 'private', 'link-out'));
    fs.symlinkSync(hidden, path.join(folder, 'link-in'));

    expect(accountCanEnter(open, stranger)).toBe(true);
    expect(accountCanEnter(path.join(folder, 'private', 'link-out'), stranger)).toBe(false);
    expect(accountCanEnter(path.join(folder, 'link-in'), stranger)).toBe(false);
    expect(accountCanEnter(path.join(folder, 'link-in'), owner)).toBe(true);
  });

  it('needs an execute bit for the account on a binary, and a folder that exists', () => {
    const bin = makeFolder('bin', 0o755);
    const binary = path.join(bin, 'initdb');
    fs.writeFileSync(binary, '#!/bin/sh\n', { mode: 0o750 });
    fs.chmodSync(binary, 0o750);

    expect(accountCanExecute(binary, owner)).toBe(true);
    expect(accountCanExecute(binary, stranger)).toBe(false);
    fs.chmodSync(binary, 0o755);
    expect(accountCanExecute(binary, stranger)).toBe(true);
    expect(accountCanEnter(path.join(folder, 'missing'), owner)).toBe(false);
  });
});
