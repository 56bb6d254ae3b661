// Problem documents: RFC 9457 shape with the service's code, protocol statuses, and the headers codes call for.
import { createOpenApiAjv, documentSchemaId } from '../../../src/api/rest/openapi-validation';
import {
  methodNotAllowed,
  preconditionRequired,
  problemBody,
  problemResponse,
  problemType,
  unsupportedMediaType,
} from '../../../src/api/rest/problem-details';
import {
  DomainError,
  errorCodes,
  idempotencyKeyInUse,
  internalError,
  rateLimited,
  validationFailed,
  versionMismatch,
} from '../../../src/domain/errors';
import { priceChanged } from '../../../src/domain/price-guard';

const validateProblem = createOpenApiAjv().compile({
  $ref: `${documentSchemaId}#/components/schemas/Problem`,
});

describe('problem documents', () => {
  it('gives every error code a valid problem with the code in lower kebab case as its type', () => {
    // BOOKING_PROCESSING is answered 202 with the booking id, never as a problem.
    for (const code of errorCodes.filter((errorCode) => errorCode !== 'BOOKING_PROCESSING')) {
      const body = problemBody(new DomainError(code, 'Something happened'), '/v1/bookings', 'request-1');
      expect(validateProblem(body)).toBe(true);
      expect(body.type).toBe(problemType(code));
      expect(body.code).toBe(code);
      expect(body.request_id).toBe('request-1');
    }
    expect(problemType('IDEMPOTENCY_KEY_REUSED')).toBe('urn:bus-booking:problem:idempotency-key-reused');
  });

  it('lists field violations and nothing else of the error', () => {
    const body = problemBody(
      validationFailed([{ field: 'passengers[0].email', message: 'must be a valid email' }]),
      '/v1/bookings',
      'request-1',
    );
    expect(body).toMatchObject({
      status: 400,
      title: 'Validation failed',
      errors: [{ field: 'passengers[0].email', message: 'must be a valid email' }],
    });
    expect(validateProblem(body)).toBe(true);
  });

  it('answers a change without If-Match with 428 and VALIDATION_FAILED naming the header', () => {
    const body = problemBody(preconditionRequired(), '/v1/bookings/x', 'r');
    expect(body).toMatchObject({
      status: 428,
      title: 'Precondition required',
      code: 'VALIDATION_FAILED',
      errors: [{ field: 'If-Match' }],
    });
    expect(validateProblem(body)).toBe(true);
    expect(problemResponse(preconditionRequired(), '/v1/bookings/x', 'r').status).toBe(428);
  });

  it('keeps 405 and 415 statuses with VALIDATION_FAILED, as the document describes them', () => {
    const notAllowed = problemBody(methodNotAllowed('DELETE', 'GET, PATCH'), '/v1/bookings/x', 'r');
    expect(notAllowed).toMatchObject({ status: 405, title: 'Method not allowed', code: 'VALIDATION_FAILED' });
    const wrongType = problemBody(unsupportedMediaType(), '/v1/bookings', 'r');
    expect(wrongType).toMatchObject({
      status: 415,
      title: 'Unsupported media type',
      code: 'VALIDATION_FAILED',
    });
  });

  it('never lets the cause of an internal error reach the body', () => {
    const body = problemBody(internalError(new Error('select * from secrets')), '/v1/routes', 'r');
    expect(JSON.stringify(body)).not.toContain('secrets');
    expect(body).toMatchObject({ status: 500, code: 'INTERNAL' });
  });
});

describe('problemResponse', () => {
  it('adds Retry-After to retryable refusals', () => {
    expect(problemResponse(rateLimited(17), '/v1/routes', 'r').headers).toMatchObject({
      'retry-after': '17',
    });
    const inUse = problemResponse(idempotencyKeyInUse(1), '/v1/bookings', 'r');
    expect(inUse.status).toBe(409);
    expect(inUse.headers['retry-after']).toBe('1');
  });

  it('tells a stale writer the current version in the ETag of a 412', () => {
    const response = problemResponse(versionMismatch(3, 4), '/v1/bookings/x', 'r');
    expect(response.status).toBe(412);
    expect(response.headers).toEqual({ 'content-type': 'application/problem+json', etag: '"4"' });
  });
});

describe('PRICE_CHANGED', () => {
  it('carries the current price as the contract writes a PriceBreakdown', () => {
    const error = priceChanged(
      { amountMinor: 9000, currency: 'EUR' },
      {
        lines: [
          {
            passengerId: '11111111-1111-4111-8111-111111111111',
            seatNumber: '3A',
            fareClass: 'STANDARD',
            amount: { amountMinor: 4500, currency: 'EUR' },
            passengerType: 'ADULT',
            discount: { amountMinor: 500, currency: 'EUR' },
          },
          {
            passengerId: '22222222-2222-4222-8222-222222222222',
            seatNumber: '',
            fareClass: 'STANDARD',
            amount: { amountMinor: 0, currency: 'EUR' },
          },
        ],
        total: { amountMinor: 4500, currency: 'EUR' },
        discount: {
          code: 'SPRING-10',
          kind: 'percent',
          value: 10,
          amount: { amountMinor: 500, currency: 'EUR' },
        },
      },
    );
    const body = problemBody(error, '/v1/bookings', 'request-1');
    expect(validateProblem(body)).toBe(true);
    expect(body).toMatchObject({
      status: 409,
      code: 'PRICE_CHANGED',
      current_price: {
        total: { amount_minor: 4500, currency: 'EUR' },
        discount: { code: 'SPRING-10', kind: 'percent', value: 10 },
        lines: [
          { passenger_type: 'ADULT', discount: { amount_minor: 500, currency: 'EUR' }, seat_number: '3A' },
          { passenger_type: null, discount: null, seat_number: '' },
        ],
      },
    });
  });
});
