// Who may board where and when, the no-show deadline, each passenger's status, and what a no-show gets back.
import {
  alreadyBoarded,
  assertCanBoard,
  noShowDeadline,
  passengerBoardingStatus,
  passengersNotBoarded,
  withBoarding,
  type BoardingRequest,
} from '../../../src/domain/boarding';
import { DomainError } from '../../../src/domain/errors';
import { amountOwedByState, defaultRefundRule, noShowRefund } from '../../../src/domain/fares';
import { confirmedState, euros, firstPassengerId, secondPassengerId } from '../../support/booking-states';

function thrown(action: () => unknown): DomainError {
  try {
    action();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError');
}

const scan: BoardingRequest = {
  passengerId: firstPassengerId,
  stopCode: 'LIS',
  boardedAt: '2026-12-01T09:55:00.000Z',
  actorId: 'driver-1',
  deviceId: 'bus-17',
};

describe('assertCanBoard', () => {
  it("lets a confirmed booking's passenger board at the booking's boarding stop", () => {
    expect(() => assertCanBoard(confirmedState(), scan, 'LIS')).not.toThrow();
  });

  it('refuses a second boarding with ALREADY_BOARDED naming when and where the first was', () => {
    const boarded = withBoarding(confirmedState(), scan);
    const error = thrown(() => assertCanBoard(boarded, scan, 'LIS'));
    expect(error.code).toBe('ALREADY_BOARDED');
    expect(error.mapping.httpStatus).toBe(409);
    expect(error.details).toEqual({ passengerId: firstPassengerId, boardedAt: scan.boardedAt, stop: 'LIS' });
    expect(error.message).toBe(`The passenger already boarded at LIS at ${scan.boardedAt}`);
  });

  it('answers ALREADY_BOARDED even once the booking has completed', () => {
    const completed = { ...withBoarding(confirmedState(), scan), status: 'COMPLETED' as const };
    expect(thrown(() => assertCanBoard(completed, scan, 'LIS')).code).toBe('ALREADY_BOARDED');
  });

  it.each(['CANCELLED', 'PENDING_PAYMENT', 'EXPIRED', 'COMPLETED'] as const)(
    'refuses a %s booking with BOOKING_STATE_CONFLICT',
    (status) => {
      const error = thrown(() => assertCanBoard(confirmedState({ status }), scan, 'LIS'));
      expect(error.code).toBe('BOOKING_STATE_CONFLICT');
      expect(error.details).toEqual({ status, action: 'board' });
    },
  );

  it('says a cancelled booking was cancelled', () => {
    expect(thrown(() => assertCanBoard(confirmedState({ status: 'CANCELLED' }), scan, 'LIS')).message).toBe(
      'Cannot board a passenger of a booking in status CANCELLED: the booking was cancelled',
    );
  });

  it('refuses a passenger no longer on the booking', () => {
    const error = thrown(() =>
      assertCanBoard(
        confirmedState(),
        { ...scan, passengerId: '99999999-9999-4999-8999-999999999999' },
        'LIS',
      ),
    );
    expect(error.code).toBe('BOOKING_STATE_CONFLICT');
    expect(error.message).toContain('the passenger is no longer on the booking');
  });

  it('refuses a passenger already recorded as a no-show', () => {
    const closed = confirmedState({ noShowsRecordedAt: '2026-12-01T10:10:00.000Z' });
    expect(thrown(() => assertCanBoard(closed, scan, 'LIS')).message).toContain(
      'recorded as a no-show at 2026-12-01T10:10:00.000Z',
    );
  });

  it('refuses another stop, naming the field stop', () => {
    const error = thrown(() => assertCanBoard(confirmedState(), { ...scan, stopCode: 'POR' }, 'LIS'));
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.fieldViolations).toEqual([
      { field: 'stop', message: 'the passenger boards at LIS, not at POR' },
    ]);
  });

  it('leaves the stop to the caller for a booking made before segments', () => {
    expect(() => assertCanBoard(confirmedState(), { ...scan, stopCode: 'ANY' }, undefined)).not.toThrow();
  });
});

describe('boarding records and statuses', () => {
  it('records who boarded, when, where and from which device', () => {
    expect(withBoarding(confirmedState(), scan).boardings).toEqual([
      {
        passengerId: firstPassengerId,
        boardedAt: scan.boardedAt,
        stopCode: 'LIS',
        actorId: 'driver-1',
        deviceId: 'bus-17',
      },
    ]);
    const { deviceId: _deviceId, ...withoutDevice } = scan;
    expect(withBoarding(confirmedState(), withoutDevice).boardings?.[0]).not.toHaveProperty('deviceId');
  });

  it('closes boarding at the departure plus the grace period', () => {
    expect(noShowDeadline('2026-12-01T10:00:00.000Z', 10 * 60_000)).toBe('2026-12-01T10:10:00.000Z');
    expect(noShowDeadline('2026-12-01T10:00:00.000Z', 0)).toBe('2026-12-01T10:00:00.000Z');
  });

  it('closes boarding at the arrival when the segment ends before the grace period', () => {
    const departure = '2026-12-01T10:00:00.000Z';
    expect(noShowDeadline(departure, 10 * 60_000, '2026-12-01T10:05:00+00:00')).toBe(
      '2026-12-01T10:05:00.000Z',
    );
    expect(noShowDeadline(departure, 10 * 60_000, '2026-12-01T13:30:00.000Z')).toBe(
      '2026-12-01T10:10:00.000Z',
    );
  });

  it('lists the passengers not aboard', () => {
    const boarded = withBoarding(confirmedState(), scan);
    expect(passengersNotBoarded(boarded).map((passenger) => passenger.id)).toEqual([secondPassengerId]);
  });

  it('gives each passenger expected, boarded, no-show or cancelled', () => {
    const boarded = withBoarding(confirmedState(), scan);
    expect(passengerBoardingStatus(boarded, firstPassengerId)).toBe('BOARDED');
    expect(passengerBoardingStatus(boarded, secondPassengerId)).toBe('EXPECTED');
    const closed = { ...boarded, noShowsRecordedAt: '2026-12-01T10:10:00.000Z' };
    expect(passengerBoardingStatus(closed, firstPassengerId)).toBe('BOARDED');
    expect(passengerBoardingStatus(closed, secondPassengerId)).toBe('NO_SHOW');
    expect(passengerBoardingStatus({ ...closed, status: 'COMPLETED' }, secondPassengerId)).toBe('NO_SHOW');
    expect(passengerBoardingStatus({ ...boarded, status: 'CANCELLED' }, firstPassengerId)).toBe('CANCELLED');
    expect(passengerBoardingStatus(confirmedState({ status: 'EXPIRED' }), secondPassengerId)).toBe(
      'CANCELLED',
    );
  });

  it('builds ALREADY_BOARDED from a stored boarding alone', () => {
    expect(
      alreadyBoarded({ passengerId: firstPassengerId, boardedAt: scan.boardedAt, stopCode: 'LIS' }).details,
    ).toEqual({
      passengerId: firstPassengerId,
      boardedAt: scan.boardedAt,
      stop: 'LIS',
    });
  });
});

describe('noShowRefund', () => {
  it('gives nothing back under the standard rule', () => {
    expect(noShowRefund(confirmedState(), [firstPassengerId, secondPassengerId])).toEqual(euros(0));
  });

  it("gives a rule's no-show share of the no-shows' fares only", () => {
    const rule = { ...defaultRefundRule, noShowRefundPercent: 50 };
    expect(noShowRefund(confirmedState({ refundRule: rule }), [secondPassengerId])).toEqual(euros(1250));
    expect(noShowRefund(confirmedState({ refundRule: rule }), [])).toEqual(euros(0));
  });

  it('never gives back more than is still paid', () => {
    const rule = { ...defaultRefundRule, noShowRefundPercent: 100 };
    const mostlyRefunded = confirmedState({ refundRule: rule, amountRefunded: euros(4000) });
    expect(noShowRefund(mostlyRefunded, [firstPassengerId, secondPassengerId])).toEqual(euros(1000));
  });

  it('keeps invariant 2: a completed booking owes its price less what its no-shows got back', () => {
    const rule = { ...defaultRefundRule, noShowRefundPercent: 50 };
    const completed = withBoarding(
      confirmedState({
        status: 'COMPLETED',
        refundRule: rule,
        noShowsRecordedAt: '2026-12-01T10:10:00.000Z',
      }),
      scan,
    );
    expect(amountOwedByState(completed)).toEqual(euros(3750));
    expect(amountOwedByState({ ...completed, refundRule: defaultRefundRule })).toEqual(euros(5000));
    expect(amountOwedByState({ ...completed, noShowsRecordedAt: undefined })).toEqual(euros(5000));
  });
});
