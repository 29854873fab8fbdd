import fs from 'node:fs';
import type { LightMyRequestResponse } from 'fastify';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/**
 * Every response a test receives through the harness is checked against the committed
 * docs/openapi.json: the status is declared for the operation, the media type is one the
 * response declares, and a JSON body matches the declared schema. A mismatch fails the test, so
 * the document and the service cannot drift apart; regenerating the document (`npm run openapi`)
 * is the only step a new or changed route needs.
 *
 * Requests to paths or methods the document does not describe (site pages, /healthz, an unknown
 * route's 404, a 405) are not operations and are not checked.
 */

interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
}

const DOCUMENT_URL = new URL('../docs/openapi.json', import.meta.url);

interface Match {
  template: string;
  operation: Operation;
}
let loaded: { match: (method: string, path: string) => Match | undefined; ajv: Ajv2020 } | undefined;
const validators = new Map<string, ValidateFunction>();

function load() {
  if (loaded) return loaded;
  const doc = JSON.parse(fs.readFileSync(DOCUMENT_URL, 'utf8')) as Document;
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  addFormats.default(ajv);
  ajv.addFormat('binary', true);
  ajv.addSchema(doc as object, 'openapi.json');
  // Literal segments before parameters, so /v0/pages/search is not taken for /v0/pages/{page_id}.
  const templates = Object.keys(doc.paths)
    .map((template) => ({
      template,
      params: (template.match(/\{/g) ?? []).length,
      pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}/?$`),
    }))
    .sort((a, b) => a.params - b.params);
  const match = (method: string, path: string) => {
    const found = templates.find((t) => t.pattern.test(path));
    const operation = found && doc.paths[found.template]![method.toLowerCase()];
    return operation && { template: found.template, operation };
  };
  loaded = { match, ajv };
  return loaded;
}

function validatorFor(pointer: string): ValidateFunction {
  let validate = validators.get(pointer);
  if (!validate) {
    validate = load().ajv.compile({ $ref: `openapi.json#${pointer}` });
    validators.set(pointer, validate);
  }
  return validate;
}

const pointerEscape = (s: string) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'));

let undocumentedDepth = 0;

/**
 * Runs `fn` without checking its responses against the document: only for responses that are
 * deliberately undocumented (say why in `reason`), never to silence a real mismatch.
 */
export async function undocumented<T>(reason: string, fn: () => Promise<T>): Promise<T> {
  if (reason.trim() === '') throw new Error('undocumented(): give the reason');
  undocumentedDepth++;
  try {
    return await fn();
  } finally {
    undocumentedDepth--;
  }
}

/** The mismatches between a response and the document (empty when it conforms or is no operation). */
export function responseMismatches(method: string, url: string, response: LightMyRequestResponse): string[] {
  if (undocumentedDepth > 0) return [];
  const path = url.split('?')[0]!;
  const matched = load().match(method, path);
  if (matched === undefined) return [];
  const { template, operation } = matched;
  const status = String(response.statusCode);
  const declaredAs = operation.responses[status] ? status : 'default';
  const declared = operation.responses[declaredAs];
  if (declared === undefined) {
    return [`status ${status} is not declared (declared: ${Object.keys(operation.responses).join(', ')})`];
  }
  const contentType = String(response.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim();
  if (declared.content === undefined) {
    return response.rawPayload.length === 0 ? [] : [`status ${status} declares no body, got ${contentType}`];
  }
  const media = declared.content[contentType];
  if (media === undefined) {
    return [
      `status ${status}: media type "${contentType}" is not declared (${Object.keys(declared.content).join(', ')})`,
    ];
  }
  if (!/^application\/([\w.+-]+\+)?json$/.test(contentType) || media.schema === undefined) return [];
  let body: unknown;
  try {
    body = JSON.parse(response.body);
  } catch {
    return [`status ${status}: the body is not JSON`];
  }
  const validate = validatorFor(
    `/paths/${pointerEscape(template)}/${method.toLowerCase()}/responses/${declaredAs}/content/${pointerEscape(contentType)}/schema`,
  );
  if (validate(body)) return [];
  return (validate.errors ?? []).map((e) => `status ${status}: body${e.instancePath} ${e.message}`);
}

/** Throws (failing the test) when a response does not conform to the document. */
export function assertDocumentedResponse(method: string, url: string, response: LightMyRequestResponse): void {
  const mismatches = responseMismatches(method, url, response);
  if (mismatches.length > 0) {
    throw new Error(
      `${method} ${url.slice(0, 200)} → ${response.statusCode} does not match docs/openapi.json ` +
        `(regenerate it with \`npm run openapi\` if the route changed; wrap a deliberately undocumented ` +
        `response in undocumented()):\n  ${mismatches.join('\n  ')}\n  body: ${response.body.slice(0, 300)}`,
    );
  }
}
