// Every number here comes from the spec's "Decision schema", "Destinations", "API requests" and
// "Decisions and workspace" tables, except the few marked "ours", where the spec names a string but no limit;
// those exist so that no field of a stored schema is unbounded.

/** Keys of state fields, questions, composites, option values, destinations and params. */
export const KEY_PATTERN = /^[a-z][a-z0-9_]*$/;
export const KEY_MAX = 48;

export const QUESTIONS_MIN = 1;
export const QUESTIONS_MAX = 64;
export const OPTIONS_MIN = 2;
export const OPTIONS_MAX = 254;
export const LEVELS_MIN = 2;
export const LEVELS_MAX = 10;
export const INSTRUCTIONS_MAX = 8000;
export const CONTEXT_MAX = 8000;
export const OPTION_DESCRIPTION_MAX = 2000;
/** A score level's text, description or rubric; also a text level's own label. */
export const LEVEL_MAX = 2000;
export const LEVEL_LABEL_MAX = 255;
export const CRITERION_MAX = 2000;

/** Levels of state fields: the state's fields, their sub-fields and the sub-fields' own. */
export const STATE_FIELD_DEPTH_MAX = 3;
export const STATE_FIELDS_MAX = 50;
export const STATE_FIELD_DESCRIPTION_MAX = 255;

export const COMPOSITES_MAX = 20;
export const TERMS_MIN = 1;
export const TERMS_MAX = 20;
export const WEIGHT_MAX = 100;
export const COMPOSITE_DESCRIPTION_MAX = 500;

export const POLICIES_MAX = 50;
export const POLICY_AND_MAX = 5;
export const CONDITION_STRING_MAX = 255;

export const ENGINE_TIMEOUT_MIN_MS = 500;
export const ENGINE_TIMEOUT_MAX_MS = 30000;
/** Ours: the model alias or exact name in settings and in llm destinations. */
export const MODEL_NAME_MAX = 255;

export const DESTINATIONS_MAX = 20;
export const DESTINATION_CONDITIONS_MAX = 5;
export const DESTINATION_DESCRIPTION_MAX = 2000;
export const PARAMS_MAX = 30;
export const PARAM_VALUE_MAX = 500;
/** Ours: a param's `from` path. */
export const PARAM_FROM_MAX = 255;
export const HEADERS_MAX = 20;
export const HEADER_VALUE_MAX = 2048;
/** Ours: a header's name. */
export const HEADER_NAME_MAX = 255;
export const URL_MAX = 2048;
export const REPLY_TEXT_MAX = 4000;
/**
 * Ours: a fired function's params, serialized, in a run response. Params map state values, so without a bound
 * ten functions of thirty params could each carry the whole state; the spec's own bound for the largest value
 * a destination entry carries (a sync agent's answer) is 16,000 characters.
 */
export const FUNCTION_PARAMS_MAX = 16000;
export const REPLY_BUTTONS_MAX = 10;
export const REPLY_BUTTON_MAX = 80;
/** LLM prompt, LLM input and agent instructions. */
export const PROMPT_MAX = 8000;
export const HTTP_BODY_MAX = 10000;
export const AGENT_TOOLS_MAX = 50;
/** Ours: a function handler name and an agent tool name. */
export const HANDLER_NAME_MAX = 255;
export const DESTINATION_TIMEOUT_MIN_MS = 1000;
export const DESTINATION_TIMEOUT_MAX_MS = 25000;
export const LLM_MAX_TOKENS_MIN = 16;
export const LLM_MAX_TOKENS_MAX = 2048;
export const LLM_TEMPERATURE_MAX = 2;
/** A sync agent's answer longer than this is reported with `response: null`. */
export const SYNC_AGENT_RESPONSE_MAX = 16000;
export const DESTINATIONS_FIRING_MAX = 10;
/** LLM answers and sync agents: the kinds the caller waits for. */
export const WAITING_DESTINATIONS_MAX = 3;

/** "128 KB" is 131,072 bytes (ARCHITECTURE.md). */
export const STATE_BYTES_MAX = 131072;
export const STATE_TOKENS_MAX = 32000;
export const STATE_AND_LONGEST_QUESTION_TOKENS_MAX = 32000;
export const STATE_AND_ALL_QUESTIONS_TOKENS_MAX = 64000;
export const LIST_ITEMS_MIN = 1;
export const LIST_ITEMS_MAX = 500;
export const CHARS_PER_TOKEN = 4;

export const DECISION_NAME_MAX = 80;
export const DECISION_DESCRIPTION_MAX = 500;
export const SLUG_MAX = 64;

/** Ours: the due time a review setting may give its items, 1 minute to 30 days (default 240 minutes). */
export const REVIEW_DUE_MINUTES_MIN = 1;
export const REVIEW_DUE_MINUTES_MAX = 43_200;
export const REVIEW_DUE_MINUTES_DEFAULT = 240;
