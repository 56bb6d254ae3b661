// The static migration list: ordered, uniquely named, each with up and down.
import { migrations } from '../../../migrations';

describe('migrations list', () => {
  it('is sorted by name with unique names and up/down functions', () => {
    const names = migrations.map((migration) => migration.name);
    expect(names.length).toBeGreaterThan(0);
    expect(new Set(names).size).toBe(names.length);
    expect([...names].sort()).toEqual(names);
    for (const { name, migration } of migrations) {
      expect(name).toMatch(/^\d{8}_\d{3}_[a-z0-9_]+$/);
      expect(typeof migration.up).toBe('function');
      expect(typeof migration.down).toBe('function');
    }
  });
});
