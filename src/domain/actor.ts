// The authenticated caller every application call and authorization check is made for.
import type { Role } from './roles';

/** Always taken from a verified token, never from a request body. */
export interface Actor {
  userId: string;
  roles: readonly Role[];
  scopes: readonly string[];
}
