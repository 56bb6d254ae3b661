// Schema-registry check: the working tree's protos, OpenAPI and AsyncAPI documents against the released ones.
//
// Usage: tsx scripts/registry-check.ts check [--seed] [--root DIR]
//          asks SCHEMA_REGISTRY_URL (dryRun, nothing stored) whether every contract could become the next version;
//          --seed first registers the committed released contracts (contracts/released/), for a fresh local registry;
//          an AsyncAPI document not released yet (no contracts/released/asyncapi.yaml) is reported as new.
//        tsx scripts/registry-check.ts release [--root DIR]
//          registers the working tree's contracts as new versions in SCHEMA_REGISTRY_URL (refused if breaking).
//        tsx scripts/registry-check.ts record [--root DIR]
//          copies the working tree's registered contracts into contracts/released/.
// The AsyncAPI document goes in whole, and each message's payload as a JSON Schema artifact of its own: Apicurio
// checks no AsyncAPI compatibility, so the payloads and the messages' presence are what guard it.
// SCHEMA_REGISTRY_GROUP names the artifact group (default bus-booking); SCHEMA_REGISTRY_TOKEN, when set, is sent
// as a bearer token. Exit status 1 when a contract is refused, with the registry's reasons quoted.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  compatibilityLevel,
  eventPayloadCompatibilityLevel,
  loadContracts,
  loadProtos,
  type Outcome,
  SchemaRegistry,
} from './schema-registry.js';
import { runCommand } from './lib/run-command';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { seed: { type: 'boolean', default: false }, root: { type: 'string' } },
});
const command = positionals[0];
const root = path.resolve(values.root ?? path.join(__dirname, '..'));
const released = path.join(root, 'contracts/released');
const workingProtos = path.join(root, 'proto');
const workingOpenApi = path.join(root, 'openapi/openapi.yaml');
const workingAsyncApi = path.join(root, 'asyncapi/asyncapi.yaml');
const releasedAsyncApi = path.join(released, 'asyncapi.yaml');
const group = process.env.SCHEMA_REGISTRY_GROUP || 'bus-booking';

function log(line: string): void {
  process.stdout.write(`registry: ${line}\n`);
}

function registry(): SchemaRegistry {
  const url = process.env.SCHEMA_REGISTRY_URL;
  if (!url) {
    throw new Error(
      'registry: SCHEMA_REGISTRY_URL is not set (npm run contracts:check starts a local registry when it is not)',
    );
  }
  log(
    `${url}, group ${group}, rule COMPATIBILITY ${compatibilityLevel} ` +
      `(AsyncAPI message payloads: ${eventPayloadCompatibilityLevel})`,
  );
  return new SchemaRegistry(url, group, process.env.SCHEMA_REGISTRY_TOKEN || undefined);
}

/** Prints one line per contract and answers how many the registry refused. */
function report(outcomes: Outcome[]): number {
  for (const outcome of outcomes) {
    if (outcome.kind === 'incompatible') {
      log(`  REFUSED      ${outcome.artifactId}: ${outcome.causes.join('; ')}`);
    } else {
      const against = outcome.version ? ` (version ${outcome.version})` : '';
      log(`  ${outcome.kind.padEnd(12)} ${outcome.artifactId}${against}`);
    }
  }
  return outcomes.filter((outcome) => outcome.kind === 'incompatible').length;
}

async function check(): Promise<number> {
  const target = registry();
  if (values.seed) {
    log('registering the released contracts (contracts/released/)');
    const asyncApiReleased = fs.existsSync(releasedAsyncApi);
    if (!asyncApiReleased) {
      log(
        '  no contracts/released/asyncapi.yaml: the AsyncAPI document is new until npm run contracts:release',
      );
    }
    const refused = report(
      await target.register(
        loadContracts(
          path.join(released, 'proto'),
          path.join(released, 'openapi.yaml'),
          asyncApiReleased ? releasedAsyncApi : undefined,
        ),
      ),
    );
    if (refused > 0) {
      log('the registry refused the released contracts themselves');
      return 1;
    }
  }
  log('checking the working tree (dryRun: nothing is stored)');
  const refused = report(await target.check(loadContracts(workingProtos, workingOpenApi, workingAsyncApi)));
  if (refused > 0) {
    log(
      `${refused} contract(s) would break clients of a released version; keep the change compatible, or agree ` +
        'the break and record it with npm run contracts:release',
    );
    return 1;
  }
  log('the working tree is compatible with every registered version');
  return 0;
}

async function release(): Promise<number> {
  const target = registry();
  log('registering the working tree as the newest released version');
  const refused = report(
    await target.register(loadContracts(workingProtos, workingOpenApi, workingAsyncApi)),
  );
  if (refused > 0) {
    log(`${refused} contract(s) refused as breaking; nothing was recorded`);
    return 1;
  }
  return 0;
}

function record(): number {
  fs.rmSync(path.join(released, 'proto'), { recursive: true, force: true });
  for (const proto of loadProtos(workingProtos)) {
    const target = path.join(released, 'proto', proto.name);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, proto.content);
  }
  fs.copyFileSync(workingOpenApi, path.join(released, 'openapi.yaml'));
  fs.copyFileSync(workingAsyncApi, releasedAsyncApi);
  const folder = path.relative(root, released);
  log(`wrote ${folder}/proto, ${folder}/openapi.yaml and ${folder}/asyncapi.yaml`);
  return 0;
}

const commands: Record<string, () => number | Promise<number>> = { check, release, record };

async function main(): Promise<number> {
  const run = command ? commands[command] : undefined;
  if (!run) {
    process.stderr.write(
      'usage: tsx scripts/registry-check.ts check [--seed] | release | record [--root DIR]\n',
    );
    return 2;
  }
  return run();
}

runCommand(main);
