// REST's Idempotency-Key (application/idempotency-key-store.ts), answering final refusals in problem+json.
import { createIdempotencyKeys, type IdempotencyKeys } from '../../application/idempotency-key-store';
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
