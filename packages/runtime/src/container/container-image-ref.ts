import { readFileSync, statSync } from 'node:fs';
import { blake3Hex } from '@heddle/envelope';
import { z } from 'zod';
import { RuntimeError } from '../errors.js';

/** Largest image-reference file the container adapter reads (bytes). */
export const MAX_IMAGE_REF_FILE_BYTES = 16_384;

/**
 * The file a `<arch>-container` variant points at: which image to run, pinned by digest.
 *
 * ```json
 * { "image": "registry.example/acme/cog@sha256:<64 hex>", "network": false }
 * ```
 *
 * `image` must carry a `@sha256:` digest (a tag may precede it, as in `name:1.2@sha256:...`, but the
 * digest is what the engine resolves). `network` is the package's request for network access; it is
 * granted only when the host's policy also allows it (`ContainerRuntimeOptions.allowNetwork`).
 */
export interface ContainerImageRef {
  /** The full reference, `<repository>[:tag]@sha256:<64 hex>`. */
  readonly image: string;
  /** Repository part (`registry.example/acme/cog`), without tag or digest. */
  readonly repository: string;
  /** The pinned digest, `sha256:<64 hex>`. */
  readonly digest: string;
  /** True when the package asks for network access. */
  readonly network: boolean;
}

/** `<repository>[:tag]@sha256:<64 lower-case hex>`; repository in the docker reference grammar (simplified). */
const IMAGE_RE =
  /^((?:[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]+)?\/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*)(?::[A-Za-z0-9_][A-Za-z0-9._-]{0,127})?@(sha256:[0-9a-f]{64})$/;

/** Schema of the image-reference file (strict: unknown fields are refused). */
export const ContainerImageFileSchema: z.ZodType<{ image: string; network?: boolean | undefined }> =
  z.strictObject({
    image: z.string().min(1).max(512),
    network: z.boolean().optional(),
  });

/**
 * Parses an image reference and refuses (`admission`, field `image`) one that is not pinned by a
 * sha256 digest, such as `alpine:3.20` or `alpine:latest`.
 */
export function parseImageReference(image: string, network = false): ContainerImageRef {
  const m = IMAGE_RE.exec(image);
  if (m === null || m[1] === undefined || m[2] === undefined) {
    throw new RuntimeError(
      'admission',
      `image: ${JSON.stringify(image)} is not pinned by digest (expected <repository>[:tag]@sha256:<64 hex>)`,
      { field: 'image' },
    );
  }
  return { image, repository: m[1], digest: m[2], network };
}

/** Parses the text of an image-reference file; refuses (`admission`) bad JSON, shape or an unpinned image. */
export function parseImageRefFile(text: string, path = 'image file'): ContainerImageRef {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw new RuntimeError('admission', `${path}: not valid JSON`, { field: 'image', cause });
  }
  const parsed = ContainerImageFileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue === undefined || issue.path.length === 0 ? 'image' : issue.path.join('.');
    throw new RuntimeError('admission', `${path}: ${field}: ${issue?.message ?? 'invalid'}`, { field });
  }
  return parseImageReference(parsed.data.image, parsed.data.network ?? false);
}

/** Reads and parses an image-reference file from disk (bounded to {@link MAX_IMAGE_REF_FILE_BYTES}). */
export function readImageRefFile(path: string, blake3?: string): ContainerImageRef {
  let size: number;
  try {
    size = statSync(path).size;
  } catch (cause) {
    throw new RuntimeError('admission', `${path}: missing`, { field: 'image', cause });
  }
  if (size > MAX_IMAGE_REF_FILE_BYTES) {
    throw new RuntimeError('admission', `${path}: larger than ${MAX_IMAGE_REF_FILE_BYTES} bytes`, {
      field: 'image',
    });
  }
  const bytes = readFileSync(path);
  if (blake3 !== undefined && blake3Hex(bytes) !== blake3) {
    throw new RuntimeError('admission', `${path}: changed since the package was verified (BLAKE3 mismatch)`, {
      field: 'image',
    });
  }
  return parseImageRefFile(bytes.toString('utf8'), path);
}
