// The roles a caller can hold, and who may act on any customer's bookings and profile (staff) or only their own.
// A driver reads trips and scans tickets at boarding; a driver is not staff and reads no customer's booking.

/** Every role, in the order lists of roles are written. */
export const roles = ['customer', 'agent', 'admin', 'driver'] as const;
export type Role = (typeof roles)[number];

const staffRoles: readonly Role[] = ['agent', 'admin'];

export function isStaff(actor: { readonly roles: readonly string[] }): boolean {
  return actor.roles.some((role) => (staffRoles as readonly string[]).includes(role));
}

/** The roles among `values` (a token claim, a seed row) that are ours, in the standard order; others are dropped. */
export function knownRoles(values: readonly unknown[]): Role[] {
  return roles.filter((role) => values.includes(role));
}
