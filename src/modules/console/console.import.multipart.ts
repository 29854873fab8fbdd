/**
 * A `multipart/form-data` body (RFC 7578) as the console's import form sends it: text fields and
 * files, read from a buffer Fastify has already limited in size. Small on purpose: one form, the
 * browser's own encoding; a body it cannot read is a 400.
 */
export interface MultipartFile {
  filename: string;
  data: Buffer;
}

export interface MultipartBody {
  fields: Record<string, string>;
  files: Record<string, MultipartFile>;
}

/** The boundary of a `multipart/form-data` content type, or null. */
export function boundaryOf(contentType: string): string | null {
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(contentType);
  return match ? (match[1] ?? match[2]!) : null;
}

function parameter(header: string, name: string): string | null {
  const match = new RegExp(`;\\s*${name}="((?:[^"\\\\]|\\\\.)*)"`, 'i').exec(header);
  return match ? match[1]!.replace(/\\(.)/g, '$1') : null;
}

/** Parses the body; null when it is not well-formed multipart with this boundary. */
export function parseMultipart(body: Buffer, boundary: string): MultipartBody | null {
  const delimiter = Buffer.from(`--${boundary}`);
  const result: MultipartBody = { fields: {}, files: {} };
  let at = body.indexOf(delimiter);
  if (at === -1) return null;
  while (at !== -1) {
    let start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') return result; // the closing delimiter
    if (body.subarray(start, start + 2).toString() !== '\r\n') return null;
    start += 2;
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), start);
    if (next === -1) return null;
    const part = body.subarray(start, next);
    const headerEnd = part.indexOf('\r\n\r\n');
    if (headerEnd === -1) return null;
    const headers = part.subarray(0, headerEnd).toString('utf8').split('\r\n');
    const content = part.subarray(headerEnd + 4);
    const disposition = headers.find((h) => /^content-disposition:/i.test(h));
    const name = disposition ? parameter(disposition, 'name') : null;
    if (disposition === undefined || name === null) return null;
    const filename = parameter(disposition, 'filename');
    if (filename !== null) result.files[name] = { filename, data: Buffer.from(content) };
    else result.fields[name] = content.toString('utf8');
    at = next + 2;
  }
  return null;
}
