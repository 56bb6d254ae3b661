// The ticket signing keys: ES256, in the token keys' store under an issuer of their own, rotated the same way.
import type { Knex } from 'knex';
import type { FieldCipher } from '../security/field-encryption';
import { ticketIssuer, ticketSigningAlgorithm } from '../security/ticket-tokens';
import { createSigningKeyStore, type SigningKeyStore } from './signing-key-store';

export interface TicketKeyPolicy {
  /** Age at which the active ticket key is replaced on its next use. */
  readonly rotationIntervalSeconds: number;
  /**
   * The longest a ticket lives from its issue to its trip's arrival: a retired key stays in the ticket key set
   * that much longer, so no ticket it signed stops verifying.
   */
  readonly ticketLifetimeSeconds: number;
}

const day = 86_400;

export const defaultTicketKeyPolicy: TicketKeyPolicy = {
  rotationIntervalSeconds: 30 * day,
  ticketLifetimeSeconds: 400 * day,
};

export function createTicketKeyStore(options: {
  database: Knex;
  cipher: FieldCipher;
  policy?: TicketKeyPolicy;
  activeKeyCacheSeconds?: number;
}): SigningKeyStore {
  const policy = options.policy ?? defaultTicketKeyPolicy;
  return createSigningKeyStore({
    database: options.database,
    cipher: options.cipher,
    issuer: ticketIssuer,
    algorithm: ticketSigningAlgorithm,
    rotationIntervalSeconds: policy.rotationIntervalSeconds,
    signatureLifetimeSeconds: policy.ticketLifetimeSeconds,
    clockToleranceSeconds: 60,
    ...(options.activeKeyCacheSeconds !== undefined
      ? { activeKeyCacheSeconds: options.activeKeyCacheSeconds }
      : {}),
  });
}
