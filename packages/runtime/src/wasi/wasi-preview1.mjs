// WASI preview1 for the runner (wasi-runner.mjs), in JavaScript over the guest's memory. It replaces
// node:wasi, which keeps a view of the guest's memory across `memory.grow` and so reads and writes freed
// memory afterwards (a guest that grows page by page and then calls fd_write crashes Node 20 with
// SIGSEGV). Here every call takes `memory.buffer` afresh, copies what it reads out of the guest before
// any I/O, and does only synchronous I/O, so nothing refers to guest memory once a call returns.
//
// What the guest gets: argv, environment, a realtime, monotonic and CPU clock, random bytes, stdin
// (/dev/null), stdout and stderr (writes block until the host has taken all of them: no EAGAIN, no
// loss), and the preopened directories, in which paths are resolved lexically: absolute paths, `..`
// above the preopen and any symbolic link on the way (final component included) are refused with
// ENOTCAPABLE; path_symlink and path_link are refused; no sockets. Unimplemented calls return ENOSYS.
import { randomFillSync } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  futimesSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  rmdirSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeSync,
} from 'node:fs';

/** WASI errno values (preview1). */
export const E = {
  SUCCESS: 0,
  ACCES: 2,
  AGAIN: 6,
  BADF: 8,
  BUSY: 10,
  EXIST: 20,
  FAULT: 21,
  FBIG: 22,
  ILSEQ: 25,
  INVAL: 28,
  IO: 29,
  ISDIR: 31,
  LOOP: 32,
  MFILE: 33,
  NAMETOOLONG: 37,
  NOENT: 44,
  NOSPC: 51,
  NOSYS: 52,
  NOTDIR: 54,
  NOTEMPTY: 55,
  NOTSUP: 58,
  PERM: 63,
  PIPE: 64,
  ROFS: 66,
  SPIPE: 67,
  XDEV: 71,
  NOTCAPABLE: 76,
};

const NODE_ERRNO = {
  EACCES: E.ACCES,
  EAGAIN: E.AGAIN,
  EBADF: E.BADF,
  EBUSY: E.BUSY,
  EEXIST: E.EXIST,
  EFBIG: E.FBIG,
  EINVAL: E.INVAL,
  EISDIR: E.ISDIR,
  ELOOP: E.LOOP,
  EMFILE: E.MFILE,
  ENAMETOOLONG: E.NAMETOOLONG,
  ENOENT: E.NOENT,
  ENOSPC: E.NOSPC,
  ENOTDIR: E.NOTDIR,
  ENOTEMPTY: E.NOTEMPTY,
  EPERM: E.PERM,
  EPIPE: E.PIPE,
  EROFS: E.ROFS,
  ESPIPE: E.SPIPE,
  EXDEV: E.XDEV,
};

const FILETYPE = { UNKNOWN: 0, CHARACTER_DEVICE: 2, DIRECTORY: 3, REGULAR_FILE: 4, SYMBOLIC_LINK: 7 };
const RIGHTS_ALL = 0x1fffffffn;
/** Rights of stdio: no seek or tell, so wasi-libc's isatty() sees a terminal and line-buffers stdout. */
const RIGHTS_STDIO = RIGHTS_ALL & ~((1n << 2n) | (1n << 5n));
const FD_READ = 1n << 1n;
const FD_WRITE = 1n << 6n;
const OFLAGS = { CREAT: 1, DIRECTORY: 2, EXCL: 4, TRUNC: 8 };
const FDFLAGS_APPEND = 1;
/** Most descriptors a guest may hold open at once. */
const MAX_FDS = 1024;
/** Most bytes one read or write call moves (a short count; the guest's libc loops for the rest). */
const MAX_IO = 1024 * 1024;

/** Thrown by proc_exit; the runner catches it and exits with `code`. */
export class WasiExit extends Error {
  constructor(code) {
    super(`exit ${code}`);
    this.code = code;
  }
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
/** Blocks this thread for `ms` (the guest is blocked anyway; nothing else runs on this thread). */
export function sleepSync(ms) {
  if (ms > 0) Atomics.wait(sleeper, 0, 0, ms);
}

/**
 * Writes all of `buf` to `fd`, waiting while the pipe is full: the runner's stdout and stderr are
 * non-blocking pipes, on which a plain write fails with EAGAIN when the host has not read yet.
 */
export function writeAllSync(fd, buf) {
  let off = 0;
  let waitMs = 1;
  while (off < buf.length) {
    try {
      off += writeSync(fd, buf, off, buf.length - off);
      waitMs = 1;
    } catch (err) {
      if (err?.code !== 'EAGAIN') throw err;
      sleepSync(waitMs);
      waitMs = Math.min(waitMs * 2, 16);
    }
  }
}

class Guest {
  constructor(getMemory) {
    this.getMemory = getMemory;
  }
  get view() {
    return new DataView(this.getMemory().buffer);
  }
  bytes(ptr, len) {
    const buf = this.getMemory().buffer;
    if (ptr < 0 || len < 0 || ptr + len > buf.byteLength) throw new GuestFault();
    return new Uint8Array(buf, ptr, len);
  }
  /** A copy of the guest bytes (so no view of guest memory outlives the call). */
  copy(ptr, len) {
    return Buffer.from(this.bytes(ptr, len));
  }
  /** The iovecs at `ptr` as [{ptr, len}], read now. */
  iovs(ptr, count) {
    const v = this.view;
    const out = [];
    for (let i = 0; i < count; i++)
      out.push({ ptr: v.getUint32(ptr + i * 8, true), len: v.getUint32(ptr + i * 8 + 4, true) });
    return out;
  }
  u32(ptr, value) {
    this.bytes(ptr, 4);
    this.view.setUint32(ptr, value, true);
  }
  u64(ptr, value) {
    this.bytes(ptr, 8);
    this.view.setBigUint64(ptr, BigInt(value), true);
  }
  /** A copy of what the iovecs hold, at most `max` bytes (a short write beyond that). */
  gather(iovs, max) {
    const parts = [];
    let total = 0;
    for (const iov of iovs) {
      const n = Math.min(iov.len, max - total);
      if (n <= 0) break;
      parts.push(this.copy(iov.ptr, n));
      total += n;
    }
    return Buffer.concat(parts, total);
  }
  string(ptr, len) {
    return new TextDecoder('utf-8', { fatal: true }).decode(this.copy(ptr, len));
  }
}

class GuestFault extends Error {}
class Errno extends Error {
  constructor(errno) {
    super(`errno ${errno}`);
    this.errno = errno;
  }
}

const filetypeOf = (st) => {
  if (st.isDirectory()) return FILETYPE.DIRECTORY;
  if (st.isFile()) return FILETYPE.REGULAR_FILE;
  if (st.isSymbolicLink()) return FILETYPE.SYMBOLIC_LINK;
  if (st.isCharacterDevice()) return FILETYPE.CHARACTER_DEVICE;
  return FILETYPE.UNKNOWN;
};

/**
 * The `wasi_snapshot_preview1` import object. `options`: `args`, `env` (object), `preopens` ({guest
 * path: host dir}), `stdout`/`stderr` (host fds), `getMemory()` (the guest's memory, asked on every
 * call).
 */
export function createPreview1(options) {
  const g = new Guest(options.getMemory);
  const enc = new TextEncoder();
  const args = options.args.map((a) => enc.encode(`${a}\0`));
  const env = Object.entries(options.env).map(([k, v]) => enc.encode(`${k}=${v}\0`));
  /** fd -> {kind: 'stdin'|'stdout'|'stderr'|'dir'|'file', host?, fd?, pos?, append?, preopen?} */
  const fds = new Map([
    [0, { kind: 'stdin', fd: openSync('/dev/null', 'r') }],
    [1, { kind: 'stdout', fd: options.stdout }],
    [2, { kind: 'stderr', fd: options.stderr }],
  ]);
  let next = 3;
  for (const [guestPath, host] of Object.entries(options.preopens)) {
    fds.set(next++, { kind: 'dir', host, preopen: guestPath });
  }

  const entry = (fd) => {
    const e = fds.get(fd);
    if (e === undefined) throw new Errno(E.BADF);
    return e;
  };
  const dirEntry = (fd) => {
    const e = entry(fd);
    if (e.kind !== 'dir') throw new Errno(E.NOTDIR);
    return e;
  };
  const fileEntry = (fd) => {
    const e = entry(fd);
    if (e.kind === 'dir') throw new Errno(E.ISDIR);
    return e;
  };
  const allocFd = (e) => {
    if (fds.size >= MAX_FDS) throw new Errno(E.MFILE);
    let fd = 3;
    while (fds.has(fd)) fd++;
    fds.set(fd, e);
    return fd;
  };

  /**
   * The host path of `path` under the directory `dirfd`, resolved lexically: absolute paths and `..`
   * above the directory are refused, and so is a symbolic link at any component (the guest can make
   * none, and none is followed).
   */
  const resolve = (dirfd, pathPtr, pathLen) => {
    const base = dirEntry(dirfd).host;
    let path;
    try {
      path = g.string(pathPtr, pathLen);
    } catch (err) {
      if (err instanceof GuestFault) throw err;
      throw new Errno(E.ILSEQ);
    }
    if (path.includes('\0')) throw new Errno(E.INVAL);
    if (path.startsWith('/')) throw new Errno(E.NOTCAPABLE);
    const parts = [];
    for (const p of path.split('/')) {
      if (p === '' || p === '.') continue;
      if (p === '..') {
        if (parts.length === 0) throw new Errno(E.NOTCAPABLE);
        parts.pop();
      } else parts.push(p);
    }
    let host = base;
    for (const p of parts) {
      host = `${host}/${p}`;
      let st;
      try {
        st = lstatSync(host);
      } catch {
        break; // the rest does not exist (yet): the operation itself reports it
      }
      if (st.isSymbolicLink()) throw new Errno(E.NOTCAPABLE);
    }
    return parts.length === 0 ? base : `${base}/${parts.join('/')}`;
  };
  /**
   * The status of a resolved path: a preopen's own path (it may be /proc/self/fd/<n>, a link to the
   * directory) is followed, anything below it is not.
   */
  const statAt = (host, isDirEntry) => (isDirEntry ? statSync(host) : lstatSync(host));
  const preopenHosts = new Set(Object.values(options.preopens));
  const isDirPath = (host) => preopenHosts.has(host);

  const filestat = (ptr, st) => {
    g.bytes(ptr, 64);
    const v = g.view;
    v.setBigUint64(ptr, BigInt(st.dev), true);
    v.setBigUint64(ptr + 8, BigInt(st.ino), true);
    v.setUint8(ptr + 16, filetypeOf(st));
    v.setBigUint64(ptr + 24, BigInt(st.nlink), true);
    v.setBigUint64(ptr + 32, BigInt(st.size), true);
    v.setBigUint64(ptr + 40, BigInt(Math.trunc(st.atimeMs * 1e6)), true);
    v.setBigUint64(ptr + 48, BigInt(Math.trunc(st.mtimeMs * 1e6)), true);
    v.setBigUint64(ptr + 56, BigInt(Math.trunc(st.ctimeMs * 1e6)), true);
  };

  const writeTo = (e, data, position) => {
    if (e.kind === 'stdout' || e.kind === 'stderr') {
      writeAllSync(e.fd, data);
      return data.length;
    }
    if (e.kind !== 'file') throw new Errno(E.BADF);
    if (!e.write) throw new Errno(E.BADF);
    let pos = position;
    if (pos === undefined) pos = e.append ? fstatSync(e.fd).size : e.pos;
    let off = 0;
    while (off < data.length) off += writeSync(e.fd, data, off, data.length - off, pos + off);
    if (position === undefined) e.pos = pos + data.length;
    return data.length;
  };

  const readFrom = (e, iovs, position) => {
    if (e.kind === 'stdin') return 0;
    if (e.kind !== 'file' || !e.read) throw new Errno(E.BADF);
    let pos = position ?? e.pos;
    let total = 0;
    for (const iov of iovs) {
      const want = Math.min(iov.len, MAX_IO - total);
      if (want <= 0) break;
      const tmp = Buffer.alloc(want);
      const n = readSync(e.fd, tmp, 0, want, pos);
      g.bytes(iov.ptr, n).set(tmp.subarray(0, n));
      pos += n;
      total += n;
      if (n < iov.len) break;
    }
    if (position === undefined) e.pos = pos;
    return total;
  };

  const strings = (list, ptrsPtr, bufPtr) => {
    let at = bufPtr;
    list.forEach((s, i) => {
      g.u32(ptrsPtr + i * 4, at);
      g.bytes(at, s.length).set(s);
      at += s.length;
    });
  };
  const sizes = (list, countPtr, sizePtr) => {
    g.u32(countPtr, list.length);
    g.u32(
      sizePtr,
      list.reduce((n, s) => n + s.length, 0),
    );
  };

  const now = (id) => {
    if (id === 0) return BigInt(Date.now()) * 1_000_000n;
    if (id === 1) return process.hrtime.bigint();
    if (id === 2 || id === 3) {
      const u = process.cpuUsage();
      return BigInt(u.user + u.system) * 1000n;
    }
    throw new Errno(E.INVAL);
  };

  const calls = {
    args_get: (argv, buf) => strings(args, argv, buf),
    args_sizes_get: (count, size) => sizes(args, count, size),
    environ_get: (envp, buf) => strings(env, envp, buf),
    environ_sizes_get: (count, size) => sizes(env, count, size),
    clock_res_get: (id, res) => {
      now(id);
      g.u64(res, id === 0 ? 1_000_000n : 1000n);
    },
    clock_time_get: (id, _precision, out) => g.u64(out, now(id)),
    fd_advise: (fd) => void entry(fd),
    fd_allocate: (fd) => void fileEntry(fd),
    fd_close: (fd) => {
      const e = entry(fd);
      if (e.kind === 'file') closeSync(e.fd);
      fds.delete(fd);
    },
    fd_datasync: (fd) => {
      const e = fileEntry(fd);
      if (e.kind === 'file') fsyncSync(e.fd);
    },
    fd_sync: (fd) => {
      const e = fileEntry(fd);
      if (e.kind === 'file') fsyncSync(e.fd);
    },
    fd_fdstat_get: (fd, ptr) => {
      const e = entry(fd);
      g.bytes(ptr, 24);
      const v = g.view;
      const stdio = e.kind === 'stdin' || e.kind === 'stdout' || e.kind === 'stderr';
      let type = FILETYPE.REGULAR_FILE;
      if (e.kind === 'dir') type = FILETYPE.DIRECTORY;
      else if (stdio) type = FILETYPE.CHARACTER_DEVICE;
      v.setUint8(ptr, type);
      v.setUint16(ptr + 2, e.append ? FDFLAGS_APPEND : 0, true);
      v.setBigUint64(ptr + 8, stdio ? RIGHTS_STDIO : RIGHTS_ALL, true);
      v.setBigUint64(ptr + 16, RIGHTS_ALL, true);
    },
    fd_fdstat_set_flags: (fd, flags) => {
      const e = entry(fd);
      if (e.kind === 'file') e.append = (flags & FDFLAGS_APPEND) !== 0;
    },
    fd_fdstat_set_rights: (fd) => void entry(fd),
    fd_filestat_get: (fd, ptr) => {
      const e = entry(fd);
      if (e.kind === 'dir') filestat(ptr, statSync(e.host));
      else if (e.kind === 'file') filestat(ptr, fstatSync(e.fd));
      else {
        g.bytes(ptr, 64).fill(0);
        g.view.setUint8(ptr + 16, FILETYPE.CHARACTER_DEVICE);
      }
    },
    fd_filestat_set_size: (fd, size) => {
      const e = fileEntry(fd);
      if (e.kind !== 'file' || !e.write) throw new Errno(E.BADF);
      ftruncateSync(e.fd, Number(size));
    },
    fd_filestat_set_times: (fd, atim, mtim, flags) => {
      const e = entry(fd);
      if (e.kind !== 'file') throw new Errno(E.BADF);
      const [a, m] = times(fstatSync(e.fd), atim, mtim, flags);
      futimesSync(e.fd, a, m);
    },
    fd_pread: (fd, iovs, count, offset, out) =>
      g.u32(out, readFrom(fileEntry(fd), g.iovs(iovs, count), Number(offset))),
    fd_pwrite: (fd, iovs, count, offset, out) => {
      const e = fileEntry(fd);
      if (e.kind !== 'file') throw new Errno(E.SPIPE);
      g.u32(out, writeTo(e, g.gather(g.iovs(iovs, count), MAX_IO), Number(offset)));
    },
    fd_read: (fd, iovs, count, out) => g.u32(out, readFrom(fileEntry(fd), g.iovs(iovs, count))),
    fd_write: (fd, iovs, count, out) => {
      const e = fileEntry(fd);
      g.u32(out, writeTo(e, g.gather(g.iovs(iovs, count), MAX_IO)));
    },
    fd_prestat_get: (fd, ptr) => {
      const e = entry(fd);
      if (e.preopen === undefined) throw new Errno(E.BADF);
      g.bytes(ptr, 8);
      g.view.setUint8(ptr, 0);
      g.view.setUint32(ptr + 4, enc.encode(e.preopen).length, true);
    },
    fd_prestat_dir_name: (fd, ptr, len) => {
      const e = entry(fd);
      if (e.preopen === undefined) throw new Errno(E.BADF);
      const name = enc.encode(e.preopen);
      if (len < name.length) throw new Errno(E.NAMETOOLONG);
      g.bytes(ptr, name.length).set(name);
    },
    fd_readdir: (fd, buf, len, cookie, out) => {
      const e = dirEntry(fd);
      const names = ['.', '..', ...readdirSync(e.host).sort()];
      const chunks = [];
      for (let i = Number(cookie); i < names.length; i++) {
        const name = enc.encode(names[i]);
        const head = Buffer.alloc(24);
        let ino = 0n;
        let type = FILETYPE.UNKNOWN;
        try {
          const st = i < 2 ? statSync(e.host) : lstatSync(`${e.host}/${names[i]}`);
          ino = BigInt(st.ino);
          type = filetypeOf(st);
        } catch {}
        head.writeBigUInt64LE(BigInt(i + 1), 0);
        head.writeBigUInt64LE(ino, 8);
        head.writeUInt32LE(name.length, 16);
        head.writeUInt8(type, 20);
        chunks.push(head, Buffer.from(name));
        if (chunks.reduce((n, c) => n + c.length, 0) >= len) break;
      }
      const all = Buffer.concat(chunks).subarray(0, len);
      g.bytes(buf, all.length).set(all);
      g.u32(out, all.length);
    },
    fd_renumber: (from, to) => {
      const e = entry(from);
      const old = entry(to);
      if (from === to) return; // as dup2(fd, fd): nothing to do, the descriptor stays open
      if (old.kind === 'file') closeSync(old.fd);
      fds.set(to, e);
      fds.delete(from);
    },
    fd_seek: (fd, offset, whence, out) => {
      const e = fileEntry(fd);
      if (e.kind !== 'file') throw new Errno(E.SPIPE);
      let base = 0;
      if (whence === 1) base = e.pos;
      else if (whence === 2) base = fstatSync(e.fd).size;
      else if (whence !== 0) throw new Errno(E.INVAL);
      const pos = base + Number(offset);
      if (pos < 0) throw new Errno(E.INVAL);
      e.pos = pos;
      g.u64(out, pos);
    },
    fd_tell: (fd, out) => {
      const e = fileEntry(fd);
      if (e.kind !== 'file') throw new Errno(E.SPIPE);
      g.u64(out, e.pos);
    },
    path_create_directory: (fd, p, l) => mkdirSync(resolve(fd, p, l), { mode: 0o700 }),
    path_filestat_get: (fd, _flags, p, l, ptr) => {
      const host = resolve(fd, p, l);
      filestat(ptr, statAt(host, isDirPath(host)));
    },
    path_filestat_set_times: (fd, _flags, p, l, atim, mtim, flags) => {
      const host = resolve(fd, p, l);
      const [a, m] = times(lstatSync(host), atim, mtim, flags);
      utimesSync(host, a, m);
    },
    path_link: () => E.NOTCAPABLE,
    path_symlink: () => E.NOTCAPABLE,
    path_readlink: (fd, p, l) => {
      lstatSync(resolve(fd, p, l)); // exists and is no link (resolve refuses links): not a link
      throw new Errno(E.INVAL);
    },
    path_open: (fd, _dirflags, p, l, oflags, rightsBase, _inheriting, fdflags, out) => {
      const host = resolve(fd, p, l);
      let st;
      try {
        st = statAt(host, isDirPath(host));
      } catch {}
      if (st?.isDirectory()) {
        if (oflags & (OFLAGS.CREAT | OFLAGS.TRUNC)) throw new Errno(oflags & OFLAGS.EXCL ? E.EXIST : E.ISDIR);
        g.u32(out, allocFd({ kind: 'dir', host }));
        return;
      }
      if (oflags & OFLAGS.DIRECTORY) throw new Errno(st === undefined ? E.NOENT : E.NOTDIR);
      const rights = BigInt(rightsBase);
      const read = (rights & FD_READ) !== 0n || (rights & FD_WRITE) === 0n;
      const write = (rights & FD_WRITE) !== 0n || (oflags & OFLAGS.TRUNC) !== 0;
      let flags = constants.O_NOFOLLOW;
      flags |= read && write ? constants.O_RDWR : write ? constants.O_WRONLY : constants.O_RDONLY;
      if (oflags & OFLAGS.CREAT) flags |= constants.O_CREAT;
      if (oflags & OFLAGS.EXCL) flags |= constants.O_EXCL;
      if (oflags & OFLAGS.TRUNC) flags |= constants.O_TRUNC;
      if (fds.size >= MAX_FDS) throw new Errno(E.MFILE);
      const hostFd = openSync(host, flags, 0o600);
      const append = (fdflags & FDFLAGS_APPEND) !== 0;
      g.u32(out, allocFd({ kind: 'file', fd: hostFd, host, pos: 0, read, write, append }));
    },
    path_remove_directory: (fd, p, l) => rmdirSync(resolve(fd, p, l)),
    path_rename: (fd, p, l, fd2, p2, l2) => renameSync(resolve(fd, p, l), resolve(fd2, p2, l2)),
    path_unlink_file: (fd, p, l) => {
      const host = resolve(fd, p, l);
      if (lstatSync(host).isDirectory()) throw new Errno(E.ISDIR);
      unlinkSync(host);
    },
    poll_oneoff: (inPtr, outPtr, count, neventsPtr) => {
      const v = g.view;
      g.bytes(inPtr, count * 48);
      g.bytes(outPtr, count * 32);
      const subs = [];
      for (let i = 0; i < count; i++) {
        const at = inPtr + i * 48;
        const tag = v.getUint8(at + 8);
        const sub = { userdata: v.getBigUint64(at, true), tag };
        if (tag === 0) {
          const id = v.getUint32(at + 16, true);
          const timeout = v.getBigUint64(at + 24, true);
          const abs = (v.getUint16(at + 40, true) & 1) !== 0;
          sub.wait = abs ? Number(timeout - now(id)) / 1e6 : Number(timeout) / 1e6;
        }
        subs.push(sub);
      }
      // Descriptors are always ready (files, /dev/null, blocking stdio); clocks are slept.
      let ready = subs.filter((s) => s.tag !== 0);
      if (ready.length === 0 && subs.length > 0) {
        const wait = Math.max(0, Math.min(...subs.map((s) => s.wait)));
        sleepSync(wait);
        ready = subs.filter((s) => s.wait <= wait);
      }
      const w = g.view;
      ready.forEach((s, i) => {
        const at = outPtr + i * 32;
        w.setBigUint64(at, s.userdata, true);
        w.setUint16(at + 8, 0, true);
        w.setUint8(at + 10, s.tag);
        w.setBigUint64(at + 16, 0n, true);
        w.setUint16(at + 24, 0, true);
      });
      g.u32(neventsPtr, ready.length);
    },
    proc_exit: (code) => {
      throw new WasiExit(code >>> 0);
    },
    proc_raise: () => E.NOSYS,
    random_get: (ptr, len) => {
      // The range is checked before anything is allocated: a length beyond the guest's memory is a
      // fault, never a host buffer of that size (which would escape the memory cap).
      g.bytes(ptr, len);
      const tmp = Buffer.alloc(len);
      randomFillSync(tmp);
      g.bytes(ptr, len).set(tmp);
    },
    sched_yield: () => {},
    sock_accept: () => E.NOSYS,
    sock_recv: () => E.NOSYS,
    sock_send: () => E.NOSYS,
    sock_shutdown: () => E.NOSYS,
  };

  const imports = {};
  for (const [name, fn] of Object.entries(calls)) {
    imports[name] = (...a) => {
      try {
        const r = fn(...a);
        return typeof r === 'number' ? r : E.SUCCESS;
      } catch (err) {
        if (err instanceof WasiExit) throw err;
        if (err instanceof Errno) return err.errno;
        if (err instanceof GuestFault || err instanceof RangeError) return E.FAULT;
        return NODE_ERRNO[err?.code] ?? E.IO;
      }
    };
  }
  return imports;
}

function times(st, atim, mtim, flags) {
  const nowS = Date.now() / 1000;
  let a = st.atimeMs / 1000;
  let m = st.mtimeMs / 1000;
  if (flags & 2) a = nowS;
  else if (flags & 1) a = Number(atim) / 1e9;
  if (flags & 8) m = nowS;
  else if (flags & 4) m = Number(mtim) / 1e9;
  return [a, m];
}
