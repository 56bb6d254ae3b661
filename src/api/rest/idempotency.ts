// REST's Idempotency-Key, the admission of repeated requests (application/admission.ts) answering in problem+json.
import { createIdempotencyKeys, type IdempotencyKeys } from '../../application/admission';
import { problemResponse } from './problem-details';

export type IdempotencyStore = IdempotencyKeys;

/** The keys as REST answers with them: a final business refusal is stored and replayed as its problem document. */
export function createIdempotencyStore(
  dependencies: Omit<Parameters<typeof createIdempotencyKeys>[0], 'refusalAnswer'>,
): IdempotencyStore {
  return createIdempotencyKeys({
    ...dependencies,
    refusalAnswer: (error, request) => problemResponse(error, request.instance, request.requestId),
  });
}
