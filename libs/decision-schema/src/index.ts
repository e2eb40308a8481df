// Public surface of the decision schema library: pure functions, no I/O.
export type { SchemaIssue } from './issues';
export * from './schema-types';
export * as limits from './limits';
export { validateSchema, normalizeSchema, InvalidSchemaError, type ValidationResult } from './validate-schema';
export { DEFAULT_SETTINGS, DEFAULT_LLM, DEFAULT_AGENT, DEFAULT_HTTP_METHOD } from './normalize';
export { outcomesOf, levelLabels, levelLabel, PROBABILITY_OUTCOMES } from './outcomes';
export { checkDistributions, type Distribution, type Distributions, type DistributionCheck } from './distributions';
export { evaluate, engineErrorEvaluation, entropyConfidence, type Evaluation, type ActionReason } from './evaluate';
export { conditionHolds, type ConditionSubject } from './conditions';
export { traceEvaluation, type EvaluationTrace, type RuleTrace, type ConditionTrace } from './trace';
export {
  planDestinations,
  llmCompletedEntry,
  failedEntry,
  agentAnsweredEntry,
  queuedEntry,
  unavailableEntry,
  deliveryBody,
  deliveryRequest,
  httpBodyFormat,
  type DestinationEntry,
  type DestinationPlan,
  type WaitingCall,
  type LlmCall,
  type AgentCall,
  type PlannedDelivery,
  type DeliveredDestination,
  type DeliveryEnvelope,
  type RunData,
} from './destination-entries';
export { matchingDestinations, makesCallerWait, resolvePath, type DestinationMatch, type RunContext, type SkipReason } from './destinations';
export { renderTemplate, renderTemplateWithin, referencedParams, type TemplateFormat } from './param-template';
export {
  referencedSecrets,
  mentionsSecrets,
  headerSecretNames,
  fillSecrets,
  fillSecretsFrom,
  secretsNotSet,
  SECRET_NAME,
  SECRET_VALUE_MAX,
  SECRETS_PER_WORKSPACE,
} from './secret-references';
export { validateState, checkStateAlone, exampleState, type StateCheck } from './state';
export { estimateTokens, questionTokens, type QuestionTokens } from './tokens';
export { jsonDiff, type Change } from './json-diff';
export { contractChanges, breakingChanges, type BreakingChange } from './contract-changes';
export {
  operandsOf,
  operandId,
  operatorsFor,
  optionValues,
  levelLabelsOf,
  valueFits,
  conditionFor,
  newCondition,
  renameReferences,
  termFor,
  retypeDestination,
  hasUrl,
  takesHeaders,
  templatePlaceholders,
  paramSources,
  freshParamSource,
  type Operand,
  type ConditionOn,
  type ValueKind,
} from './draft-forms';
export { DESTINATION_FIELDS, DESTINATION_COMMON_FIELDS } from './validate-destinations';
export {
  reviewVersions,
  describeSchema,
  missingSecrets,
  conditionText,
  ruleText,
  pairRules,
  longestCommonSubsequence,
  REVIEW_AREAS,
  type ReviewArea,
  type ReviewItem,
  type VersionReview,
  type MissingSecret,
} from './version-review';
export { decisionContract, type DecisionContract, type ContractQuestion, type ContractLevel } from './contract';
export { isValidSlug, checkDecisionMeta, SLUG_PATTERN } from './meta';
export { TEMPLATES, templateSummary, type Template, type TemplateSummary } from './templates';
export { startingState } from './templates/sample-state';
export * from './quality';
export {
  LATENCY_BOUNDS_MS,
  CONFIDENCE_BINS,
  MINUTE_GRAIN,
  HOUR_GRAIN,
  DAY_GRAIN,
  MINUTE_GRAIN_KEPT_MS,
  reasonKey,
  reasonKeySql,
  isFallbackReason,
  parseOverviewRange,
  planOverview,
  latencyPercentile,
  foldOverview,
  splitPolicyReasons,
  type PolicyRuleRow,
  type OverviewPlan,
  type CountRow,
  type HistogramRow,
  type DecisionOverview,
  type OverviewSlice,
  type OverviewPoint,
  type QuestionConfidence,
  type ReasonCount,
} from './overview';
export { summarizePolicy, summarizeCondition } from './policy-summary';
export {
  REPLAY_MAX_EXECUTIONS,
  REPLAY_DAILY_CAP,
  REPLAY_ENGINE_CONCURRENCY,
  checkReplayPlan,
  checkReplaySelectionQuery,
  type ReplaySelectionCheck,
  compareReplay,
  answersAgree,
  answerMatchesReview,
  replayAllowance,
  type ReplayPlan,
  type ReplaySelection,
  type ReplayPlanCheck,
  type ReplayAnswer,
  type ReplayedExecution,
  type ReplayComparison,
  type ReviewerAgreement,
} from './replay';
export {
  compareShadow,
  sharedQuestions,
  shadowSampled,
  shadowRate,
  nearestRank,
  SHADOW_RATE_MIN,
  SHADOW_RATE_MAX,
  type ShadowComparison,
  type ShadowPair,
  type ShadowSide,
  type ComparedQuestion,
} from './shadow';
export {
  validateReviewSettings,
  auditDraw,
  auditSampled,
  reviewReason,
  reviewStatus,
  claimVerdict,
  resolveVerdict,
  reviewOutcomeSource,
  reviewDueAt,
  reviewedWebhooks,
  reviewedDelivery,
  type ReviewedEventData,
  REVIEW_STATUSES,
  REVIEW_CLAIM_MINUTES,
  type ReviewStatus,
  type ReviewedRun,
  type ReviewItemState,
  type ClaimVerdict,
} from './review';
export { parseInstant, parseVersionText, parseVersionNumber, VERSION_NUMBER_MAX, type ParsedValue } from './request-values';
