// One normalization for email addresses, shared by the seed, signup and login, so the blind index always matches.
import type { FieldCipher } from '../security/field-encryption';

export function normalizeEmail(email: string): string {
  return email.normalize('NFC').trim().toLowerCase();
}

/** The value stored in users.email_lookup: the keyed blind index of the normalized address. */
export function emailLookup(cipher: FieldCipher, email: string): string {
  return cipher.blindIndex(normalizeEmail(email));
}
