// Typed-client compatibility: whether every strict openapi-typescript + openapi-fetch client of one OpenAPI document
// still compiles against the next, judged by the TypeScript compiler on the clients' own types.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { parse as parseYaml } from 'yaml';

/** One OpenAPI document under a name the findings quote (a release folder, or the working tree). */
export interface Contract {
  name: string;
  /** The document's YAML or JSON text. */
  text: string;
}

/** Which way a change hurts a client: what it reads from answers, what it sends, or an operation it calls. */
export type Direction = 'response' | 'request' | 'removed';
/** The request's parts openapi-fetch types separately: `params.path|query|header|cookie` and `body`. */
export const requestParts = ['path', 'query', 'header', 'cookie', 'body'] as const;
export type RequestPart = (typeof requestParts)[number];
/**
 * The status of a response site that stands for every error status: openapi-fetch types all error bodies as one
 * `error`, so a change to a shared error body is one break per operation, not one per status.
 */
export const errorStatuses = 'error';

/** A place in the old document's operations where the new document breaks a typed client. */
export interface Site {
  /** The old document's operationId, or `METHOD /path` for an operation without one. */
  operation: string;
  direction: Direction;
  /** For a response: the new document's 2xx status whose body `data` cannot hold, or `error`. */
  status?: string;
  /** For a request: the part the new document no longer accepts as the old client sends it. */
  part?: RequestPart;
}

export interface Finding extends Site {
  /** `METHOD /path` of the operation. */
  route: string;
  /** The compiler's words: where the types part, and the innermost mismatch. */
  reason: string;
  /** What broke, in words, without the compiler's reason. */
  summary: string;
  /** One readable sentence: the summary and the reason. */
  message: string;
}

/** A break agreed and recorded for a release, with what integrators do about it. */
export interface RecordedChange extends Site {
  integrators: string;
}

export interface PairVerdict {
  old: string;
  new: string;
  /** Breaks nobody recorded: the check fails on them. */
  unrecorded: Finding[];
  /** Breaks the record covers. */
  recorded: Finding[];
  /** Record entries no break matches any more: the check fails on them too, so the record stays true. */
  stale: RecordedChange[];
}

export interface Pair {
  old: Contract;
  new: Contract;
  /** The changes recorded for the new side (empty when there is no record). */
  record: RecordedChange[];
}

const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

interface Operation {
  id: string;
  path: string;
  method: (typeof methods)[number];
  /** The statuses it answers, as openapi-typescript keys them (numbers, or `2XX`, `default`). */
  statuses: string[];
}

type Document = {
  paths?: Record<string, Record<string, { operationId?: unknown; responses?: object }>>;
} | null;

/** The document's operations by `method path`, the way an openapi-fetch client calls them. */
function operationsOf(contract: Contract): Map<string, Operation> {
  let document: Document;
  try {
    document = parseYaml(contract.text) as Document;
  } catch (error) {
    throw new Error(
      `typed clients: ${contract.name} is not YAML: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const operations = new Map<string, Operation>();
  for (const [pathName, item] of Object.entries(document?.paths ?? {})) {
    for (const method of methods) {
      const operation = item?.[method];
      if (!operation) continue;
      const id =
        typeof operation.operationId === 'string'
          ? operation.operationId
          : `${method.toUpperCase()} ${pathName}`;
      operations.set(`${method} ${pathName}`, {
        id,
        path: pathName,
        method,
        statuses: Object.keys(operation.responses ?? {}),
      });
    }
  }
  return operations;
}

export function siteKey(site: Site): string {
  const at = site.direction === 'response' ? site.status : site.direction === 'request' ? site.part : '';
  return `${site.operation}|${site.direction}|${at ?? ''}`;
}

export function describeSite(site: Site): string {
  if (site.direction === 'response') {
    return site.status === errorStatuses
      ? `${site.operation}: its error answers`
      : `${site.operation}: its ${site.status} answer`;
  }
  if (site.direction === 'request') return `${site.operation}: the request's ${site.part}`;
  return `${site.operation}: removed`;
}

/**
 * openapi-fetch's own types: `data` and `error` as a default client (createClient<paths>()) types them, the body of
 * one status as openapi-fetch reads it (a 2xx body into `data`, an error body into `error`, any other status into
 * neither), and a request's `params` parts and `body` option.
 */
const helpersSource = `
import type { FetchResponse, RequestBodyOption } from 'openapi-fetch';
import type {
  ErrorStatus, GetResponseContent, MediaType, OkStatus, Readable, ResponseObjectMap,
} from 'openapi-typescript-helpers';

type Answer<Op extends Record<string | number, any>> = FetchResponse<Op, {}, MediaType>;
type Data<Op extends Record<string | number, any>> = Extract<Answer<Op>, { error?: never }>['data'];
type Failure<Op extends Record<string | number, any>> = Extract<Answer<Op>, { data?: never }>['error'];
export type ReadAs<Op extends Record<string | number, any>, Status> =
  Status extends OkStatus ? Data<Op> : Status extends ErrorStatus ? Failure<Op> : unknown;
export type StatusBody<Op extends Record<string | number, any>, Status extends keyof ResponseObjectMap<Op>> =
  Readable<GetResponseContent<ResponseObjectMap<Op>, MediaType, Status>>;
export type Params<Op, Part extends string> =
  Op extends { parameters: infer P } ? (Part extends keyof P ? Pick<P, Part> : {}) : {};
export type Body<Op> = RequestBodyOption<Op>;

// The property paths Old has and New lacks (in every member of a union), each as '.a.b[].c': a client reading one
// no longer compiles (TS2339), nor does one writing it in an object literal (TS2353). Depth-capped for recursive
// schemas; a property typed never (readOnly in a request) is one no client can write.
type KeysOf<T> = T extends unknown ? keyof T : never;
type At<T, K> = T extends unknown ? (K extends keyof T ? T[K] : never) : never;
type ItemOf<T> = T extends readonly (infer E)[] ? E : never;
export type Gone<Old, New, Where extends string = '', Depth extends unknown[] = []> =
  Depth['length'] extends 8 ? never
  : Old extends readonly (infer E)[] ? Gone<E, ItemOf<New>, \`\${Where}[]\`, [...Depth, unknown]>
  : Old extends object
    ? {
        [K in keyof Old & string]-?: [NonNullable<Old[K]>] extends [never] ? never
          : K extends KeysOf<New>
            ? Gone<NonNullable<Old[K]>, NonNullable<At<New, K>>, \`\${Where}.\${K}\`, [...Depth, unknown]>
            : \`\${Where}.\${K}\`;
      }[keyof Old & string]
    : never;
`;

function statusLiteral(status: string): string {
  return /^\d+$/.test(status) ? status : JSON.stringify(status);
}

/** The site a status's break counts against: its own for a 2xx answer, the operation's `error` otherwise. */
function responseSite(status: string): string {
  return /^2/.test(status) ? status : errorStatuses;
}

interface Assertion {
  site: Site;
  /** `assignable`: the new type must hold the old one; `gone`: no property of the old may be missing in the new. */
  kind: 'assignable' | 'gone';
  route: string;
  /** The new document's status, for a response. */
  status?: string;
  line: number;
}

interface PairProgram {
  file: string;
  assertions: Assertion[];
  removed: Finding[];
}

/** Writes one pair's assertions, each on a line of its own so that a diagnostic's line names its site. */
function writePairChecks(pair: Pair, oldModule: string, newModule: string, file: string): PairProgram {
  const lines = [
    `import type { paths as Old } from './${oldModule}';`,
    `import type { paths as New } from './${newModule}';`,
    `import type { Body, Gone, Params, ReadAs, StatusBody } from './helpers';`,
  ];
  const assertions: Assertion[] = [];
  const removed: Finding[] = [];
  const newOperations = operationsOf(pair.new);
  let index = 0;
  for (const [key, operation] of operationsOf(pair.old)) {
    const route = `${operation.method.toUpperCase()} ${operation.path}`;
    const fresh = newOperations.get(key);
    if (!fresh) {
      const reason = `: ${route} is not in ${pair.new.name}`;
      const summary = `every call a ${pair.old.name} client makes to it no longer compiles`;
      removed.push({
        operation: operation.id,
        route,
        direction: 'removed',
        reason,
        summary,
        message: summary + reason,
      });
      continue;
    }
    const n = `op${index++}`;
    const pathLiteral = JSON.stringify(operation.path);
    lines.push(`type O${n} = Old[${pathLiteral}]['${operation.method}'];`);
    lines.push(`type N${n} = New[${pathLiteral}]['${operation.method}'];`);
    for (const status of fresh.statuses) {
      const literal = statusLiteral(status);
      const site: Site = { operation: operation.id, direction: 'response', status: responseSite(status) };
      lines.push(`declare const ${n}s${status}: StatusBody<N${n}, ${literal}>;`);
      lines.push(`export const ${n}r${status}: ReadAs<O${n}, ${literal}> = ${n}s${status};`);
      assertions.push({ site, kind: 'assignable', route, status, line: lines.length - 1 });
      if (!operation.statuses.includes(status)) continue;
      lines.push(
        `declare const ${n}g${status}: Gone<StatusBody<O${n}, ${literal}>, StatusBody<N${n}, ${literal}>>;`,
      );
      lines.push(`export const ${n}h${status}: never = ${n}g${status};`);
      assertions.push({ site, kind: 'gone', route, status, line: lines.length - 1 });
    }
    for (const part of requestParts) {
      const site: Site = { operation: operation.id, direction: 'request', part };
      const sent = part === 'body' ? `Body<O${n}>` : `Params<O${n}, '${part}'>`;
      const accepted = part === 'body' ? `Body<N${n}>` : `Params<N${n}, '${part}'>`;
      lines.push(`declare const ${n}q${part}: ${sent};`);
      lines.push(`export const ${n}a${part}: ${accepted} = ${n}q${part};`);
      assertions.push({ site, kind: 'assignable', route, line: lines.length - 1 });
      lines.push(`declare const ${n}w${part}: Gone<${sent}, ${accepted}>;`);
      lines.push(`export const ${n}x${part}: never = ${n}w${part};`);
      assertions.push({ site, kind: 'gone', route, line: lines.length - 1 });
    }
  }
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
  return { file, assertions, removed };
}

/** The compiler's reason in one line: where in the types they part, and the innermost mismatch. */
function reasonOf(diagnostic: ts.Diagnostic, assertion: Assertion): string {
  const site = assertion.site;
  if (assertion.kind === 'gone') {
    // The message quotes the paths Gone found as string literal types ("... N more ..." past a few).
    const top = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n').split('\n')[0] ?? '';
    const own = site.direction === 'request' ? `.${site.part}` : '';
    const paths = [...top.matchAll(/"([^"]*)"/g)].map(([, found = '']) =>
      (found.startsWith(own) ? found.slice(own.length) : found).replace(/^\./, ''),
    );
    const more = /\.\.\. (\d+) more \.\.\./.exec(top)?.[1];
    return `: no longer has ${paths.join(', ')}${more ? ` and ${more} more` : ''}`;
  }
  const chain = ts
    .flattenDiagnosticMessageText(diagnostic.messageText, '\n')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  const properties = chain.flatMap((line) => {
    const match =
      /^Types of property '(.+)' are incompatible\.$/.exec(line) ??
      /^The types of '(.+)' are incompatible/.exec(line);
    return match?.[1] ? [match[1]] : [];
  });
  // A request part is checked as the option that carries it (`body`, `params.query`): the summary names it already.
  if (site.direction === 'request' && properties[0] === site.part) properties.shift();
  const innermost = chain[chain.length - 1] ?? '';
  return properties.length > 0 ? ` at ${properties.join('.')}: ${innermost}` : `: ${innermost}`;
}

function summaryOf(site: Site, statuses: string[], pair: Pair): string {
  if (site.direction === 'response') {
    if (site.status === errorStatuses) {
      return (
        `its error answers (${statuses.join(', ')}) in ${pair.new.name} are no longer readable as ` +
        `${pair.old.name}'s error`
      );
    }
    return `its ${site.status} answer in ${pair.new.name} is no longer readable as ${pair.old.name}'s data`;
  }
  const part = site.part === 'body' ? 'body' : `params.${site.part}`;
  return `the ${part} a ${pair.old.name} client sends is no longer accepted by ${pair.new.name}`;
}

function resolvedTypes(root: string, name: string): string {
  const resolved = ts.resolveModuleName(
    name,
    path.join(root, 'package.json'),
    { module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler },
    ts.sys,
  ).resolvedModule?.resolvedFileName;
  if (!resolved) throw new Error(`typed clients: ${name} is not installed under ${root}`);
  return resolved;
}

/** Each document's types as openapi-typescript generates them for a client (its programmatic API, defaults). */
function generateTypes(documents: Contract[]): string[] {
  const generated = spawnSync(process.execPath, [path.join(__dirname, 'lib/openapi-types.cjs')], {
    input: JSON.stringify(documents.map((document) => document.text)),
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (generated.status !== 0) {
    // Its own lines name the document by position; openapi-typescript's logger adds lines of its own.
    const named = [...generated.stderr.matchAll(/^document (\d+): (.*)$/gm)].map(
      ([, index, said]) => `${documents[Number(index)]?.name}: ${said}`,
    );
    const reason =
      named.join('\n') || generated.stderr.trim() || generated.error?.message || `${generated.status}`;
    throw new Error(`typed clients: openapi-typescript cannot read ${reason}`);
  }
  return JSON.parse(generated.stdout) as string[];
}

/**
 * Judges each pair with one TypeScript program: every document's types as openapi-typescript generates them for
 * clients, and per pair a module whose assignments stand for every strict client of the old document. `root` is
 * where openapi-fetch is installed.
 */
export function checkPairs(pairs: Pair[], root: string): PairVerdict[] {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'typed-clients-'));
  try {
    const documents: Contract[] = [];
    for (const side of pairs.flatMap((pair) => [pair.old, pair.new])) {
      if (!documents.some((known) => known.text === side.text)) documents.push(side);
    }
    const moduleOf = (contract: Contract): string =>
      `document${documents.findIndex((known) => known.text === contract.text)}`;
    for (const [index, source] of generateTypes(documents).entries()) {
      fs.writeFileSync(path.join(scratch, `document${index}.ts`), source);
    }
    fs.writeFileSync(path.join(scratch, 'helpers.ts'), helpersSource);
    const programs = pairs.map((pair, index) =>
      writePairChecks(pair, moduleOf(pair.old), moduleOf(pair.new), path.join(scratch, `pair${index}.ts`)),
    );
    const program = ts.createProgram({
      rootNames: programs.map((check) => check.file),
      options: {
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.ESNext,
        moduleResolution: ts.ModuleResolutionKind.Bundler,
        lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
        types: [],
        paths: {
          'openapi-fetch': [resolvedTypes(root, 'openapi-fetch')],
          'openapi-typescript-helpers': [resolvedTypes(root, 'openapi-typescript-helpers')],
        },
      },
    });
    const failed = new Map<PairProgram, { assertion: Assertion; reason: string }[]>();
    const unexplained: string[] = [];
    for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
      const file = diagnostic.file;
      const line =
        file && diagnostic.start !== undefined
          ? file.getLineAndCharacterOfPosition(diagnostic.start).line
          : -1;
      const owner = programs.find(
        (candidate) => path.resolve(candidate.file) === path.resolve(file?.fileName ?? ''),
      );
      const assertion = owner?.assertions.find((candidate) => candidate.line === line);
      if (!owner || !assertion) {
        const where = file ? `${path.basename(file.fileName)}:${line + 1}: ` : '';
        unexplained.push(`${where}${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`);
        continue;
      }
      failed.set(owner, [
        ...(failed.get(owner) ?? []),
        { assertion, reason: reasonOf(diagnostic, assertion) },
      ]);
    }
    if (unexplained.length > 0) {
      throw new Error(`typed clients: the generated check did not compile:\n${unexplained.join('\n')}`);
    }
    return pairs.map((pair, index) => {
      const owner = programs[index];
      return judge(pair, [...owner.removed, ...fold(pair, failed.get(owner) ?? [])]);
    });
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/** One finding per site: the error statuses of an operation fold into one, naming each status. */
function fold(pair: Pair, failures: { assertion: Assertion; reason: string }[]): Finding[] {
  const bySite = new Map<string, { first: { assertion: Assertion; reason: string }; statuses: string[] }>();
  for (const failure of failures) {
    const key = siteKey(failure.assertion.site);
    const known = bySite.get(key);
    if (known) known.statuses.push(failure.assertion.status ?? '');
    else bySite.set(key, { first: failure, statuses: [failure.assertion.status ?? ''] });
  }
  return [...bySite.values()].map(({ first, statuses }) => {
    const summary = summaryOf(first.assertion.site, statuses, pair);
    return {
      ...first.assertion.site,
      route: first.assertion.route,
      reason: first.reason,
      summary,
      message: summary + first.reason,
    };
  });
}

function judge(pair: Pair, findings: Finding[]): PairVerdict {
  const recordedKeys = new Set(pair.record.map(siteKey));
  const foundKeys = new Set(findings.map(siteKey));
  return {
    old: pair.old.name,
    new: pair.new.name,
    unrecorded: findings.filter((finding) => !recordedKeys.has(siteKey(finding))),
    recorded: findings.filter((finding) => recordedKeys.has(siteKey(finding))),
    stale: pair.record.filter((change) => !foundKeys.has(siteKey(change))),
  };
}

/** Reads a typed-client-changes.yaml; a file that is not there records nothing. */
export function readRecord(file: string): RecordedChange[] {
  if (!fs.existsSync(file)) return [];
  return parseRecord(fs.readFileSync(file, 'utf8'), file);
}

function recordError(where: string, problem: string): Error {
  return new Error(`typed clients: ${where} ${problem}`);
}

/**
 * Parses a record: `changes`, each entry naming one operation (`operation`) or several (`operations`) hit the same
 * way, the direction, the response status (a 2xx status, or `error`) or the request part, and `integrators`.
 */
export function parseRecord(text: string, source: string): RecordedChange[] {
  const document = parseYaml(text) as { changes?: unknown } | null;
  const entries = document?.changes ?? [];
  if (!Array.isArray(entries)) throw recordError(source, 'must hold a list under changes');
  const changes: RecordedChange[] = [];
  const seen = new Set<string>();
  for (const [index, entry] of (entries as unknown[]).entries()) {
    const where = `${source}: changes[${index}]`;
    if (typeof entry !== 'object' || entry === null) throw recordError(where, 'must be a mapping');
    const { operation, operations, direction, status, part, integrators, ...rest } = entry as Record<
      string,
      unknown
    >;
    const unknownKeys = Object.keys(rest);
    if (unknownKeys.length > 0) throw recordError(where, `has unknown keys: ${unknownKeys.join(', ')}`);
    const named = operation !== undefined ? [operation] : operations;
    if (
      (operation !== undefined) === (operations !== undefined) ||
      !Array.isArray(named) ||
      named.length === 0 ||
      !named.every((name) => typeof name === 'string' && name !== '')
    ) {
      throw recordError(
        where,
        'must name an operationId under operation, or a list of them under operations',
      );
    }
    if (direction !== 'response' && direction !== 'request' && direction !== 'removed') {
      throw recordError(where, 'needs a direction: response, request or removed');
    }
    if (typeof integrators !== 'string' || integrators.trim() === '') {
      throw recordError(where, 'needs integrators: what a client’s code must do about the change');
    }
    const site: Omit<Site, 'operation'> = { direction };
    if (direction === 'response') {
      if (typeof status !== 'string' || !(/^2(\d\d|XX)$/.test(status) || status === errorStatuses)) {
        throw recordError(where, `needs a status: a quoted 2xx status such as '202', or ${errorStatuses}`);
      }
      site.status = status;
    } else if (status !== undefined) {
      throw recordError(where, 'has a status, which only a response has');
    }
    if (direction === 'request') {
      if (!requestParts.includes(part as RequestPart)) {
        throw recordError(where, `needs a part: ${requestParts.join(', ')}`);
      }
      site.part = part as RequestPart;
    } else if (part !== undefined) {
      throw recordError(where, 'has a part, which only a request has');
    }
    for (const name of named as string[]) {
      const change: RecordedChange = { ...site, operation: name, integrators: integrators.trim() };
      const key = siteKey(change);
      if (seen.has(key)) throw recordError(where, `repeats ${describeSite(change)}`);
      seen.add(key);
      changes.push(change);
    }
  }
  return changes;
}

/**
 * Record entries for breaks nobody recorded yet, the operations hit the same way in one entry, each under a comment
 * quoting the compiler; they parse once `integrators` says what a client's code must do.
 */
export function recordSuggestion(findings: Finding[]): string {
  const groups = new Map<string, Finding[]>();
  for (const finding of findings) {
    const key = `${finding.direction}|${finding.status ?? ''}|${finding.part ?? ''}|${finding.reason}`;
    groups.set(key, [...(groups.get(key) ?? []), finding]);
  }
  const lines = ['changes:'];
  for (const group of groups.values()) {
    const [first] = group as [Finding];
    lines.push(`  # ${first.reason.replace(/^:?\s*/, '')}`);
    if (group.length === 1) lines.push(`  - operation: ${first.operation}`);
    else lines.push(`  - operations: [${group.map((finding) => finding.operation).join(', ')}]`);
    lines.push(`    direction: ${first.direction}`);
    if (first.status !== undefined) lines.push(`    status: '${first.status}'`);
    if (first.part !== undefined) lines.push(`    part: ${first.part}`);
    lines.push('    integrators: ');
  }
  return `${lines.join('\n')}\n`;
}
