import {
  checkCount,
  claimUnique,
  expectArray,
  expectBoolean,
  expectKey,
  expectMap,
  expectNumber,
  expectObject,
  expectOneOf,
  expectRequired,
  expectString,
  isGiven,
  isKey,
} from './field-checks';
import { formatNumber, isRecord, measuredLength } from './json';
import type { Issues, Path } from './issues';
import {
  AGENT_TOOLS_MAX,
  DESTINATION_CONDITIONS_MAX,
  DESTINATION_DESCRIPTION_MAX,
  DESTINATION_TIMEOUT_MAX_MS,
  DESTINATION_TIMEOUT_MIN_MS,
  DESTINATIONS_MAX,
  HANDLER_NAME_MAX,
  HEADER_NAME_MAX,
  HEADER_VALUE_MAX,
  HEADERS_MAX,
  HTTP_BODY_MAX,
  LLM_MAX_TOKENS_MAX,
  LLM_MAX_TOKENS_MIN,
  LLM_TEMPERATURE_MAX,
  MODEL_NAME_MAX,
  PARAM_FROM_MAX,
  PARAM_VALUE_MAX,
  PARAMS_MAX,
  PROMPT_MAX,
  REPLY_BUTTON_MAX,
  REPLY_BUTTONS_MAX,
  REPLY_TEXT_MAX,
  URL_MAX,
} from './limits';
import { referencedParams } from './param-template';
import { mentionsSecrets, referencedSecrets, SECRET_NAME, withoutSecretReferences } from './secret-references';
import { AGENT_MODES, DESTINATION_TYPES, HTTP_METHODS, PARAM_ROOTS, WEBHOOK_EVENTS, type DestinationType } from './schema-types';
import { validateConditionList, type ConditionScope } from './validate-conditions';

/** The fields every destination may have. */
export const DESTINATION_COMMON_FIELDS: readonly string[] = ['key', 'type', 'description', 'when', 'params', 'headers'];
/** The fields each destination type has besides the common ones. */
export const DESTINATION_FIELDS: Record<DestinationType, readonly string[]> = {
  reply: ['text', 'buttons'],
  function: ['function'],
  llm: ['prompt', 'input', 'model', 'maxTokens', 'temperature', 'timeoutMs'],
  agent: ['url', 'mode', 'instructions', 'tools', 'timeoutMs'],
  workflow: ['url'],
  webhook: ['url', 'on'],
  http: ['url', 'method', 'body'],
};
/** Fields whose text may hold `{{params.NAME}}` placeholders. */
const TEMPLATE_FIELDS = ['text', 'prompt', 'input', 'instructions', 'body'];

/** A handler name as code spells it: `notify_team`, `billing.refund`, `crm:createLead`. */
const HANDLER_NAME = /^[A-Za-z_$][\w$.:-]*$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers the delivery itself sets; letting a destination override them would break signing or framing. */
const RESERVED_HEADERS = new Set(['service-signature', 'host', 'content-length', 'transfer-encoding', 'connection']);
/** Roots that are single values: nothing lies below them. */
const SCALAR_ROOTS = new Set(['action', 'decision_id', 'execution_id']);

export function validateDestinations(value: unknown, path: Path, issues: Issues, scope: ConditionScope): void {
  if (!isGiven(value) || !expectArray(value, path, issues, { max: DESTINATIONS_MAX, noun: 'destinations' })) return;
  const keys = new Set<string>();
  value.forEach((destination, i) => {
    const destinationPath = [...path, i];
    if (!isRecord(destination)) {
      issues.add(destinationPath, 'must be an object');
      return;
    }
    const typeKnown =
      expectRequired(destination, 'type', destinationPath, issues) && expectOneOf(destination.type, DESTINATION_TYPES, [...destinationPath, 'type'], issues);
    const type = destination.type as DestinationType;
    if (typeKnown) expectObject(destination, destinationPath, issues, [...DESTINATION_COMMON_FIELDS, ...DESTINATION_FIELDS[type]]);
    if (expectRequired(destination, 'key', destinationPath, issues) && expectKey(destination.key, [...destinationPath, 'key'], issues)) {
      claimUnique(keys, destination.key, [...destinationPath, 'key'], issues);
    }
    if (isGiven(destination.description)) {
      expectString(destination.description, [...destinationPath, 'description'], issues, { max: DESTINATION_DESCRIPTION_MAX });
    }
    if (isGiven(destination.when)) {
      validateConditionList(destination.when, [...destinationPath, 'when'], issues, scope, DESTINATION_CONDITIONS_MAX);
    }
    const params = isGiven(destination.params) ? validateParams(destination.params, [...destinationPath, 'params'], issues, scope) : new Set<string>();
    if (isGiven(destination.headers)) validateHeaders(destination.headers, [...destinationPath, 'headers'], issues);
    if (!typeKnown) return;
    validateTypeFields(type, destination, destinationPath, issues);
    if (params) checkPlaceholders(destination, DESTINATION_FIELDS[type], params, destinationPath, issues);
    checkSecretsOutsideHeaders(destination, DESTINATION_FIELDS[type], destinationPath, issues);
  });
}

function validateTypeFields(type: DestinationType, destination: Record<string, unknown>, path: Path, issues: Issues): void {
  const at = (name: string) => [...path, name];
  const optionalText = (name: string, max: number) => {
    if (isGiven(destination[name])) expectString(destination[name], at(name), issues, { max });
  };
  const requiredText = (name: string, rule: { min: number; max: number }) => {
    if (expectRequired(destination, name, path, issues)) expectString(destination[name], at(name), issues, rule);
  };
  const timeout = () => {
    if (isGiven(destination.timeoutMs)) {
      expectNumber(destination.timeoutMs, at('timeoutMs'), issues, {
        min: DESTINATION_TIMEOUT_MIN_MS,
        max: DESTINATION_TIMEOUT_MAX_MS,
        integer: true,
      });
    }
  };
  switch (type) {
    case 'reply':
      requiredText('text', { min: 1, max: REPLY_TEXT_MAX });
      if (isGiven(destination.buttons)) validateStringList(destination.buttons, at('buttons'), issues, REPLY_BUTTONS_MAX, REPLY_BUTTON_MAX, 'buttons');
      return;
    case 'function':
      requiredText('function', { min: 1, max: HANDLER_NAME_MAX });
      if (typeof destination.function === 'string' && destination.function !== '' && !HANDLER_NAME.test(destination.function)) {
        issues.add(at('function'), 'must be a handler name: letters, digits and _ $ . : -, not starting with a digit');
      }
      return;
    case 'llm':
      requiredText('prompt', { min: 1, max: PROMPT_MAX });
      optionalText('input', PROMPT_MAX);
      if (isGiven(destination.model)) expectString(destination.model, at('model'), issues, { min: 1, max: MODEL_NAME_MAX });
      if (isGiven(destination.maxTokens)) {
        expectNumber(destination.maxTokens, at('maxTokens'), issues, { min: LLM_MAX_TOKENS_MIN, max: LLM_MAX_TOKENS_MAX, integer: true });
      }
      if (isGiven(destination.temperature)) expectNumber(destination.temperature, at('temperature'), issues, { min: 0, max: LLM_TEMPERATURE_MAX });
      timeout();
      return;
    case 'agent':
      validateUrl(destination, path, issues);
      if (isGiven(destination.mode)) expectOneOf(destination.mode, AGENT_MODES, at('mode'), issues);
      optionalText('instructions', PROMPT_MAX);
      if (isGiven(destination.tools)) validateStringList(destination.tools, at('tools'), issues, AGENT_TOOLS_MAX, HANDLER_NAME_MAX, 'tools');
      timeout();
      return;
    case 'workflow':
      validateUrl(destination, path, issues);
      return;
    case 'webhook':
      validateUrl(destination, path, issues);
      if (isGiven(destination.on) && expectOneOf(destination.on, WEBHOOK_EVENTS, at('on'), issues) && destination.on === 'reviewed') {
        // It fires when a person resolves a review, long after the run: there is no run to test conditions on.
        if (Array.isArray(destination.when) && destination.when.length > 0)
          issues.add(at('when'), 'must be empty: a webhook on "reviewed" fires for every resolved review');
      }
      return;
    case 'http':
      validateUrl(destination, path, issues);
      if (isGiven(destination.method)) expectOneOf(destination.method, HTTP_METHODS, at('method'), issues);
      optionalText('body', HTTP_BODY_MAX);
      return;
  }
}

function validateStringList(value: unknown, path: Path, issues: Issues, maxItems: number, maxLength: number, noun: string): void {
  if (!expectArray(value, path, issues, { max: maxItems, noun })) return;
  const seen = new Set<string>();
  value.forEach((item, i) => {
    if (expectString(item, [...path, i], issues, { min: 1, max: maxLength })) claimUnique(seen, item, [...path, i], issues);
  });
}

function validateUrl(destination: Record<string, unknown>, path: Path, issues: Issues): void {
  if (!expectRequired(destination, 'url', path, issues)) return;
  const urlPath = [...path, 'url'];
  if (!expectString(destination.url, urlPath, issues, { min: 1, max: URL_MAX })) return;
  // Plain http is accepted here: whether a target may be plain or private is the delivery's call at send time.
  if (!URL.canParse(destination.url) || !['http:', 'https:'].includes(new URL(destination.url).protocol)) {
    issues.add(urlPath, 'must be an http or https URL');
  }
}

/** Answers the declared param names, or undefined when they cannot be read. */
function validateParams(value: unknown, path: Path, issues: Issues, scope: ConditionScope): ReadonlySet<string> | undefined {
  if (!expectMap(value, path, issues)) return undefined;
  const entries = Object.entries(value);
  checkCount(entries.length, path, issues, { max: PARAMS_MAX, noun: 'params' });
  for (const [name, param] of entries) {
    const paramPath = [...path, name];
    expectKey(name, paramPath, issues);
    if (!isRecord(param) || (!isGiven(param.from) && !isGiven(param.value))) {
      issues.add(paramPath, 'must be { from, required? } or { value }');
      continue;
    }
    if (isGiven(param.from)) {
      expectObject(param, paramPath, issues, ['from', 'required']);
      validateFrom(param.from, [...paramPath, 'from'], issues, scope);
      if (isGiven(param.required)) expectBoolean(param.required, [...paramPath, 'required'], issues);
    } else {
      expectObject(param, paramPath, issues, ['value']);
      const length = measuredLength(param.value);
      if (length === undefined) issues.add([...paramPath, 'value'], 'must be a JSON value');
      else if (length > PARAM_VALUE_MAX) {
        issues.add([...paramPath, 'value'], `must be at most ${PARAM_VALUE_MAX} characters (is ${formatNumber(length)})`);
      }
    }
  }
  return new Set(Object.keys(value));
}

function validateFrom(value: unknown, path: Path, issues: Issues, scope: ConditionScope): void {
  if (!expectString(value, path, issues, { min: 1, max: PARAM_FROM_MAX })) return;
  // split always returns at least one part.
  const [root = '', ...rest] = value.split('.');
  if (!(PARAM_ROOTS as readonly string[]).includes(root)) {
    issues.add(path, `must start with one of ${PARAM_ROOTS.join(', ')}`);
    return;
  }
  if (rest.some((segment) => segment === '')) {
    issues.add(path, 'must not have empty path segments');
    return;
  }
  if (SCALAR_ROOTS.has(root) && rest.length > 0) {
    issues.add(path, `"${root}" is a single value: nothing lies below it`);
    return;
  }
  const [key, ...below] = rest;
  if (root === 'state' || key === undefined) return;
  // result, confidence, scores and composites are keyed by the decision's own keys and hold single values.
  if (below.length > 0) {
    issues.add(path, `"${root}.${key}" is a single value: nothing lies below it`);
    return;
  }
  if (root === 'composites') {
    if (!scope.composites.has(key)) issues.add(path, `refers to an unknown composite "${key}"`);
    return;
  }
  const question = isKey(key) ? scope.questions.get(key) : undefined;
  if (!question) issues.add(path, `refers to an unknown question "${key}"`);
  else if (root === 'scores' && question.kind !== 'score') issues.add(path, `"${key}" is not a score question`);
}

function validateHeaders(value: unknown, path: Path, issues: Issues): void {
  if (!expectMap(value, path, issues)) return;
  const entries = Object.entries(value);
  checkCount(entries.length, path, issues, { max: HEADERS_MAX, noun: 'headers' });
  const seen = new Set<string>();
  for (const [name, headerValue] of entries) {
    const headerPath = [...path, name];
    const lower = name.toLowerCase();
    if (name.length > HEADER_NAME_MAX || !HEADER_NAME.test(name)) {
      issues.add(headerPath, `must be a header name of at most ${HEADER_NAME_MAX} characters`);
    } else if (RESERVED_HEADERS.has(lower)) {
      issues.add(headerPath, 'is set by the delivery itself');
    } else {
      claimUnique(seen, lower, headerPath, issues);
    }
    if (expectString(headerValue, headerPath, issues, { max: HEADER_VALUE_MAX })) {
      if (/[\r\n\0]/.test(headerValue)) issues.add(headerPath, 'must not contain line breaks');
      checkSecretReferences(headerValue, headerPath, issues);
    }
  }
}

function checkSecretReferences(headerValue: string, path: Path, issues: Issues): void {
  for (const name of referencedSecrets(headerValue)) {
    if (!SECRET_NAME.test(name)) issues.add(path, `{{secrets.${name}}} is not a secret name: capital letters, digits and _, starting with a letter`);
  }
  if (mentionsSecrets(withoutSecretReferences(headerValue))) issues.add(path, 'a secret is referred to as {{secrets.NAME}}');
}

/** Secrets are filled in header values only: anywhere else the value would end up in bodies, logs or records. */
function checkSecretsOutsideHeaders(destination: Record<string, unknown>, fields: readonly string[], path: Path, issues: Issues): void {
  for (const field of [...TEMPLATE_FIELDS, 'url'].filter((name) => fields.includes(name))) {
    const text = destination[field];
    if (typeof text === 'string' && mentionsSecrets(text)) issues.add([...path, field], '{{secrets.NAME}} is filled in header values only');
  }
}

function checkPlaceholders(destination: Record<string, unknown>, fields: readonly string[], params: ReadonlySet<string>, path: Path, issues: Issues): void {
  for (const field of TEMPLATE_FIELDS.filter((name) => fields.includes(name))) {
    const text = destination[field];
    if (typeof text !== 'string') continue;
    for (const name of referencedParams(text)) {
      if (!params.has(name)) issues.add([...path, field], `{{params.${name}}} is not a declared param`);
    }
  }
}
