// Password checks with argon2id: the same work for unknown accounts, so timing does not reveal which emails exist.
import { randomBytes } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';

export interface PasswordVerifier {
  /** True only for a stored hash that matches; an unknown account (no hash) still costs one full verification. */
  matches(storedHash: string | undefined, password: string): Promise<boolean>;
}

export async function createPasswordVerifier(): Promise<PasswordVerifier> {
  // Same library defaults as the stored hashes (argon2id), so a dummy verification takes as long as a real one.
  const dummyHash = await hash(randomBytes(32).toString('base64'));
  return {
    async matches(storedHash, password) {
      try {
        const matched = await verify(storedHash ?? dummyHash, password);
        return storedHash !== undefined && matched;
      } catch {
        // A hash the library cannot read is a failed login, not a server error that would single the account out.
        return false;
      }
    },
  };
}
