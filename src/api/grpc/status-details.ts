// The error model on gRPC: a DomainError becomes a status code plus google.rpc.Status details, and back for clients.
import { Metadata, type StatusObject } from '@grpc/grpc-js';
import { errorCodeMappings, grpcStatusCodes, type DomainError, type JsonValue } from '../../domain/errors';
import { Any } from '../../generated/google/protobuf/any';
import { BadRequest, ErrorInfo, RetryInfo } from '../../generated/google/rpc/error_details';
import { Status } from '../../generated/google/rpc/status';

/** `google.rpc.ErrorInfo.domain` of every error this service raises. */
export const errorDomain = 'bookings.example.com';

/** The trailer that carries the serialized `google.rpc.Status`, as the gRPC rich error model defines it. */
export const statusDetailsKey = 'grpc-status-details-bin';

const typeUrlPrefix = 'type.googleapis.com/';

export const detailTypeUrls = {
  errorInfo: `${typeUrlPrefix}google.rpc.ErrorInfo`,
  badRequest: `${typeUrlPrefix}google.rpc.BadRequest`,
  retryInfo: `${typeUrlPrefix}google.rpc.RetryInfo`,
} as const;

function metadataValue(value: JsonValue): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function packed(typeUrl: string, value: Uint8Array): Any {
  return { typeUrl, value: Buffer.from(value) };
}

/** The `google.rpc.Status` for an error: ErrorInfo always, BadRequest and RetryInfo when they apply. */
export function statusMessageOf(error: DomainError): Status {
  const code = grpcStatusCodes[errorCodeMappings[error.code].grpcStatus];
  const errorInfo: ErrorInfo = {
    reason: error.code,
    domain: errorDomain,
    metadata: Object.fromEntries(
      Object.entries(error.details).map(([key, value]) => [key, metadataValue(value)]),
    ),
  };
  const details = [packed(detailTypeUrls.errorInfo, ErrorInfo.encode(errorInfo).finish())];
  if (error.fieldViolations.length > 0) {
    const badRequest: BadRequest = {
      fieldViolations: error.fieldViolations.map((violation) => ({
        field: violation.field,
        description: violation.message,
        reason: '',
      })),
    };
    details.push(packed(detailTypeUrls.badRequest, BadRequest.encode(badRequest).finish()));
  }
  const retryAfterSeconds = error.details.retryAfterSeconds;
  if (typeof retryAfterSeconds === 'number') {
    const retryInfo: RetryInfo = { retryDelay: { seconds: Math.ceil(retryAfterSeconds), nanos: 0 } };
    details.push(packed(detailTypeUrls.retryInfo, RetryInfo.encode(retryInfo).finish()));
  }
  return { code, message: error.message, details };
}

/** What a grpc-js handler passes to its callback (or an interceptor to `sendStatus`) to fail with this error. */
export function grpcStatusOf(error: DomainError): StatusObject {
  const status = statusMessageOf(error);
  const metadata = new Metadata();
  metadata.set(statusDetailsKey, Buffer.from(Status.encode(status).finish()));
  return { code: status.code, details: status.message, metadata };
}

/** The rich error details a client received, decoded. */
export interface DecodedStatusDetails {
  readonly code: number;
  readonly message: string;
  readonly errorInfo?: ErrorInfo;
  readonly fieldViolations: readonly { readonly field: string; readonly description: string }[];
  readonly retryDelayMs?: number;
}

/** Reads `grpc-status-details-bin` from a failed call's trailers; undefined when the server sent none. */
export function decodeStatusDetails(metadata: Metadata | undefined): DecodedStatusDetails | undefined {
  const raw = metadata?.get(statusDetailsKey)[0];
  if (raw === undefined || typeof raw === 'string') return undefined;
  const status = Status.decode(raw);
  let errorInfo: ErrorInfo | undefined;
  const fieldViolations: { field: string; description: string }[] = [];
  let retryDelayMs: number | undefined;
  for (const detail of status.details) {
    if (detail.typeUrl === detailTypeUrls.errorInfo) errorInfo = ErrorInfo.decode(detail.value);
    if (detail.typeUrl === detailTypeUrls.badRequest) {
      for (const violation of BadRequest.decode(detail.value).fieldViolations) {
        fieldViolations.push({ field: violation.field, description: violation.description });
      }
    }
    if (detail.typeUrl === detailTypeUrls.retryInfo) {
      const delay = RetryInfo.decode(detail.value).retryDelay;
      if (delay) retryDelayMs = delay.seconds * 1000 + Math.round(delay.nanos / 1e6);
    }
  }
  return {
    code: status.code,
    message: status.message,
    ...(errorInfo ? { errorInfo } : {}),
    fieldViolations,
    ...(retryDelayMs === undefined ? {} : { retryDelayMs }),
  };
}
