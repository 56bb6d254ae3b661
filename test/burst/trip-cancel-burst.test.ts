// A trip cancel raced by creates, payments and changes on a loaded machine: every answer says what was done.
import { expect } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { observe, type ObservedResponse } from '../support/rest-contract';
import { buildApp, createTokenIssuer, startServer, type RunningServer } from '../support/rest-app';
import { eventually } from '../support/outcomes';
import { startSagaEnvironment, type SagaEnvironment } from '../support/saga';
import type { Actor } from '../../src/domain/actor';
import { tripCancellationWorkflowId } from '../../src/workflows/trip-cancellation-shared';
import { bookingRequest, createTrip, restBookingBody, type TestTrip } from '../support/trips';
import { actorOf, insertUser, type TestUser } from '../support/users';

/** Runs of the burst (BURST_RUNS, 5 by default; CI runs one). */
const runs = Number(process.env.BURST_RUNS ?? '5');
const reason = 'The bus broke down';

jest.setTimeout(runs * 240_000);

let saga: SagaEnvironment;
let server: RunningServer;
let customer: TestUser;
let agent: Actor;
let tokens: { customer: string; agent: string };
let hog: ChildProcess | undefined;

beforeAll(async () => {
  saga = await startSagaEnvironment({ environment: { BOOKING_MAX_OPEN_HOLDS_PER_CUSTOMER: '500' } });
  const issuer = await createTokenIssuer();
  customer = await insertUser(saga.database, saga.cipher, { roles: ['customer'] });
  const agentUser = await insertUser(saga.database, saga.cipher, { roles: ['agent'] });
  agent = actorOf(agentUser);
  tokens = {
    customer: await issuer.issueToken({ userId: customer.id, roles: ['customer'] }),
    agent: await issuer.issueToken({ userId: agentUser.id, roles: ['agent'] }),
  };
  server = await startServer(
    buildApp({
      database: saga.database,
      cipher: saga.cipher,
      operationGuard: issuer.operationGuard,
      bookings: saga.application,
    }),
  );
  // A CPU hog beside the service: a busy loop that ends by itself after 20 minutes at the latest.
  hog = spawn(process.execPath, ['-e', 'const end = Date.now() + 1_200_000; while (Date.now() < end) {}'], {
    stdio: 'ignore',
  });
});

afterAll(async () => {
  hog?.kill('SIGKILL');
  await server?.close();
  await saga?.stop();
});

interface Answer {
  kind: 'create' | 'payment' | 'change' | 'cancel-trip';
  bookingId?: string;
  status: number;
  code?: string;
}

async function call(
  path: string,
  method: string,
  body: unknown,
  headers: Record<string, string>,
  token = tokens.customer,
): Promise<ObservedResponse> {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return observe(response);
}

function codeOf(response: ObservedResponse): string | undefined {
  return (response.body as { code?: string }).code;
}

interface RunFigures {
  run: number;
  answers: Record<string, number>;
  fiveHundredsThatTookEffect: number;
  chargesAfterMark: number;
  chargesKeptAfterMark: number;
  progress: { openAtStart: number; cancelled: number; alreadyEnded: number; failed: number };
  progressExact: boolean;
  otherReasons: number;
}

async function burst(run: number): Promise<RunFigures> {
  const trip: TestTrip = await createTrip(saga.database, { seatCount: 80 });
  const seats = trip.seatNumbers;
  const actor = actorOf(customer);
  // Twenty bookings to pay for and ten confirmed ones to change, made before the burst.
  const pending = [];
  for (const seat of seats.slice(0, 20))
    pending.push(await saga.application.createBooking(actor, bookingRequest(trip, [seat])));
  const confirmed = [];
  for (const seat of seats.slice(20, 30)) {
    const booking = await saga.application.createBooking(actor, bookingRequest(trip, [seat]));
    confirmed.push(await saga.application.confirmPayment(actor, booking.id, { paymentToken: 'tok_visa' }));
  }

  const keyOf = new Map<string, string>();
  const send = (answer: Omit<Answer, 'status' | 'code'>, work: Promise<ObservedResponse>): Promise<Answer> =>
    work.then((response) => ({ ...answer, status: response.status, code: codeOf(response) }));
  const payments = pending.map((booking) => {
    const key = randomUUID();
    keyOf.set(booking.id, key);
    return send(
      { kind: 'payment', bookingId: booking.id },
      call(
        `/v1/bookings/${booking.id}/payment`,
        'POST',
        { payment_token: 'tok_visa' },
        { 'idempotency-key': key },
      ),
    );
  });
  const changes = confirmed.map((booking, index) =>
    send(
      { kind: 'change', bookingId: booking.id },
      call(
        `/v1/bookings/${booking.id}`,
        'PATCH',
        { seat_changes: [{ passenger_id: booking.passengers[0].id, seat_number: seats[70 + index] }] },
        { 'idempotency-key': randomUUID(), 'if-match': '*' },
      ),
    ),
  );
  const creates = seats
    .slice(30, 70)
    .map((seat) =>
      send(
        { kind: 'create' },
        call('/v1/bookings', 'POST', restBookingBody(trip, seat), { 'idempotency-key': randomUUID() }),
      ),
    );
  const cancelKey = randomUUID();
  const cancelTrip = () =>
    call(
      `/v1/trips/${trip.tripId}/cancel`,
      'POST',
      { reason },
      { 'idempotency-key': cancelKey },
      tokens.agent,
    );
  const cancel = send({ kind: 'cancel-trip' }, cancelTrip());
  const answers = await Promise.all([cancel, ...payments, ...changes, ...creates]);

  // A cancel the service could not mark in time said so (503, nothing marked): the operator sends it again.
  let cancelAnswer = answers[0];
  while (cancelAnswer.status === 503) {
    const mark: { status: string } | undefined = await saga
      .database('trips')
      .where({ id: trip.tripId })
      .first('status');
    expect(mark?.status).not.toBe('CANCELLED');
    cancelAnswer = await send({ kind: 'cancel-trip' }, cancelTrip());
  }
  expect(cancelAnswer.status).toBe(202);

  // The cancellation finishes, then every command still running is asked again with its key for its outcome.
  await saga.client.workflow.getHandle(tripCancellationWorkflowId(trip.tripId)).result();
  const progress = await saga.application.getTripCancellation(agent, trip.tripId);
  expect(progress.status).toBe('FINISHED');

  // A payment that answered 202 is asked again with its key: the one outcome, never a second charge.
  const retries: Answer[] = [];
  for (const answer of answers) {
    if (answer.kind !== 'payment' || answer.status !== 202 || answer.bookingId === undefined) continue;
    const key = keyOf.get(answer.bookingId) ?? '';
    const again = await call(
      `/v1/bookings/${answer.bookingId}/payment`,
      'POST',
      { payment_token: 'tok_visa' },
      { 'idempotency-key': key },
    );
    retries.push({ kind: 'payment', bookingId: answer.bookingId, status: again.status, code: codeOf(again) });
  }
  expect(retries.filter((retry) => retry.status === 202 || retry.status >= 500)).toEqual([]);

  let fiveHundredsThatTookEffect = 0;
  for (const answer of answers) {
    if (answer.status < 500 || answer.bookingId === undefined) continue;
    const ledger = await saga
      .database('payments')
      .where({ booking_id: answer.bookingId })
      .count<{ count: string }[]>('id as count');
    const booking: { version: number } = await saga
      .database('bookings')
      .where({ id: answer.bookingId })
      .first('version');
    const original = [...pending, ...confirmed].find((item) => item.id === answer.bookingId);
    const tookEffect =
      answer.kind === 'payment'
        ? Number(ledger[0].count) > 0
        : // A change that took effect moved the booking beyond the trip's cancellation (two versions).
          booking.version > (original?.version ?? 0) + 1;
    if (tookEffect) fiveHundredsThatTookEffect += 1;
  }
  // Creates: every booking row of the trip is one a create answered 201 or 202 for, or made before the burst.
  const rows: { id: string; status: string; cancellation_reason: string | null }[] = await saga
    .database('bookings')
    .where({ trip_id: trip.tripId })
    .select('id', 'status', 'cancellation_reason');
  const acceptedCreates = answers.filter(
    (answer) => answer.kind === 'create' && (answer.status === 201 || answer.status === 202),
  ).length;
  expect(rows.length).toBeLessThanOrEqual(30 + acceptedCreates);

  const mark: { cancelled_at: Date } = await saga
    .database('trips')
    .where({ id: trip.tripId })
    .first('cancelled_at');
  // A payment whose check read the trip just before the mark may reach the gateway just after it: its booking's
  // seats are then refused and the charge refunded in full. Counted, and none may be kept.
  const chargesAfterMarkSql = `SELECT count(*) AS count,
      count(*) FILTER (WHERE c.status = 'APPROVED' AND c.refunded_minor < c.amount_minor) AS kept
    FROM payment_simulator.charges c
    JOIN bookings b ON c.idempotency_key LIKE b.id::text || ':%'
    WHERE b.trip_id = ? AND c.created_at > ?`;
  const readAfterMark = async () =>
    (
      await saga.database.raw<{ rows: { count: string; kept: string }[] }>(chargesAfterMarkSql, [
        trip.tripId,
        mark.cancelled_at,
      ])
    ).rows[0];
  // Refunds follow the refused seats: wait for them, and report what is still kept if they never come.
  const afterMark = await eventually(readAfterMark, (counts) => Number(counts.kept) === 0, {
    timeoutMs: 30_000,
  }).catch(readAfterMark);
  const chargesAfterMark = Number(afterMark.count);
  const chargesKeptAfterMark = Number(afterMark.kept);
  const { openAtStart, cancelled, alreadyEnded, failed } = progress.counts;
  const listed = Number(
    (
      await saga
        .database('trip_cancellation_bookings')
        .where({ trip_id: trip.tripId })
        .count<{ count: string }[]>('booking_id as count')
    )[0].count,
  );
  const progressExact =
    cancelled + alreadyEnded + failed === openAtStart &&
    openAtStart === listed &&
    failed === 0 &&
    progress.counts.remaining === 0;
  const open = rows.filter((row) => row.status === 'PENDING_PAYMENT' || row.status === 'CONFIRMED');
  expect(open).toEqual([]);
  const otherReasons = rows.filter(
    (row) => row.status === 'CANCELLED' && row.cancellation_reason !== reason,
  ).length;

  const count = (predicate: (answer: Answer) => boolean) => answers.filter(predicate).length;
  const answerCounts: Record<string, number> = {};
  for (const answer of [cancelAnswer, ...answers.slice(1), ...retries]) {
    const retried = retries.includes(answer) ? ' (repeated)' : '';
    const label = `${answer.kind}${retried} ${answer.status}${answer.code === undefined ? '' : ` ${answer.code}`}`;
    answerCounts[label] = (answerCounts[label] ?? 0) + 1;
  }
  expect(count((answer) => answer.status >= 500 && answer.status !== 503)).toBe(0);
  return {
    run,
    answers: answerCounts,
    fiveHundredsThatTookEffect,
    chargesAfterMark,
    chargesKeptAfterMark,
    progress: { openAtStart, cancelled, alreadyEnded, failed },
    progressExact,
    otherReasons,
  };
}

test(`a trip cancel raced by 40 creates, 20 payments and 10 changes beside a CPU hog, ${runs} times`, async () => {
  const figures: RunFigures[] = [];
  for (let run = 1; run <= runs; run += 1) {
    const result = await burst(run);
    process.stdout.write(`burst: ${JSON.stringify(result)}\n`);
    figures.push(result);
  }
  for (const result of figures) {
    expect({ run: result.run, fiveHundredsThatTookEffect: result.fiveHundredsThatTookEffect }).toEqual({
      run: result.run,
      fiveHundredsThatTookEffect: 0,
    });
    expect({ run: result.run, chargesKeptAfterMark: result.chargesKeptAfterMark }).toEqual({
      run: result.run,
      chargesKeptAfterMark: 0,
    });
    expect({ run: result.run, progressExact: result.progressExact }).toEqual({
      run: result.run,
      progressExact: true,
    });
    expect({ run: result.run, otherReasons: result.otherReasons }).toEqual({
      run: result.run,
      otherReasons: 0,
    });
  }
});
