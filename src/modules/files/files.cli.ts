import fs from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '../../http/errors.js';
import { positional, tenantScope } from '../../cli/args.js';
import type { CliCommand } from '../../cli/command.js';
import { MAX_FILE_BYTES } from './files.images.js';
import { uploadFile } from './files.service.js';
import { createFileStore } from './files.storage.js';

export const fileCommands: CliCommand[] = [
  {
    path: ['file', 'upload'],
    summary: 'Upload an image file for a tenant (same checks as the API); prints its fileId',
    positionals: 'PATH',
    options: { tenant: { type: 'string' } },
    run: async (ctx, { values, positionals }) => {
      const file = positional(positionals, 'PATH');
      const scope = await tenantScope(ctx, values);
      const stat = await fs.stat(file);
      if (!stat.isFile()) throw new Error(`${file} is not a file`);
      if (stat.size > MAX_FILE_BYTES) {
        throw new AppError(
          'payload_too_large',
          `The file is larger than the limit of ${MAX_FILE_BYTES} bytes (10 MiB).`,
        );
      }
      const store = createFileStore(ctx.config, ctx.db, ctx.clock);
      const uploaded = await uploadFile(scope, store, ctx.clock, {
        // The API's filename rules: no control characters or separators, at most 255 characters.
        filename: [...path.basename(file)]
          .map((c) => (c.charCodeAt(0) < 0x20 || c === '\x7f' || c === '\\' ? '_' : c))
          .join('')
          .slice(0, 255),
        bytes: await fs.readFile(file),
      });
      return { ...uploaded };
    },
  },
];
