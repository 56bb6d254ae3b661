// A request's query string as parameters: one string per name, a list for a name given more than once.
import { parse, type ParsedUrlQuery } from 'node:querystring';

/**
 * What Koa's `context.query` answers, parsed by node:querystring instead. Koa 3 builds it with URLSearchParams and
 * a `getAll` per name, a twentieth of a cached availability read's CPU; both decode `+` and percent escapes alike
 * and keep a malformed escape as written. The parameter count is capped as node:querystring does by default.
 */
export function queryParametersOf(context: { querystring: string }): ParsedUrlQuery {
  return parse(context.querystring);
}
