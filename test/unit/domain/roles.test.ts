// The role vocabulary: staff (agent, admin) act on any customer's resources, customers do not; unknown roles drop out.
import { isStaff, knownRoles } from '../../../src/domain/roles';

describe('isStaff', () => {
  it.each([
    [['agent'], true],
    [['admin'], true],
    [['customer', 'agent'], true],
    [['customer'], false],
    [['driver'], false],
    [[], false],
  ])('roles %j → %s', (roles, expected) => {
    expect(isStaff({ roles })).toBe(expected);
  });
});

describe('knownRoles', () => {
  it('keeps our roles in the standard order and drops anything else', () => {
    expect(knownRoles(['driver', 'admin', 'offline_access', 'customer', 42, 'agent'])).toEqual([
      'customer',
      'agent',
      'admin',
      'driver',
    ]);
  });

  it('is empty when no value names one of our roles', () => {
    expect(knownRoles(['uma_authorization', 'Customer'])).toEqual([]);
  });
});
