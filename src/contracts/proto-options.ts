// Reads the proto contracts' options (per-RPC authorization, HTTP bindings, sensitive fields) from buf's descriptor set.
import fs from 'node:fs';
import path from 'node:path';
import {
  createFileRegistry,
  fromBinary,
  getOption,
  hasOption,
  type DescExtension,
  type DescFile,
  type DescMethod,
  type FileRegistry,
} from '@bufbuild/protobuf';
import { nestedTypes } from '@bufbuild/protobuf/reflect';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import type { BookingServiceService } from '../generated/com/example/bookings/v1/booking_service';
import { projectRoot } from '../project-root';

/**
 * Every file of proto/com/example (internal services included), the google.rpc error details, grpc.health.v1 and
 * everything they import, with comments: written by `npm run generate` (scripts/build-descriptor-set.sh), checked
 * for freshness by the contract checks, read here and served by gRPC reflection.
 */
export const descriptorSetPath = path.join(projectRoot, 'proto', 'reflection', 'descriptor-set.binpb');

/** Packages whose files are our contracts; the rest of the set is what they import. */
const contractPackagePrefix = 'com.example.';

/** What a caller needs to invoke one RPC, as written in its `com.example.common.v1.authorization` option. */
export interface MethodAuthorization {
  /** The token must carry every one of these scopes. */
  readonly scopes: readonly string[];
  /** The caller must hold at least one of these roles (empty: any role). */
  readonly roles: readonly string[];
  /** An internal service authenticated by its client certificate may call without a user token. */
  readonly allowServiceOnly: boolean;
}

/** The REST operation an RPC's `google.api.http` option names. */
export interface HttpBinding {
  /** Upper case, e.g. `POST`. */
  readonly httpMethod: string;
  /** The path template, e.g. `/v1/bookings/{booking_id}`. */
  readonly path: string;
}

/** A field marked `(com.example.common.v1.sensitive) = true`. */
export interface SensitiveField {
  /** Fully qualified message name, e.g. `com.example.bookings.v1.Passenger`. */
  readonly messageName: string;
  /** Proto field name, also the REST JSON name, e.g. `first_name`. */
  readonly fieldName: string;
  /** Property name in the generated TypeScript objects, e.g. `firstName`. */
  readonly propertyName: string;
}

type MethodNameOf<Definition extends Record<string, { readonly path: string }>> = {
  [Key in keyof Definition]: Definition[Key]['path'] extends `/${string}/${infer MethodName}`
    ? MethodName
    : never;
}[keyof Definition];

/** RPC names of BookingService as written in the proto, e.g. `CreateBooking`. */
export type BookingServiceMethodName = MethodNameOf<typeof BookingServiceService>;

class ProtoContractError extends Error {
  constructor(where: string, problem: string) {
    super(
      `${where}: ${problem} (${path.relative(projectRoot, descriptorSetPath)}; npm run generate rebuilds it)`,
    );
    this.name = 'ProtoContractError';
  }
}

function loadRegistry(): FileRegistry {
  return createFileRegistry(fromBinary(FileDescriptorSetSchema, fs.readFileSync(descriptorSetPath)));
}

const registry = loadRegistry();

function extension(typeName: string): DescExtension {
  const found = registry.getExtension(typeName);
  if (!found) throw new ProtoContractError(typeName, 'the option is not defined');
  return found;
}

const authorizationOption = extension('com.example.common.v1.authorization');
const sensitiveOption = extension('com.example.common.v1.sensitive');
const httpOption = extension('google.api.http');

/** Every file of our own packages; a unit test checks it against the .proto files under proto/com/example. */
export const contractFiles: readonly DescFile[] = [...registry.files].filter((file) =>
  file.proto.package.startsWith(contractPackagePrefix),
);

/** grpc-js's name for a method: `/com.example.bookings.v1.BookingService/CreateBooking`. */
function grpcPath(method: DescMethod): string {
  return `/${method.parent.typeName}/${method.name}`;
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

function readMethodAuthorization(method: DescMethod): MethodAuthorization {
  const where = `${method.parent.file.proto.name}: ${method.parent.name}.${method.name}`;
  // Fail closed at load time: an RPC without a policy must stop the server from starting, not run unguarded.
  if (!hasOption(method, authorizationOption))
    throw new ProtoContractError(where, 'has no authorization option');
  const policy = getOption(method, authorizationOption) as Record<string, unknown>;
  const { scopes, roles, allowServiceOnly } = policy;
  if (!isStringList(scopes) || !isStringList(roles) || typeof allowServiceOnly !== 'boolean') {
    throw new ProtoContractError(where, 'has a malformed authorization option');
  }
  return Object.freeze({
    scopes: Object.freeze([...scopes]),
    roles: Object.freeze([...roles]),
    allowServiceOnly,
  });
}

const contractMethods: readonly DescMethod[] = contractFiles.flatMap((file) =>
  file.services.flatMap((service) => service.methods),
);

const methodAuthorizations = contractMethods.map((method) => ({
  method,
  authorization: readMethodAuthorization(method),
}));

/**
 * Authorization of every RPC of our gRPC services (BookingService and the internal seat, payment and notification
 * contracts), keyed by the full gRPC path as grpc-js reports it to handlers and interceptors.
 */
export const grpcPathAuthorization: ReadonlyMap<string, MethodAuthorization> = new Map(
  methodAuthorizations.map(({ method, authorization }) => [grpcPath(method), authorization]),
);

/** Authorization of each BookingService RPC, keyed by its proto name (`CreateBooking`). */
export const bookingServiceAuthorization: ReadonlyMap<BookingServiceMethodName, MethodAuthorization> =
  new Map(
    methodAuthorizations
      .filter(({ method }) => method.parent.typeName === 'com.example.bookings.v1.BookingService')
      .map(({ method, authorization }) => [method.name as BookingServiceMethodName, authorization]),
  );

const httpVerbs = ['get', 'put', 'post', 'delete', 'patch'] as const;

function readHttpBinding(method: DescMethod): HttpBinding | undefined {
  if (!hasOption(method, httpOption)) return undefined;
  const pattern = (getOption(method, httpOption) as { pattern?: { case?: unknown; value?: unknown } })
    .pattern;
  const verb = httpVerbs.find((candidate) => candidate === pattern?.case);
  if (verb === undefined || typeof pattern?.value !== 'string') {
    throw new ProtoContractError(
      `${method.parent.name}.${method.name}`,
      'has a google.api.http rule without a verb',
    );
  }
  return Object.freeze({ httpMethod: verb.toUpperCase(), path: pattern.value });
}

/** The `google.api.http` binding of each RPC that has one, keyed by the full gRPC path. */
export const grpcPathHttpBindings: ReadonlyMap<string, HttpBinding> = new Map(
  contractMethods.flatMap((method) => {
    const binding = readHttpBinding(method);
    return binding === undefined ? [] : [[grpcPath(method), binding] as const];
  }),
);

/** Protobuf's JSON-name rule, which ts-proto also uses for property names: `first_name` becomes `firstName`. */
function toPropertyName(fieldName: string): string {
  return fieldName.replace(/_([a-z0-9])/g, (_underscore, letter: string) => letter.toUpperCase());
}

/** Every field marked sensitive in any of our messages, nested ones included. */
export const sensitiveFields: readonly SensitiveField[] = Object.freeze(
  contractFiles.flatMap((file) =>
    [...nestedTypes(file)].flatMap((type) =>
      type.kind !== 'message'
        ? []
        : type.fields
            .filter((field) => getOption(field, sensitiveOption) === true)
            .map((field) =>
              Object.freeze({
                messageName: type.typeName,
                fieldName: field.name,
                propertyName: toPropertyName(field.name),
              }),
            ),
    ),
  ),
);

/** Proto (and REST JSON) names of all sensitive fields, e.g. `first_name`, `payment_token`. */
export const sensitiveFieldNames: ReadonlySet<string> = new Set(
  sensitiveFields.map((field) => field.fieldName),
);

/** Generated TypeScript property names of all sensitive fields, e.g. `firstName`, `paymentToken`. */
export const sensitivePropertyNames: ReadonlySet<string> = new Set(
  sensitiveFields.map((field) => field.propertyName),
);
