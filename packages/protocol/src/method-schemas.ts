/**
 * Every control method's body and answer as one schema, imported by both sides: the host parses each
 * body with {@link parseRequestBody}, the controller builds bodies of type {@link MethodBodyInput} and
 * parses each `ok` result with {@link parseAnswer}.
 */
import type { z } from 'zod';
import {
  type DescribeAnswer,
  DescribeAnswerSchema,
  type DescribeBody,
  DescribeBodySchema,
} from './describe-schemas.js';
import {
  HostListingAnswerSchema,
  type InstanceBody,
  InstanceBodySchema,
  InstanceStatusAnswerSchema,
  type LogsAnswer,
  LogsAnswerSchema,
  type StartAnswer,
  StartAnswerSchema,
  type StatusAnswer,
  type StopAnswer,
  StopAnswerSchema,
  type UnloadAnswer,
  UnloadAnswerSchema,
} from './instance-schemas.js';
import type { CtlMethod } from './methods.js';
import {
  type PlaceAnswer,
  PlaceAnswerSchema,
  type PlaceBody,
  type PlaceBodyInput,
  PlaceBodySchema,
} from './place-schemas.js';
import { ProtocolError } from './protocol-error.js';
import { Refusal } from './refusal.js';
import {
  type RevokeAnswer,
  RevokeAnswerSchema,
  type RevokeBody,
  RevokeBodySchema,
} from './revoke-schemas.js';

/** Each method's body as the host reads it (defaults applied). */
export type MethodBodies = {
  readonly 'workload.describe': DescribeBody;
  readonly 'workload.place': PlaceBody;
  readonly 'workload.load': PlaceBody;
  readonly 'workload.start': InstanceBody;
  readonly 'workload.stop': InstanceBody;
  readonly 'workload.unload': InstanceBody;
  readonly 'workload.status': InstanceBody;
  readonly 'workload.logs': InstanceBody;
  readonly 'workload.revoke': RevokeBody;
};

/** Each method's body as a controller may send it (fields with defaults optional). */
export type MethodBodyInputs = {
  readonly [M in CtlMethod]: M extends 'workload.place' | 'workload.load' ? PlaceBodyInput : MethodBodies[M];
};

/** Each method's answer (the `result` of an `ok` outcome). */
export type MethodAnswers = {
  readonly 'workload.describe': DescribeAnswer;
  readonly 'workload.place': PlaceAnswer;
  readonly 'workload.load': PlaceAnswer;
  readonly 'workload.start': StartAnswer;
  readonly 'workload.stop': StopAnswer;
  readonly 'workload.unload': UnloadAnswer;
  readonly 'workload.status': StatusAnswer;
  readonly 'workload.logs': LogsAnswer;
  readonly 'workload.revoke': RevokeAnswer;
};

/** The body of `M` as the host reads it. */
export type MethodBody<M extends CtlMethod> = MethodBodies[M];
/** The body of `M` as a controller builds it. */
export type MethodBodyInput<M extends CtlMethod> = MethodBodyInputs[M];
/** The answer of `M`. */
export type MethodAnswer<M extends CtlMethod> = MethodAnswers[M];

/** The body schema of each method. */
export type MethodBodySchemas = {
  readonly [M in CtlMethod]: z.ZodType<MethodBodies[M]>;
};

/** The body schema of every method (`workload.status` answers with one of two schemas, see {@link answerSchema}). */
export const METHOD_BODY_SCHEMAS: MethodBodySchemas = Object.freeze({
  'workload.describe': DescribeBodySchema,
  'workload.place': PlaceBodySchema,
  'workload.load': PlaceBodySchema,
  'workload.start': InstanceBodySchema,
  'workload.stop': InstanceBodySchema,
  'workload.unload': InstanceBodySchema,
  'workload.status': InstanceBodySchema,
  'workload.logs': InstanceBodySchema,
  'workload.revoke': RevokeBodySchema,
});

/**
 * The schema of the answer to `method` called with `body`: for `workload.status`, the one-instance
 * answer when the body names an instance, the listing otherwise.
 */
export function answerSchema<M extends CtlMethod>(method: M, body?: unknown): z.ZodType<MethodAnswers[M]> {
  const schemas: { readonly [K in CtlMethod]: z.ZodType<MethodAnswers[K]> } = {
    'workload.describe': DescribeAnswerSchema,
    'workload.place': PlaceAnswerSchema,
    'workload.load': PlaceAnswerSchema,
    'workload.start': StartAnswerSchema,
    'workload.stop': StopAnswerSchema,
    'workload.unload': UnloadAnswerSchema,
    'workload.status': namesInstance(body) ? InstanceStatusAnswerSchema : HostListingAnswerSchema,
    'workload.logs': LogsAnswerSchema,
    'workload.revoke': RevokeAnswerSchema,
  };
  return schemas[method];
}

function namesInstance(body: unknown): boolean {
  return typeof body === 'object' && body !== null && 'instance_id' in body && body.instance_id !== undefined;
}

/** The first issue of a zod error as a dotted field under `prefix` (an unknown key is named itself). */
export function issueField(error: z.ZodError, prefix: string): { field: string; message: string } {
  const issue = error.issues[0];
  if (issue === undefined) return { field: prefix, message: 'invalid' };
  const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0] ?? ''] : issue.path;
  const field = [prefix, ...path.map(String)].join('.');
  const message = issue.code === 'unrecognized_keys' ? 'unknown field' : issue.message;
  return { field, message };
}

/**
 * The host's side: parses a verified request's body with its method's schema. Refuses with
 * `invalid_request` (authenticated: the request itself was verified), the field named `body.<path>`
 * and the reason `<method> body.<path>: <what was expected>`.
 */
export function parseRequestBody<M extends CtlMethod>(method: M, body: unknown): MethodBodies[M] {
  const r = METHOD_BODY_SCHEMAS[method].safeParse(body);
  if (r.success) return r.data;
  const { field, message } = issueField(r.error, 'body');
  throw new Refusal('invalid_request', `${method} ${field}: ${message}`, { authenticated: true, field });
}

/**
 * The controller's side: parses the `result` of a verified `ok` answer to `method` (called with
 * `body`) with the method's answer schema. Throws {@link ProtocolError} `invalid_answer`, the field
 * named `result.<path>`, when it does not fit; fields the schema does not know are dropped.
 */
export function parseAnswer<M extends CtlMethod>(
  method: M,
  result: unknown,
  body?: unknown,
): MethodAnswers[M] {
  const r = answerSchema(method, body).safeParse(result);
  if (r.success) return r.data;
  const { field, message } = issueField(r.error, 'result');
  throw new ProtocolError('invalid_answer', `${method} answer ${field}: ${message}`, { field });
}
