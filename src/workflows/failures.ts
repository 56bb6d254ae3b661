// Business errors cross Temporal as non-retryable ApplicationFailures carrying the DomainError's plain data.
import { ApplicationFailure } from '@temporalio/workflow';
import { findDomainError } from '../domain/errors';
import { businessFailure } from '../activities/interface';

/** The same non-retryable failure activities raise, so callers read one shape whichever side failed. */
export const domainFailure = businessFailure;

/**
 * What an update handler or validator throws: the business error inside `error` as an ApplicationFailure, so
 * the caller gets its code back. Anything else is a bug: rethrown as is, it fails the workflow task, which
 * Temporal retries once the code is fixed, instead of answering the caller with a half-applied change.
 */
export function asUpdateFailure(error: unknown): unknown {
  const domainError = findDomainError(error);
  return domainError === undefined ? error : domainFailure(domainError);
}

/** Validators reject; whatever they throw lands nowhere in history, so every error becomes a failure. */
export function asValidationFailure(error: unknown): ApplicationFailure {
  const domainError = findDomainError(error);
  if (domainError !== undefined) return domainFailure(domainError);
  return ApplicationFailure.nonRetryable('The request could not be validated', 'INTERNAL', {
    code: 'INTERNAL',
    message: 'An internal error occurred',
  });
}
