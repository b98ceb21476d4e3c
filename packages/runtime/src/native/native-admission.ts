import { existsSync, statSync } from 'node:fs';
import type { CogBody, CogVariant, VerifiedFile } from '@heddle/package';
import type { Admission } from '../contract.js';
import { RuntimeError } from '../errors.js';
import { describeHeader, hostCogArch, readExecutableHeader } from '../probe/elf.js';
import type { RuntimeWorkload } from '../workload.js';
import { type NativeRunUser, resolveRunUser, runningAsRoot } from './native-user.js';

/** What native admission found: the admission and what load needs to run it. */
export interface NativeAdmitted {
  readonly admission: Admission;
  readonly body: CogBody;
  readonly variant: CogVariant;
  /** The verified file of the variant. */
  readonly file: VerifiedFile;
  /** The account to run as, when one is configured. */
  readonly user: NativeRunUser | undefined;
}

/** How {@link admitNative} treats a host without `runAsUser`. */
export interface NativeHostUserOptions {
  /** Run as the host's own uid when no `runAsUser` is set (default false: refused). Unsafe. */
  readonly allowHostUser?: boolean;
  /** Whether the host runs as root (default: `process.getuid() === 0`); injectable for tests. */
  readonly runningAsRoot?: () => boolean;
}

const refuse = (message: string, field: string): RuntimeError =>
  new RuntimeError('admission', message, { field });

/**
 * The native adapter's admission self-check, in order: the workload is a package (store pins are
 * refused), the host is not running as root without `runAsUser` (and that user exists and is not
 * root), without `runAsUser` the host opted in with `allowHostUser` (else the workload would run as
 * the host's own uid, refused by default), a `native` variant for this host's arch exists, its verified file exists and is a regular
 * file, and the file's header agrees: an ELF (on Linux) or Mach-O (on macOS) executable of that arch,
 * or a `#!` script whose interpreter is an absolute path that exists (scripts are architecture-neutral
 * and accepted for the host's arch variant). Every refusal is `admission` naming the field.
 */
export function admitNative(
  workload: RuntimeWorkload,
  runAsUser: string | undefined,
  platform: NodeJS.Platform = process.platform,
  host: NativeHostUserOptions = {},
): NativeAdmitted {
  if (workload.source.type !== 'package') {
    throw refuse('source: the native adapter runs signed packages only, not store pins', 'source');
  }
  let user: NativeRunUser | undefined;
  if (runAsUser !== undefined) user = resolveRunUser(runAsUser);
  else if ((host.runningAsRoot ?? runningAsRoot)()) {
    throw refuse('runAsUser: refusing to run a workload as root; configure runAsUser', 'runAsUser');
  } else if (host.allowHostUser !== true) {
    throw refuse(
      `runAsUser: no runAsUser configured: the workload would run as this host's own user (uid ${process.getuid?.() ?? '?'}), with access to everything it owns; configure runAsUser, or opt in with allowHostUser: true`,
      'runAsUser',
    );
  }
  const verified = workload.source.verified;
  const body = verified.body;
  const arch = hostCogArch();
  if (arch === undefined) throw refuse(`arch: this host's CPU (${process.arch}) is not a cog arch`, 'arch');
  const name = `${arch}-native`;
  const variant = body.variants[name];
  if (variant === undefined || variant.route !== 'native' || variant.arch !== arch) {
    const have = Object.keys(body.variants).sort().join(', ');
    throw refuse(`variants: no ${name} variant for this host (the package has ${have})`, 'variants');
  }
  const field = `variants.${name}.file`;
  const file = verified.files.find((f) => f.path === variant.file);
  if (file === undefined) throw refuse(`${field}: ${variant.file} is not a verified file`, field);
  if (!existsSync(file.absolutePath) || !statSync(file.absolutePath).isFile()) {
    throw refuse(`${field}: ${file.absolutePath} is missing or not a regular file`, field);
  }
  const header = readExecutableHeader(file.absolutePath);
  const notes: string[] = [];
  switch (header.format) {
    case 'elf':
      if (platform !== 'linux') throw refuse(`${field}: an ELF executable cannot run on ${platform}`, field);
      if (header.arch !== arch) {
        throw refuse(`${field}: header says ${describeHeader(header)}, not ${arch}`, field);
      }
      notes.push(`ELF${header.bits} ${arch} executable`);
      break;
    case 'macho':
      if (platform !== 'darwin')
        throw refuse(`${field}: a Mach-O executable cannot run on ${platform}`, field);
      if (!header.arches.includes(arch)) {
        throw refuse(`${field}: header says ${describeHeader(header)}, not ${arch}`, field);
      }
      notes.push(`Mach-O ${arch} executable`);
      break;
    case 'script':
      if (!header.interpreter.startsWith('/')) {
        throw refuse(
          `${field}: the #! interpreter ${JSON.stringify(header.interpreter)} is not an absolute path`,
          field,
        );
      }
      if (!existsSync(header.interpreter)) {
        throw refuse(`${field}: the #! interpreter ${header.interpreter} does not exist on this host`, field);
      }
      notes.push(
        `script: runs under ${header.interpreter}${header.interpreterArg ? ` ${header.interpreterArg}` : ''}`,
      );
      break;
    default:
      throw refuse(`${field}: ${describeHeader(header)}`, field);
  }
  if (user !== undefined) notes.push(`runs as ${user.name} (uid ${user.uid}, gid ${user.gid})`);
  return {
    admission: { runtime: 'native', variant: name, arch, emulated: false, notes },
    body,
    variant,
    file,
    user,
  };
}
