import { closeSync, fsyncSync, openSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fsyncDir } from '@heddle/envelope';

/**
 * fsyncs every regular file under `dir`, then every directory bottom up, so that a tree renamed into
 * place afterwards survives a power cut whole (symbolic links and other entries are left alone).
 */
export function fsyncTree(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) fsyncTree(path);
    else if (entry.isFile()) fsyncFile(path);
  }
  fsyncDir(dir);
}

function fsyncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
