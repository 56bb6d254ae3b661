// The payment-gateway simulator's own ledger, in its own schema as a real processor's data would be elsewhere.
import type { Knex } from 'knex';

// Idempotency is enforced by unique indexes, not only by code: two concurrent charges with one key can insert
// only one row, and a refund that would exceed the captured amount violates charges_refunded_within_amount.
const upSql = `
CREATE SCHEMA payment_simulator;

CREATE TABLE payment_simulator.charges (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  transaction_id text NOT NULL CONSTRAINT charges_transaction_id_unique UNIQUE,
  idempotency_key text NOT NULL CONSTRAINT charges_idempotency_key_unique UNIQUE,
  amount_minor bigint NOT NULL CONSTRAINT charges_amount_positive CHECK (amount_minor > 0),
  currency char(3) NOT NULL CONSTRAINT charges_currency_format CHECK (currency ~ '^[A-Z]{3}$'),
  -- Card data is limited to the token and what may be printed on a receipt: brand and last four digits.
  payment_token text NOT NULL,
  card_brand text,
  card_last4 text CONSTRAINT charges_card_last4_format CHECK (card_last4 ~ '^[0-9]{4}$'),
  description text NOT NULL,
  status text NOT NULL CONSTRAINT charges_status_valid CHECK (status IN ('APPROVED', 'DECLINED')),
  decline_reason text,
  refunded_minor bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT charges_decline_has_reason CHECK ((status = 'DECLINED') = (decline_reason IS NOT NULL)),
  CONSTRAINT charges_refunded_within_amount CHECK (
    refunded_minor >= 0 AND refunded_minor <= amount_minor AND (status = 'APPROVED' OR refunded_minor = 0)
  )
);

CREATE TABLE payment_simulator.refunds (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  refund_id text NOT NULL CONSTRAINT refunds_refund_id_unique UNIQUE,
  idempotency_key text NOT NULL CONSTRAINT refunds_idempotency_key_unique UNIQUE,
  charge_id uuid NOT NULL REFERENCES payment_simulator.charges (id),
  amount_minor bigint NOT NULL CONSTRAINT refunds_amount_positive CHECK (amount_minor > 0),
  currency char(3) NOT NULL CONSTRAINT refunds_currency_format CHECK (currency ~ '^[A-Z]{3}$'),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX refunds_charge_index ON payment_simulator.refunds (charge_id);

-- The "fail once, then succeed" test tokens remember their first attempt per idempotency key here.
CREATE TABLE payment_simulator.transient_failures (
  idempotency_key text PRIMARY KEY,
  failure text NOT NULL CONSTRAINT transient_failures_failure_valid CHECK (failure IN ('TIMEOUT', 'UNAVAILABLE')),
  created_at timestamptz NOT NULL DEFAULT now()
);
`;

const downSql = `DROP SCHEMA IF EXISTS payment_simulator CASCADE;`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(upSql);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(downSql);
}
