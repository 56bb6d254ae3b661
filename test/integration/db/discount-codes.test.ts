// Discount codes and passenger types in PostgreSQL: concurrent redemptions stop at the maximum, give-backs count once.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import {
  createDiscountCode,
  listDiscountCodes,
  readDiscountCode,
  readRedemption,
  redeemDiscountCode,
  releaseBookingDiscountCodes,
  releaseDiscountCode,
} from '../../../src/db/discount-codes';
import { readPassengerTypes, replacePassengerTypes } from '../../../src/db/passenger-types';
import type { DiscountCodeDraft } from '../../../src/domain/discount-codes';
import { DomainError } from '../../../src/domain/errors';
import { defaultPassengerTypes, type PassengerType } from '../../../src/domain/passenger-types';
import { openTestDatabase } from '../../support/database';
import { createTrip, type TestTrip } from '../../support/trips';

let database: Knex;
let trip: TestTrip;
const createdCodes: string[] = [];

beforeAll(async () => {
  database = openTestDatabase({ poolSize: 20, applicationName: 'discount-code-tests' });
  trip = await createTrip(database);
});

afterAll(async () => {
  if (createdCodes.length > 0) {
    await database('discount_redemptions').whereIn('code', createdCodes).delete();
    await database('discount_codes').whereIn('code', createdCodes).delete();
  }
  await trip?.remove();
  await database?.destroy();
});

const now = new Date();
const hour = 3_600_000;

async function newCode(overrides: Partial<DiscountCodeDraft> = {}): Promise<string> {
  const code = overrides.code ?? `IT-${randomBytes(6).toString('hex').toUpperCase()}`;
  createdCodes.push(code);
  await createDiscountCode(
    database,
    {
      kind: 'percent',
      value: 10,
      validFrom: new Date(now.getTime() - hour).toISOString(),
      validUntil: new Date(now.getTime() + 24 * hour).toISOString(),
      routeIds: [],
      maxUsages: 10,
      ...overrides,
      code,
    },
    'agent-1',
  );
  return code;
}

async function usagesOf(code: string): Promise<number> {
  return (await readDiscountCode(database, code))!.usages;
}

async function refusal(promise: Promise<unknown>): Promise<DomainError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError');
}

describe('redeemDiscountCode', () => {
  it('redeems a code of at most 10 usages exactly 10 times out of 50 concurrent bookings', async () => {
    const code = await newCode({ maxUsages: 10 });
    const bookingIds = Array.from({ length: 50 }, () => randomUUID());
    const outcomes = await Promise.allSettled(
      bookingIds.map((bookingId) =>
        redeemDiscountCode(database, code, bookingId, now, { routeId: trip.routeId }),
      ),
    );
    const redeemed = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    const refused = outcomes.flatMap((outcome) =>
      outcome.status === 'rejected' ? [outcome.reason as unknown] : [],
    );
    expect(redeemed).toHaveLength(10);
    expect(refused).toHaveLength(40);
    for (const reason of refused) {
      expect(reason).toBeInstanceOf(DomainError);
      expect((reason as DomainError).code).toBe('DISCOUNT_CODE_INVALID');
      expect((reason as DomainError).details.reason).toBe('used_up');
    }
    expect(await usagesOf(code)).toBe(10);
    expect(
      await database('discount_redemptions').where({ code }).whereNull('released_at').count({ count: '*' }),
    ).toEqual([{ count: 10 }]);
  });

  it('counts a booking once, however often and however concurrently it redeems', async () => {
    const code = await newCode({ maxUsages: 3 });
    const bookingId = randomUUID();
    const first = await redeemDiscountCode(database, code.toLowerCase(), bookingId, now);
    expect(first.newlyRedeemed).toBe(true);
    expect(first.code.usages).toBe(1);
    const again = await redeemDiscountCode(database, code, bookingId, now);
    expect(again).toMatchObject({ newlyRedeemed: false, code: { usages: 1 } });

    const racing = randomUUID();
    const outcomes = await Promise.all(
      Array.from({ length: 10 }, () => redeemDiscountCode(database, code, racing, now)),
    );
    expect(outcomes.filter((outcome) => outcome.newlyRedeemed)).toHaveLength(1);
    expect(await usagesOf(code)).toBe(2);
  });

  it('repeats a redemption of a code used up since, without counting it', async () => {
    const code = await newCode({ maxUsages: 1 });
    const bookingId = randomUUID();
    await redeemDiscountCode(database, code, bookingId, now);
    expect((await refusal(redeemDiscountCode(database, code, randomUUID(), now))).details.reason).toBe(
      'used_up',
    );
    expect(await redeemDiscountCode(database, code, bookingId, now)).toMatchObject({ newlyRedeemed: false });
    expect(await usagesOf(code)).toBe(1);
  });

  it('says why a code cannot be redeemed, and counts nothing', async () => {
    const otherRoute = randomUUID();
    const code = await newCode({ routeIds: [trip.routeId] });
    const amount = await newCode({ kind: 'amount', value: 500, currency: 'EUR' });
    const reasonOf = async (promise: Promise<unknown>) => (await refusal(promise)).details.reason;
    expect(await reasonOf(redeemDiscountCode(database, 'NO-SUCH-CODE', randomUUID(), now))).toBe('unknown');
    expect(await reasonOf(redeemDiscountCode(database, 'x', randomUUID(), now))).toBe('unknown');
    expect(
      await reasonOf(redeemDiscountCode(database, code, randomUUID(), new Date(now.getTime() - 2 * hour))),
    ).toBe('not_yet_valid');
    expect(
      await reasonOf(redeemDiscountCode(database, code, randomUUID(), new Date(now.getTime() + 24 * hour))),
    ).toBe('expired');
    expect(
      await reasonOf(redeemDiscountCode(database, code, randomUUID(), now, { routeId: otherRoute })),
    ).toBe('wrong_route');
    expect(await reasonOf(redeemDiscountCode(database, amount, randomUUID(), now, { currency: 'GBP' }))).toBe(
      'wrong_currency',
    );
    expect(await usagesOf(code)).toBe(0);
    expect(await usagesOf(amount)).toBe(0);
    expect(
      await database('discount_redemptions').whereIn('code', [code, amount]).count({ count: '*' }),
    ).toEqual([{ count: 0 }]);
    await expect(
      redeemDiscountCode(database, code, randomUUID(), now, { routeId: trip.routeId, currency: 'GBP' }),
    ).resolves.toMatchObject({ newlyRedeemed: true });
  });
});

describe('releaseDiscountCode', () => {
  it('gives a usage back exactly once, and the booking cannot redeem it again', async () => {
    const code = await newCode({ maxUsages: 2 });
    const [first, second, third] = [randomUUID(), randomUUID(), randomUUID()];
    await redeemDiscountCode(database, code, first, now);
    await redeemDiscountCode(database, code, second, now);
    expect((await refusal(redeemDiscountCode(database, code, third, now))).details.reason).toBe('used_up');

    const releases = await Promise.all(
      Array.from({ length: 5 }, () => releaseDiscountCode(database, code, first)),
    );
    expect(releases.filter(Boolean)).toHaveLength(1);
    expect(await usagesOf(code)).toBe(1);
    expect(await releaseDiscountCode(database, code, first)).toBe(false);
    expect(await usagesOf(code)).toBe(1);
    expect((await readRedemption(database, code, first))?.releasedAt).toEqual(expect.any(String));

    const again = await refusal(redeemDiscountCode(database, code, first, now));
    expect(again.details.reason).toBe('released');
    expect(await redeemDiscountCode(database, code, third, now)).toMatchObject({ newlyRedeemed: true });
    expect(await usagesOf(code)).toBe(2);
  });

  it('gives nothing back for a booking that never redeemed the code', async () => {
    const code = await newCode();
    await redeemDiscountCode(database, code, randomUUID(), now);
    expect(await releaseDiscountCode(database, code, randomUUID())).toBe(false);
    expect(await usagesOf(code)).toBe(1);
  });

  it('gives back every code of a booking once when it ends', async () => {
    const [first, second] = [await newCode(), await newCode()];
    const bookingId = randomUUID();
    await redeemDiscountCode(database, first, bookingId, now);
    await redeemDiscountCode(database, second, bookingId, now);
    const at = new Date(now.getTime() + hour);
    expect(await releaseBookingDiscountCodes(database, bookingId, at)).toEqual([first, second].sort());
    expect(await releaseBookingDiscountCodes(database, bookingId, at)).toEqual([]);
    expect([await usagesOf(first), await usagesOf(second)]).toEqual([0, 0]);
    expect((await readRedemption(database, first, bookingId))?.releasedAt).toBe(at.toISOString());
  });
});

describe('discount codes as stored', () => {
  it('reads a code back as created, in any case', async () => {
    const code = await newCode({ kind: 'amount', value: 750, currency: 'EUR', routeIds: [trip.routeId] });
    expect(await readDiscountCode(database, ` ${code.toLowerCase()} `)).toEqual({
      code,
      kind: 'amount',
      value: 750,
      currency: 'EUR',
      validFrom: new Date(now.getTime() - hour).toISOString(),
      validUntil: new Date(now.getTime() + 24 * hour).toISOString(),
      routeIds: [trip.routeId],
      maxUsages: 10,
      usages: 0,
      createdBy: 'agent-1',
      createdAt: expect.any(String) as string,
    });
    expect(await readDiscountCode(database, 'NONE-SUCH')).toBeUndefined();
  });

  it('refuses a code that exists already, by field', async () => {
    const code = await newCode();
    const error = await refusal(newCode({ code }));
    expect(error.fieldViolations).toEqual([{ field: 'code', message: `the code ${code} exists already` }]);
  });

  it('never stores more usages than the maximum, or a percent over 100', async () => {
    const code = await newCode({ maxUsages: 1 });
    await expect(database('discount_codes').where({ code }).update({ usages: 2 })).rejects.toMatchObject({
      constraint: 'discount_codes_usages_within_max',
    });
    await expect(database('discount_codes').where({ code }).update({ value: 101 })).rejects.toMatchObject({
      constraint: 'discount_codes_percent_range',
    });
  });

  it('lists codes in code order, page by page', async () => {
    const prefix = `IT-LIST-${randomBytes(3).toString('hex').toUpperCase()}`;
    const codes = [`${prefix}-A`, `${prefix}-B`, `${prefix}-C`];
    for (const code of codes) await newCode({ code });
    const seen: string[] = [];
    let pageToken: string | undefined;
    do {
      const page = await listDiscountCodes(database, { pageSize: 100, ...(pageToken ? { pageToken } : {}) });
      seen.push(...page.codes.map((stored) => stored.code));
      pageToken = page.nextPageToken;
    } while (pageToken !== undefined);
    expect(seen.filter((code) => code.startsWith(prefix))).toEqual(codes);
    expect([...seen].sort()).toEqual(seen);
    const firstPage = await listDiscountCodes(database, { pageSize: 1 });
    expect(firstPage.codes).toHaveLength(1);
    expect(firstPage.nextPageToken).toEqual(expect.any(String));
  });
});

describe('passenger types as stored', () => {
  it('gives a route without types of its own the default set, and its own set once it has one', async () => {
    expect(await readPassengerTypes(database, trip.routeId)).toBe(defaultPassengerTypes);
    const own: PassengerType[] = [
      { ...defaultPassengerTypes[3], name: 'Adult', requiresCompanion: undefined },
      {
        code: 'DOG',
        name: 'Dog',
        minAge: 0,
        maxAge: 30,
        priceRule: { kind: 'per_segment', amount: { amountMinor: 300, currency: 'EUR' } },
        takesSeat: false,
        birthDateRequired: false,
        requiresCompanion: ['ADULT'],
      },
    ];
    await replacePassengerTypes(database, trip.routeId, own);
    expect(await readPassengerTypes(database, trip.routeId)).toEqual([
      {
        code: 'ADULT',
        name: 'Adult',
        minAge: 26,
        maxAge: 99,
        priceRule: { kind: 'share', percent: 100 },
        takesSeat: true,
        birthDateRequired: false,
      },
      own[1],
    ]);
    await replacePassengerTypes(database, trip.routeId, []);
    expect(await readPassengerTypes(database, trip.routeId)).toBe(defaultPassengerTypes);
  });

  it('refuses a broken set before writing anything', async () => {
    await expect(
      replacePassengerTypes(database, trip.routeId, [
        { ...defaultPassengerTypes[0], requiresCompanion: ['NOBODY'] },
      ]),
    ).rejects.toMatchObject({ code: 'INTERNAL' });
    expect(await readPassengerTypes(database, trip.routeId)).toBe(defaultPassengerTypes);
  });
});
