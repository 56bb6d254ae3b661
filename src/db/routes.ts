// Which routes exist: checks for operations that name routes without reading them.
import type { Knex } from 'knex';

/** The ids among `routeIds` (lower-case UUIDs) that name a route, in no particular order. */
export async function existingRouteIds(database: Knex, routeIds: readonly string[]): Promise<string[]> {
  if (routeIds.length === 0) return [];
  const rows = await database<{ id: string }>('routes')
    .whereIn('id', [...routeIds])
    .select('id');
  return rows.map((row) => row.id);
}
