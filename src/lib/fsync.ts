import fs from 'node:fs';

/**
 * Makes a directory's entries durable: after a rename or link into it, the new name survives a
 * power loss only once the directory itself is fsynced (the file's own fsync covers its bytes).
 */
export function fsyncDirectory(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

export async function fsyncDirectoryAsync(dir: string): Promise<void> {
  const handle = await fs.promises.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
