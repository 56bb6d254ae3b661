// Business errors cross Temporal as ApplicationFailures that findDomainError turns back into the same DomainError.
import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { DomainError, findDomainError, seatUnavailable } from '../../../src/domain/errors';
import { asUpdateFailure, asValidationFailure, domainFailure } from '../../../src/workflows/failures';

test('a DomainError becomes a non-retryable failure typed by its code, and comes back intact', () => {
  const failure = domainFailure(seatUnavailable(['1A']));

  expect(failure).toBeInstanceOf(ApplicationFailure);
  expect(failure.nonRetryable).toBe(true);
  expect(failure.type).toBe('SEAT_UNAVAILABLE');
  expect(findDomainError(failure)?.toJSON()).toEqual(seatUnavailable(['1A']).toJSON());
});

test('an update handler passes on the business error found inside an activity failure', () => {
  const activityFailure = new ActivityFailure(
    'activity failed',
    'ProcessPayment',
    '1',
    RetryState.NON_RETRYABLE_FAILURE,
    undefined,
    domainFailure(new DomainError('PAYMENT_DECLINED', 'The payment was declined: card_declined')),
  );

  const failure = asUpdateFailure(activityFailure);

  expect(findDomainError(failure)?.code).toBe('PAYMENT_DECLINED');
});

test('a bug is not disguised as a business error in handlers, but validators always reject cleanly', () => {
  const bug = new TypeError('cannot read properties of undefined');

  expect(asUpdateFailure(bug)).toBe(bug);
  const rejection = asValidationFailure(bug);
  expect(rejection).toBeInstanceOf(ApplicationFailure);
  expect(findDomainError(rejection)?.code).toBe('INTERNAL');
  expect(rejection.message).not.toContain('cannot read');
});
