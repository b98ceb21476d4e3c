import { type InstanceBody, Refusal } from '@heddle/protocol';

/** The instance body's `instance_id`, or an `invalid_request` refusal naming it when absent. */
export function requireInstanceId(body: InstanceBody, method: string): string {
  if (body.instance_id !== undefined) return body.instance_id;
  throw new Refusal('invalid_request', `${method} body.instance_id: required`, {
    authenticated: true,
    field: 'body.instance_id',
  });
}
