// The contracts as schema-registry artifacts, and a small client of Apicurio Registry's REST API v3 for them.
//
// Plain fetch rather than @apicurio/apicurio-registry-sdk: the SDK is ESM-only and needs six Kiota packages pinned
// to preview releases as peers, for the handful of calls made here.
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseProto } from 'protobufjs';
import { parse as parseYaml } from 'yaml';

/** One .proto file as the registry stores it: its import path is both artifact ID and reference name. */
export interface ProtoContract {
  name: string;
  content: string;
  imports: string[];
}

/** The partner webhooks' AsyncAPI document and, as self-contained JSON Schemas, the payload of each message. */
export interface AsyncApiContract {
  documentJson: string;
  payloads: { name: string; schemaJson: string }[];
}

/**
 * Every contract the registry guards: protos in dependency order (imports first), the OpenAPI document, and the
 * AsyncAPI document when there is one (a contract not released yet has none on the released side).
 */
export interface Contracts {
  protos: ProtoContract[];
  openApiJson: string;
  asyncApi?: AsyncApiContract;
}

export type Outcome =
  | { artifactId: string; kind: 'compatible' | 'new' | 'registered'; version?: string }
  | { artifactId: string; kind: 'incompatible'; causes: string[] };

export const openApiArtifactId = 'openapi';
export const asyncApiArtifactId = 'asyncapi';
/** Each message's payload is an artifact of its own, `asyncapi/<message name>` (the event type). */
export const asyncApiPayloadPrefix = 'asyncapi/';
/**
 * Each new version must serve clients of every version registered before it, not only of the last one: a field
 * dropped in one release and re-added with another type in the next is caught.
 */
export const compatibilityLevel = 'BACKWARD_TRANSITIVE';
/**
 * An event payload is written by the service and read by partners, the other way round from a request: a partner's
 * code written against any registered version must read what the new one sends (no required field dropped, no type
 * changed). Apicurio's AsyncAPI support has no compatibility checker of its own (its rule passes any document), so
 * the payloads, as JSON Schemas, are where the rule bites. Not FULL: Apicurio reads a property added to an open
 * schema as narrowing it, so FULL would refuse every new optional field; the other direction, a partner already on
 * the new version reading an event written before it (events are retried for days), is held by newlyRequired.
 */
export const eventPayloadCompatibilityLevel = 'FORWARD_TRANSITIVE';
/** The project's own contracts; vendored files enter only when one of these imports them. */
const guardedFolder = 'com';
/** Well-known types the registry's protobuf support carries itself. */
const builtInImportPrefix = 'google/protobuf/';

function protoFilesUnder(folder: string, root: string): string[] {
  return fs
    .readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.proto'))
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .sort();
}

/** The guarded .proto files under protoRoot and everything they import from it, imports before importers. */
export function loadProtos(protoRoot: string): ProtoContract[] {
  const loaded = new Map<string, ProtoContract>();
  const ordered: ProtoContract[] = [];
  const visit = (name: string, importedBy?: string): void => {
    const known = loaded.get(name);
    if (known) {
      if (!ordered.includes(known)) throw new Error(`contracts: import cycle through ${name}`);
      return;
    }
    const file = path.join(protoRoot, name);
    if (!fs.existsSync(file)) {
      throw new Error(
        `contracts: ${importedBy ?? 'a contract'} imports ${name}, which is not under ${protoRoot}`,
      );
    }
    const content = fs.readFileSync(file, 'utf8');
    const parsed = parseProto(content, { keepCase: true });
    const imports = [...(parsed.imports ?? []), ...(parsed.weakImports ?? [])].filter(
      (imported) => !imported.startsWith(builtInImportPrefix),
    );
    const contract = { name, content, imports };
    loaded.set(name, contract);
    for (const imported of imports) visit(imported, name);
    ordered.push(contract);
  };
  for (const name of protoFilesUnder(path.join(protoRoot, guardedFolder), protoRoot)) visit(name);
  return ordered;
}

type SchemaNode = Record<string, unknown>;

function isNode(value: unknown): value is SchemaNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Keywords that describe a schema without constraining it: where merged schemas disagree, the first one's stays. */
const annotations = new Set(['title', 'description', 'examples', 'example', 'x-sensitive']);

/** The schema with every local `$ref` replaced by what it names; a referencing node's own keywords are kept. */
function inlineReferences(node: unknown, document: SchemaNode, trail: string[] = []): unknown {
  if (Array.isArray(node)) return node.map((item) => inlineReferences(item, document, trail));
  if (!isNode(node)) return node;
  const { $ref: reference, ...own } = node;
  const inlinedOwn = Object.fromEntries(
    Object.entries(own).map(([key, value]) => [key, inlineReferences(value, document, trail)]),
  );
  if (reference === undefined) return inlinedOwn;
  if (typeof reference !== 'string' || !reference.startsWith('#/')) {
    throw new Error(`contracts: the AsyncAPI document refers outside itself (${JSON.stringify(reference)})`);
  }
  if (trail.includes(reference))
    throw new Error(`contracts: the AsyncAPI schema ${reference} refers to itself`);
  const target = reference
    .slice(2)
    .split('/')
    .reduce<unknown>(
      (at, key) => (isNode(at) ? at[key.replaceAll('~1', '/').replaceAll('~0', '~')] : undefined),
      document,
    );
  if (target === undefined) throw new Error(`contracts: the AsyncAPI document has no ${reference}`);
  const inlinedTarget = inlineReferences(target, document, [...trail, reference]) as SchemaNode;
  return { ...inlinedTarget, ...inlinedOwn };
}

function mergeSchemas(into: SchemaNode, from: SchemaNode, at: string): SchemaNode {
  const merged: SchemaNode = { ...into };
  for (const [key, value] of Object.entries(from)) {
    if (merged[key] === undefined) {
      merged[key] = value;
    } else if (key === 'properties') {
      const properties = { ...(merged.properties as SchemaNode) };
      for (const [name, property] of Object.entries(value as SchemaNode)) {
        properties[name] =
          properties[name] === undefined
            ? property
            : mergeSchemas(
                properties[name] as SchemaNode,
                property as SchemaNode,
                `${at}/properties/${name}`,
              );
      }
      merged.properties = properties;
    } else if (key === 'required') {
      merged.required = [...new Set([...(merged.required as string[]), ...(value as string[])])];
    } else if (!annotations.has(key) && JSON.stringify(merged[key]) !== JSON.stringify(value)) {
      throw new Error(`contracts: allOf members disagree on ${key} at ${at || '/'}`);
    }
  }
  return merged;
}

/** allOf of object schemas merged into one, bottom up, so the registry's diff compares properties directly. */
function mergeAllOf(node: unknown, at = ''): unknown {
  if (Array.isArray(node)) return node.map((item, index) => mergeAllOf(item, `${at}/${index}`));
  if (!isNode(node)) return node;
  const merged = Object.fromEntries(
    Object.entries(node).map(([key, value]) => [key, mergeAllOf(value, `${at}/${key}`)]),
  );
  const { allOf, ...own } = merged;
  if (allOf === undefined) return merged;
  return [own, ...(allOf as SchemaNode[])].reduce((whole, part) => mergeSchemas(whole, part, at), {});
}

/**
 * Where the next schema requires a property the previous one did not, at a place both define: an event written
 * under the previous one may lack it, and events are stored and retried, so one can reach a partner already on the
 * next. Each version is judged against the one before it, so the rule holds for every version back.
 */
export function newlyRequired(previous: unknown, next: unknown, at = ''): string[] {
  if (!isNode(previous) || !isNode(next)) return [];
  const requiredBefore = new Set(Array.isArray(previous.required) ? (previous.required as string[]) : []);
  const found = (Array.isArray(next.required) ? (next.required as string[]) : [])
    .filter((name) => !requiredBefore.has(name))
    .map((name) => `${at}/required/${name}`);
  const before = isNode(previous.properties) ? previous.properties : {};
  for (const [name, schema] of Object.entries(isNode(next.properties) ? next.properties : {})) {
    if (name in before) found.push(...newlyRequired(before[name], schema, `${at}/properties/${name}`));
  }
  found.push(...newlyRequired(previous.items, next.items, `${at}/items`));
  return found;
}

/** Each message of the document's channels, by its name, as one self-contained draft-07 JSON Schema. */
export function asyncApiPayloads(document: SchemaNode): AsyncApiContract['payloads'] {
  const payloads = new Map<string, string>();
  for (const channel of Object.values((document.channels ?? {}) as SchemaNode)) {
    const messages = (inlineReferences(channel, document) as SchemaNode).messages as SchemaNode | undefined;
    for (const message of Object.values(messages ?? {}) as SchemaNode[]) {
      if (typeof message.name !== 'string' || message.payload === undefined) {
        throw new Error('contracts: every AsyncAPI message needs a name (its event type) and a payload');
      }
      if (payloads.has(message.name))
        throw new Error(`contracts: two AsyncAPI messages are named ${message.name}`);
      const schema = {
        $schema: 'http://json-schema.org/draft-07/schema#',
        title: `${message.name} payload`,
        ...(mergeAllOf(message.payload) as SchemaNode),
      };
      payloads.set(message.name, JSON.stringify(schema, null, 2));
    }
  }
  return [...payloads].map(([name, schemaJson]) => ({ name, schemaJson }));
}

export function loadAsyncApi(asyncApiFile: string): AsyncApiContract {
  const document: unknown = parseYaml(fs.readFileSync(asyncApiFile, 'utf8'));
  if (!isNode(document)) throw new Error(`contracts: ${asyncApiFile} is not an AsyncAPI document`);
  return { documentJson: JSON.stringify(document, null, 2), payloads: asyncApiPayloads(document) };
}

export function loadContracts(protoRoot: string, openApiFile: string, asyncApiFile?: string): Contracts {
  const openApi: unknown = parseYaml(fs.readFileSync(openApiFile, 'utf8'));
  return {
    protos: loadProtos(protoRoot),
    openApiJson: JSON.stringify(openApi, null, 2),
    ...(asyncApiFile === undefined ? {} : { asyncApi: loadAsyncApi(asyncApiFile) }),
  };
}

interface VersionMetaData {
  version: string;
}

interface RegistryProblem {
  name?: string;
  status?: number;
  title?: string;
  detail?: string;
  causes?: { description: string; context?: string }[];
}

interface Artifact {
  artifactId: string;
  artifactType: 'PROTOBUF' | 'OPENAPI' | 'ASYNCAPI' | 'JSON';
  content: string;
  contentType: string;
  imports: string[];
  compatibility: string;
  /** An event payload: a property it newly requires is refused as well (newlyRequired). */
  eventPayload?: true;
  /** Registered only when none of these was refused: the AsyncAPI document waits for its payloads. */
  after?: string[];
}

function artifactsOf(contracts: Contracts): Artifact[] {
  const payloads = (contracts.asyncApi?.payloads ?? []).map((payload) => ({
    artifactId: `${asyncApiPayloadPrefix}${payload.name}`,
    artifactType: 'JSON' as const,
    content: payload.schemaJson,
    contentType: 'application/json',
    imports: [],
    compatibility: eventPayloadCompatibilityLevel,
    eventPayload: true as const,
  }));
  return [
    ...contracts.protos.map((proto) => ({
      artifactId: proto.name,
      artifactType: 'PROTOBUF' as const,
      content: proto.content,
      contentType: 'application/x-protobuf',
      imports: proto.imports,
      compatibility: compatibilityLevel,
    })),
    {
      artifactId: openApiArtifactId,
      artifactType: 'OPENAPI' as const,
      content: contracts.openApiJson,
      contentType: 'application/json',
      imports: [],
      compatibility: compatibilityLevel,
    },
    ...payloads,
    ...(contracts.asyncApi
      ? [
          {
            artifactId: asyncApiArtifactId,
            artifactType: 'ASYNCAPI' as const,
            content: contracts.asyncApi.documentJson,
            contentType: 'application/json',
            imports: [],
            compatibility: compatibilityLevel,
            after: payloads.map((payload) => payload.artifactId),
          },
        ]
      : []),
  ];
}

function isRuleViolation(answer: { status: number; body: unknown }): boolean {
  return (
    answer.status >= 400 &&
    answer.status < 500 &&
    (answer.body as RegistryProblem | undefined)?.name === 'RuleViolationException'
  );
}

/** The registry's reasons, word for word, each with where it applies. */
function causesOf(problem: RegistryProblem): string[] {
  if (problem.causes?.length) {
    return problem.causes.map(
      (cause) => `"${cause.description}"${cause.context ? ` at ${cause.context}` : ''}`,
    );
  }
  return [`"${problem.detail ?? problem.title ?? 'no reason given'}"`];
}

export class SchemaRegistry {
  private readonly api: string;

  constructor(
    url: string,
    private readonly group: string,
    private readonly token?: string,
  ) {
    this.api = `${url.replace(/\/+$/, '')}/apis/registry/v3/groups/${encodeURIComponent(group)}`;
  }

  private async call(
    method: string,
    route: string,
    body?: unknown,
  ): Promise<{ status: number; body: unknown }> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    const response = await fetch(`${this.api}${route}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as unknown) : undefined };
  }

  private failure(action: string, answer: { status: number; body: unknown }): Error {
    return new Error(`registry: ${action} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  }

  private artifactRoute(artifactId: string): string {
    return `/artifacts/${encodeURIComponent(artifactId)}`;
  }

  async latestVersion(artifactId: string): Promise<string | undefined> {
    const answer = await this.call('GET', `${this.artifactRoute(artifactId)}/versions/branch=latest`);
    if (answer.status === 404) return undefined;
    if (answer.status !== 200) throw this.failure(`reading the latest version of ${artifactId}`, answer);
    return (answer.body as VersionMetaData).version;
  }

  private references(artifact: Artifact, versions: Map<string, string>) {
    return artifact.imports
      .filter((imported) => versions.has(imported))
      .map((imported) => ({
        groupId: this.group,
        artifactId: imported,
        version: versions.get(imported),
        name: imported,
      }));
  }

  private async ensureCompatibilityRule(artifact: Artifact): Promise<void> {
    const route = this.artifactRoute(artifact.artifactId);
    const rules = await this.call('GET', `${route}/rules`);
    if (rules.status !== 200) throw this.failure(`reading the rules of ${artifact.artifactId}`, rules);
    if ((rules.body as string[]).includes('COMPATIBILITY')) return;
    const created = await this.call('POST', `${route}/rules`, {
      ruleType: 'COMPATIBILITY',
      config: artifact.compatibility,
    });
    if (created.status !== 204) {
      throw this.failure(`adding the compatibility rule to ${artifact.artifactId}`, created);
    }
  }

  /** Every artifact ID in the group, page by page. */
  private async artifactIds(): Promise<string[]> {
    const ids: string[] = [];
    const limit = 100;
    for (let offset = 0; ; offset += limit) {
      const answer = await this.call('GET', `/artifacts?limit=${limit}&offset=${offset}`);
      if (answer.status !== 200) throw this.failure('listing the artifacts', answer);
      const page = answer.body as { artifacts: { artifactId: string }[]; count: number };
      ids.push(...page.artifacts.map((artifact) => artifact.artifactId));
      if (page.artifacts.length < limit || ids.length >= page.count) return ids;
    }
  }

  /**
   * A message the registry holds that the new AsyncAPI document no longer has: partners subscribed to it would
   * hear nothing more. The registry cannot see an absence (each payload is an artifact of its own), so it is
   * judged here.
   */
  private async removedMessages(contracts: Contracts): Promise<Outcome[]> {
    if (!contracts.asyncApi) return [];
    const kept = new Set(contracts.asyncApi.payloads.map((payload) => payload.name));
    return (await this.artifactIds())
      .filter(
        (id) => id.startsWith(asyncApiPayloadPrefix) && !kept.has(id.slice(asyncApiPayloadPrefix.length)),
      )
      .sort()
      .map((artifactId) => ({
        artifactId,
        kind: 'incompatible' as const,
        causes: [
          `"Message removed: a registered version sends ${artifactId.slice(asyncApiPayloadPrefix.length)}, ` +
            'the new AsyncAPI document has no such message"',
        ],
      }));
  }

  /** Our own causes against the version the registry holds: properties an event payload newly requires. */
  private async ownCauses(artifact: Artifact): Promise<string[]> {
    if (!artifact.eventPayload) return [];
    const held = await this.call(
      'GET',
      `${this.artifactRoute(artifact.artifactId)}/versions/branch=latest/content`,
    );
    if (held.status === 404) return [];
    if (held.status !== 200) throw this.failure(`reading the latest ${artifact.artifactId}`, held);
    return newlyRequired(held.body, JSON.parse(artifact.content)).map(
      (at) => `"A property is newly required: events written before this version lack it" at ${at}`,
    );
  }

  /** The outcome of an artifact that waits for others (the AsyncAPI document for its payloads), if one was refused. */
  private heldBack(artifact: Artifact, outcomes: Outcome[]): Outcome | undefined {
    const refused = outcomes.filter(
      (outcome) => outcome.kind === 'incompatible' && artifact.after?.includes(outcome.artifactId),
    );
    if (refused.length === 0) return undefined;
    return {
      artifactId: artifact.artifactId,
      kind: 'incompatible',
      causes: [
        `"Refused with its message payloads: ${refused.map((outcome) => outcome.artifactId).join(', ')}"`,
      ],
    };
  }

  /**
   * Stores the contracts as each artifact's newest version (an unchanged one is found, not duplicated), imports
   * first so every reference names the version just stored. The compatibility rule refuses a breaking version;
   * the AsyncAPI document is stored only when all its message payloads were and none was removed.
   */
  async register(contracts: Contracts): Promise<Outcome[]> {
    const versions = new Map<string, string>();
    const outcomes: Outcome[] = await this.removedMessages(contracts);
    const removed = outcomes.map((outcome) => outcome.artifactId);
    for (const artifact of artifactsOf(contracts)) {
      const withheld = this.heldBack(
        { ...artifact, after: artifact.after && [...artifact.after, ...removed] },
        outcomes,
      );
      if (withheld) {
        outcomes.push(withheld);
        continue;
      }
      const causes = await this.ownCauses(artifact);
      if (causes.length > 0) {
        outcomes.push({ artifactId: artifact.artifactId, kind: 'incompatible', causes });
        continue;
      }
      const answer = await this.call('POST', '/artifacts?ifExists=FIND_OR_CREATE_VERSION', {
        artifactId: artifact.artifactId,
        artifactType: artifact.artifactType,
        firstVersion: {
          content: {
            content: artifact.content,
            contentType: artifact.contentType,
            references: this.references(artifact, versions),
          },
        },
      });
      if (isRuleViolation(answer)) {
        outcomes.push({
          artifactId: artifact.artifactId,
          kind: 'incompatible',
          causes: causesOf(answer.body as RegistryProblem),
        });
        // Its importers still reference the version the registry holds.
        const held = await this.latestVersion(artifact.artifactId);
        if (held !== undefined) versions.set(artifact.artifactId, held);
        continue;
      }
      if (answer.status !== 200) throw this.failure(`registering ${artifact.artifactId}`, answer);
      const version = (answer.body as { version: VersionMetaData }).version.version;
      versions.set(artifact.artifactId, version);
      await this.ensureCompatibilityRule(artifact);
      outcomes.push({ artifactId: artifact.artifactId, kind: 'registered', version });
    }
    return outcomes;
  }

  /** Asks the registry (dryRun: nothing is stored) whether each contract could become its artifact's next version. */
  async check(contracts: Contracts): Promise<Outcome[]> {
    const versions = new Map<string, string>();
    const outcomes: Outcome[] = await this.removedMessages(contracts);
    const removed = outcomes.map((outcome) => outcome.artifactId);
    for (const artifact of artifactsOf(contracts)) {
      const latest = await this.latestVersion(artifact.artifactId);
      if (latest === undefined) {
        outcomes.push({ artifactId: artifact.artifactId, kind: 'new' });
        continue;
      }
      versions.set(artifact.artifactId, latest);
      const withheld = this.heldBack(
        { ...artifact, after: artifact.after && [...artifact.after, ...removed] },
        outcomes,
      );
      if (withheld) {
        outcomes.push(withheld);
        continue;
      }
      const answer = await this.call(
        'POST',
        `${this.artifactRoute(artifact.artifactId)}/versions?dryRun=true`,
        {
          content: {
            content: artifact.content,
            contentType: artifact.contentType,
            references: this.references(artifact, versions),
          },
        },
      );
      if (!isRuleViolation(answer) && answer.status !== 200) {
        throw this.failure(`checking ${artifact.artifactId}`, answer);
      }
      const causes = [
        ...(isRuleViolation(answer) ? causesOf(answer.body as RegistryProblem) : []),
        ...(await this.ownCauses(artifact)),
      ];
      outcomes.push(
        causes.length > 0
          ? { artifactId: artifact.artifactId, kind: 'incompatible', causes }
          : { artifactId: artifact.artifactId, kind: 'compatible', version: latest },
      );
    }
    return outcomes;
  }
}
