// The card processor's webhook endpoint: the raw body, size-limited, handed to the application unparsed.
import Router from '@koa/router';
import type Koa from 'koa';
import type { PaymentWebhookApplication } from '../../application/payment-webhooks';
import { openApiDocument, openApiOperations } from '../../contracts/openapi-document';
import { DomainError, payloadTooLarge } from '../../domain/errors';
import {
  documentRequestValidator,
  operationDefinition,
  resolveDocumentReference,
} from './openapi-validation';
import { queryParametersOf } from './query-parameters';
import { sendResponse } from './responses';

export const receiveStripeEventOperationId = 'receiveStripeEvent';

/** The request body's `x-max-body-bytes`: the document states the limit, the endpoint keeps it. */
function documentedBodyLimit(): number {
  const operation = openApiOperations.find(
    (candidate) => candidate.operationId === receiveStripeEventOperationId,
  );
  if (operation === undefined) throw new Error(`no OpenAPI operation ${receiveStripeEventOperationId}`);
  const requestBody = resolveDocumentReference(
    openApiDocument,
    operationDefinition(operation).requestBody,
  ) as Record<string, unknown>;
  const limit = requestBody['x-max-body-bytes'];
  if (typeof limit !== 'number') throw new Error(`${receiveStripeEventOperationId}: no x-max-body-bytes`);
  return limit;
}

/**
 * The body's bytes as they came: the signature covers them, so they are never parsed and serialised again. A
 * declared length over the limit is refused before anything is read; an undeclared one (chunked, HTTP/2) as soon
 * as it passes it.
 */
async function rawBody(context: Koa.Context, limitBytes: number): Promise<Buffer> {
  const declared = context.request.length;
  if (declared !== undefined && declared > limitBytes) throw payloadTooLarge(limitBytes);
  const chunks: Buffer[] = [];
  let received = 0;
  for await (const chunk of context.req as AsyncIterable<Buffer>) {
    received += chunk.length;
    if (received > limitBytes) throw payloadTooLarge(limitBytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

export interface PaymentWebhookRouterOptions {
  /** Hears a delivery refused before it reached the application (its body too large, its headers malformed). */
  onRefused(reason: 'signature' | 'too_large'): void;
}

/** `POST /v1/payments/stripe/events` and its `/api` twin, public: the signature is the caller's credential. */
export function paymentWebhookRouter(
  application: PaymentWebhookApplication,
  options: PaymentWebhookRouterOptions,
): Router {
  const limitBytes = documentedBodyLimit();
  const router = new Router();
  for (const operation of openApiOperations.filter(
    (candidate) => candidate.canonicalOperationId === receiveStripeEventOperationId,
  )) {
    const validator = documentRequestValidator(operation);
    router.register(
      operation.routerPath,
      [operation.method],
      async (context) => {
        let body: Buffer;
        try {
          // Headers first (X-Request-Id, a missing Stripe-Signature), then the body: nothing of it is parsed.
          validator.validate({
            path: {},
            query: queryParametersOf(context),
            headers: context.headers,
            body: undefined,
          });
          body = await rawBody(context, limitBytes);
        } catch (error) {
          if (error instanceof DomainError) {
            if (error.code === 'PAYLOAD_TOO_LARGE') options.onRefused('too_large');
            else if (error.fieldViolations.some((violation) => violation.field === 'Stripe-Signature')) {
              options.onRefused('signature');
            }
          }
          throw error;
        }
        const receipt = await application.receiveStripeEvent(
          body,
          context.get('Stripe-Signature') || undefined,
          (event) => {
            validator.validate({
              path: {},
              query: queryParametersOf(context),
              headers: context.headers,
              body: event,
            });
          },
        );
        sendResponse(context, {
          status: 200,
          headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
          body: { event_id: receipt.eventId, outcome: receipt.outcome },
        });
      },
      { name: operation.operationId },
    );
  }
  return router;
}
