import { expectBoolean, expectNumber, expectObject, expectOneOf, expectString, isGiven } from './field-checks';
import type { Issues, Path } from './issues';
import { ENGINE_TIMEOUT_MAX_MS, ENGINE_TIMEOUT_MIN_MS, MODEL_NAME_MAX } from './limits';
import { validateReviewSettings } from './review';
import { CONFIDENCE_SOURCE_SETTINGS, ENGINE_ERROR_MODES, ENGINES } from './schema-types';

const SETTINGS = ['engine', 'model', 'timeoutMs', 'onEngineError', 'storeInput', 'storeOutput', 'confidenceSource', 'review'];

/** Every setting is optional; normalization fills what is missing (see normalize.ts). */
export function validateSettings(value: unknown, path: Path, issues: Issues): void {
  if (!isGiven(value) || !expectObject(value, path, issues, SETTINGS)) return;
  if (isGiven(value.engine)) expectOneOf(value.engine, ENGINES, [...path, 'engine'], issues);
  if (isGiven(value.model)) expectString(value.model, [...path, 'model'], issues, { min: 1, max: MODEL_NAME_MAX });
  if (isGiven(value.timeoutMs)) {
    expectNumber(value.timeoutMs, [...path, 'timeoutMs'], issues, { min: ENGINE_TIMEOUT_MIN_MS, max: ENGINE_TIMEOUT_MAX_MS, integer: true });
  }
  if (isGiven(value.onEngineError)) expectOneOf(value.onEngineError, ENGINE_ERROR_MODES, [...path, 'onEngineError'], issues);
  if (isGiven(value.storeInput)) expectBoolean(value.storeInput, [...path, 'storeInput'], issues);
  if (isGiven(value.storeOutput)) expectBoolean(value.storeOutput, [...path, 'storeOutput'], issues);
  if (isGiven(value.confidenceSource)) expectOneOf(value.confidenceSource, CONFIDENCE_SOURCE_SETTINGS, [...path, 'confidenceSource'], issues);
  validateReviewSettings(value.review, [...path, 'review'], issues, { storeInput: value.storeInput, storeOutput: value.storeOutput });
}
