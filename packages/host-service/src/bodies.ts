import { COG_ROUTES, type CogRoute } from '@heddle/package';
import { type InstanceBody, Refusal } from '@heddle/protocol';

const ROUTES: ReadonlySet<string> = new Set(COG_ROUTES);
const isRoute = (s: string): s is CogRoute => ROUTES.has(s);

/** The route of a variant name (`x86_64-native` to `native`), or undefined when it names no route. */
export function routeOfVariant(variant: string): CogRoute | undefined {
  const dash = variant.lastIndexOf('-');
  if (dash <= 0) return undefined;
  const route = variant.slice(dash + 1);
  return isRoute(route) ? route : undefined;
}

/** The instance body's `instance_id`, or an `invalid_request` refusal naming it when absent. */
export function requireInstanceId(body: InstanceBody, method: string): string {
  if (body.instance_id !== undefined) return body.instance_id;
  throw new Refusal('invalid_request', `${method} body.instance_id: required`, {
    authenticated: true,
    field: 'body.instance_id',
  });
}
