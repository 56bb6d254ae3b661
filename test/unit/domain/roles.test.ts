// Staff (agent, admin) act on any customer's resources; customers do not.
import { isStaff } from '../../../src/domain/roles';

describe('isStaff', () => {
  it.each([
    [['agent'], true],
    [['admin'], true],
    [['customer', 'agent'], true],
    [['customer'], false],
    [[], false],
  ])('roles %j → %s', (roles, expected) => {
    expect(isStaff({ roles })).toBe(expected);
  });
});
