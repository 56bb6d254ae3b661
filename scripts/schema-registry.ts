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

/** Every contract the registry guards: protos in dependency order (imports first), then the OpenAPI document. */
export interface Contracts {
  protos: ProtoContract[];
  openApiJson: string;
}

export type Outcome =
  | { artifactId: string; kind: 'compatible' | 'new' | 'registered'; version?: string }
  | { artifactId: string; kind: 'incompatible'; causes: string[] };

export const openApiArtifactId = 'openapi';
/**
 * Each new version must serve clients of every version registered before it, not only of the last one: a field
 * dropped in one release and re-added with another type in the next is caught.
 */
export const compatibilityLevel = 'BACKWARD_TRANSITIVE';
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

export function loadContracts(protoRoot: string, openApiFile: string): Contracts {
  const openApi: unknown = parseYaml(fs.readFileSync(openApiFile, 'utf8'));
  return { protos: loadProtos(protoRoot), openApiJson: JSON.stringify(openApi, null, 2) };
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
  artifactType: 'PROTOBUF' | 'OPENAPI';
  content: string;
  contentType: string;
  imports: string[];
}

function artifactsOf(contracts: Contracts): Artifact[] {
  return [
    ...contracts.protos.map((proto) => ({
      artifactId: proto.name,
      artifactType: 'PROTOBUF' as const,
      content: proto.content,
      contentType: 'application/x-protobuf',
      imports: proto.imports,
    })),
    {
      artifactId: openApiArtifactId,
      artifactType: 'OPENAPI' as const,
      content: contracts.openApiJson,
      contentType: 'application/json',
      imports: [],
    },
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

  private async ensureCompatibilityRule(artifactId: string): Promise<void> {
    const rules = await this.call('GET', `${this.artifactRoute(artifactId)}/rules`);
    if (rules.status !== 200) throw this.failure(`reading the rules of ${artifactId}`, rules);
    if ((rules.body as string[]).includes('COMPATIBILITY')) return;
    const created = await this.call('POST', `${this.artifactRoute(artifactId)}/rules`, {
      ruleType: 'COMPATIBILITY',
      config: compatibilityLevel,
    });
    if (created.status !== 204) throw this.failure(`adding the compatibility rule to ${artifactId}`, created);
  }

  /**
   * Stores the contracts as each artifact's newest version (an unchanged one is found, not duplicated), imports
   * first so every reference names the version just stored. The compatibility rule refuses a breaking version.
   */
  async register(contracts: Contracts): Promise<Outcome[]> {
    const versions = new Map<string, string>();
    const outcomes: Outcome[] = [];
    for (const artifact of artifactsOf(contracts)) {
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
      await this.ensureCompatibilityRule(artifact.artifactId);
      outcomes.push({ artifactId: artifact.artifactId, kind: 'registered', version });
    }
    return outcomes;
  }

  /** Asks the registry (dryRun: nothing is stored) whether each contract could become its artifact's next version. */
  async check(contracts: Contracts): Promise<Outcome[]> {
    const versions = new Map<string, string>();
    const outcomes: Outcome[] = [];
    for (const artifact of artifactsOf(contracts)) {
      const latest = await this.latestVersion(artifact.artifactId);
      if (latest === undefined) {
        outcomes.push({ artifactId: artifact.artifactId, kind: 'new' });
        continue;
      }
      versions.set(artifact.artifactId, latest);
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
      if (isRuleViolation(answer)) {
        outcomes.push({
          artifactId: artifact.artifactId,
          kind: 'incompatible',
          causes: causesOf(answer.body as RegistryProblem),
        });
      } else if (answer.status === 200) {
        outcomes.push({ artifactId: artifact.artifactId, kind: 'compatible', version: latest });
      } else {
        throw this.failure(`checking ${artifact.artifactId}`, answer);
      }
    }
    return outcomes;
  }
}
