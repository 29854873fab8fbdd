import type { TSchema } from '@sinclair/typebox';
import type { ComponentChildren } from 'preact';
import { AppError, type FieldError } from '../../http/errors.js';
import { validatorCompiler } from '../../http/validation.js';

/**
 * Forms of the console's authoring screens: fields with their labels and their errors, and the
 * API's own rules. A form's field is named by the JSON Pointer of the body field it fills
 * (`actions.0.url` for `/actions/0/url`), so that a problem's `errors[].path` from the body
 * schema or from a service (`/body/actions/0/url`) lands next to the field that caused it.
 */

/** Errors by field name (`actions.0.url`); `''` holds what belongs to no field. */
export type FieldErrors = Record<string, string>;

/** A problem's path (`/body/x/0/y` or `/x/0/y`) as a form field name (`x.0.y`). */
function fieldOfPath(path: string): string {
  const rest = path === '/body' ? '' : path.startsWith('/body/') ? path.slice(6) : path.replace(/^\//, '');
  return rest.split('/').join('.');
}

function fieldErrorsOf(errors: FieldError[], detail?: string): FieldErrors {
  const out: FieldErrors = {};
  for (const e of errors) {
    const field = fieldOfPath(e.path);
    out[field] ??= e.message;
  }
  if (Object.keys(out).length === 0 && detail !== undefined) out[''] = detail;
  return out;
}

/** What a form shows of an AppError: its fields' messages, or its detail for the form as a whole. */
export function formErrorsOf(error: AppError): FieldErrors {
  const errors = fieldErrorsOf(error.errors, error.detail);
  if (errors[''] === undefined && error.errors.some((e) => fieldOfPath(e.path) === '')) errors[''] = error.detail;
  return errors;
}

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/**
 * A checker of a body schema with the API's own validator (the route's rules, exactly): undefined
 * when the value is valid, else a 422 AppError with every offending field.
 */
export function bodyChecker(schema: TSchema): (value: unknown) => AppError | undefined {
  const check = validatorCompiler()({ schema, httpPart: 'body', method: 'POST', url: '' }) as unknown as {
    (value: unknown): boolean;
    errors?: AjvError[] | null;
  };
  return (value) => {
    if (check(value)) return undefined;
    const errors: FieldError[] = (check.errors ?? []).map((e) => {
      if (e.keyword === 'required')
        return { path: `${e.instancePath}/${String(e.params.missingProperty)}`, message: 'is required' };
      if (e.keyword === 'minLength' && e.params.limit === 1) return { path: e.instancePath, message: 'is required' };
      if (e.keyword === 'additionalProperties') {
        return { path: `${e.instancePath}/${String(e.params.additionalProperty)}`, message: 'is not a known field' };
      }
      return { path: e.instancePath, message: e.message ?? 'is invalid' };
    });
    const first = errors[0]!;
    return new AppError('validation_failed', `The request is invalid: ${first.path} ${first.message}.`, errors);
  };
}

/** The id of a field's element (`f-actions-0-url`). */
function fieldId(name: string): string {
  return `f-${name.replace(/[^A-Za-z0-9_-]/g, '-')}`;
}

/** A labelled input, textarea or select with its hint and its error (announced with the field). */
export function Field(props: {
  name: string;
  label: string;
  errors: FieldErrors;
  value?: string | null;
  hint?: string;
  kind?: 'text' | 'textarea' | 'email' | 'url';
  options?: readonly string[];
  required?: boolean;
  maxLength?: number;
  children?: ComponentChildren;
}) {
  const id = fieldId(props.name);
  const error = props.errors[props.name];
  const described = [props.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  const common = {
    id,
    name: props.name,
    required: props.required,
    'aria-invalid': error ? ('true' as const) : undefined,
    'aria-describedby': described,
  };
  let control;
  if (props.options) {
    control = (
      <select {...common}>
        {props.options.map((o) => (
          <option key={o} value={o} selected={o === props.value}>
            {o}
          </option>
        ))}
      </select>
    );
  } else if (props.kind === 'textarea') {
    control = <textarea {...common} maxLength={props.maxLength} value={props.value ?? ''} />;
  } else {
    control = (
      <input
        {...common}
        type={(props.kind ?? 'text') as 'text'}
        maxLength={props.maxLength}
        value={props.value ?? ''}
      />
    );
  }
  return (
    <div class={error ? 'field invalid' : 'field'}>
      <label for={id}>{props.label}</label>
      {props.hint && (
        <p class="hint" id={`${id}-hint`}>
          {props.hint}
        </p>
      )}
      {control}
      {error && (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}

/** The message of a form as a whole (an error of no field), if any. */
export function FormError({ errors }: { errors: FieldErrors }) {
  const count = Object.keys(errors).length;
  if (count === 0) return null;
  return (
    <p class="notice error" role="alert">
      {errors[''] ?? `Check ${count === 1 ? 'the field' : `the ${count} fields`} marked below.`}
    </p>
  );
}

/** A form field's text, or null when blank (trimmed). */
export function blankToNull(value: string): string | null {
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}
