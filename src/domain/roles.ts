// Who may act on any customer's bookings and profile: staff roles do, customers only on their own.

export const staffRoles = ['agent', 'admin'] as const;

export function isStaff(actor: { readonly roles: readonly string[] }): boolean {
  return actor.roles.some((role) => (staffRoles as readonly string[]).includes(role));
}
