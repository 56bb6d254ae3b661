// The simulator's ledger rules, enforced by PostgreSQL itself: one charge per key, refunds within the captured amount.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { createPaymentGatewaySimulator } from '../../../src/adapters/payment-gateway-simulator';
import {
  createPaymentSimulatorLedger,
  simulatorLedgerTables,
} from '../../../src/db/payment-simulator-ledger';
import {
  IdempotencyKeyConflictError,
  PaymentNotFoundError,
  RefundRejectedError,
  type PaymentGateway,
} from '../../../src/ports/payment-gateway';
import { openTestDatabase } from '../../support/database';
import type { SimulatorChargeRow } from '../../support/booking-records';

let database: Knex;
let gateway: PaymentGateway;
const keyPrefix = `simulator-test-${randomUUID()}`;
const euros = (amountMinor: number) => ({ amountMinor, currency: 'EUR' });

function key(name: string): string {
  return `${keyPrefix}:${name}`;
}

async function approvedCharge(name: string, amountMinor = 2590): Promise<string> {
  const result = await gateway.charge({
    idempotencyKey: key(name),
    amount: euros(amountMinor),
    paymentToken: 'tok_visa',
    description: 'simulator test',
  });
  if (result.status !== 'approved') throw new Error('expected an approval');
  return result.transactionId;
}

beforeAll(() => {
  database = openTestDatabase({ poolSize: 8, applicationName: 'payment-simulator-tests' });
  gateway = createPaymentGatewaySimulator(createPaymentSimulatorLedger(database));
});

afterAll(async () => {
  if (!database) return;
  const charges = database(simulatorLedgerTables.charges).where('idempotency_key', 'like', `${keyPrefix}%`);
  await database(simulatorLedgerTables.refunds).whereIn('charge_id', charges.clone().select('id')).delete();
  await charges.delete();
  await database(simulatorLedgerTables.transientFailures)
    .where('idempotency_key', 'like', `${keyPrefix}%`)
    .delete();
  await database.destroy();
});

describe('payment gateway simulator ledger', () => {
  it('has a unique index that refuses a second charge row for one idempotency key', async () => {
    await approvedCharge('unique');
    const [row] = await database<SimulatorChargeRow>(simulatorLedgerTables.charges).where({
      idempotency_key: key('unique'),
    });
    const { id: _id, transaction_id: _transactionId, ...copy } = row;
    await expect(
      database(simulatorLedgerTables.charges).insert({ ...copy, transaction_id: `ch_copy_${randomUUID()}` }),
    ).rejects.toMatchObject({ code: '23505', constraint: 'charges_idempotency_key_unique' });
  });

  it('has a check that refuses refunding more than was captured', async () => {
    const transactionId = await approvedCharge('check', 1000);
    await expect(
      database(simulatorLedgerTables.charges)
        .where({ transaction_id: transactionId })
        .update({ refunded_minor: 1001 }),
    ).rejects.toMatchObject({ code: '23514', constraint: 'charges_refunded_within_amount' });
  });

  it('serialises concurrent refunds of one charge so together they never exceed it', async () => {
    const transactionId = await approvedCharge('concurrent-refunds');
    const outcomes = await Promise.allSettled(
      [1, 2, 3].map((index) =>
        gateway.refund({ idempotencyKey: key(`refund-${index}`), transactionId, amount: euros(1000) }),
      ),
    );
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(2);
    const [rejected] = outcomes.flatMap((outcome): unknown[] =>
      outcome.status === 'rejected' ? [outcome.reason] : [],
    );
    expect(rejected).toBeInstanceOf(RefundRejectedError);
    const [charge] = await database<SimulatorChargeRow>(simulatorLedgerTables.charges).where({
      transaction_id: transactionId,
    });
    expect(charge.refunded_minor).toBe(2000);
  });

  it('replays a refund by key, and refuses the key for another refund, a declined charge or another currency', async () => {
    const transactionId = await approvedCharge('replay');
    const first = await gateway.refund({
      idempotencyKey: key('replay-refund'),
      transactionId,
      amount: euros(500),
    });
    await expect(
      gateway.refund({ idempotencyKey: key('replay-refund'), transactionId, amount: euros(500) }),
    ).resolves.toEqual(first);
    await expect(
      gateway.refund({ idempotencyKey: key('replay-refund'), transactionId, amount: euros(600) }),
    ).rejects.toBeInstanceOf(IdempotencyKeyConflictError);
    await expect(
      gateway.refund({
        idempotencyKey: key('replay-usd'),
        transactionId,
        amount: { amountMinor: 100, currency: 'USD' },
      }),
    ).rejects.toBeInstanceOf(RefundRejectedError);

    const declined = await gateway.charge({
      idempotencyKey: key('declined'),
      amount: euros(100),
      paymentToken: 'tok_chargeDeclined',
      description: 'simulator test',
    });
    expect(declined).toEqual({ status: 'declined', reason: 'card_declined' });
    const [declinedRow] = await database<SimulatorChargeRow>(simulatorLedgerTables.charges).where({
      idempotency_key: key('declined'),
    });
    await expect(
      gateway.refund({
        idempotencyKey: key('declined-refund'),
        transactionId: declinedRow.transaction_id,
        amount: euros(100),
      }),
    ).rejects.toBeInstanceOf(RefundRejectedError);
  });

  it('leaves no payment open: an opted-in charge ends at once, and a look or a cancel answers its outcome', async () => {
    const answer = await gateway.charge({
      idempotencyKey: key('open'),
      amount: euros(2590),
      paymentToken: 'tok_visa',
      description: 'simulator test',
      allowAction: true,
    });
    expect(answer).toEqual({
      status: 'approved',
      transactionId: expect.stringMatching(/^ch_sim_/) as unknown,
      methodMasked: 'visa •••• 4242',
    });
    if (answer.status !== 'approved') throw new Error('expected an approval');
    await expect(gateway.paymentIntent(answer.transactionId)).resolves.toEqual(answer);
    await expect(gateway.cancelPayment(answer.transactionId, key('open-cancel'))).resolves.toEqual(answer);
    await expect(gateway.paymentIntent('ch_sim_nobody')).rejects.toBeInstanceOf(PaymentNotFoundError);
  });

  it('lists its recent charges and refunds for the reconciliation, the booking id taken from the key', async () => {
    const since = new Date(Date.now() - 1000);
    const bookingId = randomUUID();
    const paid = await gateway.charge({
      idempotencyKey: `${bookingId}:process-payment:1`,
      amount: euros(2500),
      paymentToken: 'tok_visa',
      description: 'simulator test',
    });
    if (paid.status !== 'approved') throw new Error('expected an approval');
    await gateway.charge({
      idempotencyKey: `${bookingId}:process-payment:2`,
      amount: euros(2500),
      paymentToken: 'tok_chargeDeclined',
      description: 'simulator test',
    });
    const { refundId } = await gateway.refund({
      idempotencyKey: `${bookingId}:refund-payment:1`,
      transactionId: paid.transactionId,
      amount: euros(500),
    });
    try {
      const recent = await gateway.recentPayments(since);
      expect(recent.intents.filter((intent) => intent.bookingId === bookingId)).toEqual([
        {
          intentId: paid.transactionId,
          bookingId,
          idempotencyKey: `${bookingId}:process-payment:1`,
          status: 'succeeded',
          amount: euros(2500),
          createdAt: expect.any(Number) as unknown,
        },
        {
          intentId: expect.stringMatching(/^ch_sim_/) as unknown,
          bookingId,
          idempotencyKey: `${bookingId}:process-payment:2`,
          status: 'failed',
          amount: euros(2500),
          failureReason: 'card_declined',
          createdAt: expect.any(Number) as unknown,
        },
      ]);
      expect(recent.refunds.filter((refund) => refund.bookingId === bookingId)).toEqual([
        {
          refundId,
          intentId: paid.transactionId,
          bookingId,
          status: 'succeeded',
          amount: euros(500),
          createdAt: expect.any(Number) as unknown,
        },
      ]);
      expect((await gateway.recentPayments(new Date(Date.now() + 60_000))).intents).toEqual([]);
    } finally {
      const charges = database(simulatorLedgerTables.charges).where(
        'idempotency_key',
        'like',
        `${bookingId}:%`,
      );
      await database(simulatorLedgerTables.refunds)
        .whereIn('charge_id', charges.clone().select('id'))
        .delete();
      await charges.delete();
    }
  });
});
