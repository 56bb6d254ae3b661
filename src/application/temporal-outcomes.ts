// Turns what the Temporal client throws into the service's error codes (docs/design.md, error model).
import {
  isGrpcDeadlineError,
  isGrpcServiceError,
  ServiceError,
  WorkflowNotFoundError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
} from '@temporalio/client';
import { status as grpcStatus } from '@grpc/grpc-js';
import { findDomainError, internalError, unavailable, type DomainError } from '../domain/errors';

/** gRPC codes that mean "the Temporal frontend could not be reached or did not answer in time". */
const unreachableCodes: readonly number[] = [
  grpcStatus.UNAVAILABLE,
  grpcStatus.DEADLINE_EXCEEDED,
  grpcStatus.RESOURCE_EXHAUSTED,
];

function grpcCodeOf(error: unknown): number | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1) {
    if (isGrpcServiceError(current)) return current.code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

export function isTemporalUnreachable(error: unknown): boolean {
  if (error instanceof WorkflowUpdateRPCTimeoutOrCancelledError || isGrpcDeadlineError(error)) return true;
  const code = grpcCodeOf(error);
  if (code !== undefined) return unreachableCodes.includes(code);
  return error instanceof ServiceError && /UNAVAILABLE|DEADLINE|connect/i.test(error.message);
}

export function isWorkflowGone(error: unknown): boolean {
  return error instanceof WorkflowNotFoundError || grpcCodeOf(error) === grpcStatus.NOT_FOUND;
}

function temporalUnavailable(): DomainError {
  return unavailable('The booking service cannot reach its workflow engine right now; try again shortly', 2);
}

/**
 * The business error a workflow update (or its validator) failed with, UNAVAILABLE when Temporal could not be
 * reached, INTERNAL for anything else (its details stay in the cause, for logs only).
 */
export function domainErrorFromTemporal(error: unknown): DomainError {
  const domainError = findDomainError(error);
  if (domainError !== undefined) return domainError;
  if (isTemporalUnreachable(error)) return temporalUnavailable();
  return internalError(error);
}
