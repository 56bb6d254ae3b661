// The load's customers: the seed's load-test accounts signed in over REST, with their user ids.
import { LOAD_TEST_PASSWORD, loadTestEmail } from '../../../dev/seed';
import type { Customer } from './fronts';

async function signIn(apiUrl: string, email: string): Promise<string> {
  const response = await fetch(`${apiUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: LOAD_TEST_PASSWORD }),
    signal: AbortSignal.timeout(30_000),
  });
  if (!response.ok)
    throw new Error(`login of ${email} answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

async function userIdOf(apiUrl: string, token: string): Promise<string> {
  const response = await fetch(`${apiUrl}/v1/users/me`, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(30_000),
  });
  if (!response.ok) throw new Error(`GET /v1/users/me answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { id: string }).id;
}

/**
 * Signs in `count` load-test accounts from number `firstAccount` on, a few at a time (each login is an argon2
 * verification).
 */
export async function signInCustomers(apiUrl: string, count: number, firstAccount = 1): Promise<Customer[]> {
  const customers: Customer[] = [];
  const end = firstAccount + count;
  for (let first = firstAccount; first < end; first += 4) {
    const batch = Array.from({ length: Math.min(4, end - first) }, (_, offset) =>
      loadTestEmail(first + offset),
    );
    customers.push(
      ...(await Promise.all(
        batch.map(async (email) => {
          const token = await signIn(apiUrl, email);
          return { email, token, userId: await userIdOf(apiUrl, token) };
        }),
      )),
    );
  }
  return customers;
}

/** Signs the customer in again (a token that expired during a long run), on whichever API answers. */
export function reSignInWith(apiUrls: readonly string[]): (customer: Customer) => Promise<void> {
  let next = 0;
  return async (customer) => {
    for (let attempt = 0; attempt < apiUrls.length * 2; attempt += 1) {
      const apiUrl = apiUrls[next++ % apiUrls.length];
      try {
        customer.token = await signIn(apiUrl, customer.email);
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  };
}
