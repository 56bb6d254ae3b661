// gRPC server reflection (v1 and v1alpha) serving the file descriptors buf builds from proto/, imports included.
import fs from 'node:fs';
import path from 'node:path';
import {
  createFileRegistry,
  fromBinary,
  toBinary,
  type DescEnum,
  type DescExtension,
  type DescFile,
  type DescMessage,
  type DescService,
} from '@bufbuild/protobuf';
import { nestedTypes } from '@bufbuild/protobuf/reflect';
import { FileDescriptorProtoSchema, FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import {
  loadPackageDefinition,
  status,
  type GrpcObject,
  type Server,
  type ServerDuplexStream,
  type ServiceClientConstructor,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import type { ServerReflectionRequest__Output as ReflectionRequest } from '@grpc/reflection/build/src/generated/grpc/reflection/v1/ServerReflectionRequest';
import type { ServerReflectionResponse as ReflectionResponse } from '@grpc/reflection/build/src/generated/grpc/reflection/v1/ServerReflectionResponse';
import { descriptorSetPath } from '../../contracts/proto-options';

/** The reflection protocol's versions: grpcurl and most clients ask v1 first and fall back to v1alpha. */
const reflectionVersions = ['v1', 'v1alpha'] as const;

class ReflectionLookupError extends Error {
  constructor(
    readonly code: status,
    message: string,
  ) {
    super(message);
  }
}

/** Looks files up by name, by the symbols they declare and by the extensions they define. */
class DescriptorIndex {
  private readonly filesByName = new Map<string, DescFile>();
  private readonly filesBySymbol = new Map<string, DescFile>();
  /** Extended message name → extension field number → the file defining the extension. */
  private readonly extensionFiles = new Map<string, Map<number, DescFile>>();
  /** Each file's encoding, followed by the encodings of everything it imports, directly or not. */
  private readonly closures = new Map<DescFile, Uint8Array[]>();

  constructor(descriptorSet: Uint8Array) {
    const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, descriptorSet));
    const encodings = new Map<DescFile, Uint8Array>();
    for (const file of registry.files) {
      this.filesByName.set(file.proto.name, file);
      // Unknown fields (custom options such as `authorization`) are kept and written back unchanged.
      encodings.set(file, toBinary(FileDescriptorProtoSchema, file.proto));
      for (const type of nestedTypes(file)) this.indexType(file, type);
    }
    for (const file of registry.files) {
      this.closures.set(
        file,
        [file, ...importsOf(file)].map((member) => encodings.get(member)!),
      );
    }
  }

  private indexType(file: DescFile, type: DescMessage | DescEnum | DescExtension | DescService) {
    this.filesBySymbol.set(type.typeName, file);
    switch (type.kind) {
      case 'message':
        for (const field of type.fields) this.filesBySymbol.set(`${type.typeName}.${field.name}`, file);
        for (const oneof of type.oneofs) this.filesBySymbol.set(`${type.typeName}.${oneof.name}`, file);
        break;
      case 'enum': {
        // Enum values are scoped like siblings of their enum, as in C++.
        const scope = type.typeName.slice(0, type.typeName.length - type.name.length);
        for (const value of type.values) this.filesBySymbol.set(`${scope}${value.name}`, file);
        break;
      }
      case 'service':
        for (const method of type.methods) this.filesBySymbol.set(`${type.typeName}.${method.name}`, file);
        break;
      case 'extension': {
        const numbers = this.extensionFiles.get(type.extendee.typeName) ?? new Map<number, DescFile>();
        numbers.set(type.number, file);
        this.extensionFiles.set(type.extendee.typeName, numbers);
        break;
      }
    }
  }

  hasSymbol(symbol: string): boolean {
    return this.filesBySymbol.has(symbol);
  }

  fileByName(name: string): Uint8Array[] {
    const file = this.filesByName.get(name);
    if (!file) throw new ReflectionLookupError(status.NOT_FOUND, `File not found: ${name}`);
    return this.closures.get(file)!;
  }

  fileContainingSymbol(symbol: string): Uint8Array[] {
    const file = this.filesBySymbol.get(symbol);
    if (!file) throw new ReflectionLookupError(status.NOT_FOUND, `Symbol not found: ${symbol}`);
    return this.closures.get(file)!;
  }

  fileContainingExtension(extendee: string, number: number): Uint8Array[] {
    const file = this.extensionFiles.get(extendee)?.get(number);
    if (!file) {
      throw new ReflectionLookupError(status.NOT_FOUND, `Extension ${number} of ${extendee} not found`);
    }
    return this.closures.get(file)!;
  }

  extensionNumbersOf(extendee: string): number[] {
    if (!this.filesBySymbol.has(extendee)) {
      throw new ReflectionLookupError(status.NOT_FOUND, `Type not found: ${extendee}`);
    }
    return [...(this.extensionFiles.get(extendee)?.keys() ?? [])].sort((a, b) => a - b);
  }
}

/** Every file `file` imports, directly or transitively, each once. */
function importsOf(file: DescFile): DescFile[] {
  const seen = new Set<DescFile>();
  const pending = [...file.dependencies];
  while (pending.length > 0) {
    const next = pending.pop()!;
    if (seen.has(next)) continue;
    seen.add(next);
    pending.push(...next.dependencies);
  }
  return [...seen];
}

function answer(index: DescriptorIndex, services: readonly string[], request: ReflectionRequest) {
  const response: ReflectionResponse = { validHost: request.host, originalRequest: request };
  try {
    switch (request.messageRequest) {
      case 'listServices':
        response.listServicesResponse = { service: services.map((name) => ({ name })) };
        break;
      case 'fileByFilename':
        response.fileDescriptorResponse = { fileDescriptorProto: index.fileByName(request.fileByFilename!) };
        break;
      case 'fileContainingSymbol':
        response.fileDescriptorResponse = {
          fileDescriptorProto: index.fileContainingSymbol(request.fileContainingSymbol!),
        };
        break;
      case 'fileContainingExtension': {
        const { containingType, extensionNumber } = request.fileContainingExtension!;
        response.fileDescriptorResponse = {
          fileDescriptorProto: index.fileContainingExtension(containingType, extensionNumber),
        };
        break;
      }
      case 'allExtensionNumbersOfType':
        response.allExtensionNumbersResponse = {
          baseTypeName: request.allExtensionNumbersOfType!,
          extensionNumber: index.extensionNumbersOf(request.allExtensionNumbersOfType!),
        };
        break;
      default:
        throw new ReflectionLookupError(status.INVALID_ARGUMENT, 'The request names no reflection query');
    }
  } catch (error) {
    // Failures go in the answer, not the stream's status: the client keeps the stream for its next questions.
    response.errorResponse =
      error instanceof ReflectionLookupError
        ? { errorCode: error.code, errorMessage: error.message }
        : { errorCode: status.INTERNAL, errorMessage: `Reflection failed: ${(error as Error).message}` };
  }
  return response;
}

export interface ReflectionService {
  addToServer(server: Server): void;
}

/**
 * Reflection for `services` (the full names the server serves), answered from the descriptor set: it lists only
 * those, and describes any type of the set (the internal services' contracts too). Fails at start when a service
 * is missing from it, so a stale or absent descriptor set never reaches clients.
 */
export function createReflectionService(
  services: readonly string[],
  descriptorSet: Uint8Array = fs.readFileSync(descriptorSetPath),
): ReflectionService {
  const index = new DescriptorIndex(descriptorSet);
  const missing = services.filter((service) => !index.hasSymbol(service));
  if (missing.length > 0) {
    throw new Error(
      `the reflection descriptor set lacks ${missing.join(', ')}: run npm run generate to rebuild ${descriptorSetPath}`,
    );
  }
  // The library's own protos, loaded the way its generated types expect (`messageRequest` names the query).
  const includeDirectory = path.resolve(path.dirname(require.resolve('@grpc/reflection')), '..', 'proto');
  const serviceDefinitions = reflectionVersions.map((version) => {
    const definition = loadSync(`grpc/reflection/${version}/reflection.proto`, {
      includeDirs: [includeDirectory],
      defaults: true,
      oneofs: true,
    });
    const grpcPackage = loadPackageDefinition(definition).grpc as GrpcObject;
    const versionPackage = (grpcPackage.reflection as GrpcObject)[version] as GrpcObject;
    return (versionPackage.ServerReflection as ServiceClientConstructor).service;
  });
  const serverReflectionInfo = (stream: ServerDuplexStream<ReflectionRequest, ReflectionResponse>) => {
    stream.on('data', (request: ReflectionRequest) => stream.write(answer(index, services, request)));
    stream.on('end', () => stream.end());
  };
  return {
    addToServer(server) {
      for (const definition of serviceDefinitions) {
        server.addService(definition, { ServerReflectionInfo: serverReflectionInfo });
      }
    },
  };
}
