// Registry tests: the AsyncAPI document and its message payloads registered, and breaking event changes refused.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import {
  asyncApiArtifactId,
  asyncApiPayloadPrefix,
  compatibilityLevel,
  type Contracts,
  eventPayloadCompatibilityLevel,
  loadContracts,
  type Outcome,
  SchemaRegistry,
} from '../../scripts/schema-registry.js';
import { partnerEventTypes } from '../../src/domain/partner-events';

const repositoryRoot = path.join(__dirname, '../..');
const registryUrl = process.env.LOCAL_SCHEMA_REGISTRY_URL;
if (!registryUrl) {
  throw new Error('LOCAL_SCHEMA_REGISTRY_URL is not set: run these tests with npm run contracts:registry');
}

type Node = Record<string, unknown>;
interface Schema {
  type?: string;
  required?: string[];
  properties: Record<string, Node>;
  allOf?: Schema[];
}
interface AsyncApiDocument {
  channels: { partnerEndpoint: { messages: Node } };
  operations: Node;
  components: { messages: Node; schemas: Record<string, Schema> };
}

let workingCopy: string;
let registry: SchemaRegistry;
let group: string;

function copyContracts(): string {
  const directory = mkdtempSync(path.join(tmpdir(), 'asyncapi-registry-'));
  for (const folder of ['proto', 'openapi', 'asyncapi', 'contracts/released']) {
    cpSync(path.join(repositoryRoot, folder), path.join(directory, folder), { recursive: true });
  }
  return directory;
}

/** JSON is YAML, so the edited document is written back as JSON. */
function editAsyncApi(edit: (document: AsyncApiDocument) => void): void {
  const file = path.join(workingCopy, 'asyncapi/asyncapi.yaml');
  const document = parseYaml(readFileSync(file, 'utf8')) as AsyncApiDocument;
  edit(document);
  writeFileSync(file, JSON.stringify(document, null, 2));
}

/** The part of a booking event's data schema its own type adds to the booking base. */
function ownFields(document: AsyncApiDocument, schemaName: string): Schema {
  return document.components.schemas[schemaName].allOf![1];
}

function workingContracts(): Contracts {
  return loadContracts(
    path.join(workingCopy, 'proto'),
    path.join(workingCopy, 'openapi/openapi.yaml'),
    path.join(workingCopy, 'asyncapi/asyncapi.yaml'),
  );
}

function refusals(outcomes: Outcome[]): Record<string, string[]> {
  return Object.fromEntries(
    outcomes.flatMap((outcome) =>
      outcome.kind === 'incompatible' ? [[outcome.artifactId, outcome.causes]] : [],
    ),
  );
}

/** Refusals, also logged: the registry's words are the point of these tests. */
async function refusalsOfWorkingCopy(): Promise<Record<string, string[]>> {
  const refused = refusals(await registry.check(workingContracts()));
  console.log(`refused: ${JSON.stringify(refused, null, 2)}`);
  return refused;
}

async function registryGet(route: string): Promise<unknown> {
  const answer = await fetch(`${registryUrl}/apis/registry/v3/groups/${group}${route}`);
  expect(answer.status).toBe(200);
  return answer.json();
}

beforeAll(async () => {
  // A group of its own holding the current contracts, so each change below is judged against exactly them.
  group = `asyncapi-test-${randomUUID()}`;
  registry = new SchemaRegistry(registryUrl, group);
  const outcomes = await registry.register(
    loadContracts(
      path.join(repositoryRoot, 'proto'),
      path.join(repositoryRoot, 'openapi/openapi.yaml'),
      path.join(repositoryRoot, 'asyncapi/asyncapi.yaml'),
    ),
  );
  expect(outcomes.filter((outcome) => outcome.kind !== 'registered')).toEqual([]);
});

beforeEach(() => {
  workingCopy = copyContracts();
});

afterEach(() => {
  rmSync(workingCopy, { recursive: true, force: true });
});

describe('the registered AsyncAPI contract', () => {
  it(`is an ASYNCAPI artifact under rule ${compatibilityLevel}, with a JSON artifact per message payload under ${eventPayloadCompatibilityLevel}`, async () => {
    expect(await registryGet(`/artifacts/${asyncApiArtifactId}`)).toMatchObject({ artifactType: 'ASYNCAPI' });
    expect(await registryGet(`/artifacts/${asyncApiArtifactId}/rules/COMPATIBILITY`)).toMatchObject({
      config: compatibilityLevel,
    });
    const listing = (await registryGet('/artifacts?limit=100')) as {
      artifacts: { artifactId: string; artifactType: string }[];
    };
    const payloads = listing.artifacts.filter((artifact) =>
      artifact.artifactId.startsWith(asyncApiPayloadPrefix),
    );
    expect(payloads.map((artifact) => artifact.artifactId).sort()).toEqual(
      [...partnerEventTypes, 'webhook.ping'].map((name) => `${asyncApiPayloadPrefix}${name}`).sort(),
    );
    for (const payload of payloads) {
      expect(payload.artifactType).toBe('JSON');
      const route = `/artifacts/${encodeURIComponent(payload.artifactId)}/rules/COMPATIBILITY`;
      expect(await registryGet(route)).toMatchObject({ config: eventPayloadCompatibilityLevel });
    }
  });

  it('gets no compatibility check from Apicurio itself: its ASYNCAPI rule lets a document without a message through', async () => {
    editAsyncApi((document) => {
      delete document.channels.partnerEndpoint.messages.bookingExpired;
      delete document.operations.sendBookingExpired;
    });
    const answer = await fetch(
      `${registryUrl}/apis/registry/v3/groups/${group}/artifacts/${asyncApiArtifactId}/versions?dryRun=true`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          content: { content: workingContracts().asyncApi!.documentJson, contentType: 'application/json' },
        }),
      },
    );
    expect(answer.status).toBe(200);
  });
});

describe('event payloads', () => {
  it('accept a new optional field and a new message', async () => {
    editAsyncApi((document) => {
      ownFields(document, 'BookingConfirmedData').properties.channel = {
        type: 'string',
        description: 'Where the booking was made.',
      };
      document.channels.partnerEndpoint.messages.bookingRestored = {
        $ref: '#/components/messages/bookingRestored',
      };
      document.components.messages.bookingRestored = {
        ...(document.components.messages.bookingExpired as Node),
        name: 'booking.restored',
        examples: [],
      };
    });
    const outcomes = await registry.check(workingContracts());
    expect(refusals(outcomes)).toEqual({});
    expect(outcomes).toContainEqual({ artifactId: `${asyncApiPayloadPrefix}booking.restored`, kind: 'new' });
  });

  it('refuse a removed required field, with the registry’s reason', async () => {
    editAsyncApi((document) => {
      const fields = ownFields(document, 'BookingConfirmedData');
      delete fields.properties.confirmed_at;
      fields.required = fields.required!.filter((name) => name !== 'confirmed_at');
    });
    expect(await refusalsOfWorkingCopy()).toEqual({
      [`${asyncApiPayloadPrefix}booking.confirmed`]: [
        '"Object type property schemas narrowed" at /properties/data/propertySchemasAdded',
        '"A new required property was added" at /properties/data/required',
      ],
      [asyncApiArtifactId]: ['"Refused with its message payloads: asyncapi/booking.confirmed"'],
    });
  });

  it('refuse a new required field (events written before it lack it), with the check’s reason', async () => {
    editAsyncApi((document) => {
      const fields = ownFields(document, 'BookingConfirmedData');
      fields.properties.channel = { type: 'string', description: 'Where the booking was made.' };
      fields.required = [...fields.required!, 'channel'];
    });
    expect(await refusalsOfWorkingCopy()).toEqual({
      [`${asyncApiPayloadPrefix}booking.confirmed`]: [
        '"A property is newly required: events written before this version lack it" at ' +
          '/properties/data/required/channel',
      ],
      [asyncApiArtifactId]: ['"Refused with its message payloads: asyncapi/booking.confirmed"'],
    });
  });

  it('refuse a field of another type, with the registry’s reason', async () => {
    editAsyncApi((document) => {
      document.components.schemas.TripCancelledData.properties.bookings_affected = { type: 'string' };
    });
    expect(await refusalsOfWorkingCopy()).toEqual({
      [`${asyncApiPayloadPrefix}trip.cancelled`]: [
        '"Subschema type changed" at /properties/data/properties/bookings_affected',
      ],
      [asyncApiArtifactId]: ['"Refused with its message payloads: asyncapi/trip.cancelled"'],
    });
  });

  it('refuse a removed message, with the check’s reason', async () => {
    editAsyncApi((document) => {
      delete document.channels.partnerEndpoint.messages.bookingExpired;
      delete document.operations.sendBookingExpired;
    });
    expect(await refusalsOfWorkingCopy()).toEqual({
      [`${asyncApiPayloadPrefix}booking.expired`]: [
        '"Message removed: a registered version sends booking.expired, the new AsyncAPI document has no such message"',
      ],
      [asyncApiArtifactId]: ['"Refused with its message payloads: asyncapi/booking.expired"'],
    });
  });
});

describe('the check command against a released AsyncAPI document', () => {
  function runCheckCommand(): { status: number | null; output: string } {
    const result = spawnSync(
      path.join(repositoryRoot, 'node_modules/.bin/tsx'),
      [path.join(repositoryRoot, 'scripts/registry-check.ts'), 'check', '--seed', '--root', workingCopy],
      {
        encoding: 'utf8',
        timeout: 90_000,
        env: {
          ...process.env,
          SCHEMA_REGISTRY_URL: registryUrl,
          SCHEMA_REGISTRY_GROUP: `asyncapi-command-${randomUUID()}`,
        },
      },
    );
    return { status: result.status, output: `${result.stdout}${result.stderr}` };
  }

  beforeEach(() => {
    // As npm run contracts:release would leave it: the released copy is the working tree's document.
    cpSync(
      path.join(workingCopy, 'asyncapi/asyncapi.yaml'),
      path.join(workingCopy, 'contracts/released/asyncapi.yaml'),
    );
  });

  it('passes the unchanged working tree', () => {
    const { status, output } = runCheckCommand();
    expect(output).toContain(`registered   ${asyncApiPayloadPrefix}booking.confirmed`);
    expect(output).toContain(`compatible   ${asyncApiArtifactId}`);
    expect(output).toContain('registry: the working tree is compatible with every registered version');
    expect(status).toBe(0);
  });

  it('fails on a removed required field, quoting the registry', () => {
    editAsyncApi((document) => {
      const fields = ownFields(document, 'BookingCancelledData');
      delete fields.properties.refund;
      fields.required = fields.required!.filter((name) => name !== 'refund');
    });
    const { status, output } = runCheckCommand();
    console.log(output);
    expect(output).toContain(
      `REFUSED      ${asyncApiPayloadPrefix}booking.cancelled: "Object type property schemas narrowed" at ` +
        '/properties/data/propertySchemasAdded; "A new required property was added" at /properties/data/required',
    );
    expect(output).toContain('2 contract(s) would break clients of a released version');
    expect(status).toBe(1);
  });
});
