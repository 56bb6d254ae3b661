// `npm run contracts:typed-clients`: each release's OpenAPI document against the next, and the last against the
// working tree, judged as strict openapi-fetch clients feel them; every break must be recorded for its release.
//
// Usage: tsx scripts/check-typed-clients.ts check [--root DIR]
//        tsx scripts/check-typed-clients.ts compare <old.yaml> <new.yaml>
//          what strict clients of one document would feel against another, with no record (exit 1 on a break).
//        tsx scripts/check-typed-clients.ts release <name> [--root DIR]
//          adds the working tree's document as the next folder of contracts/releases/ and moves the breaks recorded
//          for it (contracts/typed-client-changes.yaml) into that folder.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  checkPairs,
  type Contract,
  describeSite,
  type Finding,
  type Pair,
  readRecord,
  recordSuggestion,
} from './typed-clients.js';
import { runCommand } from './lib/run-command';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { root: { type: 'string' } },
});
const repository = path.join(__dirname, '..');
const root = path.resolve(values.root ?? repository);
const releases = path.join(root, 'contracts/releases');
const released = path.join(root, 'contracts/released/openapi.yaml');
const working = path.join(root, 'openapi/openapi.yaml');
const unreleasedRecord = path.join(root, 'contracts/typed-client-changes.yaml');
const recordName = 'typed-client-changes.yaml';
const folderPattern = /^(\d{2})-([a-z0-9]+(?:-[a-z0-9]+)*)$/;

function log(line: string): void {
  process.stdout.write(`typed clients: ${line}\n`);
}

function relative(file: string): string {
  return path.relative(root, file);
}

function releaseFolders(): string[] {
  if (!fs.existsSync(releases)) return [];
  const folders = fs
    .readdirSync(releases, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  for (const [index, folder] of folders.entries()) {
    const match = folderPattern.exec(folder);
    if (!match || Number(match[1]) !== index + 1) {
      throw new Error(
        `typed clients: ${relative(path.join(releases, folder))} is not the release folder expected at position ` +
          `${index + 1} (NN-name, numbered from 01 without gaps)`,
      );
    }
    if (!fs.existsSync(path.join(releases, folder, 'openapi.yaml'))) {
      throw new Error(`typed clients: ${relative(path.join(releases, folder))} has no openapi.yaml`);
    }
  }
  return folders;
}

function contractOf(name: string, file: string): Contract {
  return { name, text: fs.readFileSync(file, 'utf8') };
}

function printFinding(mark: string, finding: Finding, words: 'summary' | 'message' = 'message'): void {
  log(`  ${mark} ${finding.operation} (${finding.route}): ${finding[words]}`);
}

function check(): number {
  const folders = releaseFolders();
  const last = folders[folders.length - 1];
  if (!last) {
    throw new Error(
      'typed clients: contracts/releases/ holds no release: run npm run contracts:release -- <name>',
    );
  }
  const lastDocument = path.join(releases, last, 'openapi.yaml');
  if (!fs.readFileSync(lastDocument).equals(fs.readFileSync(released))) {
    throw new Error(
      `typed clients: ${relative(lastDocument)} differs from ${relative(released)}; both record the last ` +
        'release (npm run contracts:release writes them together)',
    );
  }
  const pairs: { pair: Pair; record: string }[] = [];
  for (const [index, folder] of folders.entries()) {
    const next = folders[index + 1];
    const record = next ? path.join(releases, next, recordName) : unreleasedRecord;
    pairs.push({
      record,
      pair: {
        old: contractOf(folder, path.join(releases, folder, 'openapi.yaml')),
        new: next
          ? contractOf(next, path.join(releases, next, 'openapi.yaml'))
          : contractOf('the working tree', working),
        record: readRecord(record),
      },
    });
  }
  const firstRecord = path.join(releases, folders[0] ?? '', recordName);
  if (fs.existsSync(firstRecord)) {
    throw new Error(
      `typed clients: ${relative(firstRecord)} records changes of the first release, against nothing`,
    );
  }

  const verdicts = checkPairs(
    pairs.map(({ pair }) => pair),
    repository,
  );
  let failures = 0;
  for (const [index, verdict] of verdicts.entries()) {
    const record = relative(pairs[index]?.record ?? '');
    const breaks = verdict.recorded.length + verdict.unrecorded.length;
    log(
      `${verdict.old} -> ${verdict.new}: ${breaks} break(s) of typed clients, ${verdict.recorded.length} recorded`,
    );
    for (const finding of verdict.recorded) printFinding('recorded', finding, 'summary');
    for (const finding of verdict.unrecorded) printFinding('REFUSED ', finding);
    for (const change of verdict.stale) {
      log(
        `  STALE    ${describeSite(change)} is recorded in ${record}, and no break matches it: remove the entry`,
      );
    }
    if (verdict.unrecorded.length > 0) {
      log(
        `  ${verdict.unrecorded.length} break(s) not recorded: keep the change compatible, or agree it and record ` +
          `it in ${record}, saying under integrators what a client's code must do:`,
      );
      for (const line of recordSuggestion(verdict.unrecorded).trimEnd().split('\n')) log(`    ${line}`);
    }
    failures += verdict.unrecorded.length + verdict.stale.length;
  }
  if (failures > 0) {
    log(
      `${failures} problem(s): each break of typed clients must be recorded for its release, and each record ` +
        'entry must match a break',
    );
    return 1;
  }
  log('OK: every break of typed clients is recorded for its release');
  return 0;
}

function release(): number {
  const name = positionals[1];
  if (!name || !folderPattern.test(`01-${name}`)) {
    throw new Error(
      'typed clients: name the release, lower-case words joined by hyphens: npm run contracts:release -- <name>',
    );
  }
  const number = String(releaseFolders().length + 1).padStart(2, '0');
  const folder = path.join(releases, `${number}-${name}`);
  fs.mkdirSync(folder, { recursive: true });
  fs.copyFileSync(working, path.join(folder, 'openapi.yaml'));
  if (fs.existsSync(unreleasedRecord)) fs.renameSync(unreleasedRecord, path.join(folder, recordName));
  log(`wrote ${relative(folder)}`);
  return 0;
}

function compare(): number {
  const [oldFile, newFile] = positionals.slice(1);
  if (!oldFile || !newFile) {
    throw new Error('typed clients: usage: tsx scripts/check-typed-clients.ts compare <old.yaml> <new.yaml>');
  }
  const [verdict] = checkPairs(
    [{ old: contractOf(oldFile, oldFile), new: contractOf(newFile, newFile), record: [] }],
    repository,
  );
  const findings = verdict?.unrecorded ?? [];
  log(`${oldFile} -> ${newFile}: ${findings.length} break(s) of typed clients`);
  for (const finding of findings) printFinding('BREAKS  ', finding);
  return findings.length > 0 ? 1 : 0;
}

const commands: Record<string, () => number | Promise<number>> = { check, compare, release };

async function main(): Promise<number> {
  const run = positionals[0] ? commands[positionals[0]] : undefined;
  if (!run) {
    process.stderr.write(
      'usage: tsx scripts/check-typed-clients.ts check | compare <old.yaml> <new.yaml> | release <name> [--root DIR]\n',
    );
    return 2;
  }
  return run();
}

runCommand(main);
