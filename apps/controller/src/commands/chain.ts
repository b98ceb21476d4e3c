import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  type ChainEvent,
  type Checkpoint,
  type CrossRefReport,
  openChainFile,
  parseSignedCheckpoint,
  verifyChainFile,
  verifyCheckpoint,
  verifyCrossReferences,
  verifyInclusion,
} from '@heddle/chain';
import { errorMessage, type ParsedArgs, parseArgv, positional, requiredString } from '@heddle/cli-kit';
import { loadKeyFile, parsePublicKey, readTextBounded } from '@heddle/envelope';
import { CliError, ExitCode, usageError } from '../cli-error.js';
import { CHAIN_CHECKPOINT, CHAIN_PROOF, CHAIN_TAIL, CHAIN_VERIFY } from '../defs/tools.js';
import { type CliIo, emit } from '../io.js';

const SUBCOMMANDS = 'verify | tail | proof | checkpoint';

/**
 * `heddle chain <verify|tail|proof|checkpoint> <file> ...`: inspect an audit chain file without
 * changing it (only `checkpoint --out` writes, and only its own output file).
 */
export async function chain(args: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'verify':
      return chainVerify(rest, io);
    case 'tail':
      return chainTail(rest, io);
    case 'proof':
      return chainProof(rest, io);
    case 'checkpoint':
      return chainCheckpoint(rest, io);
    default:
      throw usageError(`usage: heddle chain <${SUBCOMMANDS}> <file> ...`);
  }
}

async function chainVerify(args: readonly string[], io: CliIo): Promise<number> {
  const p = parseArgv('heddle', CHAIN_VERIFY, args);
  const files = chainFiles(p.positionals, io.cwd);
  const checkpoint = loadCheckpoint(p, io.cwd);
  if (checkpoint !== undefined && files.length > 1)
    throw usageError('--checkpoint checks one chain file: give one', 'checkpoint');
  const json = p.booleans.json === true;
  if (files.length === 1 && files[0] !== undefined) {
    const one = await verifyOne(files[0], checkpoint);
    const refs = one.events === undefined ? undefined : crossRefs([one]);
    emit(io, json, { ...one.result, ...(refs === undefined ? {} : { cross_refs: refs }) }, () => [
      ...one.lines,
      ...(refs === undefined ? [] : crossRefLines(refs)),
    ]);
    return one.ok && (refs?.ok ?? true) ? ExitCode.ok : ExitCode.checkFailed;
  }
  const all: VerifiedFile[] = [];
  for (const f of files) all.push(await verifyOne(f, undefined));
  const refs = all.every((a) => a.events !== undefined) ? crossRefs(all) : undefined;
  const ok = all.every((a) => a.ok) && refs !== undefined && refs.ok;
  emit(io, json, { ok, chains: all.map((a) => a.result), cross_refs: refs ?? null }, () => [
    ...all.flatMap((a) => [`${a.file}:`, ...a.lines.map((l) => `  ${l}`)]),
    ...(refs === undefined
      ? ['cross-references not checked: a chain failed to verify']
      : crossRefLines(refs)),
  ]);
  return ok ? ExitCode.ok : ExitCode.checkFailed;
}

interface VerifiedFile {
  readonly file: string;
  readonly ok: boolean;
  readonly result: Record<string, unknown>;
  readonly lines: string[];
  /** Its events, when it verified (for the cross-references). */
  readonly events: readonly ChainEvent[] | undefined;
}

async function verifyOne(path: string, checkpoint: Checkpoint | undefined): Promise<VerifiedFile> {
  const r = await verifyChainFile(path, checkpoint ? { checkpoint } : {});
  const result = { file: path, ...r, checkpoint: checkpoint ?? null };
  const cut = r.quarantined.map(
    (q) => `QUARANTINED: ${q.bytes} bytes cut off at byte ${q.offset} by a crash repair, kept in ${q.path}`,
  );
  const lines = r.ok
    ? [
        `ok: ${r.size} events verified${checkpoint ? `, consistent with the checkpoint at size ${checkpoint.size}` : ''}`,
        `head: ${r.head}`,
        ...cut,
        ...(cut.length === 0
          ? []
          : ['inspect them (a record there is lost from the chain); move them away to acknowledge']),
      ]
    : [
        `FAILED at seq ${r.failure?.seq}${r.failure?.line ? ` (line ${r.failure.line}, byte ${r.failure.offset})` : ''}: ${r.failure?.reason}`,
        `  ${r.failure?.message}`,
        `the first ${r.size} events verify; head of that run: ${r.head}`,
      ];
  // Bytes a repair cut off are never passed over silently: the check fails until someone moved them away.
  const ok = r.ok && r.quarantined.length === 0;
  let events: readonly ChainEvent[] | undefined;
  if (r.ok) {
    const c = await openChainFile(path, { readOnly: true });
    try {
      events = c.range(0);
    } finally {
      await c.close();
    }
  }
  return { file: path, ok, result, lines, events };
}

function crossRefs(files: readonly VerifiedFile[]): CrossRefReport {
  return verifyCrossReferences(files.map((f) => ({ name: f.file, events: f.events ?? [] })));
}

function crossRefLines(r: CrossRefReport): string[] {
  if (r.references === 0) return [];
  return [
    `cross-references: ${r.resolved} of ${r.references} resolved${r.ok ? '' : `, ${r.failures.length} FAILED`}`,
    ...r.failures.map((f) => `  FAILED ${f.chain} seq ${f.seq}: ${f.reason}`),
    ...r.unresolved.map((u) => `  unresolved ${u.chain} seq ${u.seq}: ${u.reason}`),
  ];
}

/** The chain files the positionals name: each file as is, each directory as its `*.jsonl` files (sorted). */
function chainFiles(positionals: readonly string[], cwd: string): string[] {
  if (positionals.length === 0) throw usageError('give a chain file (or several, or a directory)', 'file');
  const out: string[] = [];
  for (const arg of positionals) {
    const path = resolve(cwd, arg);
    let isDir = false;
    try {
      isDir = statSync(path).isDirectory();
    } catch {
      isDir = false; // verifyChainFile names a missing file
    }
    if (!isDir) {
      out.push(path);
      continue;
    }
    const found = readdirSync(path)
      .filter((n) => n.endsWith('.jsonl'))
      .sort()
      .map((n) => join(path, n));
    if (found.length === 0)
      throw new CliError('file_unreadable', `${path}: no *.jsonl chain file in it`, ExitCode.badInput);
    out.push(...found);
  }
  return out;
}

async function chainTail(args: readonly string[], io: CliIo): Promise<number> {
  const p = parseArgv('heddle', CHAIN_TAIL, args);
  const { strings, booleans } = p;
  const n = positiveInt(strings.n, 'n', 10);
  const c = await openReadOnly(positional(p, 0), io);
  const matching = c.find({
    ...(strings.kind !== undefined ? { kind: strings.kind } : {}),
    ...(strings.source !== undefined ? { source: strings.source } : {}),
  });
  const events = matching.slice(-n);
  emit(io, booleans.json === true, { size: c.size, head: c.head, events }, () =>
    events.length === 0 ? ['(no events)'] : events.map(describeEvent),
  );
  return ExitCode.ok;
}

async function chainProof(args: readonly string[], io: CliIo): Promise<number> {
  const p = parseArgv('heddle', CHAIN_PROOF, args);
  const { strings, booleans, positionals } = p;
  const c = await openReadOnly(positional(p, 0), io);
  const seq = nonNegativeInt(positionals[1], 'seq');
  const size = strings.size === undefined ? c.size : positiveInt(strings.size, 'size', c.size);
  if (seq >= size)
    throw new CliError('out_of_range', `seq ${seq} is not below the tree size ${size}`, ExitCode.badInput);
  if (size > c.size)
    throw new CliError('out_of_range', `the chain has only ${c.size} events`, ExitCode.badInput);
  const proof = c.inclusionProof(seq, size);
  const verified = verifyInclusion(proof.leaf, proof.seq, proof.size, proof.path, proof.root);
  emit(io, booleans.json === true, { ...proof, verified }, () => [
    `event ${seq} (hash ${proof.leaf}) is included in the tree of ${size} events`,
    `root: ${proof.root}`,
    'audit path (bottom-up):',
    ...proof.path.map((h, i) => `  ${i}: ${h}`),
    verified ? 'the proof verifies against the root' : 'THE PROOF DOES NOT VERIFY',
  ]);
  return verified ? ExitCode.ok : ExitCode.checkFailed;
}

async function chainCheckpoint(args: readonly string[], io: CliIo): Promise<number> {
  const p = parseArgv('heddle', CHAIN_CHECKPOINT, args);
  const keys = loadKeyFile(resolve(io.cwd, requiredString(p, 'key')));
  const c = await openReadOnly(positional(p, 0), io);
  const signed = c.checkpoint(keys);
  // The JSON form is what `heddle chain verify --checkpoint` reads back.
  emit(io, true, signed, () => []);
  return ExitCode.ok;
}

function describeEvent(e: ChainEvent): string {
  const payload = JSON.stringify(e.payload);
  const shown = payload.length > 100 ? `${payload.slice(0, 97)}...` : payload;
  return `${String(e.seq).padStart(6)}  ${new Date(e.ts).toISOString()}  ${e.source.padEnd(18)} ${e.kind.padEnd(22)} ${e.hash.slice(0, 16)}  ${shown}`;
}

async function openReadOnly(file: string, io: CliIo) {
  return openChainFile(resolve(io.cwd, file), { readOnly: true });
}

function loadCheckpoint(p: ParsedArgs, cwd: string): Checkpoint | undefined {
  const cp = p.strings.checkpoint;
  const key = p.strings['public-key'];
  if (cp === undefined && key === undefined) return undefined;
  if (cp === undefined || key === undefined) {
    throw usageError(
      '--checkpoint and --public-key go together',
      cp === undefined ? 'checkpoint' : 'public-key',
    );
  }
  const signed = parseSignedCheckpoint(readSmall(resolve(cwd, cp)));
  const publicKey = ((): Uint8Array => {
    if (/^[0-9a-fA-F]{64}$/.test(key)) return parsePublicKey(key);
    const text = readSmall(resolve(cwd, key));
    return text.includes('"heddle.ed25519.secret-key')
      ? loadKeyFile(resolve(cwd, key)).publicKey
      : parsePublicKey(text);
  })();
  return verifyCheckpoint(signed, publicKey);
}

function readSmall(path: string): string {
  try {
    return readTextBounded(path, 1 << 20);
  } catch (err) {
    throw new CliError('file_unreadable', `cannot read ${path}: ${errorMessage(err)}`, ExitCode.badInput);
  }
}

function positiveInt(value: unknown, field: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = nonNegativeInt(value, field);
  if (n === 0) throw usageError(`--${field} must be at least 1`, field);
  return n;
}

function nonNegativeInt(value: unknown, field: string): number {
  if (typeof value !== 'string' || !/^(0|[1-9][0-9]{0,14})$/.test(value)) {
    throw usageError(`${field} must be a non-negative integer, got ${JSON.stringify(value)}`, field);
  }
  return Number(value);
}
