import { isIP, isIPv6 } from 'node:net';
import path from 'node:path';
import {
  Type,
  type Static,
  type TArray,
  type TBoolean,
  type TInteger,
  type TIntersect,
  type TLiteral,
  type TNull,
  type TObject,
  type TProperties,
  type TSchema,
  type TString,
  type TUnion,
  type TUnsafe,
} from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/**
 * Settings read from environment variables. Each is declared once (`setting(kind, declaration)`):
 * a TypeBox schema of its value (type, bounds) annotated with its variable, default and
 * description. The schema gives the TypeScript type (`Static`), checks the value read from the
 * environment, and prints docs/configuration.md (`describeSettings`).
 */

/** How a kind of value is written in a variable, checked, and described. */
export interface Kind<T extends TSchema> {
  /** The value's type and bounds; every value read is checked against it. */
  schema: T;
  /** What the variable accepts, in plain words: the doc prints it, and errors say "must be …". */
  accepts: string;
  /** The value a (trimmed, non-blank) variable spells, or a refusal: bounds are the schema's job. */
  parse(raw: string): Static<T> | Refused;
}

/** A variable that spells no value of its kind; `part` names the item of a list that does not. */
class Refused {
  constructor(readonly part?: { name: string; accepts: string; raw: string }) {}
}

/** A default computed from settings of earlier groups; `text` says how, in the doc (Markdown). */
interface Derived<T, Earlier> {
  from: (earlier: Earlier) => T;
  text: string;
}

/** Everything about a setting besides its kind. */
export interface Declaration<T, Earlier = never> {
  env: string;
  /** For people, in Markdown (links relative to docs/): printed in docs/configuration.md. */
  description: string;
  /** The value when the variable is unset or blank. */
  default: T | Derived<T, Earlier>;
  /** An older name of the variable, still read when `env` is unset. */
  legacyEnv?: string;
  /** Errors never repeat the value (it is or may hold a credential). */
  secret?: boolean;
  /** Why `NODE_ENV=production` refuses to start without it. */
  requiredInProduction?: string;
  /** A rule involving settings of earlier groups: why the value is refused, or undefined. */
  check?: (value: T, earlier: Earlier) => string | undefined;
  /** Turns the value into what the service uses (e.g. a path resolved against the working directory). */
  resolve?: (value: T, context: ReadContext) => T;
}

interface ReadContext {
  /** Relative paths are resolved against it. */
  cwd: string;
}

const SETTING = Symbol('setting');

interface Setting {
  kind: Kind<TSchema>;
  declaration: Declaration<unknown, unknown>;
}

type Annotated = TSchema & { [SETTING]: Setting };

/** Declares a setting: its kind, its variable and the rest (see `Declaration`). */
export function setting<T extends TSchema, Earlier = never>(
  kind: Kind<T>,
  declaration: Declaration<Static<T>, Earlier>,
): T {
  // A copy: kinds (and their schemas) may be shared by several settings.
  return { ...kind.schema, [SETTING]: { kind, declaration } as Setting };
}

/** Settings shown together under `title` in the doc. */
export function group<P extends TProperties>(title: string, settings: P): TObject<P> {
  return Type.Object(settings, { title });
}

// ---- kinds ----

export function wholeNumber(min: number, max: number): Kind<TInteger> {
  return {
    schema: Type.Integer({ minimum: min, maximum: max }),
    accepts: `a whole number from ${min} to ${max}`,
    parse: (raw) => (/^\d+$/.test(raw) ? Number(raw) : new Refused()),
  };
}

const TRUE_WORDS = ['1', 'true', 'yes', 'on'];
const FALSE_WORDS = ['0', 'false', 'no', 'off'];

export const trueOrFalse: Kind<TBoolean> = {
  schema: Type.Boolean(),
  accepts: 'true or false (or 1/0, yes/no, on/off)',
  parse: (raw) => {
    const word = raw.toLowerCase();
    return TRUE_WORDS.includes(word) ? true : FALSE_WORDS.includes(word) ? false : new Refused();
  },
};

/** One of a few words, in any case. */
export function oneOf<const V extends readonly [string, ...string[]]>(values: V): Kind<TUnion<TLiteral<V[number]>[]>> {
  return {
    schema: Type.Union(values.map((value) => Type.Literal(value))),
    accepts: `one of ${values.join(', ')}`,
    parse: (raw) => raw.toLowerCase() as V[number],
  };
}

/** Any text; `pattern` (a regular expression) narrows it. */
export function text(accepts: string, pattern?: string): Kind<TString> {
  return {
    schema: pattern === undefined ? Type.String() : Type.String({ pattern }),
    accepts,
    parse: (raw) => raw,
  };
}

/** A URL that `valid` accepts, kept as written. */
export function url(accepts: string, valid: (url: URL) => boolean): Kind<TString> {
  return {
    schema: Type.String(),
    accepts,
    parse: (raw) => (URL.canParse(raw) && valid(new URL(raw)) ? raw : new Refused()),
  };
}

/** A name server as c-ares takes it: `address`, `address:port`, `[ipv6]:port` or a bare IPv6 address. */
export const nameServer: Kind<TString> = {
  schema: Type.String(),
  accepts: 'an IP address with an optional port from 1 to 65535 (10.0.0.2:53, [::1]:53)',
  parse: (raw) => {
    const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(raw);
    const [address, port] = bracketed
      ? [bracketed[1]!, bracketed[2]]
      : isIPv6(raw)
        ? [raw, undefined]
        : (raw.split(/:(?=[^:]*$)/) as [string, string | undefined]);
    const portOk = port === undefined || (/^\d{1,5}$/.test(port) && Number(port) >= 1 && Number(port) <= 65535);
    return isIP(address) !== 0 && portOk ? raw : new Refused();
  },
};

/** An IP address, or a network in CIDR notation (10.0.0.0/8, fd00::/8). */
export const addressOrNetwork: Kind<TString> = {
  schema: Type.String(),
  accepts: 'an IP address or a CIDR network (10.0.0.0/8)',
  parse: (raw) => {
    const [address, bits, extra] = raw.split('/');
    if (extra !== undefined || address === undefined || isIP(address) === 0) return new Refused();
    if (bits === undefined) return raw;
    const max = isIP(address) === 4 ? 32 : 128;
    return /^\d{1,3}$/.test(bits) && Number(bits) <= max ? raw : new Refused();
  },
};

/** A DNS host name (no scheme, port or path), lowercase, without its trailing dot. */
export const hostName: Kind<TString> = {
  schema: Type.String({ pattern: '^[a-z0-9-]+(\\.[a-z0-9-]+)*$' }),
  accepts: 'a host name without scheme, port or path (api.pages.example.com)',
  parse: (raw) => raw.toLowerCase().replace(/\.$/, ''),
};

/** Bytes written in base64. */
export function base64Bytes(length: number, accepts: string): Kind<TUnsafe<Buffer>> {
  return {
    schema: Type.Unsafe<Buffer>(Type.Uint8Array({ minByteLength: length, maxByteLength: length })),
    accepts,
    parse: (raw) => (/^[A-Za-z0-9+/_-]+=*$/.test(raw) ? Buffer.from(raw, 'base64') : new Refused()),
  };
}

/** The first of `kinds` that reads the variable, described as `accepts`. */
export function either<A extends TSchema, B extends TSchema>(
  accepts: string,
  first: Kind<A>,
  second: Kind<B>,
): Kind<TUnion<[A, B]>> {
  return {
    schema: Type.Union([first.schema, second.schema]),
    accepts,
    parse: (raw) => {
      for (const kind of [first, second] as Kind<TSchema>[]) {
        const value = kind.parse(raw);
        if (!(value instanceof Refused) && Value.Check(kind.schema, value)) return value as Static<TUnion<[A, B]>>;
      }
      return new Refused();
    },
  };
}

/** A value of `kind`, or null when the variable is unset. */
export function optional<T extends TSchema>(kind: Kind<T>): Kind<TUnion<[T, TNull]>> {
  const schema = Type.Union([kind.schema, Type.Null()]);
  return { schema, accepts: kind.accepts, parse: kind.parse as Kind<typeof schema>['parse'] };
}

/** Comma-separated values of `kind`, each called `noun` in errors; repeated values count once. */
export function listOf<T extends TSchema>(noun: string, kind: Kind<T>): Kind<TArray<T>> {
  return {
    schema: Type.Array(kind.schema),
    accepts: `${noun}s, comma-separated, each ${kind.accepts}`,
    parse: (raw) => {
      const values: Static<T>[] = [];
      for (const [i, item] of raw
        .split(',')
        .map((part) => part.trim())
        .filter(Boolean)
        .entries()) {
        const value = kind.parse(item);
        if (value instanceof Refused || !Value.Check(kind.schema, value)) {
          return new Refused({ name: `${noun} ${i + 1}`, accepts: kind.accepts, raw: item });
        }
        if (!values.includes(value)) values.push(value);
      }
      return values;
    },
  };
}

// ---- reading ----

type Env = Record<string, string | undefined>;

export interface ReadOptions extends ReadContext {
  /** Whether the settings read so far say this is production (`requiredInProduction` applies). */
  production(settings: Record<string, unknown>): boolean;
}

/**
 * Reads every setting of `schema` from `env`: blank is unset, values are trimmed. Returns the
 * settings (frozen) and every problem found, each naming its variable; the settings are only
 * meaningful when there is none.
 */
export function readSettings<S extends TIntersect<TObject[]>>(
  schema: S,
  env: Env,
  options: ReadOptions,
): { settings: Static<S>; problems: string[] } {
  const problems: string[] = [];
  const values: Record<string, unknown> = {};
  const refused = new Set<string>();
  const given = new Map<string, { name: string; raw: string }>();
  const derived: [string, Setting][] = [];

  for (const [key, { kind, declaration }] of settingsOf(schema)) {
    const variable = variableOf(declaration, env, problems);
    const fallback = declaration.default;
    if (variable === undefined) {
      if (isDerived(fallback)) derived.push([key, { kind, declaration }]);
      else values[key] = fallback;
      continue;
    }
    given.set(key, variable);
    const value = kind.parse(variable.raw);
    if (value instanceof Refused || !Value.Check(kind.schema, value)) {
      problems.push(refusal(variable, kind, declaration, value instanceof Refused ? value : new Refused()));
      refused.add(key);
      values[key] = isDerived(fallback) ? null : fallback;
    } else values[key] = value;
  }
  // Derived defaults, in declaration order: each sees every setting read above it.
  for (const [key, { declaration }] of derived)
    values[key] = (declaration.default as Derived<unknown, unknown>).from(values);

  const production = options.production(values);
  for (const [key, { declaration }] of settingsOf(schema)) {
    if (refused.has(key)) continue;
    const value = values[key];
    const name = given.get(key)?.name ?? declaration.env;
    const reason = declaration.check?.(value, values);
    if (reason !== undefined) {
      problems.push(
        declaration.secret ? `${name} ${reason}` : `${name}=${given.get(key)?.raw ?? String(value)} ${reason}`,
      );
    }
    const missing = value === null || (Array.isArray(value) && value.length === 0);
    if (production && missing && declaration.requiredInProduction !== undefined) {
      problems.push(`NODE_ENV=production needs ${name} (${declaration.requiredInProduction})`);
    }
    if (declaration.resolve) values[key] = declaration.resolve(value, options);
    if (Array.isArray(values[key])) Object.freeze(values[key]);
  }
  return { settings: Object.freeze(values) as Static<S>, problems };
}

/** The variable that sets it (its older name when only that is set), trimmed; undefined when blank. */
function variableOf(
  declaration: Declaration<unknown, unknown>,
  env: Env,
  problems: string[],
): { name: string; raw: string } | undefined {
  const current = env[declaration.env]?.trim() || undefined;
  const legacy = declaration.legacyEnv === undefined ? undefined : env[declaration.legacyEnv]?.trim() || undefined;
  if (current !== undefined && legacy !== undefined && current !== legacy) {
    problems.push(
      `${declaration.env} and ${declaration.legacyEnv} (its older name) are both set, to different values: keep ${declaration.env} only`,
    );
  }
  if (current !== undefined) return { name: declaration.env, raw: current };
  if (legacy !== undefined) return { name: declaration.legacyEnv!, raw: legacy };
  return undefined;
}

function refusal(
  variable: { name: string; raw: string },
  kind: Kind<TSchema>,
  declaration: Declaration<unknown, unknown>,
  { part }: Refused,
): string {
  const subject = part === undefined ? variable.name : `${variable.name} ${part.name}`;
  const got = declaration.secret ? '' : `, got "${part?.raw ?? variable.raw}"`;
  return `${subject} must be ${part?.accepts ?? kind.accepts}${got}`;
}

function isDerived(value: unknown): value is Derived<unknown, unknown> {
  return typeof value === 'object' && value !== null && 'from' in value;
}

function* settingsOf(schema: TIntersect<TObject[]>): Generator<[string, Setting]> {
  for (const settingsGroup of schema.allOf) {
    for (const [key, property] of Object.entries(settingsGroup.properties)) {
      yield [key, (property as Annotated)[SETTING]];
    }
  }
}

// ---- describing ----

export interface SettingDescription {
  env: string;
  legacyEnv?: string;
  description: string;
  accepts: string;
  /** The default value, or how it is derived (Markdown). */
  default: { value: unknown } | { text: string };
  requiredInProduction?: string;
}

/** Every setting of `schema` by group, for docs/configuration.md. */
export function describeSettings(schema: TIntersect<TObject[]>): { title: string; settings: SettingDescription[] }[] {
  return schema.allOf.map((settingsGroup) => ({
    title: settingsGroup.title ?? '',
    settings: Object.values(settingsGroup.properties).map((property) => {
      const { kind, declaration } = (property as Annotated)[SETTING];
      const fallback = declaration.default;
      return {
        env: declaration.env,
        legacyEnv: declaration.legacyEnv,
        description: declaration.description,
        accepts: kind.accepts,
        default: isDerived(fallback) ? { text: fallback.text } : { value: fallback },
        requiredInProduction: declaration.requiredInProduction,
      };
    }),
  }));
}

/** For `resolve`: a path relative to the working directory. */
export const absolutePath = (value: string, context: ReadContext): string => path.resolve(context.cwd, value);
