// Unit tests: a refund quote in the REST JSON and the gRPC message agree field for field, and the JSON is the contract's.
import { toRefundQuoteMessage } from '../../../src/api/grpc/refund-quote-mapper';
import { refundQuoteInput, refundQuoteJson } from '../../../src/api/rest/refund-quote-mapping';
import { validatePassengerIds } from '../../../src/application/refund-quotes';
import { DomainError } from '../../../src/domain/errors';
import { quoteRefund, type RefundQuote } from '../../../src/domain/refund-quotes';
import { confirmedState, firstPassengerId, relativeToDeparture } from '../../support/booking-states';
import { contractViolations } from '../../support/rest-contract';
import { asRestJson } from '../../support/rest-json';

const quoteId = '0d9c8b7a-6f5e-4d3c-8b2a-1f0e9d8c7b6a';

function quoteOf(passengerIds?: string[]): RefundQuote {
  return quoteRefund({
    booking: confirmedState({ version: 3 }),
    ...(passengerIds === undefined ? {} : { passengerIds }),
    id: quoteId,
    now: relativeToDeparture(-2 * 24 * 3_600_000).toISOString(),
  });
}

function violationsOf(work: () => unknown): unknown {
  try {
    work();
  } catch (error) {
    if (error instanceof DomainError) return { code: error.code, errors: error.fieldViolations };
    throw error;
  }
  throw new Error('no error');
}

describe('refund quote JSON', () => {
  it.each([
    ['one passenger of two', [firstPassengerId]],
    ['every passenger', undefined],
  ])('agrees with the gRPC message and the contract: %s', (_name, passengerIds) => {
    const quote = quoteOf(passengerIds);
    const json = refundQuoteJson(quote);
    expect(asRestJson(toRefundQuoteMessage(quote))).toEqual(json);
    for (const operationId of ['createRefundQuote', 'getRefundQuote']) {
      const status = operationId === 'createRefundQuote' ? 201 : 200;
      expect(
        contractViolations(operationId, {
          status,
          headers: {
            'content-type': 'application/json; charset=utf-8',
            'x-request-id': 'request-1',
            location: `/v1/bookings/${quote.bookingId}/refund-quotes/${quote.id}`,
          },
          body: json,
        }),
      ).toEqual([]);
    }
  });

  it('writes the rule, the lines and the validity as the contract names them', () => {
    expect(refundQuoteJson(quoteOf([firstPassengerId]))).toEqual({
      id: quoteId,
      booking_id: confirmedState().id,
      booking_version: 3,
      passenger_ids: [firstPassengerId],
      cancels_booking: false,
      lines: [
        {
          passenger_id: firstPassengerId,
          paid: { amount_minor: 2500, currency: 'EUR' },
          refund: { amount_minor: 2500, currency: 'EUR' },
        },
      ],
      total: { amount_minor: 2500, currency: 'EUR' },
      rule: { name: 'standard-flexible', refund_percent: 100 },
      quoted_at: relativeToDeparture(-2 * 24 * 3_600_000).toISOString(),
      valid_until: relativeToDeparture(-2 * 24 * 3_600_000 + 600_000).toISOString(),
    });
  });
});

describe('refund quote requests', () => {
  it('take passenger_ids when given and nothing otherwise', () => {
    expect(refundQuoteInput(undefined)).toEqual({});
    expect(refundQuoteInput({})).toEqual({});
    expect(refundQuoteInput({ passenger_ids: [firstPassengerId] })).toEqual({
      passengerIds: [firstPassengerId],
    });
  });

  it('read absent ids as every passenger and lower-case the rest', () => {
    expect(validatePassengerIds(undefined)).toBeUndefined();
    expect(validatePassengerIds(null)).toBeUndefined();
    expect(validatePassengerIds([firstPassengerId.toUpperCase()])).toEqual([firstPassengerId]);
  });

  it('refuse what is not a list of UUIDs, naming each bad one', () => {
    expect(violationsOf(() => validatePassengerIds('all'))).toEqual({
      code: 'VALIDATION_FAILED',
      errors: [{ field: 'passenger_ids', message: 'must be a list of passenger ids' }],
    });
    expect(violationsOf(() => validatePassengerIds([firstPassengerId, 'p-2', 7]))).toEqual({
      code: 'VALIDATION_FAILED',
      errors: [
        { field: 'passenger_ids[1]', message: 'must be a UUID' },
        { field: 'passenger_ids[2]', message: 'must be a UUID' },
      ],
    });
  });
});
