import { Type, type Static } from '@sinclair/typebox';
import { ResourceId, Timestamp, strict, StringEnum } from '../../http/schemas.js';
import { IMAGE_TYPES, MAX_FILE_BYTES } from './files.images.js';

/** 1..255 characters, no control characters and no path separators. */
const Filename = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: '^[^\\u0000-\\u001f\\u007f/\\\\]+$',
  description: 'The name the file is served under (Content-Disposition); no path separators.',
});

export const FileCreateBody = Type.Object(
  {
    filename: Filename,
    contentType: StringEnum(IMAGE_TYPES, {
      description: `One of ${IMAGE_TYPES.join(', ')}; the bytes must be an image of this type.`,
    }),
    size: Type.Integer({
      minimum: 1,
      maximum: MAX_FILE_BYTES,
      description: `Exact size in bytes of the file that will be sent, 1..${MAX_FILE_BYTES} (10 MiB).`,
    }),
  },
  strict,
);

export const FileUpload = Type.Object(
  {
    fileId: Type.String(),
    uploadUrl: Type.String({
      description: 'Send the bytes here with PUT (Content-Type: the image type), once, before expiresAt.',
    }),
    expiresAt: Timestamp,
  },
  { $id: 'FileUpload', ...strict },
);

export const FileUploaded = Type.Object(
  {
    fileId: Type.String(),
    contentType: Type.String(),
    size: Type.Integer(),
    width: Type.Integer(),
    height: Type.Integer(),
  },
  { $id: 'FileUploaded', ...strict },
);

export const FileParams = Type.Object({ file_id: ResourceId }, strict);

export type FileCreateBody = Static<typeof FileCreateBody>;
export type FileUpload = Static<typeof FileUpload>;
export type FileUploaded = Static<typeof FileUploaded>;

export const fileSchemas = [FileUpload, FileUploaded];
