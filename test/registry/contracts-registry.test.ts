// Registry tests: a real Apicurio Registry accepts compatible contract changes and refuses breaking ones, quoting why.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import {
  compatibilityLevel,
  type Contracts,
  loadContracts,
  type Outcome,
  SchemaRegistry,
} from '../../scripts/schema-registry.js';

const repositoryRoot = path.join(__dirname, '../..');
const registryUrl = process.env.LOCAL_SCHEMA_REGISTRY_URL;
if (!registryUrl) {
  throw new Error('LOCAL_SCHEMA_REGISTRY_URL is not set: run these tests with npm run contracts:registry');
}

interface OpenApiDocument {
  paths: Record<string, unknown>;
  components: { schemas: Record<string, { required?: string[]; properties: Record<string, unknown> }> };
}

let workingCopy: string;
let registry: SchemaRegistry;
let group: string;

function copyContracts(): string {
  const directory = mkdtempSync(path.join(tmpdir(), 'contracts-registry-'));
  for (const folder of ['proto', 'openapi', 'asyncapi', 'contracts/released']) {
    cpSync(path.join(repositoryRoot, folder), path.join(directory, folder), { recursive: true });
  }
  return directory;
}

function editProto(relativePath: string, search: string, replacement: string): void {
  const file = path.join(workingCopy, 'proto', relativePath);
  const original = readFileSync(file, 'utf8');
  const edited = original.replace(search, replacement);
  expect(edited).not.toBe(original);
  writeFileSync(file, edited);
}

/** JSON is YAML, so the edited document is written back as JSON. */
function editOpenApi(edit: (document: OpenApiDocument) => void): void {
  const file = path.join(workingCopy, 'openapi/openapi.yaml');
  const document = parseYaml(readFileSync(file, 'utf8')) as OpenApiDocument;
  edit(document);
  writeFileSync(file, JSON.stringify(document, null, 2));
}

function workingContracts(): Contracts {
  return loadContracts(path.join(workingCopy, 'proto'), path.join(workingCopy, 'openapi/openapi.yaml'));
}

function refusals(outcomes: Outcome[]): Record<string, string[]> {
  return Object.fromEntries(
    outcomes.flatMap((outcome) =>
      outcome.kind === 'incompatible' ? [[outcome.artifactId, outcome.causes]] : [],
    ),
  );
}

function runCheckCommand(groupId: string): { status: number | null; output: string } {
  const result = spawnSync(
    path.join(repositoryRoot, 'node_modules/.bin/tsx'),
    [path.join(repositoryRoot, 'scripts/registry-check.ts'), 'check', '--seed', '--root', workingCopy],
    {
      encoding: 'utf8',
      timeout: 90_000,
      env: { ...process.env, SCHEMA_REGISTRY_URL: registryUrl, SCHEMA_REGISTRY_GROUP: groupId },
    },
  );
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

beforeAll(async () => {
  // A group of its own holding the current contracts, so each change below is judged against exactly them.
  group = `registry-test-${randomUUID()}`;
  registry = new SchemaRegistry(registryUrl, group);
  const outcomes = await registry.register(
    loadContracts(path.join(repositoryRoot, 'proto'), path.join(repositoryRoot, 'openapi/openapi.yaml')),
  );
  expect(outcomes.filter((outcome) => outcome.kind !== 'registered')).toEqual([]);
});

beforeEach(() => {
  workingCopy = copyContracts();
});

afterEach(() => {
  rmSync(workingCopy, { recursive: true, force: true });
});

describe('the registered contracts', () => {
  it(`carry the COMPATIBILITY rule ${compatibilityLevel}, route.proto referencing money.proto`, async () => {
    const api = `${registryUrl}/apis/registry/v3/groups/${group}/artifacts`;
    for (const artifactId of ['com/example/bookings/v1/route.proto', 'openapi']) {
      const rule = await fetch(`${api}/${encodeURIComponent(artifactId)}/rules/COMPATIBILITY`);
      expect(await rule.json()).toMatchObject({ ruleType: 'COMPATIBILITY', config: compatibilityLevel });
    }
    const references = await fetch(
      `${api}/${encodeURIComponent('com/example/bookings/v1/route.proto')}/versions/branch=latest/references`,
    );
    expect(await references.json()).toEqual([
      expect.objectContaining({
        artifactId: 'com/example/common/v1/money.proto',
        name: 'com/example/common/v1/money.proto',
      }),
    ]);
  });
});

describe('protos', () => {
  it('accepts a new optional field in a message', async () => {
    editProto(
      'com/example/bookings/v1/booking.proto',
      '  int64 version = 19;\n',
      '  int64 version = 19;\n\n  // Loyalty programme number, added later.\n  optional string loyalty_number = 99;\n',
    );
    const outcomes = await registry.check(workingContracts());
    expect(refusals(outcomes)).toEqual({});
    expect(outcomes).toContainEqual(
      expect.objectContaining({ artifactId: 'com/example/bookings/v1/booking.proto', kind: 'compatible' }),
    );
  });

  it('refuses a changed field type, with the registry’s reason', async () => {
    editProto('com/example/bookings/v1/route.proto', '  string city = 3;', '  int64 city = 3;');
    expect(refusals(await registry.check(workingContracts()))).toEqual({
      'com/example/bookings/v1/route.proto': [
        '"Field type changed, message Stop , before: string , after int64" at /Stop',
      ],
    });
  });
});

describe('OpenAPI document', () => {
  it('accepts a new optional property and a new path', async () => {
    editOpenApi((document) => {
      document.components.schemas.CreateBookingRequest.properties.promo_code = {
        type: 'string',
        maxLength: 32,
      };
      document.paths['/v1/stops'] = {
        get: { operationId: 'listStops', responses: { '200': { description: 'Every stop served.' } } },
      };
    });
    expect(refusals(await registry.check(workingContracts()))).toEqual({});
  });

  it('refuses a dropped /v1/users/me, with the registry’s reason', async () => {
    editOpenApi((document) => {
      delete document.paths['/v1/users/me'];
    });
    expect(refusals(await registry.check(workingContracts()))).toEqual({
      openapi: ['"Missing endpoint" at /v1/users/me'],
    });
  });

  it('refuses a new required request property, with the registry’s reason', async () => {
    editOpenApi((document) => {
      const request = document.components.schemas.CreateBookingRequest;
      request.properties.promo_code = { type: 'string', maxLength: 32 };
      request.required = [...(request.required ?? []), 'promo_code'];
    });
    expect(refusals(await registry.check(workingContracts()))).toEqual({
      openapi: ['"Incompatible operation" at /v1/bookings', '"Incompatible schema" at /'],
    });
  });
});

describe('the check command (contracts/released/ registered, then the working tree checked)', () => {
  it('passes the unchanged working tree', () => {
    const { status, output } = runCheckCommand(`registry-command-${randomUUID()}`);
    expect(output).toContain('registry: the working tree is compatible with every registered version');
    expect(status).toBe(0);
  });

  it('fails on a breaking change, quoting the registry', () => {
    editProto('com/example/bookings/v1/route.proto', '  string city = 3;', '  int64 city = 3;');
    const { status, output } = runCheckCommand(`registry-command-${randomUUID()}`);
    expect(output).toContain(
      'REFUSED      com/example/bookings/v1/route.proto: "Field type changed, message Stop , before: string , after int64" at /Stop',
    );
    expect(output).toContain('1 contract(s) would break clients of a released version');
    expect(status).toBe(1);
  });
});
