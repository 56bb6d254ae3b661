// Fares: passenger types per route, discount codes, and each booking's redemption of a code.
import type { Knex } from 'knex';

// A route with no passenger_types rows sells the domain's default set (src/domain/passenger-types.ts), so no row is
// seeded and a change of the default reaches every such route at once; a route that sells its own set lists every
// type of it. Routes carry their operator by name only, so types are kept per route. A price is either a share of
// the fare class's price or an amount per leg of the booked segment, never both.
//
// A code's usages count its redemptions not given back: redeeming is one conditional UPDATE (usages < max_usages,
// inside its dates) with the redemption row in the same transaction, so the CHECK below is never what stops a
// redemption, only a guard against code that skips the condition. A redemption names its booking without a foreign
// key: it is made while the booking is being created, before its read-model row exists. Released redemptions keep
// their row (released_at set), so a booking gives its code back once and a repeated redemption is recognised.
const upSql = `
CREATE TABLE passenger_types (
  route_id uuid NOT NULL REFERENCES routes (id) ON DELETE CASCADE,
  code text NOT NULL CONSTRAINT passenger_types_code_format CHECK (code ~ '^[A-Z][A-Z0-9_]{1,19}$'),
  name text NOT NULL CONSTRAINT passenger_types_name_present CHECK (length(name) BETWEEN 1 AND 100),
  position integer NOT NULL CONSTRAINT passenger_types_position_positive CHECK (position >= 1),
  min_age integer NOT NULL CONSTRAINT passenger_types_min_age_valid CHECK (min_age >= 0),
  max_age integer NOT NULL,
  price_kind text NOT NULL CONSTRAINT passenger_types_price_kind_valid CHECK (price_kind IN ('share', 'per_segment')),
  price_percent integer CONSTRAINT passenger_types_price_percent_range CHECK (price_percent BETWEEN 0 AND 100),
  price_amount_minor bigint CONSTRAINT passenger_types_price_amount_non_negative CHECK (price_amount_minor >= 0),
  price_currency char(3) CONSTRAINT passenger_types_price_currency_format CHECK (price_currency ~ '^[A-Z]{3}$'),
  takes_seat boolean NOT NULL DEFAULT true,
  birth_date_required boolean NOT NULL DEFAULT false,
  requires_companion text[] NOT NULL DEFAULT '{}',
  PRIMARY KEY (route_id, code),
  CONSTRAINT passenger_types_position_unique UNIQUE (route_id, position),
  CONSTRAINT passenger_types_age_range CHECK (max_age >= min_age AND max_age <= 130),
  CONSTRAINT passenger_types_price_rule CHECK (
    (price_kind = 'share' AND price_percent IS NOT NULL AND price_amount_minor IS NULL AND price_currency IS NULL)
    OR (price_kind = 'per_segment' AND price_percent IS NULL AND price_amount_minor IS NOT NULL
        AND price_currency IS NOT NULL)
  )
);

CREATE TABLE discount_codes (
  code text PRIMARY KEY CONSTRAINT discount_codes_code_format CHECK (code ~ '^[A-Z0-9-]{4,32}$'),
  kind text NOT NULL CONSTRAINT discount_codes_kind_valid CHECK (kind IN ('amount', 'percent')),
  value bigint NOT NULL CONSTRAINT discount_codes_value_positive CHECK (value > 0),
  currency char(3) CONSTRAINT discount_codes_currency_format CHECK (currency ~ '^[A-Z]{3}$'),
  valid_from timestamptz NOT NULL,
  valid_until timestamptz NOT NULL,
  route_ids uuid[] NOT NULL DEFAULT '{}',
  max_usages integer NOT NULL CONSTRAINT discount_codes_max_usages_positive CHECK (max_usages >= 1),
  usages integer NOT NULL DEFAULT 0 CONSTRAINT discount_codes_usages_non_negative CHECK (usages >= 0),
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT discount_codes_usages_within_max CHECK (usages <= max_usages),
  CONSTRAINT discount_codes_dates_ordered CHECK (valid_until > valid_from),
  CONSTRAINT discount_codes_currency_of_amount CHECK ((kind = 'amount') = (currency IS NOT NULL)),
  CONSTRAINT discount_codes_percent_range CHECK (kind <> 'percent' OR value <= 100)
);

CREATE TABLE discount_redemptions (
  code text NOT NULL REFERENCES discount_codes (code),
  booking_id uuid NOT NULL,
  redeemed_at timestamptz NOT NULL,
  released_at timestamptz,
  PRIMARY KEY (code, booking_id)
);
CREATE INDEX discount_redemptions_booking_index ON discount_redemptions (booking_id);
`;

const downSql = `
DROP TABLE IF EXISTS discount_redemptions;
DROP TABLE IF EXISTS discount_codes;
DROP TABLE IF EXISTS passenger_types;
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(upSql);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(downSql);
}
